"""The match runner: one per live match, the only owner of time.

It sends each pending seat its decision request, waits until every pending seat has answered
or its deadline has passed (never longer), fills default actions (docs/rules.md §3), counts
strikes, marks silent or vanished seats disconnected, and lets them back into their seat.

When each answer is due is the match clock's to say (``server/match/clock.py``); what waits
to be written to each seat's connection is in its outbox (``server/match/outbox.py``).

Decision points are driven by callbacks on the event loop rather than a task per decision:
the stream that delivers the last answer resolves the point as soon as it has queued the
answer's verdict (``settle``), and one timer per match handles deadlines. So the events and
the next request reach the seat's outbox before its stream wakes up to write the verdict,
and a client that accepts batches gets them all in one message.

A match with a pace (``MatchConfig.pace_ms``, a tournament played for people to follow) opens
each decision point no sooner than that long after the last one opened: the requests wait
on the server, so a seat's deadline, measured from when its request is sent, is untouched.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.contract.messages import Accepted, Ended, Rejected, Request, Started, Verdict
from bullring.referee.core import Action
from bullring.referee.registry import AnyGameState, get_game
from bullring.referee.replay import answer_event, build_replay
from bullring.sdk.house import house_bot
from bullring.server.match.answers import MAX_ID_LOGGED, not_pending, refusal
from bullring.server.match.clock import MatchClock, Pending
from bullring.server.match.feed import MatchFeed, SeatLink
from bullring.server.match.outbox import Outbox
from bullring.server.match.tally import NO_KIND, MatchTally
from bullring.server.store import MatchConfig

log = logging.getLogger("bullring.match")

INLINE_POINTS = 16
"""How many decision points answered by house bots alone one loop pass may resolve in a row
before it lets the other matches run."""

VERDICTS: dict[int, str] = {value: name.removeprefix("REJECT_REASON_").lower()
                            for name, value in pb.RejectReason.items()}
"""The verdict a rejection is counted as (``bullring.server.match.tally``), by its reason:
``illegal_action``, ``malformed_action``, ``not_pending``, ..."""


class MatchRunner:
    """Runs one stored match to its end over whatever seat connections come and go."""

    def __init__(self, config: MatchConfig,
                 on_finish: Callable[[dict[str, Any]], Awaitable[None]],
                 start_timeout_s: float = 60.0, tally: MatchTally | None = None) -> None:
        self.config = config
        self.spec = get_game(config.game)
        self.tally = (tally if tally is not None else MatchTally()).game(self.spec.id)
        """Where this match counts what it does, for the server's metrics."""
        self.state: AnyGameState = self.spec.new_state(len(config.seat_names), config.settings,
                                                    config.seed)
        self.deadline_s = int(self.state.settings["deadline_ms"]) / 1000
        self.max_timeouts = int(self.state.settings["max_timeouts"])
        self.seats = [SeatLink(s, name) for s, name in enumerate(config.seat_names)]
        for seat, bot_name in config.house.items():
            link = self.seats[seat]
            link.house = house_bot(bot_name, self.spec.id, seat)
            link.disconnected = False
        self.log: list[dict[str, Any]] = []
        self.feed = MatchFeed(self.seats)
        self.pending: Pending | None = None
        self.started = asyncio.Event()
        self.done = asyncio.Event()
        self.start_timeout_s = start_timeout_s
        self._on_finish = on_finish
        self._all_joined = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._over: asyncio.Future[None] | None = None
        """Resolved when the game is over (or failed), once the match has started."""
        self.clock = MatchClock(self.deadline_s, int(self.state.settings["time_bank_ms"]),
                                len(self.seats))
        self.pace_s = config.pace_ms / 1000
        """The least time from one decision point's opening to the next one's."""
        self._opened_at = 0.0
        """When the last decision point opened (monotonic seconds)."""
        self._paced: asyncio.TimerHandle | None = None
        """The timer that opens the next decision point of a paced match."""
        self.vet: Callable[[], Awaitable[bool]] | None = None
        """Asked once the game is over, before its end is recorded: False records it as
        aborted (unrated) instead. A relayed seat's link to its bot's server is checked so
        (``bullring.server.fleet.relay``): a seat that played on defaults because that
        link was lost does not count against its bot."""
        self._check_all_joined()

    # -- connections ---------------------------------------------------------------------

    def attach(self, seat: int, outbox: Outbox | None = None, via: str = ""
               ) -> tuple[Outbox, int]:
        """Connect a new stream to ``seat`` (see ``MatchFeed.connect``); return its outbox
        and the connection's number, which ``detach`` takes."""
        link = self.seats[seat]
        was_gone = link.disconnected and link.joined_once
        self._event("connect" if not was_gone else "reconnect", seat=seat)
        new = self.feed.connect(link, outbox, via, functools.partial(self._sent, seat),
                                self._match_started(seat))
        if self.ended is None and self.pending is not None and seat in self.pending.ids and \
                seat not in self.pending.answers:
            self._send_request(seat)
        self._check_all_joined()
        return new, link.connection

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

    @property
    def ended(self) -> Ended | None:
        """The result, once the match has ended."""
        return self.feed.ended

    # -- answers -------------------------------------------------------------------------

    def submit(self, seat: int, decision_id: str, action: Action | None, *,
               field: str | None, comment: str = "") -> Verdict:
        """Take one answer from ``seat``: accepted, ignored as a duplicate, or rejected
        (``refusal`` says why; ``field`` is the ``Action`` field it set). An accepted
        answer's ``comment`` goes into the match log only: nobody sees it before the match
        ends and its replay is public.

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
            return self._reject(seat, decision_id, NO_KIND, pb.REJECT_REASON_NOT_PENDING,
                                not_pending(seat, decision_id))
        kind = self.state.pending[seat].kind
        if seat in pending.answers:
            self.tally.not_take(kind, "duplicate")
            return Accepted(decision_id)  # a retry: counted once
        refused = refusal(self.state, seat, action, field, comment)
        if refused is not None:
            return self._reject(seat, decision_id, kind, refused[0], refused[1])
        assert action is not None
        timing = self.clock.took(pending, seat, time.monotonic())
        self.tally.accept(kind, timing["ms"] / 1000)
        self.log.append({**answer_event(self.state, seat, action, comment=comment), **timing})
        pending.answers[seat] = action
        link.strikes = 0
        pending.mark_complete()
        return Accepted(decision_id)

    def _reject(self, seat: int, decision_id: str, kind: str, reason: pb.RejectReason,
                message: str) -> Rejected:
        """The rejection of an answer (to a decision of ``kind``); logged, up to
        ``MAX_REJECTS_LOGGED`` a seat per decision point (a bot that floods wrong answers
        must not grow the match log), and counted."""
        self.tally.not_take(kind, VERDICTS.get(reason, "rejected"))
        if self.seats[seat].count_rejection(self.state.step):
            self._event("reject", seat=seat, decision_id=decision_id[:MAX_ID_LOGGED],
                        reason=pb.RejectReason.Name(reason), message=message)
        return Rejected(decision_id, reason, message)

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
        self.tally.match_started()
        for engine_event in self.state.opening:  # the opening rows or card, for spectators
            self._publish(engine_event)
        self._loop = asyncio.get_running_loop()
        self.clock.start()
        self._over = self._loop.create_future()
        try:
            if not self.state.over:
                self._check_complete(self._open())
            else:
                self._over.set_result(None)
            await self._over
            normal = self.vet is None or await self.vet()
        except asyncio.CancelledError:
            self._halt()
            await self._finish("aborted")
            raise
        await self._finish("normal" if normal else "aborted")

    def _open(self) -> Pending:
        """Start a decision point: ask every pending seat, answer for the house and absent
        seats, and arm the deadline check if someone must still answer."""
        assert self._loop is not None
        state = self.state
        now = time.monotonic()
        match_id, step = self.config.match_id, state.step
        pending = self.clock.open({seat: f"{match_id}:{step}:{seat}" for seat in state.pending},
                                  now)
        self.pending = pending
        self._opened_at = now
        for seat in pending.ids:
            link = self.seats[seat]
            if link.house is not None:
                action = link.house.decide(state.observation(seat))
                self.log.append(answer_event(state, seat, action))
                pending.answers[seat] = action
            else:
                self.tally.request(state.pending[seat].kind)
                self._send_request(seat)  # a struck-out seat still sees the game go on
        self._default_absent(pending)
        if pending.answers.keys() != pending.ids.keys():
            self.clock.wake_at(now + self.deadline_s, self._on_clock)
        return pending

    def waiting(self) -> list[tuple[int, float]]:
        """The seats that must still answer the decision point in progress, each with the
        seconds left before its deadline: public facts (whose turn it is and the clock),
        never what anyone chose. Empty between decision points and once the match ended."""
        pending = self.pending
        if pending is None or pending.closing or self.done.is_set():
            return []
        return self.clock.left(pending, time.monotonic())

    def _on_clock(self) -> None:
        """The deadline timer: if some seat's time is up, check once the answers the server
        has already received are read (see ``_charge``); else wait for the next deadline."""
        pending = self.pending
        if pending is None:
            return  # the next decision point arms the timer again
        if pending.closing:
            self._close(pending)  # complete, but nobody settled it (resolved twice: no-op)
            return
        assert self._loop is not None
        now = time.monotonic()
        if self.clock.overdue(pending, now):
            self._loop.call_soon(self._charge, pending)
        else:
            self.clock.arm(pending, now, self._on_clock)

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
            for seat in self.clock.overdue(pending, now):
                self._timeout(seat)
            self._check_complete(pending)
            if not pending.closing:
                self.clock.arm(pending, now, self._on_clock)
        except Exception as exc:
            self._fail(exc)

    def _check_complete(self, pending: Pending) -> None:
        """Once every pending seat has an answer (given by default: a timeout, a seat gone),
        resolve the decision point on the next loop pass."""
        if pending.mark_complete():
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
                if self.pace_s > 0:
                    self._pace()
                    return
                pending = self._open()
                if not all(self.seats[seat].house is not None for seat in pending.ids):
                    break
            self._check_complete(pending)  # waits for answers, or resolves next pass
        except Exception as exc:
            self._fail(exc)

    def _pace(self) -> None:
        """Open the next decision point once ``pace_s`` has passed since the last one
        opened (at once if it has)."""
        assert self._loop is not None
        delay = self._opened_at + self.pace_s - time.monotonic()
        self._paced = self._loop.call_later(max(0.0, delay), self._open_paced)

    def _open_paced(self) -> None:
        """The pace's timer: open the next decision point, unless the match was stopped."""
        self._paced = None
        if self._over is None or self._over.done():
            return
        try:
            self._check_complete(self._open())
        except Exception as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        """A bug in a decision point: stop the clock and let ``run`` raise it."""
        self._halt()
        if self._over is not None and not self._over.done():
            self._over.set_exception(exc)

    def _halt(self) -> None:
        """Stop the clock: no decision point is in progress any more."""
        self.clock.stop()
        if self._paced is not None:
            self._paced.cancel()
            self._paced = None
        self.pending = None

    def _send_request(self, seat: int) -> None:
        pending = self.pending
        link = self.seats[seat]
        if pending is None or link.outbox is None:
            return
        now = time.monotonic()
        left_ms = max(0, round((self.clock.due(pending, seat, now) - now) * 1000))
        decision_id = pending.ids[seat]
        if not self.feed.send(link, Request(decision_id, self.state.observation(seat), left_ms)):
            self._drop_stalled(link)

    def _sent(self, seat: int, decision_id: str) -> None:
        """``seat``'s request was taken out of its outbox to be written: its clock starts."""
        pending = self.pending
        if pending is not None and pending.ids.get(seat) == decision_id:
            self.clock.sent(pending, seat, time.monotonic())

    def _publish(self, engine_event: Any) -> None:
        """Send an engine event to the seats and spectators (see ``MatchFeed.publish``)."""
        for link in self.feed.publish(engine_event):
            self._drop_stalled(link)

    def _drop_stalled(self, link: SeatLink) -> None:
        """The connection of a seat left its outbox's limit of messages unread and was
        closed: the seat is disconnected (defaults at once) until its bot connects again."""
        outbox = link.outbox
        assert outbox is not None
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
        late_ms = self.clock.late_ms(self.pending, seat)
        self.tally.timeout("server" if late_ms > 0 else "bot")
        self._event("timeout", seat=seat, strikes=link.strikes, server_late_ms=late_ms,
                    **self.clock.exhaust(seat))
        self._default(seat, "timeout")
        if link.strikes >= self.max_timeouts and not link.disconnected:
            link.disconnected = True
            self._event("disconnect", seat=seat, reason=f"{link.strikes} timeouts in a row")

    def _default(self, seat: int, why: str) -> None:
        assert self.pending is not None
        action = self.state.default_action(seat)
        self.log.append({**answer_event(self.state, seat, action, default=True), "why": why})
        self.pending.answers[seat] = action
        self.tally.default(why)

    async def _finish(self, termination: str) -> None:
        """Store the replay first, then tell every seat and spectator the result."""
        self._halt()  # the timer left running would hold this runner for up to a deadline
        totals, ranks = self.state.result()
        self._event("match_end", termination=termination)
        self.tally.match_finished(termination)
        replay = build_replay(self.state, events=self.log, termination=termination,
                              **self.config.replay_fields())
        try:
            await self._on_finish(replay)
        finally:
            self.feed.end(Ended(tuple(totals), tuple(ranks), termination), self._sent)
            self.done.set()

    def _match_started(self, seat: int) -> Started:
        return Started(self.config.match_id, self.spec.id, dict(self.state.settings), seat,
                       tuple(self.config.seat_names), self.config.rated)

    def _check_all_joined(self) -> None:
        if all(link.joined_once or link.house is not None for link in self.seats):
            self._all_joined.set()

    def _event(self, kind: str, **fields: Any) -> None:
        self.log.append({"type": kind, "step": self.state.step, **fields})
        log.debug("match %s: %s %s", self.config.match_id, kind, fields)


__all__ = ["MatchRunner"]
