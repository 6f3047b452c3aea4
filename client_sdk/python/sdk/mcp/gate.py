"""Who may use ``bullring mcp --transport http``: the agent's bearer token and the web pages
a browser may call it from.

A seat's MCP server plays with the seat's token, so whoever reaches it plays the seat. On
loopback only this machine's programs reach it; beyond loopback ``bullring mcp`` refuses to
start without a bearer token (``--agent-token``), and ``AgentGate`` checks it on every
request. A browser sends ``Origin`` with every cross-site request: one from a page that is
not allowed (``--allow-origin``; on loopback, this machine's own pages too) is refused, so a
web page the agent's user visits can never drive the seat (DNS rebinding included).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Collection
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

MIN_TOKEN_CHARS = 16
"""The shortest agent token accepted: long enough that it cannot be guessed over HTTP."""

def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an IP address) is this machine's loopback."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _loopback_origin(origin: str) -> bool:
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and is_loopback(parts.hostname or "")


async def _refuse(send: Send, status: int, code: str, message: str) -> None:
    """Answer with a JSON error (``WWW-Authenticate: Bearer`` with a 401)."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class AgentGate:
    """ASGI middleware in front of the MCP app. A request with an ``Origin`` header that is
    not among ``origins`` (nor a loopback page's, when ``loopback_pages``) is refused with
    403 ``origin_not_allowed``; with a ``token``, a request without
    ``Authorization: Bearer TOKEN`` is refused with 401 ``unauthenticated``."""

    def __init__(self, app: ASGIApp, token: str | None, origins: Collection[str] = (),
                 loopback_pages: bool = False) -> None:
        self.app = app
        self.token = None if token is None else token.encode()
        self.origins = frozenset(o.lower() for o in origins)
        self.loopback_pages = loopback_pages

    def origin_allowed(self, origin: str) -> bool:
        """Whether a browser page of ``origin`` may call the MCP server."""
        origin = origin.lower()
        return origin in self.origins or (self.loopback_pages and _loopback_origin(origin))

    def authenticated(self, authorization: str) -> bool:
        """Whether an ``Authorization`` header carries the agent's token (always, without
        one set)."""
        if self.token is None:
            return True
        scheme, _, given = authorization.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode(errors="replace"), self.token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check one request, then hand it to the MCP app."""
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            origin = headers.get("origin")
            if origin is not None and not self.origin_allowed(origin):
                await _refuse(send, 403, "origin_not_allowed",
                              f"a page of {origin[:100]!r} may not call this MCP server "
                              f"(bullring mcp --allow-origin ORIGIN allows one)")
                return
            if not self.authenticated(headers.get("authorization", "")):
                await _refuse(send, 401, "unauthenticated",
                              "send the agent's token: Authorization: Bearer TOKEN")
                return
        await self.app(scope, receive, send)
