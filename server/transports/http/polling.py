"""Long-poll connections: the HTTP twin of a Subscribe stream, for a seat or a ladder bot.

A poll without ``after`` joins: it opens a new connection (a seat's, exactly like
Subscribe, or a registered bot's place on a ladder, exactly like ``Join(ladder=GAME)``), and
its outbox is drained into a numbered log. A poll with ``after=SEQ`` acknowledges every
message up to SEQ and waits for newer ones, so a lost response is simply asked for again.
Numbers go on across a token's connections, so a poll whose ``after`` comes before the
newest connection's first message is from a connection that was replaced: it is answered
with that connection's end. A connection nobody polls for ``lease_s`` is closed, as a closed
stream would be (CLOSE_REASON_LEASE_EXPIRED), and so is one that leaves more than its
outbox's limit of bytes unacknowledged (CLOSE_REASON_STALLED).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Hashable
from typing import Any

from prometheus_client import Gauge

from bullring.contract import codec
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.contract.messages import Closed, Outgoing
from bullring.server.errors import InvalidRequestError
from bullring.server.match.outbox import Outbox, replaced
from bullring.server.transports.http.proto_json import play_json

AHEAD = ("after={after} is ahead of this connection's newest message ({last}): poll with the "
         "last seq received, or without 'after' to join again")
"""Why a poll whose ``after`` names a message not sent yet is refused (422)."""

LEASE_S = 30.0
"""A long-poll connection with no poll for this long is closed (the seat is disconnected)."""

STALLED = ("the server ended this connection: more than {} bytes of messages were left "
           "unacknowledged ('after' stayed behind); poll without 'after' to join again")
"""The end of a connection whose polls stopped acknowledging (``after`` left behind): its
messages are bounded in bytes as a stream's outbox is (``server/match/outbox.py``)."""

Connect = Callable[[], tuple[Outbox, Callable[[str], None]]]
"""Opens a connection: its outbox, and what to call (with a reason) once it ends."""

PollAnswer = tuple[list[dict[str, Any]], bool]
"""The messages of a poll (each a PlayResponse as proto JSON plus ``seq``) and whether the
connection has ended."""


