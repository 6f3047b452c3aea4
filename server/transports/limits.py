"""What one client may hold of the server, for both ports in one place: connections, streams
per connection, connections and calls per client address, request sizes, how long a
connection may sit silent or trickle a body, and how long a stream may wait for its client
to read.

``bullring serve`` sets them with ``--max-connections``, ``--max-streams``,
``--max-connections-per-address``, ``--max-calls-per-address``, ``--max-body-kb``,
``--header-timeout``, ``--body-timeout``, ``--idle-timeout`` and ``--stall-timeout``; the
gRPC server gets them as channel options (``grpc_options``) and its interceptor's cap
(``bullring.server.transports.grpc.calls.AddressCap``), the HTTP server as its protocol's
and middleware's bounds (``bullring.server.transports.http.serving``), and every stream to
a bot as the bound on its writes (``bullring.server.transports.stalls``).
"""

from __future__ import annotations

import ipaddress
import resource
from dataclasses import dataclass

from bullring.errors import ConfigurationError

FD_RESERVE = 128
"""File descriptors kept out of the connection budget: the database, log files, grpc's and
asyncio's own pipes, worker threads."""

LINGER_S = 5.0
"""How long a refused HTTP request's unread body is still read (and thrown away) after the
refusal, so that the client, still sending, reads the refusal instead of a reset
connection."""

LINGER_BYTES = 64 << 20
"""The most of a refused request's body that is read and thrown away (64 MiB)."""

RETRY_AFTER_S = 5
"""What a connection refused for its address's cap is told to wait (``Retry-After``)."""

IPV6_PREFIX = 64
"""IPv6 clients are counted by their /64 network: one host usually holds a whole /64."""


def fd_limit() -> int:
    """The process's soft limit on open file descriptors."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def address_key(host: str) -> str:
    """What a client address counts as for the per-address caps: the IPv4 address itself
    (an IPv4-mapped IPv6 address too), an IPv6 address's /64 network, anything else (a Unix
    socket's path, say) as it is."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_PREFIX), strict=False))
    return str(address)


def grpc_peer_host(peer: str) -> str:
    """The host of a gRPC peer string (``ipv4:10.0.0.7:5123``, ``ipv6:[::1]:5123``)."""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        return rest.rsplit(":", 1)[0].strip("[]")
    return peer


class AddressCounts:
    """How many connections (or calls) each client address holds now, against a cap."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        """The most one address may hold; 0: no cap."""
        self._held: dict[str, int] = {}

    def take(self, key: str) -> bool:
        """Count one more for ``key``; False (and nothing counted) if it holds its cap."""
        held = self._held.get(key, 0)
        if self.cap and held >= self.cap:
            return False
        self._held[key] = held + 1
        return True

    def give_back(self, key: str) -> None:
        """One of ``key``'s has ended."""
        held = self._held.get(key, 0) - 1
        if held > 0:
            self._held[key] = held
        else:
            self._held.pop(key, None)

    def held(self, key: str) -> int:
        """How many ``key`` holds now."""
        return self._held.get(key, 0)


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
    body_timeout_s: float = 10.0
    """An HTTP request's whole body must arrive within this of its head, else it is
    answered 408 and its connection closed: a body that never comes, or comes a byte at a
    time, holds its connection no longer."""
    max_connections_per_address: int = 64
    """Open HTTP connections from one client address (IPv6: one /64); more are answered
    429 and closed, so one client cannot take every connection. 0: no cap (behind a proxy
    that connects for everyone)."""
    max_calls_per_address: int = 1000
    """Concurrent gRPC calls (streams included) from one client address, over all its
    connections (gRPC has no per-address connection cap); more are refused with
    RESOURCE_EXHAUSTED. 0: no cap."""
    stall_timeout_s: float = 10.0
    """A stream to a bot (gRPC Play or Subscribe, HTTP event stream) whose write has waited
    this long for the client to read is ended as stalled (``Closed``, reason STALLED); so
    is one that leaves more than the outbox's bytes unread."""

    def __post_init__(self) -> None:
        for name in ("max_streams", "max_body_bytes", "max_header_bytes"):
            if getattr(self, name) < 1:
                raise ConfigurationError(f"{name} must be at least 1, not {getattr(self, name)}")
        for name in ("max_connections", "max_connections_per_address",
                     "max_calls_per_address"):
            if getattr(self, name) < 0:
                raise ConfigurationError(f"{name} must be 0 or more, not {getattr(self, name)}")
        for name in ("header_timeout_s", "idle_timeout_s", "body_timeout_s",
                     "stall_timeout_s"):
            if not getattr(self, name) > 0:
                raise ConfigurationError(f"{name} must be more than 0, not {getattr(self, name)}")

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
