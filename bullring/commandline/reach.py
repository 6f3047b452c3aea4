"""Why a server's gRPC address gives no connection: a quick look at what answers there.

gRPC's own channel says only that it cannot connect, so a client pointed at the wrong place
would retry until it gives up. ``probe`` finds out in about a second whether the address
refuses connections (nothing listens there), or answers HTTP/1.1 (a web server, such as
Bullring's own HTTP port, whose responses name its gRPC port), so that ``bullring bot`` and
``bullring health`` can say so in one line. Standard library only.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from enum import Enum

GRPC_PORT_HEADER = "bullring-grpc-port"
"""The header by which Bullring's HTTP responses name the server's gRPC port."""


class Kind(Enum):
    """What answers at an address instead of a gRPC server."""

    REFUSED = "refused"
    """Nothing listens on the port: the host refuses the connection."""
    HTTP = "http"
    """An HTTP/1.1 server (Bullring's HTTP port, or another web server)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """Why ``address`` is no gRPC server, in words a user can act on."""

    kind: Kind
    message: str


def host_and_port(address: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:50051`` for IPv6) split; ValueError for anything else."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"not HOST:PORT: {address!r}")
    return host.removeprefix("[").removesuffix("]"), int(port)


def probe(address: str, timeout_s: float = 1.0) -> Finding | None:
    """What answers at ``address`` if it is plainly not a gRPC server, else None (a gRPC
    server, silence, or a failure that retrying may mend: no route, a name not resolved).

    Opens one TCP connection and sends one HTTP/1.1 request (``GET /api/games``): a
    refused connection is ``Kind.REFUSED``; an answer in HTTP/1.1 is ``Kind.HTTP``, naming
    the gRPC port when Bullring's HTTP server said it.
    """
    host, port = host_and_port(address)
    try:
        connection = socket.create_connection((host, port), timeout=timeout_s)
    except ConnectionRefusedError:
        return Finding(Kind.REFUSED, f"{address} refused the connection: nothing listens on "
                                     f"port {port} there (is `bullring serve` running, and "
                                     f"is this the gRPC address it printed?)")
    except OSError:
        return None
    with connection:
        head = _http_head(connection, host)
    if not head.startswith(b"HTTP/1."):
        return None
    grpc_port = _header(head, GRPC_PORT_HEADER)
    if grpc_port is not None and grpc_port.isdigit():
        shown = f"[{host}]" if ":" in host else host
        return Finding(Kind.HTTP, f"{address} is Bullring's HTTP port (the web page and HTTP "
                                  f"API), not its gRPC port; the gRPC port is {grpc_port}: "
                                  f"use --server {shown}:{grpc_port}")
    return Finding(Kind.HTTP, f"{address} answers HTTP/1.1, not gRPC: it is a web server, not "
                              f"a Bullring gRPC port (`bullring serve` prints its gRPC "
                              f"address as 'listening on HOST:PORT')")


def _http_head(connection: socket.socket, host: str) -> bytes:
    """Send one request; the response's head (its first 8 KB at most), or what came before
    the connection closed or went quiet."""
    head = b""
    try:
        connection.sendall(f"GET /api/games HTTP/1.1\r\nHost: {host}\r\n"
                           f"Connection: close\r\n\r\n".encode())
        while b"\r\n\r\n" not in head and len(head) < 8192:
            chunk = connection.recv(4096)
            if not chunk:
                break
            head += chunk
    except OSError:
        pass
    return head.split(b"\r\n\r\n", 1)[0]


def _header(head: bytes, name: str) -> str | None:
    """The value of header ``name`` in an HTTP response head, if there."""
    for line in head.decode("latin-1").split("\r\n")[1:]:
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() == name:
            return value.strip()
    return None
