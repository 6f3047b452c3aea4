"""Long-poll connections of seats: the HTTP twin of a Subscribe stream.

A poll without ``after`` joins (attaches a new connection to the seat, exactly like
Subscribe); the runner's outbox is then drained into a numbered log. A poll with
``after=SEQ`` acknowledges every message up to SEQ and waits for newer ones, so a lost
response is simply asked for again. A seat nobody polls for ``lease_s`` is detached, as a
closed stream would be.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from client_sdk.generated.bullring.v2 import referee_pb2 as pb
from server.api.proto_json import to_json
from server.match_runner import MatchRunner

LEASE_S = 30.0
"""A long-poll connection with no poll for this long is closed (the seat is disconnected)."""


class PollSession:
    """One seat's long-poll connection to a runner."""

    def __init__(self, runner: MatchRunner, seat: int, first_seq: int, lease_s: float) -> None:
        self.runner = runner
        self.seat = seat
        self.lease_s = lease_s
        self.outbox, self.connection = runner.attach(seat)
        self.log: list[tuple[int, dict[str, Any]]] = []
        self.next_seq = first_seq
        self.closed = False
        self._changed = asyncio.Event()
        self._waiting = 0
        self._last_poll = time.monotonic()
        self._pump = asyncio.create_task(self._drain(), name=f"poll-{seat}")

    def _expired(self) -> bool:
        return self._waiting == 0 and time.monotonic() - self._last_poll >= self.lease_s

    async def _drain(self) -> None:
        """Move the outbox into the log as messages come; close at the end or on expiry."""
        while not self.closed:
            if self._expired():
                self._close(f"no poll for {self.lease_s:g}s")
                return
            left = self.lease_s if self._waiting else \
                self._last_poll + self.lease_s - time.monotonic()
            try:
                item = await asyncio.wait_for(self.outbox.get(), max(0.05, left))
            except TimeoutError:
                continue
            self._take(item)

    def _drain_now(self) -> None:
        """Move what the outbox holds right now into the log."""
        while not self.closed:
            try:
                item = self.outbox.get_nowait()
            except asyncio.QueueEmpty:
                self.outbox.written()  # in the log, to be answered: the requests are sent
                return
            self._take(item)

    def _take(self, item: bytes | None) -> None:
        if item is None:
            self._close("poll connection closed")
            return
        self.log.append((self.next_seq, to_json(pb.PlayResponse.FromString(item))))
        self.next_seq += 1
        self._wake()

    def _close(self, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        self._wake()
        self.runner.detach(self.seat, self.connection, reason)
        if self._pump is not asyncio.current_task():
            self._pump.cancel()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def pending_after(self, after: int) -> list[dict[str, Any]]:
        """Drop the messages up to ``after`` (acknowledged); return the newer ones."""
        self.log = [(seq, m) for seq, m in self.log if seq > after]
        return [{"seq": seq, **m} for seq, m in self.log]

    async def poll(self, after: int, wait_s: float) -> tuple[list[dict[str, Any]], bool]:
        """Messages newer than ``after``, waiting up to ``wait_s`` for one; and whether this
        connection has ended."""
        self._waiting += 1
        try:
            self._drain_now()
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
    """The long-poll connections of this server, one per (match, seat) at most."""

    def __init__(self, lease_s: float = LEASE_S) -> None:
        self.lease_s = lease_s
        self._sessions: dict[tuple[str, int], PollSession] = {}

    def session(self, runner: MatchRunner, seat: int, after: int | None) -> PollSession:
        """The seat's connection to continue after ``after``, or a new one (a join) when
        ``after`` is None or the old connection has ended with nothing left to deliver."""
        key = (runner.config.match_id, seat)
        old = self._sessions.get(key)
        if old is not None and after is not None and old.runner is runner and \
                (not old.closed or old.pending_after(after)):
            return old
        for other, ended in list(self._sessions.items()):  # forget delivered, ended ones
            if ended.closed and not ended.log and other != key:
                del self._sessions[other]
        # Numbers go on across connections, so ``after`` never skips a new message.
        first_seq = max(1 if old is None else old.next_seq, (after or 0) + 1)
        session = PollSession(runner, seat, first_seq, self.lease_s)
        self._sessions[key] = session
        return session
