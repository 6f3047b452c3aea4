"""The match runner: one per live match, the only owner of time.

It sends each pending seat its decision request, waits until every pending seat has answered
or its deadline has passed (never longer), fills default actions (docs/rules.md §3), counts
strikes, marks silent or vanished seats disconnected, and lets them back into their seat.

A seat's deadline runs from when its request is taken out of the seat's outbox to be written
to its connection, not from when the runner queued it: a busy server never eats a bot's time.
A request still unsent one deadline after it was queued (a stalled connection) counts as sent
then, so a decision point never lasts longer than two deadlines.

Decision points are driven by callbacks on the event loop rather than a task per decision:
the stream that delivers the last answer resolves the point as soon as it has queued the
answer's verdict (``settle``), and one timer per match handles deadlines. So the events and
the next request reach the seat's outbox before its stream wakes up to write the verdict,
and a client that accepts batches gets them all in one message.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from client_sdk import wire
from client_sdk.bot import Bot
from client_sdk.generated.bullring.v2 import referee_pb2 as pb
from client_sdk.house import house_bot
from referee.core import Action, IllegalActionError, MalformedActionError, RefereeError
from referee.registry import GameState, get_game
from referee.replay import answer_event, build_replay
from server import outgoing
from server.store import MatchConfig

log = logging.getLogger("bullring.match")

MAX_UNREAD = 1_000
"""Messages a seat's connection may leave unread before its outbox ends it as stalled. A
bot that stopped reading (struck out, say, while its match plays on with defaults at once)
must not make the server hold an ever longer queue; a live bot is sent a few messages per
decision point and reads them as they come."""

MAX_REJECTS_LOGGED = 20
"""Rejected answers of one seat logged per decision point; the rest are answered, unlogged."""

MAX_ID_LOGGED = 64
"""The longest decision id a rejection repeats in the log or its message (real ids are far
shorter; the verdict itself carries the id as given)."""

INLINE_POINTS = 16
"""How many decision points answered by house bots alone one loop pass may resolve in a row
before it lets the other matches run."""


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


@dataclass(eq=False)
class SeatLink:
    """The server's side of one seat: its live connection (if any) and its strike count."""

    seat: int
    name: str
    house: Bot | None = None
    outbox: Outbox | None = None
    """Messages for the connected stream; None while nobody is connected."""
    disconnected: bool = True
    strikes: int = 0
    joined_once: bool = False
    connection: int = 0
    """Counts connections, so a stale stream cannot detach a newer one."""
    lasting: bool = False
    """The outbox belongs to a ladder stream that outlives this match: never closed here."""
    rejects_step: int = -1
    """The decision point (engine step) ``rejects_logged`` counts for."""
    rejects_logged: int = 0
    """Answers of this seat rejected at that point."""


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


