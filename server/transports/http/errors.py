"""Every HTTP error is JSON: ``{"error": {"code": "stable_code", "message": "..."}}``.

Handlers turn the refusals of server/errors.py (each with the status and code its one table
gives, the same as on gRPC), the framework's HTTP errors (404, 405, ...) and request
validation errors (422) into that shape, so a client never has to parse an HTML page.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from bullring.server.errors import (
    ERRORS,
    DatabaseUnavailableError,
    QuotaError,
    message_of,
    status_of,
)
from bullring.server.store.retry import is_transient

log = logging.getLogger("bullring.http")

CODES_BY_STATUS: dict[int, str] = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "too_many_requests",
    503: "database_unavailable",
}
"""The stable code of a framework error, by HTTP status."""


class ErrorDetail(BaseModel):
    """What went wrong: a stable machine code and a precise human message."""

    code: str = Field(description="a stable machine code, such as match_over (each route "
                      "lists its codes by status)")
    message: str = Field(description="a precise human-readable message")


class ErrorBody(BaseModel):
    """The body of every 4xx and 5xx response."""

    error: ErrorDetail = Field(description="what went wrong")


def error_response(status: int, code: str, message: str,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    """A JSON error response."""
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status,
                        headers=headers)


def _where(location: tuple[Any, ...] | list[Any]) -> str:
    return ".".join(str(part) for part in location)


async def _refused(request: Request, exc: Exception) -> JSONResponse:
    """The JSON error for a refusal, with the status and code of the table's row."""
    status = status_of(exc)
    if status is None:
        return await _unexpected(request, exc)
    headers = None
    if status.http == 401:
        headers = {"WWW-Authenticate": "Bearer"}
    elif status.http == 503:
        headers = {"Retry-After": str(RETRY_AFTER_S)}
    elif isinstance(exc, QuotaError):
        headers = {"Retry-After": str(exc.retry_after_s)}
    if status.code == "database_unavailable":
        log.warning("HTTP %s %s: database unavailable: %s", request.method, request.url.path,
                    str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    return error_response(status.http, status.code, message_of(exc, status), headers)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = CODES_BY_STATUS.get(exc.status_code, "client_error" if exc.status_code < 500
                               else "server_error")
    message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    headers = dict(exc.headers or {})
    allowed = allowed_methods(request) if exc.status_code == 405 else None
    if allowed is not None:
        headers["Allow"] = allowed
    return error_response(exc.status_code, code, message, headers or None)


def allowed_methods(request: Request) -> str | None:
    """The ``Allow`` header of a 405 answer at a path the OpenAPI document lists: every
    method it lists there (the framework names only the first route's, and
    ``/api/challenges`` has two). A path the document names literally is that path's
    resource alone (``/api/challenges/auto-accept``, not ``/api/challenges/{challenge_id}``).
    None at a path it does not list (the web page's)."""
    paths: dict[str, dict[str, Any]] = request.app.openapi().get("paths", {})
    path = request.url.path
    found = paths.get(path)
    if found is None:
        found = next((methods for template, methods in paths.items()
                      if re.fullmatch(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)),
                                      path)), None)
    return None if not found else ", ".join(sorted(m.upper() for m in found))


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = [f"{_where(e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in exc.errors()]
    return error_response(422, "invalid_request", "; ".join(problems) or "invalid request")


RETRY_AFTER_S = 5
"""What a 503 ``database_unavailable`` answer's Retry-After header says, in seconds."""


async def _database_error(request: Request, exc: Exception) -> JSONResponse:
    """503 ``database_unavailable`` for a database that is away for a moment; any other
    database error is the server's fault (500)."""
    if not is_transient(exc):
        return await _unexpected(request, exc)
    return await _refused(request, DatabaseUnavailableError(str(exc)))


CLIENT_GONE = (ClientDisconnect, ConnectionError, anyio.BrokenResourceError,
               anyio.ClosedResourceError)
"""What a handler raises when its client hung up (an event stream closed, say): the
client's doing, not a server error, so it is not logged as one."""


def client_gone(exc: BaseException) -> bool:
    """Whether ``exc`` (or every error of a group: a streaming response's task group) only
    says that the client hung up."""
    if isinstance(exc, BaseExceptionGroup):
        return exc.split(CLIENT_GONE)[1] is None
    return isinstance(exc, CLIENT_GONE)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    if client_gone(exc):
        log.debug("HTTP %s %s: the client left (%s)", request.method, request.url.path,
                  type(exc).__name__)
        return error_response(499, "client_closed", "the client closed the connection")
    log.exception("unhandled error in an HTTP handler", exc_info=exc)
    return error_response(500, "internal_error", "the server failed; the error is logged")


def install(app: FastAPI) -> None:
    """Make every error of ``app`` answer in the JSON error shape."""
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(DBAPIError, _database_error)
    for refusal, row in ERRORS.items():
        if row.wire:
            app.add_exception_handler(refusal, _refused)
    app.add_exception_handler(Exception, _unexpected)


BEYOND_SCHEMA = "x-refusals-beyond-schema"
"""The OpenAPI operation field listing the refusals a request its schema allows may still
get: rules between fields that JSON Schema cannot say in a form a generator can draw from."""


def beyond_schema(refusal: type[Exception], rule: str) -> dict[str, Any]:
    """An operation's ``openapi_extra`` saying that a request its schema allows is still
    refused with ``refusal`` (its status and code, from the error table) when ``rule``
    holds."""
    row = ERRORS[refusal]
    return {BEYOND_SCHEMA: [{"status": row.http, "code": row.code, "rule": rule}]}


def error_responses(*statuses: int, codes: dict[int, str] | None = None,
                    refusals: tuple[type[Exception], ...] = ()
                    ) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries saying these statuses carry an ErrorBody, each described
    by its specific error codes: the ``refusals`` a route may answer, as the error table
    (server/errors.py) gives them, then ``codes``, else the status's framework code."""
    described: dict[int, list[str]] = {}
    for refusal in refusals:
        row = ERRORS[refusal]
        said = f"{row.code}: {row.when}"
        if said not in described.setdefault(row.http, []):
            described[row.http].append(said)
    for status, text in (codes or {}).items():
        described.setdefault(status, []).append(text)
    return {status: {"model": ErrorBody,
                     "description": "; ".join(described.get(status, []))
                     or CODES_BY_STATUS.get(status, "error")}
            for status in sorted({*statuses, *described})}