class PollSession:
    """One long-poll connection: its outbox drained into a numbered log."""

    def __init__(self, outbox: Outbox, on_close: Callable[[str], None], first_seq: int,
                 lease_s: float, via: str, gauge: Gauge | None = None) -> None:
        self.outbox = outbox
        self.gauge = gauge
        """The gauge of open long-poll connections (the server's metrics), if any."""
        self.on_close = on_close
        self.first_seq = first_seq
        """The number of this connection's first message."""
        self.lease_s = lease_s
        self.via = via
        """Its transport and peer address, as a connection it replaces is told."""
        self.log: list[tuple[int, dict[str, Any], int]] = []
        """The messages not yet acknowledged: seq, proto JSON, size on the wire."""
        self.log_bytes = 0
        """Their size, bounded by the outbox's limit."""
        self.next_seq = first_seq
        self.closed = False
        self.closed_at = 0.0
        self.previous: PollSession | None = None
        """The connection this one replaced, kept to answer its last polls with its end."""
        self._changed = asyncio.Event()
        self._waiting = 0
        self._last_poll = time.monotonic()
        self._pump = asyncio.create_task(self._drain(), name="poll")
        if gauge is not None:
            gauge.inc()

    def _expired(self) -> bool:
        return self._waiting == 0 and time.monotonic() - self._last_poll >= self.lease_s

    async def _drain(self) -> None:
        """Move the outbox into the log as messages come; close at the end or on expiry."""
        while not self.closed:
            if self._expired():
                self._append(Closed(
                    pb.CLOSE_REASON_LEASE_EXPIRED,
                    f"no poll for {self.lease_s:g} s: this connection ended; poll without "
                    f"'after' to join again"))
                self._close(f"no poll for {self.lease_s:g}s")
                return
            left = self.lease_s if self._waiting else \
                self._last_poll + self.lease_s - time.monotonic()
            try:
                await asyncio.wait_for(self.outbox.wait(), max(0.05, left))
            except TimeoutError:
                continue
            self._drain_now()

    def _drain_now(self) -> None:
        """Move what the outbox holds right now into the log."""
        while not self.closed:
            try:
                item = self.outbox.get_nowait()
            except asyncio.QueueEmpty:
                self.outbox.written()  # in the log, to be answered: the requests are sent
                return
            self._take(item)

    def _take(self, item: Outgoing | None) -> None:
        if item is None:
            self._close(self.outbox.why_ended("poll connection closed"))
            return
        size = codec.size(item)
        if self.log_bytes + size > self.outbox.limit:  # the outbox's bound holds here too
            self.outbox.close()
            self._append(Closed(pb.CLOSE_REASON_STALLED, STALLED.format(self.outbox.limit)))
            self._close(f"stalled: {self.outbox.limit} bytes left unacknowledged")
            return
        self._append(item, size)

    def _append(self, message: Outgoing, size: int = 0) -> None:
        self.log.append((self.next_seq, play_json(message), size))
        self.log_bytes += size
        self.next_seq += 1
        self._wake()

    def close(self, closed: Closed | None = None) -> None:
        """End this connection now, with ``closed`` as its last message if given."""
        self._drain_now()
        if closed is not None and not self.closed:
            self._append(closed)
        self._close("poll connection closed")

    def _close(self, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        self.closed_at = time.monotonic()
        if self.gauge is not None:
            self.gauge.dec()
        self._wake()
        self.on_close(reason)
        if self._pump is not asyncio.current_task():
            self._pump.cancel()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def pending_after(self, after: int) -> list[dict[str, Any]]:
        """Drop the messages up to ``after`` (acknowledged); return the newer ones."""
        self.log = [entry for entry in self.log if entry[0] > after]
        self.log_bytes = sum(size for _, _, size in self.log)
        return [{"seq": seq, **m} for seq, m, _ in self.log]

    def owns(self, after: int) -> bool:
        """True if a poll with ``after`` continues this connection (not an older one)."""
        return after >= self.first_seq - 1

    async def poll(self, after: int, wait_s: float) -> PollAnswer:
        """Messages newer than ``after``, waiting up to ``wait_s`` for one; and whether this
        connection has ended. An ``after`` this connection has not reached yet is refused
        (``AHEAD``): it would acknowledge messages before they are sent, and they would be
        dropped unread."""
        self._waiting += 1
        try:
            self._drain_now()
            if after >= self.next_seq:
                raise InvalidRequestError(AHEAD.format(after=after, last=self.next_seq - 1))
            messages = self.pending_after(after)
            if not messages and not self.closed and wait_s > 0:
                changed = self._changed
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), wait_s)
                messages = self.pending_after(after)
            return messages, self.closed
        finally:
            self._waiting -= 1
            self._last_poll = time.monotonic()


class PollSessions:
    """The long-poll connections of this server: the newest per key (a seat, or a bot)."""

    def __init__(self, lease_s: float = LEASE_S) -> None:
        self.lease_s = lease_s
        self._sessions: dict[Hashable, PollSession] = {}
        self.gauge: Gauge | None = None
        """The gauge of open long-poll connections (the server's metrics), if any."""

    def find(self, key: Hashable, after: int) -> PollSession | PollAnswer | None:
        """The connection a poll with ``after`` continues; for a poll from a connection
        replaced and forgotten since, its end; None if ``key`` has no connection here (the
        server restarted, say: the poll joins)."""
        newest = self._sessions.get(key)
        if newest is None:
            return None
        if newest.owns(after):
            return newest
        if newest.previous is not None and newest.previous.owns(after):
            return newest.previous
        return [{"seq": after + 1, **play_json(replaced(newest.via))}], True

    def join(self, key: Hashable, after: int | None, connect: Connect, via: str
             ) -> PollSession:
        """A new connection for ``key`` (``connect`` opens it); an older one of ``key``
        that is still open is ended, told it was replaced (``via`` names the new one)."""
        self._forget_ended()
        old = self._sessions.get(key)
        outbox, on_close = connect()
        if old is not None:
            old.close(replaced(via))
        # Numbers go on across connections, so ``after`` never skips a new message.
        first_seq = max(1 if old is None else old.next_seq, (after or 0) + 1)
        session = PollSession(outbox, on_close, first_seq, self.lease_s, via, self.gauge)
        if old is not None and old.log:
            session.previous = old
            old.previous = None
        self._sessions[key] = session
        return session

    def _forget_ended(self) -> None:
        """Forget connections that ended a lease ago (their polls have had their answer)."""
        now = time.monotonic()
        for key, session in list(self._sessions.items()):
            if session.closed and now - session.closed_at >= self.lease_s:
                del self._sessions[key]
