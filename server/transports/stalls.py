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
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from bullring.server.match.outbox import Outbox


def stalled_for(stall_s: float) -> str:
    """How a stream ended for a write that waited ``stall_s``: its ``Closed`` message's
    and the match log's words."""
    return f"a write waited {stall_s:g} s for the client to read"


async def guard_writes(outbox: Outbox, stall_s: float, let_go: Callable[[str], None],
                       hang_up: Callable[[], None] | None = None) -> None:
    """Watch ``outbox``'s writes until cancelled (by the stream, when it ends): end it as
    stalled once a write has waited ``stall_s`` (see the module's docstring), tell
    ``let_go`` why, and ``hang_up`` if the client still reads nothing ``stall_s`` later."""
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
        let_go(outbox.why_ended(""))
        if hang_up is None:
            return
        # The stream's writer may still wait on its last write: give the client one more
        # stall period to read what is left, Closed included, from the stall or from its
        # writer's last progress.
        mark, last = time.monotonic(), outbox.writing_since
        while outbox.writing_since is not None or not outbox.empty():
            if outbox.writing_since != last:
                mark, last = time.monotonic(), outbox.writing_since
            left = mark + stall_s - time.monotonic()
            if left <= 0:
                hang_up()
                return
            await asyncio.sleep(left)
    finally:
        outbox.on_stalled = None
