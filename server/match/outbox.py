"""The outbox of one seat connection: the messages waiting to be written to it, in order.

Every message for a connection goes through its outbox (verdicts, events, decision requests,
the end). Taking a decision request out to write it tells the match runner the request is
sent, which starts the seat's clock; an outbox left too long unread ends its connection.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb

MAX_UNREAD = 1_000
"""Messages a seat's connection may leave unread before its outbox ends it as stalled. A
bot that stopped reading (struck out, say, while its match plays on with defaults at once)
must not make the server hold an ever longer queue; a live bot is sent a few messages per
decision point and reads them as they come."""


class Outbox:
    """The messages waiting for one connection of a seat, in order, each a serialized
    PlayResponse; None ends the connection. Every message for the connection goes through
    it (verdicts, events, requests, the end), and it holds at most ``limit``: one more and
    it drops them all and ends the connection (``stalled``), so a client that stops
    reading can never make the server hold an ever longer queue.

    A lean stand-in for ``asyncio.Queue`` (same ``put_nowait``, ``get``, ``get_nowait``,
    ``empty``, ``qsize``) for one reader: a burst of puts wakes the reader once. Taking a
    decision request out (to write it) tells the runner the request is sent, which starts
    the seat's clock.
    """

    def __init__(self, limit: int = MAX_UNREAD) -> None:
        self._items: collections.deque[tuple[bytes | None, str | None]] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self.limit = limit
        self.ended = False
        """The end (None) is queued: anything put after it is dropped."""
        self.stalled = False
        """Ended because ``limit`` messages were left unread."""
        self.on_sent: Callable[[str], None] | None = None
        """Told the decision id of each request once it is written; set by the runner the
        outbox is attached to (a ladder stream's outbox moves from match to match)."""
        self._writing: list[str] = []
        """The decision ids of the requests taken out and being written."""
        self.closed_by: pb.Closed | None = None
        """Why the server ended this connection on purpose (``end``), if it did."""

    def put_nowait(self, item: bytes | None, decision_id: str | None = None) -> None:
        """Queue ``item`` (the request of ``decision_id``, if given) and wake the reader;
        past the limit, end the connection instead."""
        if self.ended:
            return
        if item is None:
            self.ended = True
        elif len(self._items) >= self.limit:
            self.stalled = self.ended = True
            self._items.clear()
            item = decision_id = None
        self._items.append((item, decision_id))
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def close(self) -> None:
        """Drop every waiting message and end the connection."""
        if not self.ended:
            self._items.clear()
            self.put_nowait(None)

    def why_ended(self, otherwise: str) -> str:
        """Why the connection ended, for the match log: ``otherwise`` unless stalled."""
        return f"stalled: {self.limit} messages unread" if self.stalled else otherwise

    def end(self, closed: pb.Closed) -> None:
        """End the connection on purpose: ``closed`` is its last message (an outbox that
        has already ended is left as it is)."""
        if self.ended:
            return
        self.closed_by = closed
        self.put_message(pb.PlayResponse(closed=closed))
        self.put_nowait(None)

    def put_message(self, message: pb.PlayResponse) -> None:
        """Queue a PlayResponse that is not a decision request."""
        self.put_nowait(message.SerializeToString())

    def empty(self) -> bool:
        """True if nothing is waiting."""
        return not self._items

    def qsize(self) -> int:
        """How many messages are waiting."""
        return len(self._items)

    def get_nowait(self) -> bytes | None:
        """Take the next message (``asyncio.QueueEmpty`` if none) to write it; a decision
        request counts as sent once written (see ``written``)."""
        if not self._items:
            raise asyncio.QueueEmpty
        item, decision_id = self._items.popleft()
        if decision_id is not None:
            self._writing.append(decision_id)
        return item

    def written(self) -> None:
        """What was taken out is written: its decision requests are sent, their seats'
        clocks start now. (``get`` says so itself: a stream asks for its next message once
        its last write has completed.)"""
        if self._writing:
            sent, self._writing = self._writing, []
            if self.on_sent is not None:
                for decision_id in sent:
                    self.on_sent(decision_id)

    async def get(self) -> bytes | None:
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


def replaced(via: str) -> pb.Closed:
    """The end of a connection that a newer one with the same token took over; ``via``
    names the newer one (transport and peer address)."""
    return pb.Closed(reason=pb.CLOSE_REASON_REPLACED,
                     message="replaced by a newer connection with the same token"
                             + (f" ({via})" if via else ""))