class MatchRunner:
    """Runs one stored match to its end over whatever seat connections come and go."""

    def __init__(self, config: MatchConfig,
                 on_finish: Callable[[dict[str, Any]], Awaitable[None]],
                 start_timeout_s: float = 60.0) -> None:
        self.config = config
        self.spec = get_game(config.game)
        self.state: GameState = self.spec.new_state(len(config.seat_names), config.settings,
                                                    config.seed)
        self.deadline_s = int(self.state.settings["deadline_ms"]) / 1000
        self.max_timeouts = int(self.state.settings["max_timeouts"])
        self.seats = [SeatLink(s, name) for s, name in enumerate(config.seat_names)]
        for seat, bot_name in config.house.items():
            link = self.seats[seat]
            link.house = house_bot(bot_name, self.spec.id, seat)
            link.disconnected = False
        self.log: list[dict[str, Any]] = []
        self.public: list[bytes] = []
        """Every public event so far, each a serialized PublicEvent."""
        self.spectators: list[asyncio.Queue[pb.WatchResponse | None]] = []
        self.pending: Pending | None = None
        self.ended: pb.MatchEnded | None = None
        self.started = asyncio.Event()
        self.done = asyncio.Event()
        self.start_timeout_s = start_timeout_s
        self._on_finish = on_finish
        self._all_joined = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._over: asyncio.Future[None] | None = None
        """Resolved when the game is over (or failed), once the match has started."""
        self._clock: asyncio.TimerHandle | None = None
        """The deadline timer: one per match, at or before the earliest deadline of the
        decision point in progress. It is left to run when a point ends early (a point
        lasts far less than a deadline when bots answer at once), and re-armed for the
        point in progress when it fires, so a decision costs no timer of its own."""
        self._clock_at = 0.0
        """When the deadline timer fires (monotonic seconds)."""
        self._watch: LoopWatch | None = None
        """How late the event loop runs (set once the match runs)."""
        self._check_all_joined()

    # -- connections ---------------------------------------------------------------------

    def attach(self, seat: int, outbox: Outbox | None = None, via: str = ""
               ) -> tuple[Outbox, int]:
        """Connect a new stream to ``seat``; return its outbox. An older stream of the seat
        is ended with Closed(REPLACED), naming the new one (``via``: its transport and peer).
        A given ``outbox`` (a ladder stream's) is not closed when the match ends."""
        link = self.seats[seat]
        if link.outbox is not None and link.outbox is not outbox:
            link.outbox.end(replaced(via))
        link.lasting = outbox is not None
        link.outbox = Outbox() if outbox is None else outbox
        link.outbox.on_sent = functools.partial(self._sent, seat)
        link.connection += 1
        was_gone = link.disconnected and link.joined_once
        link.disconnected = False
        link.strikes = 0
        link.joined_once = True
        self._event("connect" if not was_gone else "reconnect", seat=seat)
        link.outbox.put_message(self._match_started(seat))
        if self.ended is not None:
            link.outbox.put_message(pb.PlayResponse(match_ended=self.ended))
            if not link.lasting:
                link.outbox.put_nowait(None)
        elif self.pending is not None and seat in self.pending.ids and \
                seat not in self.pending.answers:
            self._send_request(seat)
        self._check_all_joined()
        return link.outbox, link.connection

    def detach(self, seat: int, connection: int, reason: str) -> None:
        """A stream of ``seat`` ended; if it was the live one the seat is now disconnected."""
        link = self.seats[seat]
        if link.connection != connection or link.outbox is None:
            return
        link.outbox = None
        if self.ended is None:
            link.disconnected = True
            self._event("disconnect", seat=seat, reason=reason)
            self._answer_for_absent()

    def watch(self) -> asyncio.Queue[pb.WatchResponse | None]:
        """A queue of every public message of this match, from its start."""
        queue: asyncio.Queue[pb.WatchResponse | None] = asyncio.Queue()
        for public in self.public:
            queue.put_nowait(pb.WatchResponse(event=pb.PublicEvent.FromString(public)))
        if self.ended is not None:
            queue.put_nowait(pb.WatchResponse(match_ended=self.ended))
            queue.put_nowait(None)
        else:
            self.spectators.append(queue)
        return queue

    def unwatch(self, queue: asyncio.Queue[pb.WatchResponse | None]) -> None:
        """Stop feeding a spectator's queue (its connection closed)."""
        with contextlib.suppress(ValueError):
            self.spectators.remove(queue)

    # -- answers -------------------------------------------------------------------------

    def submit(self, seat: int, decision_id: str, action: Action | None, *,
               field: str | None) -> pb.AnswerAccepted | pb.AnswerRejected:
        """Take one answer from ``seat``: accepted, ignored as a duplicate, or rejected.
        ``field`` is the ``Action`` field the answer set (``card``, ``row``, ``word``): one
        that does not answer the pending decision's kind is malformed, whatever its value.

        An answer that completes the decision point does not resolve it: the caller calls
        ``settle`` once it has delivered the verdict, so the events and the next request
        come after the verdict (the deadline timer resolves a point left unsettled)."""
        link = self.seats[seat]
        if link.disconnected and link.outbox is not None:
            link.disconnected = False  # a struck-out seat that answers again is back
            link.strikes = 0
            self._event("reconnect", seat=seat, reason="answered again")
        pending = self.pending
        if pending is None or pending.ids.get(seat) != decision_id:
            return self._reject(seat, decision_id, pb.REJECT_REASON_NOT_PENDING,
                                f"decision {decision_id[:MAX_ID_LOGGED]!r} is not pending for "
                                f"seat {seat}")
        if seat in pending.answers:
            return pb.AnswerAccepted(decision_id=decision_id)  # a retry: counted once
        if action is None:
            return self._reject(seat, decision_id, pb.REJECT_REASON_MALFORMED_ACTION,
                                "the answer carries no action")
        kind = self.state.pending[seat].kind
        expected = wire.ACTION_FIELD[kind]
        if field != expected:
            return self._reject(seat, decision_id, pb.REJECT_REASON_MALFORMED_ACTION,
                                f"a {wire.KIND_NAME[kind]} decision is answered with the "
                                f"action field '{expected}', not '{field}'")
        try:
            self.state.validate(seat, action)
        except MalformedActionError as malformed:  # one name per type: mypyc types a name once
            return self._reject(seat, decision_id, pb.REJECT_REASON_MALFORMED_ACTION,
                                str(malformed))
        except IllegalActionError as illegal:
            return self._reject(seat, decision_id, pb.REJECT_REASON_ILLEGAL_ACTION, str(illegal))
        now = time.monotonic()
        entry = answer_event(self.state, seat, action)
        entry["ms"] = round((now - pending.sent_at.get(seat, now)) * 1000, 3)
        late_ms = self._late_ms(pending, seat)
        if late_ms:
            entry["server_late_ms"] = late_ms  # not counted against the seat's deadline
        self.log.append(entry)
        pending.answers[seat] = action
        link.strikes = 0
        self._mark_complete(pending)
        return pb.AnswerAccepted(decision_id=decision_id)

    def _reject(self, seat: int, decision_id: str, reason: pb.RejectReason,
                message: str) -> pb.AnswerRejected:
        """The rejection of an answer; logged, up to ``MAX_REJECTS_LOGGED`` a seat per
        decision point (a bot that floods wrong answers must not grow the match log)."""
        link = self.seats[seat]
        step = self.state.step
        if link.rejects_step != step:
            link.rejects_step, link.rejects_logged = step, 0
        link.rejects_logged += 1
        if link.rejects_logged <= MAX_REJECTS_LOGGED:
            self._event("reject", seat=seat, decision_id=decision_id[:MAX_ID_LOGGED],
                        reason=pb.RejectReason.Name(reason), message=message)
        return pb.AnswerRejected(decision_id=decision_id, reason=reason, message=message)

    # -- the match -----------------------------------------------------------------------

    async def run(self) -> None:
        """Play the match to its end and hand the replay to ``on_finish``."""
        try:
            if not self._all_joined.is_set():
                await asyncio.wait_for(self._all_joined.wait(), self.start_timeout_s)
        except TimeoutError:
            self._event("start_timeout", missing=[s.seat for s in self.seats
                                                  if not s.joined_once])
        self.started.set()
        self._event("match_start")
        for engine_event in self.state.opening:  # the opening rows or card, for spectators
            self._publish(engine_event)
        self._loop = asyncio.get_running_loop()
        self._watch = loop_watch()
        self._over = self._loop.create_future()
        try:
            if not self.state.over:
                self._check_complete(self._open())
            else:
                self._over.set_result(None)
            await self._over
        except asyncio.CancelledError:
            self._halt()
            await self._finish("aborted")
            raise
        await self._finish("normal")

    def _open(self) -> Pending:
        """Start a decision point: ask every pending seat, answer for the house and absent
        seats, and arm the deadline check if someone must still answer."""
        assert self._loop is not None
        state = self.state
        now = time.monotonic()
        match_id, step = self.config.match_id, state.step
        pending = Pending({seat: f"{match_id}:{step}:{seat}" for seat in state.pending},
                          opened=now, late_at_open=self._late())
        self.pending = pending
        for seat in pending.ids:
            link = self.seats[seat]
            if link.house is not None:
                action = link.house.decide(state.observation(seat))
                self.log.append(answer_event(state, seat, action))
                pending.answers[seat] = action
            else:
                self._send_request(seat)  # a struck-out seat still sees the game go on
        self._default_absent(pending)
        if pending.answers.keys() != pending.ids.keys():
            self._wake_at(now + self.deadline_s)
        return pending

    def _due(self, pending: Pending, seat: int, now: float) -> float:
        """When ``seat``'s answer is due: a deadline after its request was written (if
        unwritten, as if written ``now``), and at most two deadlines after the request was
        queued; in both, not counting the time the server ran late meanwhile."""
        late = self._late()
        sent = pending.sent_at.get(seat)
        answer_by = now + self.deadline_s if sent is None else \
            sent + self.deadline_s + (late - pending.late_at_sent[seat])
        return min(answer_by, pending.opened + 2 * self.deadline_s +
                   (late - pending.late_at_open))

    def _late_ms(self, pending: Pending, seat: int) -> float:
        """How late the server ran since ``seat``'s request was queued (ms)."""
        return round((self._late() - pending.late_at_open) * 1000, 1)

    def _late(self) -> float:
        """The loop watch's lateness so far (0 before the match runs)."""
        return 0.0 if self._watch is None else self._watch.late_now()

    def waiting(self) -> list[tuple[int, float]]:
        """The seats that must still answer the decision point in progress, each with the
        seconds left before its deadline: public facts (whose turn it is and the clock),
        never what anyone chose. Empty between decision points and once the match ended."""
        pending = self.pending
        if pending is None or pending.closing or self.done.is_set():
            return []
        now = time.monotonic()
        return [(seat, max(0.0, self._due(pending, seat, now) - now))
                for seat in sorted(pending.ids) if seat not in pending.answers]

    def _wake_at(self, due: float) -> None:
        """Have the deadline timer fire at ``due`` or earlier."""
        assert self._loop is not None
        if self._clock is not None:
            if self._clock_at <= due:
                return  # it fires first, and re-arms for what is pending then
            self._clock.cancel()
        self._clock_at = due
        self._clock = self._loop.call_at(due, self._on_clock)

    def _on_clock(self) -> None:
        """The deadline timer: if some seat's time is up, check once the answers the server
        has already received are read (see ``_charge``); else wait for the next deadline."""
        self._clock = None
        pending = self.pending
        if pending is None:
            return  # the next decision point arms the timer again
        if pending.closing:
            self._close(pending)  # complete, but nobody settled it (resolved twice: no-op)
            return
        assert self._loop is not None
        now = time.monotonic()
        if any(seat not in pending.answers and self._due(pending, seat, now) <= now
               for seat in pending.ids):
            self._loop.call_soon(self._charge, pending)
        else:
            self._arm(pending, now)

    def _charge(self, pending: Pending) -> None:
        """The deadline check: default every seat whose time is up; wait for the others.

        It runs one pass of the event loop after the deadline timer. The timer runs after
        the loop has taken in the network completions of its pass, but before the streams
        that wait on them read their answers; one pass later those answers are in. So an
        answer that reached the server in time is never charged as a timeout because the
        server was too busy to read it (a busy server's timer fires late, too)."""
        if self.pending is not pending or pending.closing:
            return
        try:
            now = time.monotonic()
            for seat in pending.ids:
                if seat not in pending.answers and self._due(pending, seat, now) <= now:
                    self._timeout(seat)
            self._check_complete(pending)
            if not pending.closing:
                self._arm(pending, now)
        except Exception as exc:
            self._fail(exc)

    def _arm(self, pending: Pending, now: float) -> None:
        """Set the deadline timer for the earliest seat still to answer."""
        assert self._loop is not None
        due = min((self._due(pending, seat, now) for seat in pending.ids
                   if seat not in pending.answers), default=None)
        if due is not None:
            self._wake_at(due)

    @staticmethod
    def _mark_complete(pending: Pending) -> bool:
        """Mark ``pending`` closing once every pending seat has an answer; True if this
        call did."""
        if pending.closing or pending.answers.keys() != pending.ids.keys():
            return False
        pending.closing = True
        return True

    def _check_complete(self, pending: Pending) -> None:
        """Once every pending seat has an answer (given by default: a timeout, a seat gone),
        resolve the decision point on the next loop pass."""
        if self._mark_complete(pending):
            assert self._loop is not None
            self._loop.call_soon(self._close, pending)

    def settle(self) -> None:
        """Resolve the decision point if the answer just submitted completed it. Called once
        that answer's verdict is delivered (queued for the seat's stream, say): the events
        and the next request then join the verdict before the stream can write it alone."""
        pending = self.pending
        if pending is not None and pending.closing:
            self._close(pending)

    def _close(self, pending: Pending) -> None:
        """Apply the answers, publish the events, then open the next decision point.

        A next point that house bots alone answer (a house bot's row choice) is resolved
        here too, up to ``INLINE_POINTS`` of them: its events then reach the seats' outboxes
        in the same loop pass, so a stream sends them with the request that follows, in one
        message, instead of waking up to send them alone. A point with defaults for absent
        or struck-out seats waits for the next pass, as answers do: a match nobody plays
        any more must not crowd out the others."""
        if self.pending is not pending:
            return  # the match was aborted meanwhile
        assert self._over is not None
        try:
            state = self.state
            for _ in range(INLINE_POINTS):
                answers = {seat: pending.answers[seat] for seat in state.pending}
                self.pending = None
                for engine_event in state.apply(answers):
                    self._publish(engine_event)
                if state.over:
                    if not self._over.done():
                        self._over.set_result(None)
                    return
                pending = self._open()
                if not all(self.seats[seat].house is not None for seat in pending.ids):
                    break
            self._check_complete(pending)  # waits for answers, or resolves next pass
        except Exception as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        """A bug in a decision point: stop the clock and let ``run`` raise it."""
        self._halt()
        if self._over is not None and not self._over.done():
            self._over.set_exception(exc)

    def _halt(self) -> None:
        """Stop the clock: no decision point is in progress any more."""
        if self._clock is not None:
            self._clock.cancel()
            self._clock = None
        self.pending = None

    def _send_request(self, seat: int) -> None:
        pending = self.pending
        link = self.seats[seat]
        if pending is None or link.outbox is None:
            return
        now = time.monotonic()
        left_ms = max(0, round((self._due(pending, seat, now) - now) * 1000))
        decision_id = pending.ids[seat]
        self._feed(link, outgoing.decision(self.state.observation(seat), decision_id, left_ms),
                   decision_id)

    def _sent(self, seat: int, decision_id: str) -> None:
        """``seat``'s request was taken out of its outbox to be written: its clock starts."""
        pending = self.pending
        if pending is not None and pending.ids.get(seat) == decision_id and \
                seat not in pending.sent_at:
            pending.sent_at[seat] = time.monotonic()
            pending.late_at_sent[seat] = self._late()

    def _feed(self, link: SeatLink, item: bytes, decision_id: str | None = None) -> None:
        """Queue ``item`` (the request of ``decision_id``, if given) for ``link``'s
        connection; drop the connection if it leaves too much unread."""
        outbox = link.outbox
        assert outbox is not None
        outbox.put_nowait(item, decision_id)
        if outbox.stalled:
            self._drop_stalled(link, outbox)

    def _drop_stalled(self, link: SeatLink, outbox: Outbox) -> None:
        """The connection of a seat left its outbox's limit of messages unread and was
        closed: the seat is disconnected (defaults at once) until its bot connects again."""
        link.outbox = None
        link.disconnected = True
        self._event("disconnect", seat=link.seat, reason=outbox.why_ended(""))

    def _answer_for_absent(self) -> None:
        """Give default actions at once to pending seats that are disconnected; resolve
        the decision point if that completes it."""
        pending = self.pending
        if pending is None:
            return
        self._default_absent(pending)
        self._check_complete(pending)

    def _default_absent(self, pending: Pending) -> None:
        """Give default actions to the seats of ``pending`` that are disconnected."""
        for seat in pending.ids:
            if seat not in pending.answers and self.seats[seat].disconnected:
                self._default(seat, "disconnected")

    def _timeout(self, seat: int) -> None:
        link = self.seats[seat]
        link.strikes += 1
        assert self.pending is not None
        self._event("timeout", seat=seat, strikes=link.strikes,
                    server_late_ms=self._late_ms(self.pending, seat))
        self._default(seat, "timeout")
        if link.strikes >= self.max_timeouts and not link.disconnected:
            link.disconnected = True
            self._event("disconnect", seat=seat, reason=f"{link.strikes} timeouts in a row")

    def _default(self, seat: int, why: str) -> None:
        assert self.pending is not None
        action = self.state.default_action(seat)
        self.log.append({**answer_event(self.state, seat, action, default=True), "why": why})
        self.pending.answers[seat] = action

    def _publish(self, engine_event: Any) -> None:
        public = outgoing.public_event(engine_event)
        self.public.append(public)
        message = outgoing.play_event(public)
        for link in self.seats:
            if link.outbox is not None:
                self._feed(link, message)
        if self.spectators:
            watched = pb.WatchResponse(event=pb.PublicEvent.FromString(public))
            for queue in self.spectators:
                queue.put_nowait(watched)

    async def _finish(self, termination: str) -> None:
        """Store the replay first, then tell every seat and spectator the result."""
        self._halt()  # the timer left running would hold this runner for up to a deadline
        totals, ranks = self.state.result()
        self._event("match_end", termination=termination)
        replay = build_replay(self.state, match_id=self.config.match_id,
                              seat_names=self.config.seat_names, events=self.log,
                              termination=termination, rated=self.config.rated)
        try:
            await self._on_finish(replay)
        finally:
            self.ended = pb.MatchEnded(totals=totals, ranks=ranks,
                                       termination=wire.TERMINATION[termination])
            self._tell_the_end()
            self.done.set()

    def _tell_the_end(self) -> None:
        assert self.ended is not None
        for link in self.seats:
            if link.outbox is not None:
                link.outbox.put_message(pb.PlayResponse(match_ended=self.ended))
                if not link.lasting:
                    link.outbox.put_nowait(None)
                elif getattr(link.outbox.on_sent, "func", None) == self._sent:
                    # A ladder stream's outbox outlives the match: left pointing here, it
                    # would make runner -> seat -> outbox -> runner a cycle (freed only by a
                    # full collection) once its bot leaves before its next match.
                    link.outbox.on_sent = None
        for queue in self.spectators:
            queue.put_nowait(pb.WatchResponse(match_ended=self.ended))
            queue.put_nowait(None)

    def _match_started(self, seat: int) -> pb.PlayResponse:
        settings = wire.settings_to_proto(self.state.settings, self.spec.id)
        return pb.PlayResponse(match_started=pb.MatchStarted(
            match_id=self.config.match_id, game=self.spec.id, settings=settings, seat=seat,
            seat_names=self.config.seat_names, rated=self.config.rated))

    def _check_all_joined(self) -> None:
        if all(link.joined_once or link.house is not None for link in self.seats):
            self._all_joined.set()

    def _event(self, kind: str, **fields: Any) -> None:
        self.log.append({"type": kind, "step": self.state.step, **fields})
        log.debug("match %s: %s %s", self.config.match_id, kind, fields)


def replaced(via: str) -> pb.Closed:
    """The end of a connection that a newer one with the same token took over; ``via``
    names the newer one (transport and peer address)."""
    return pb.Closed(reason=pb.CLOSE_REASON_REPLACED,
                     message="replaced by a newer connection with the same token"
                             + (f" ({via})" if via else ""))


__all__ = ["MatchRunner", "RefereeError", "SeatLink", "replaced"]
