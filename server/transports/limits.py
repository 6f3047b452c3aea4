"""What one client may hold of the server, for both ports in one place: connections, streams
per connection, request sizes and how long a connection may sit silent.

``bullring serve`` sets them with ``--max-connections``, ``--max-streams``,
``--max-body-kb``, ``--header-timeout`` and ``--idle-timeout``; the gRPC server gets them as
channel options (``grpc_options``), the HTTP server as its protocol's and middleware's
bounds (``bullring.server.transports.http.serving``).
"""

from __future__ import annotations

import resource
from dataclasses import dataclass

FD_RESERVE = 128
"""File descriptors kept out of the connection budget: the database, log files, grpc's and
asyncio's own pipes, worker threads."""


def fd_limit() -> int:
    """The process's soft limit on open file descriptors."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what clients may hold, the same on the gRPC and the HTTP port."""

    max_connections: int = 0
    """Open connections per port; 0: split the file-descriptor limit between the two ports
    (less ``FD_RESERVE``), so clients can never exhaust it and lock everyone out."""
    max_streams: int = 1000
    """Concurrent gRPC streams on one connection (an HTTP/1.1 connection has one request at
    a time). A process may play hundreds of bots over one connection; a stream that sends
    no Join within ``header_timeout_s`` is ended."""
    max_body_bytes: int = 1 << 20
    """An HTTP request body larger than this is refused with 413 before it is read."""
    max_header_bytes: int = 16 << 10
    """Request headers (HTTP) or metadata (gRPC) larger than this are refused."""
    header_timeout_s: float = 10.0
    """A new connection must finish its handshake (gRPC) or send a whole request head
    (HTTP) within this, else it is closed, and a Play stream must send its Join within it:
    a silent or trickling client holds nothing for long."""
    idle_timeout_s: float = 60.0
    """A connection with no call in progress (no gRPC stream, no HTTP request) is closed
    after this long."""

    def __post_init__(self) -> None:
        for name in ("max_streams", "max_body_bytes", "max_header_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.max_connections < 0:
            raise ValueError(f"max_connections must be 0 (from the file limit) or more, not "
                             f"{self.max_connections}")
        for name in ("header_timeout_s", "idle_timeout_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be more than 0, not {getattr(self, name)}")

    def connections(self) -> int:
        """Connections allowed per port (``max_connections``, or the file limit's share)."""
        if self.max_connections:
            return self.max_connections
        return max(16, (fd_limit() - FD_RESERVE) // 2)

    def grpc_options(self) -> list[tuple[str, int]]:
        """The gRPC server's options enforcing these limits; also refuses to share its port
        with another process (grpc binds with SO_REUSEPORT unless told not to)."""
        return [("grpc.so_reuseport", 0),
                ("grpc.max_allowed_incoming_connections", self.connections()),
                ("grpc.max_concurrent_streams", self.max_streams),
                ("grpc.max_metadata_size", self.max_header_bytes),
                ("grpc.server_handshake_timeout_ms", round(self.header_timeout_s * 1000)),
                ("grpc.max_connection_idle_ms", round(self.idle_timeout_s * 1000))]
