"""uvicorn serving the HTTP app inside the running event loop (beside grpc.aio), within the
server's ``Limits``: connections per port and per client address, a deadline for each
request head and each request body, an idle timeout between requests and a cap on request
bodies, enforced before a body is read. A refusal sent while the client still sends its
body is followed by a lingering close (the rest of the body is read and thrown away, within
``LINGER_S`` and ``LINGER_BYTES``), so that the client reads the refusal rather than a reset
connection."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import socket
import struct
import termios
from collections.abc import Awaitable, Callable
from typing import Any

import h11
import uvicorn
from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import STATUS_PHRASES, H11Protocol, RequestResponseCycle

from bullring.server.errors import (
    BodyTimeoutError,
    TooManyConnectionsError,
    message_of,
    status_of,
)
from bullring.server.transports.http.errors import client_gone
from bullring.server.transports.limits import (
    LINGER_BYTES,
    LINGER_S,
    RETRY_AFTER_S,
    AddressCounts,
    Limits,
    address_key,
)

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


HANG_UP = "bullring.hang_up"
"""The scope extension holding a request's connection as a stalled stream's guard sees it
(``bullring.server.transports.stalls.Connection``: closed at once, asked how much its
client has not read). A server that is not ``HttpServer`` (a test client) leaves it out."""


def raw_error(exc: Exception, headers: tuple[tuple[str, str], ...] = ()) -> bytes:
    """A whole HTTP/1.1 response for the refusal ``exc`` (its status and JSON error from the
    table), written before or instead of a request's own, ending the connection."""
    status = status_of(exc)
    assert status is not None, exc
    body = json.dumps({"error": {"code": status.code,
                                 "message": message_of(exc, status)}}).encode()
    lines = [f"HTTP/1.1 {status.http} {STATUS_PHRASES[status.http].decode()}",
             "content-type: application/json", f"content-length: {len(body)}",
             "connection: close", *(f"{name}: {value}" for name, value in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class _LingeringTransport(asyncio.Transport):
    """A connection's transport as uvicorn's protocol and request cycles see it: closing it
    while the client still owes request body (a refusal answered before the body was read)
    lingers instead (``GuardedH11.linger``); everything else goes to the real transport."""

    def __init__(self, real: asyncio.Transport, protocol: GuardedH11) -> None:
        super().__init__()
        self.real = real
        self.protocol = protocol

    def close(self) -> None:
        """Close, or linger if the client is still sending a body."""
        self.protocol.close_or_linger()

    def is_closing(self) -> bool:
        """True once closing or lingering."""
        return self.real.is_closing() or self.protocol.lingering

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Write to the real transport."""
        self.real.write(data)

    def writelines(self, list_of_data: Any) -> None:
        """Write to the real transport."""
        self.real.writelines(list_of_data)

    def abort(self) -> None:
        """Abort the real transport."""
        self.real.abort()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        """The real transport's."""
        return self.real.get_extra_info(name, default)

    def pause_reading(self) -> None:
        """Pause the real transport."""
        self.real.pause_reading()

    def resume_reading(self) -> None:
        """Resume the real transport."""
        self.real.resume_reading()

    def is_reading(self) -> bool:
        """The real transport's."""
        return self.real.is_reading()

    def can_write_eof(self) -> bool:
        """The real transport's."""
        return self.real.can_write_eof()

    def write_eof(self) -> None:
        """Half-close the real transport."""
        self.real.write_eof()

    def get_write_buffer_size(self) -> int:
        """The real transport's."""
        return self.real.get_write_buffer_size()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        """Set the real transport's."""
        self.real.set_write_buffer_limits(high, low)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        """Set the real transport's."""
        self.real.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        """The real transport's."""
        return self.real.get_protocol()


class GuardedH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol within the server's ``Limits``:

    - connections past the port's cap are closed at once; past the client address's cap
      (``max_connections_per_address``) they are answered 429 (``too_many_connections``,
      with Retry-After) and closed;
    - a whole request head must come within ``header_timeout_s`` of connecting, or of the
      previous response, else the connection is closed (a client that trickles bytes never
      renews it, unlike the keep-alive timer);
    - a request's whole body must come within ``body_timeout_s`` of its head, else it is
      answered 408 (``body_timeout``) and the connection is closed;
    - a response that refuses a request whose body is still coming closes the connection
      only after a lingering close: the rest of the body is read and thrown away (at most
      ``LINGER_BYTES``, for ``LINGER_S``), so that the client reads the refusal.
    """

    limits = Limits()
    """Set on a subclass per server (see ``HttpServer``)."""
    addresses = AddressCounts(0)
    """The connections of each client address; a subclass per server has its own."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Count the connection; refuse it past the port's or its address's cap, else start
        its head timer."""
        super().connection_made(transport)
        self.real = transport
        self.transport = _LingeringTransport(transport, self)
        self._head_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._linger_timer: asyncio.TimerHandle | None = None
        self.lingering = False
        self._discarded = 0
        self._lost = False
        self._address: str | None = None
        if len(self.connections) > self.limits.connections():
            transport.abort()
            return
        if self.client is not None:
            key = address_key(self.client[0])
            if not self.addresses.take(key):
                transport.write(raw_error(TooManyConnectionsError(
                    f"{self.client[0]} holds {self.addresses.cap} connections to this server "
                    f"already, as many as one address may (--max-connections-per-address); "
                    f"close one and try again"), (("retry-after", str(RETRY_AFTER_S)),)))
                self.linger(min(1.0, LINGER_S))
                return
            self._address = key
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the connection, its timers and its place in its address's count."""
        self._lost = True
        for timer in (self._head_timer, self._body_timer, self._linger_timer):
            if timer is not None:
                timer.cancel()
        self._head_timer = self._body_timer = self._linger_timer = None
        if self._address is not None:
            self.addresses.give_back(self._address)
            self._address = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Take the request's bytes (thrown away while lingering)."""
        if self.lingering:
            self._discarded += len(data)
            if self._discarded > LINGER_BYTES:
                self.real.close()
            return
        super().data_received(data)

    def eof_received(self) -> None:
        """The client has sent everything (a lingering close is done)."""
        if self.lingering:
            self.real.close()

    def handle_events(self) -> None:
        """Handle what came; a new request gets its body deadline and the scope extension
        that hangs up its connection."""
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not cycle and self.cycle is not None:
            extensions: dict[str, Any] = self.cycle.scope.setdefault(
                "extensions", {})
            extensions[HANG_UP] = self
            if self.conn.their_state is h11.SEND_BODY:
                if self._body_timer is not None:
                    self._body_timer.cancel()
                self._body_timer = self.loop.call_later(self.limits.body_timeout_s,
                                                        self._body_late, self.cycle)

    def on_response_complete(self) -> None:
        """The next request's head has its own deadline."""
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_timer()

    def shutdown(self) -> None:
        """The server stops: a lingering connection is closed at once."""
        if self.lingering:
            self.real.close()
            return
        super().shutdown()

    def unread(self) -> int:
        """Bytes written to the connection that its client has not taken: in the transport's
        buffer, and in the kernel's send queue (Linux's SIOCOUTQ: sent but unacknowledged,
        or not sent at all)."""
        pending = self.real.get_write_buffer_size()
        sock = self.real.get_extra_info("socket")
        if sock is not None and not self.real.is_closing():
            with contextlib.suppress(OSError, ValueError):
                queued = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, struct.pack("i", 0))
                pending += struct.unpack("i", queued)[0]
        return pending

    def hang_up(self) -> None:
        """Close the connection at once, throwing away what its client has not read (a
        reset: the kernel keeps none of it either)."""
        sock = self.real.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.real.abort()

    def close_or_linger(self) -> None:
        """Close the connection; if the client is still sending the body of a request that
        was answered, linger first."""
        if self._lost or self.lingering or self.real.is_closing():
            self.real.close()
        elif self.cycle is not None and self.conn.their_state is h11.SEND_BODY:
            self.linger(LINGER_S)
        else:
            self.real.close()

    def linger(self, within_s: float) -> None:
        """Close the connection once the client has sent what it is sending: shut down
        writing (the answer is sent first), then read and throw away what comes until the
        client closes, ``LINGER_BYTES`` have come, or ``within_s`` has passed."""
        self.lingering = True
        for timer in (self._head_timer, self._body_timer):
            if timer is not None:
                timer.cancel()
        self._head_timer = self._body_timer = None
        if self.real.can_write_eof():
            self.real.write_eof()
        self.real.resume_reading()
        self._linger_timer = self.loop.call_later(within_s, self.real.close)

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

    def _body_late(self, cycle: RequestResponseCycle) -> None:
        """The body of ``cycle``'s request is late: answer 408 unless a response has begun,
        tell the app its client is gone, and close the connection (no lingering: the client
        has had its time)."""
        self._body_timer = None
        if self.cycle is not cycle or self.conn.their_state is not h11.SEND_BODY or \
                self.real.is_closing():
            return
        if not cycle.response_started:
            self.real.write(raw_error(BodyTimeoutError(
                f"the request's body did not arrive whole within "
                f"{self.limits.body_timeout_s:g} s of its head (--body-timeout)")))
        cycle.disconnected = True  # the app's receive says so; its answer goes nowhere
        cycle.message_event.set()
        self.real.close()


class HttpServer:
    """One uvicorn server on a socket bound up front (so port 0 tells the real port)."""

    def __init__(self, app: FastAPI, host: str, port: int, grace_s: float = 5.0,
                 limits: Limits | None = None, gate: Gate | None = None,
                 shared: bool = False) -> None:
        self.host = host
        self.shared = shared
        """The port is shared with the other workers of one server (``SO_REUSEPORT``)."""
        self.requested_port = port
        self.limits = limits or Limits()
        protocol = type("GuardedH11", (GuardedH11,), {
            "limits": self.limits,
            "addresses": AddressCounts(self.limits.max_connections_per_address)})
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
        # IPPROTO_TCP named: asyncio then turns Nagle's algorithm off on each connection
        # accepted (it checks the socket's proto), so a response's body never waits for the
        # client's delayed acknowledgement of its head (40 ms on a kept-alive connection).
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if self.shared:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
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
