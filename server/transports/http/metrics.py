"""``GET /metrics``: the server's metrics in Prometheus' text format
(``bullring.server.metrics``), for loopback addresses and the admin token by default
(``bullring serve --metrics``)."""

from __future__ import annotations

import asyncio
import ipaddress

from fastapi import APIRouter, Request, Response

from bullring.server.errors import NotAdminError, NotAuthenticatedError
from bullring.server.metrics import CONTENT_TYPE
from bullring.server.transports.http.context import MISSING_TOKEN, Context, Credentials

router = APIRouter()


@router.get("/metrics", include_in_schema=False)
async def metrics(ctx: Context, request: Request, credentials: Credentials) -> Response:
    """Every metric of this server, read now; who may read them is ``--metrics``'s to say
    (401 without a bearer token, 403 with one that is not the admin token)."""
    await _allow(ctx, request, credentials)
    return Response(ctx.metrics.exposition(), media_type=CONTENT_TYPE)


async def _allow(ctx: Context, request: Request, credentials: Credentials) -> None:
    """Refuse the request unless ``ctx.metrics_access`` lets it read the metrics."""
    access = ctx.metrics_access
    if access == "public" or (access == "admin" and _from_loopback(request)):
        return
    token = "" if credentials is None else credentials.credentials.strip()
    if not token:
        where = "to the admin token" if access == "token" else \
            "to loopback addresses and to the admin token"
        raise NotAuthenticatedError(f"this server's metrics are served {where} "
                                    f"(bullring serve --metrics): {MISSING_TOKEN}")
    if not await asyncio.to_thread(ctx.store.is_admin_token, token):
        raise NotAdminError()


def _from_loopback(request: Request) -> bool:
    """Whether ``request`` comes from a loopback address (127.0.0.0/8, ::1, or ::1's and
    127.x's IPv4-mapped form)."""
    client = request.client
    if client is None:
        return False
    try:
        address = ipaddress.ip_address(client.host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback
