"""The outbox of one seat connection: the messages waiting to be written to it, in order.

Every message for a connection goes through its outbox (verdicts, events, decision requests,
the end). Taking a decision request out to write it tells the match runner the request is
sent, which starts the seat's clock. An outbox left holding too many bytes unread ends its
connection as stalled, and so does its transport when a write waits too long for the client
(``bullring.server.transports.stalls``): either way the connection's last message is
``Closed`` with reason STALLED.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable

from bullring.contract import codec
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.contract.messages import Closed, Outgoing, Request

MAX_UNREAD_BYTES = 256 << 10
"""Bytes a connection may leave unread in its outbox before it is ended as stalled (256
KiB: a few whole matches of messages). A bot that stopped reading (struck out, say, while
its match plays on with defaults at once) must not make the server hold an ever longer
queue; a live bot is sent a few hundred bytes per decision point and reads them as they
come."""


class Outbox:
    """The messages waiting for one connection, in order, each a typed message (a seat's
    ``Outgoing``, a spectator's ``Watched``) that its transport encodes; None ends the
    connection. Every message
    for the connection goes through it (verdicts, events, requests, the end), and it holds
    at most ``limit`` bytes (each message counted as the gRPC stream writes it): past that
    it drops them all and ends the connection
    (``stalled``, with a last ``Closed`` message for a seat's), so a client that stops
    reading can never make the server hold an ever longer queue.

    A lean stand-in for ``asyncio.Queue`` (same ``put_nowait``, ``get``, ``get_nowait``,
    ``empty``, ``qsize``) for one reader: a burst of puts wakes the reader once. Taking a
    decision request out (to write it) tells the runner the request is sent, which starts
    the seat's clock; ``writing_since`` says since when a write has waited.
    """

    def __init__(self, limit: int = MAX_UNREAD_BYTES, seat: bool = True) -> None:
        self._items: collections.deque[tuple[Outgoing | None, int]] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self.limit = limit
        """The most bytes it holds unread."""
        self.seat = seat
        """It holds PlayResponses (a seat's): it ends with ``Closed`` when stalled."""
        self.unread = 0
        """The bytes waiting in it."""
        self.ended = False
        """The end (None) is queued: anything put after it is dropped."""
        self.stalled = False
        """Ended because its client did not read (``stalled_why`` says how)."""
        self.stalled_why = ""
        """Why it was ended as stalled, for the match log and the ``Closed`` message."""
        self.on_stalled: Callable[[], None] | None = None
        """Told when it stalls (set by the transport writing it, which then lets go)."""
        self.on_sent: Callable[[str], None] | None = None
        """Told the decision id of each request once it is written; set by the runner the
        outbox is attached to (a ladder stream's outbox moves from match to match)."""
        self._writing: list[str] = []
        """The decision ids of the requests taken out and being written."""
        self.writing_since: float | None = None
        """When (monotonic seconds) the messages being written were taken out; None while
        the writer waits for more (what it took is written)."""
        self.closed_by: Closed | None = None
        """Why the server ended this connection on purpose (``end`` or ``stall``), if it
        did."""

    def put_nowait(self, item: Outgoing | None) -> None:
        """Queue ``item`` and wake the reader; past the limit, end the connection as
        stalled instead."""
        if self.ended:
            return
        if item is None:
            self.ended = True
            self._push(None, 0)
            return
        size = len(codec.play_bytes(item) if self.seat
                   else codec.watch_bytes(item))  # type: ignore[arg-type]  # an Event or Ended
        if self.unread + size > self.limit:
            self.stall(f"{self.limit} bytes left unread")
            return
        self._push(item, size)

    def _push(self, item: Outgoing | None, size: int) -> None:
        """Queue ``item`` (``size`` bytes) whatever the limit, and wake the reader."""
        self.unread += size
        self._items.append((item, size))
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def stall(self, why: str) -> None:
        """End the connection because its client does not read (``why``): drop every
        waiting message; a seat's last message is ``Closed`` (STALLED) saying so. An
        outbox that has stalled already, or that the server ended on purpose (``end``),
        keeps its messages."""
        if self.stalled:
            return
        self.stalled = True
        self.stalled_why = f"stalled: {why}"
        if self.ended and self.closed_by is not None:
            return  # ended on purpose already: its Closed says what to do
        self.ended = True
        self._items.clear()
        self.unread = 0
        if self.seat:
            self.closed_by = Closed(
                pb.CLOSE_REASON_STALLED,
                f"the server ended this connection: {why} (the client does not read what "
                f"it is sent); connect again")
            self._push(self.closed_by, 0)
        self._push(None, 0)
        if self.on_stalled is not None:
            self.on_stalled()

    def close(self) -> None:
        """Drop every waiting message and end the connection."""
        if not self.ended:
            self._items.clear()
            self.unread = 0
            self.put_nowait(None)

    def why_ended(self, otherwise: str) -> str:
        """Why the connection ended, for the match log: ``otherwise`` unless stalled."""
        return self.stalled_why if self.stalled else otherwise

    def end(self, closed: Closed) -> None:
        """End the connection on purpose: ``closed`` is its last message (an outbox that
        has already ended is left as it is)."""
        if self.ended:
            return
        self.closed_by = closed
        self._push(closed, 0)
        self.put_nowait(None)

    def empty(self) -> bool:
        """True if nothing is waiting."""
        return not self._items

    def qsize(self) -> int:
        """How many messages are waiting."""
        return len(self._items)

    def get_nowait(self) -> Outgoing | None:
        """Take the next message (``asyncio.QueueEmpty`` if none) to write it; a decision
        request counts as sent once written (see ``written``)."""
        if not self._items:
            raise asyncio.QueueEmpty
        item, size = self._items.popleft()
        self.unread -= size
        if type(item) is Request:
            self._writing.append(item.decision_id)
        if self.writing_since is None:
            self.writing_since = time.monotonic()
        return item

    def written(self) -> None:
        """What was taken out is written: its decision requests are sent, their seats'
        clocks start now. (``get`` says so itself: a stream asks for its next message once
        its last write has completed.)"""
        self.writing_since = None
        if self._writing:
            sent, self._writing = self._writing, []
            if self.on_sent is not None:
                for decision_id in sent:
                    self.on_sent(decision_id)

    async def get(self) -> Outgoing | None:
        """Wait for the next message and take it (what was taken before is written)."""
        self.written()
        if not self._items:  # no extra coroutine on the hot path, where messages wait
            await self.wait()
        return self.get_nowait()

    async def wait(self) -> None:
        """Wait until a message is waiting, without taking it: a reader that may be
        cancelled takes messages only where a cancellation cannot lose one."""
        while not self._items:
            waiter = self._waiter
            if waiter is None or waiter.done():  # done: a cancelled earlier wait
                waiter = self._waiter = asyncio.get_running_loop().create_future()
            await waiter
            self.written()


def replaced(via: str) -> Closed:
    """The end of a connection that a newer one with the same token took over; ``via``
    names the newer one (transport and peer address)."""
    return Closed(pb.CLOSE_REASON_REPLACED,
                  "replaced by a newer connection with the same token"
                  + (f" ({via})" if via else ""))
