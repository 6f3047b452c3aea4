"""The clock of a match: when each seat's answer is due, and the one timer that watches it.

A seat's deadline runs from when its request is taken out of the seat's outbox to be written
to its connection, not from when the runner queued it: a busy server never eats a bot's time.
A request still unsent one deadline after it was queued (a stalled connection) counts as sent
then, so a decision point never lasts longer than two deadlines. Time the server itself runs
late (its event loop busy, its process starved; see ``LoopWatch``) is on no seat's clock.

With a time bank (the ``time_bank_ms`` setting) each seat's answer is due that much later
in all, over the whole match: an answer after the deadline spends from the seat's bank what
it took beyond the deadline, and a timeout spends what was left. The match log's answer and
timeout entries say what each spent and what is left (``bank_spent_ms``, ``bank_left_ms``),
so a replay's verifier recomputes the bank (``bullring.referee.replay``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from bullring.referee.core import Action

TICK_S = 0.02
"""How often the loop watch checks that the event loop runs on time."""

ON_TIME_S = 0.01
"""How late the event loop may run a callback and still count as on time; lateness beyond
this is the server's, and no seat's clock runs during it."""


class LoopWatch:
    """How late this process's event loop has run, in total: a tick every ``TICK_S`` notes
    how much later than asked it ran. A seat's clock stops while the server is late (its
    loop busy, its process starved), so a server that could not read an answer in time,
    or send a request, never charges the seat a timeout for it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.late = 0.0
        """Seconds the loop has run more than ``ON_TIME_S`` late, summed over its ticks."""
        self._due = loop.time() + TICK_S
        self._handle: asyncio.TimerHandle | None = loop.call_at(self._due, self._tick)

    def _tick(self) -> None:
        now = self.loop.time()
        behind = now - self._due
        if behind > ON_TIME_S:
            self.late += behind - ON_TIME_S
        self._due = now + TICK_S
        self._handle = self.loop.call_at(self._due, self._tick)

    def late_now(self) -> float:
        """``late`` including the tick the loop is overdue with right now (a callback that
        runs just after a stall sees the stall before the tick has counted it)."""
        behind = self.loop.time() - self._due
        return self.late + (behind - ON_TIME_S if behind > ON_TIME_S else 0.0)


_watch: LoopWatch | None = None


def loop_watch() -> LoopWatch:
    """The running event loop's watch (started on first use)."""
    global _watch
    loop = asyncio.get_running_loop()
    if _watch is None or _watch.loop is not loop:
        _watch = LoopWatch(loop)
    return _watch


@dataclass(eq=False, slots=True)
class Pending:
    """The decision point in progress: who must answer, with which ids, and what came in."""

    ids: dict[int, str]
    opened: float = 0.0
    """When the requests were queued (monotonic seconds)."""
    sent_at: dict[int, float] = field(default_factory=dict)
    """When each seat's request was first written: its clock starts there."""
    late_at_open: float = 0.0
    """The loop watch's lateness when the point opened."""
    late_at_sent: dict[int, float] = field(default_factory=dict)
    """The loop watch's lateness when each seat's request was written."""
    answers: dict[int, Action] = field(default_factory=dict)
    closing: bool = False
    """Every seat has an answer: the point is resolved by ``settle``, on the next loop pass
    (defaults) or, if nobody settles it, by the deadline timer."""

    def mark_complete(self) -> bool:
        """Mark this point closing once every pending seat has an answer; True if this
        call did."""
        if self.closing or self.answers.keys() != self.ids.keys():
            return False
        self.closing = True
        return True


