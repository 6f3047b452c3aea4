"""uvicorn serving the HTTP app inside the running event loop (beside grpc.aio), within the
server's ``Limits``: connections per port, a deadline for each request head, an idle timeout
between requests and a cap on request bodies, enforced before a body is read."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import Awaitable, Callable

import h11
import uvicorn
from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from bullring.server.errors import message_of, status_of
from bullring.server.transports.http.errors import client_gone
from bullring.server.transports.limits import Limits

log = logging.getLogger("bullring.http")

Gate = Callable[[Scope], Awaitable[Exception | None]]
"""Looks at a request's head; returns the refusal (a type server/errors.py's table names)
to answer it with, or None."""


CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; "
                           "img-src 'self' data:; connect-src 'self'; object-src 'none'; "
                           "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
"""The page's own scripts, styles and requests only: no inline script or handler, nothing
from another site, never inside another site's frame (``data:`` images: the empty icon)."""

SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)
"""Sent with every HTTP response: the page, its files, the API, its errors and refusals."""


class SecurityHeaders:
    """ASGI middleware: adds ``SECURITY_HEADERS`` to every response of the app it wraps."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI request, its response's head carrying the headers."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()),
                                                  *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers)


class _BodyTooLarge(Exception):
    """A request body went past the limit while being read."""


async def _refuse(send: Send, status: int, code: str, message: str,
                  more: list[tuple[bytes, bytes]]) -> None:
    """Answer with a JSON error and close the connection (the rest of the body is not read);
    ``more`` headers go with it."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close"), *more]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


GRPC_PORT_HEADER = b"bullring-grpc-port"
"""The response header naming the server's gRPC port, so a client that dialled the HTTP
port with gRPC can say where to go (``bullring.commandline.reach``)."""


class RequestGuard:
    """ASGI middleware: refuses a request whose body is larger than ``max_body_bytes`` (by
    its Content-Length at once, or as soon as the bytes read pass the limit), and asks
    ``gate`` about every request before its body is read (authentication comes first).
    Every response it passes on names the server's gRPC port (``GRPC_PORT_HEADER``) once
    ``grpc_port`` is set."""

    def __init__(self, app: ASGIApp, max_body_bytes: int, gate: Gate | None = None) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.gate = gate
        self.grpc_port = 0
        """The gRPC port of the same server (0: not told; no header)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI request through the checks."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_body_bytes
        port = str(self.grpc_port).encode() if self.grpc_port else b""
        more = [(GRPC_PORT_HEADER, port)] if port else []
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    await _refuse(send, 400, "bad_request", "Content-Length is not a number",
                                  more)
                    return
                if length > limit:
                    await _refuse(send, 413, "payload_too_large",
                                  f"the body is {length} bytes; at most {limit} are accepted",
                                  more)
                    return
        if self.gate is not None:
            verdict = await self.gate(scope)
            status = None if verdict is None else status_of(verdict)
            if verdict is not None and status is not None:
                await _refuse(send, status.http, status.code, message_of(verdict, status),
                              more)
                return
        seen = 0
        refused = False

        async def counted() -> Message:
            """The body as it comes; past the limit, answer 413 at once (the app's own
            answer to the error raised here is dropped)."""
            nonlocal seen, refused
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    if not refused:
                        refused = True
                        await _refuse(send, 413, "payload_too_large",
                                      f"the body is larger than the {limit} bytes accepted",
                                      more)
                    raise _BodyTooLarge
            return message

        async def unless_refused(message: Message) -> None:
            if refused:
                return
            if more and message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *more]}
            await send(message)

        try:
            await self.app(scope, counted, unless_refused)
        except _BodyTooLarge:
            pass
        except Exception as exc:  # the app has answered what it could; uvicorn would log it
            if not client_gone(exc):
                raise
            log.debug("%s %s: the client left", scope.get("method"), scope.get("path"))


class GuardedH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a connection cap and a deadline for each request
    head: a client must send a whole request head within ``header_timeout_s`` of
    connecting, or of its previous response, else the connection is closed (a client that
    trickles bytes never renews it, unlike the keep-alive timer). Connections past the cap
    are closed at once."""

    limits = Limits()
    """Set on a subclass per server (see ``HttpServer``)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Count the connection; close it at once past the cap, else start its head timer."""
        super().connection_made(transport)
        self._head_timer: asyncio.TimerHandle | None = None
        if len(self.connections) > self.limits.connections():
            transport.abort()
            return
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the connection and its timer."""
        self._cancel_head_timer()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        """The next request's head has its own deadline."""
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_timer()

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.limits.header_timeout_s, self._head_late)

    def _cancel_head_timer(self) -> None:
        timer = getattr(self, "_head_timer", None)
        if timer is not None:
            timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        """Close the connection unless a request head has come (a request in progress has
        its head)."""
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


class HttpServer:
    """One uvicorn server on a socket bound up front (so port 0 tells the real port)."""

    def __init__(self, app: FastAPI, host: str, port: int, grace_s: float = 5.0,
                 limits: Limits | None = None, gate: Gate | None = None) -> None:
        self.host = host
        self.requested_port = port
        self.limits = limits or Limits()
        protocol = type("GuardedH11", (GuardedH11,), {"limits": self.limits})
        self.guard = RequestGuard(app, self.limits.max_body_bytes, gate)
        """The requests' checks; its ``grpc_port`` is the server's, once bound."""
        self.config = uvicorn.Config(
            SecurityHeaders(self.guard), host=host, port=port,
            lifespan="off", log_config=None, log_level="warning", access_log=False,
            http=protocol, timeout_keep_alive=max(1, round(self.limits.idle_timeout_s)),
            h11_max_incomplete_event_size=self.limits.max_header_bytes,
            timeout_graceful_shutdown=max(1, round(grace_s)))
        self.server = uvicorn.Server(self.config)
        self.socket: socket.socket | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self.port = 0

    async def start(self) -> int:
        """Bind and start serving; return the port. OSError if the port is taken."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.requested_port))
        except OSError:
            sock.close()
            raise
        sock.listen(self.config.backlog)
        sock.setblocking(False)
        self.socket = sock
        self.port = int(sock.getsockname()[1])
        self.config.load()
        self.server.lifespan = self.config.lifespan_class(self.config)
        await self.server.startup(sockets=[sock])
        self._loop_task = asyncio.create_task(self.server.main_loop(), name="http")
        return self.port

    async def stop(self) -> None:
        """Close open connections (streams end) and stop."""
        if self._loop_task is None:
            return
        self.server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self._loop_task
        await self.server.shutdown(sockets=[self.socket] if self.socket else None)
        self._loop_task = None
