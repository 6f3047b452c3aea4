"""The bound on a stream's writes: a stream to a bot whose client does not read is ended
within seconds, by time and by bytes, never counted in messages.

Every stream to a bot (gRPC ``Play`` and ``Subscribe``, the HTTP event stream) writes the
messages of its seat's outbox (``bullring.server.match.outbox``) one after another; a write
waits while the client's transport holds as much unread as it takes (the HTTP/2 window,
the socket's buffers). ``guard_writes`` watches that wait: once one write has waited
``stall_s``, or the outbox has stalled by bytes, the outbox ends with ``Closed`` (reason
STALLED) and the stream lets go of its seat or ladder place at once (``let_go``). If the
client reads again it gets what was sent, then ``Closed``; if it still reads nothing for
another ``stall_s``, ``hang_up`` (where the transport can) closes its connection.
``guarded`` holds one stream's guard and its count in the server's metrics for as long as
the stream lasts.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Protocol

from bullring.server.match.outbox import Outbox
from bullring.server.metrics import ServerMetrics

HANG_UP_POLL_S = 0.1
"""How often a stalled stream's connection is asked whether its client has read the rest,
once nothing is left to write (for at most ``stall_s`` without progress)."""

_HANGING: set[asyncio.Task[None]] = set()
"""Guards that outlive their stream, to hang up a stalled client that reads nothing more."""


class Connection(Protocol):
    """A stream's connection as its guard sees it (the HTTP server's, where a transport
    can): closed at once, and asked how much its client has not read yet."""

    def hang_up(self) -> None:
        """Close the connection at once, throwing away what its client has not read."""

    def unread(self) -> int:
        """Bytes written to the connection that its client has not taken yet."""


def stalled_for(stall_s: float) -> str:
    """How a stream ended for a write that waited ``stall_s``: its ``Closed`` message's
    and the match log's words."""
    return f"a write waited {stall_s:g} s for the client to read"


@contextlib.asynccontextmanager
async def guarded(outbox: Outbox, stall_s: float, let_go: Callable[[str], None],
                  metrics: ServerMetrics, transport: str,
                  connection: Connection | None = None) -> AsyncIterator[None]:
    """One stream to a bot on ``transport``, for as long as the block runs: its writes
    guarded (``guard_writes``), and the stream counted open, and stalled if it stalls, in
    ``metrics``. A stalled stream's guard outlives it, to hang up a ``connection`` whose
    client does not read what is left."""
    guard = asyncio.create_task(guard_writes(outbox, stall_s, let_go, connection,
                                             lambda: metrics.stalled(transport)))
    streams = metrics.stream(transport)
    streams.inc()
    try:
        yield
    finally:
        streams.dec()
        if connection is not None and outbox.stalled and not guard.done():
            _HANGING.add(guard)
            guard.add_done_callback(_HANGING.discard)
        else:
            guard.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await guard


async def guard_writes(outbox: Outbox, stall_s: float, let_go: Callable[[str], None],
                       connection: Connection | None = None,
                       counted: Callable[[], None] | None = None) -> None:
    """Watch ``outbox``'s writes until cancelled (by the stream, when it ends): end it as
    stalled once a write has waited ``stall_s`` (see the module's docstring), tell
    ``let_go`` why (and ``counted`` that it stalled), and hang up ``connection`` if its
    client then reads nothing for another ``stall_s``."""
    alarm = asyncio.Event()
    outbox.on_stalled = alarm.set
    try:
        while not outbox.stalled:
            since = outbox.writing_since
            now = time.monotonic()
            if since is not None and now - since >= stall_s:
                outbox.stall(stalled_for(stall_s))
                break
            wait_s = stall_s if since is None else since + stall_s - now
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(alarm.wait(), wait_s)
        if counted is not None:
            counted()
        let_go(outbox.why_ended(""))
        if connection is not None:
            await _hang_up_unless_read(outbox, stall_s, connection)
    finally:
        outbox.on_stalled = None


async def _hang_up_unless_read(outbox: Outbox, stall_s: float, connection: Connection) -> None:
    """Give a stalled stream's client ``stall_s`` from its last progress (a write done, or
    fewer bytes unread) to read what is left, Closed included; else hang up."""
    mark, last, unread = time.monotonic(), outbox.writing_since, connection.unread()
    while True:
        writing = outbox.writing_since is not None or not outbox.empty()
        now_unread = connection.unread()
        if not writing and not now_unread:
            return  # the client has read it all
        now = time.monotonic()
        if outbox.writing_since != last or now_unread < unread:
            mark = now
        last, unread = outbox.writing_since, now_unread
        left = mark + stall_s - now
        if left <= 0:
            connection.hang_up()
            return
        await asyncio.sleep(min(left, HANG_UP_POLL_S))