class MatchClock:
    """The deadlines of one match's decision points and its deadline timer: one per match,
    at or before the earliest deadline of the decision point in progress. It is left to run
    when a point ends early (a point lasts far less than a deadline when bots answer at
    once), and re-armed for the point in progress when it fires, so a decision costs no
    timer of its own."""

    def __init__(self, deadline_s: float, bank_ms: int = 0, seats: int = 0) -> None:
        self.deadline_s = deadline_s
        """How long a seat has to answer a request (seconds)."""
        self.banked = bank_ms > 0
        """Whether the match has a time bank."""
        self.bank_ms = [float(bank_ms)] * seats
        """What is left of each seat's time bank (ms)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watch: LoopWatch | None = None
        """How late the event loop runs (set once the match runs)."""
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0
        """When the deadline timer fires (monotonic seconds)."""

    def start(self) -> None:
        """Run on the running event loop (the match starts)."""
        self._loop = asyncio.get_running_loop()
        self._watch = loop_watch()

    def open(self, ids: dict[int, str], now: float) -> Pending:
        """A decision point whose requests (``ids``, by seat) are queued ``now``."""
        return Pending(ids, opened=now, late_at_open=self.late())

    def sent(self, pending: Pending, seat: int, now: float) -> None:
        """``seat``'s request of ``pending`` is written ``now``: its clock starts (once)."""
        if seat not in pending.sent_at:
            pending.sent_at[seat] = now
            pending.late_at_sent[seat] = self.late()

    def due(self, pending: Pending, seat: int, now: float) -> float:
        """When ``seat``'s answer is due: a deadline after its request was written (if
        unwritten, as if written ``now``), and at most two deadlines after the request was
        queued; in both, not counting the time the server ran late meanwhile."""
        late = self.late()
        bank = self.bank_ms[seat] / 1000 if self.banked else 0.0
        sent = pending.sent_at.get(seat)
        answer_by = now + self.deadline_s if sent is None else \
            sent + self.deadline_s + (late - pending.late_at_sent[seat])
        return bank + min(answer_by, pending.opened + 2 * self.deadline_s +
                          (late - pending.late_at_open))

    def overdue(self, pending: Pending, now: float) -> list[int]:
        """The seats of ``pending`` still to answer whose time is up at ``now``."""
        return [seat for seat in pending.ids
                if seat not in pending.answers and self.due(pending, seat, now) <= now]

    def left(self, pending: Pending, now: float) -> list[tuple[int, float]]:
        """The seats of ``pending`` still to answer, each with the seconds left at ``now``."""
        return [(seat, max(0.0, self.due(pending, seat, now) - now))
                for seat in sorted(pending.ids) if seat not in pending.answers]

    def took(self, pending: Pending, seat: int, now: float) -> dict[str, float]:
        """How long ``seat``'s answer of ``now`` took (``ms``, from its request's writing)
        and, if the server ran late meanwhile, by how much (``server_late_ms``: not counted
        against the seat's deadline), for the answer's entry in the match log."""
        timing = {"ms": round((now - pending.sent_at.get(seat, now)) * 1000, 3)}
        late_ms = self.late_ms(pending, seat)
        if late_ms:
            timing["server_late_ms"] = late_ms
        if self.banked:
            over = timing["ms"] - self.deadline_s * 1000 - late_ms
            timing.update(self._spend(seat, max(0.0, over)))
        return timing

    def exhaust(self, seat: int) -> dict[str, float]:
        """``seat`` timed out: it spent what was left of its bank (fields for the timeout's
        entry in the match log; none without a time bank)."""
        return self._spend(seat, self.bank_ms[seat]) if self.banked else {}

    def _spend(self, seat: int, over_ms: float) -> dict[str, float]:
        spent = round(min(over_ms, self.bank_ms[seat]), 3)
        self.bank_ms[seat] = round(self.bank_ms[seat] - spent, 3)
        return {"bank_spent_ms": spent, "bank_left_ms": self.bank_ms[seat]}

    def late_ms(self, pending: Pending, seat: int) -> float:
        """How late the server ran since ``seat``'s request was queued (ms)."""
        return round((self.late() - pending.late_at_open) * 1000, 1)

    def late(self) -> float:
        """The loop watch's lateness so far (0 before the match runs)."""
        return 0.0 if self._watch is None else self._watch.late_now()

    def wake_at(self, due: float, on_time: Callable[[], None]) -> None:
        """Have the deadline timer fire at ``due`` or earlier and call ``on_time`` (passed
        each time, not kept: a finished match's runner is freed by reference counting)."""
        assert self._loop is not None
        if self._timer is not None:
            if self._timer_at <= due:
                return  # it fires first, and re-arms for what is pending then
            self._timer.cancel()
        self._timer_at = due
        self._timer = self._loop.call_at(due, self._fire, on_time)

    def arm(self, pending: Pending, now: float, on_time: Callable[[], None]) -> None:
        """Set the deadline timer (see ``wake_at``) for the earliest seat still to answer."""
        due = min((self.due(pending, seat, now) for seat in pending.ids
                   if seat not in pending.answers), default=None)
        if due is not None:
            self.wake_at(due, on_time)

    def stop(self) -> None:
        """Cancel the deadline timer."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fire(self, on_time: Callable[[], None]) -> None:
        self._timer = None
        on_time()
