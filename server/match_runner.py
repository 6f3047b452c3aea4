"""The match runner: one per live match, the only owner of time.

It sends each pending seat its decision request, waits until every pending seat has answered
or the deadline has passed (never longer), fills default actions (RULES.md §3), counts
strikes, marks silent or vanished seats disconnected, and lets them back into their seat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from client_sdk import wire
from client_sdk.bot import Bot
from client_sdk.generated.bullring.v1 import referee_pb2 as pb
from client_sdk.house import house_bot
from referee.core import Action, IllegalActionError, MalformedActionError, RefereeError
from referee.registry import GameState, get_game
from referee.replay import answer_event, build_replay
from server.store import MatchConfig

log = logging.getLogger("bullring.match")


@dataclass(eq=False)
class SeatLink:
    """The server's side of one seat: its live connection (if any) and its strike count."""

    seat: int
    name: str
    house: Bot | None = None
    outbox: asyncio.Queue[pb.PlayResponse | None] | None = None
    """Messages for the connected stream; None while nobody is connected."""
    disconnected: bool = True
    strikes: int = 0
    joined_once: bool = False
    connection: int = 0
    """Counts connections, so a stale stream cannot detach a newer one."""
    lasting: bool = False
    """The outbox belongs to a ladder stream that outlives this match: never closed here."""


@dataclass(eq=False)
class Pending:
    """The decision point in progress: who must answer, with which ids, and what came in."""

    ids: dict[int, str]
    sent_at: dict[int, float] = field(default_factory=dict)
    answers: dict[int, Action] = field(default_factory=dict)
    deadline: float = 0.0
    complete: asyncio.Event = field(default_factory=asyncio.Event)


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
        self.public: list[pb.PublicEvent] = []
        self.spectators: list[asyncio.Queue[pb.WatchResponse | None]] = []
        self.pending: Pending | None = None
        self.ended: pb.MatchEnded | None = None
        self.started = asyncio.Event()
        self.done = asyncio.Event()
        self.start_timeout_s = start_timeout_s
        self._on_finish = on_finish
        self._all_joined = asyncio.Event()
        self._check_all_joined()

    # -- connections ---------------------------------------------------------------------

    def attach(self, seat: int, outbox: asyncio.Queue[pb.PlayResponse | None] | None = None
               ) -> tuple[asyncio.Queue[pb.PlayResponse | None], int]:
        """Connect a new stream to ``seat`` (replacing and closing any older one); return its
        outbox. A given ``outbox`` (a ladder stream's) is not closed when the match ends."""
        link = self.seats[seat]
        if link.outbox is not None and link.outbox is not outbox:
            link.outbox.put_nowait(None)
        link.lasting = outbox is not None
        link.outbox = asyncio.Queue() if outbox is None else outbox
        link.connection += 1
        was_gone = link.disconnected and link.joined_once
        link.disconnected = False
        link.strikes = 0
        link.joined_once = True
        self._event("connect" if not was_gone else "reconnect", seat=seat)
        link.outbox.put_nowait(self._match_started(seat))
        if self.ended is not None:
            link.outbox.put_nowait(pb.PlayResponse(match_ended=self.ended))
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
            queue.put_nowait(pb.WatchResponse(event=public))
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

    def submit(self, seat: int, decision_id: str, action: Action | None
               ) -> pb.AnswerAccepted | pb.AnswerRejected:
        """Take one answer from ``seat``: accepted, ignored as a duplicate, or rejected."""
        link = self.seats[seat]
        if link.disconnected and link.outbox is not None:
            link.disconnected = False  # a struck-out seat that answers again is back
            link.strikes = 0
            self._event("reconnect", seat=seat, reason="answered again")
        pending = self.pending
        if pending is None or pending.ids.get(seat) != decision_id:
            return self._reject(seat, decision_id, pb.REJECT_REASON_NOT_PENDING,
                                f"decision {decision_id!r} is not pending for seat {seat}")
        if seat in pending.answers:
            return pb.AnswerAccepted(decision_id=decision_id)  # a retry: counted once
        if action is None:
            return self._reject(seat, decision_id, pb.REJECT_REASON_MALFORMED_ACTION,
                                "the answer carries no action")
        try:
            self.state.validate(seat, action)
        except MalformedActionError as exc:
            return self._reject(seat, decision_id, pb.REJECT_REASON_MALFORMED_ACTION, str(exc))
        except IllegalActionError as exc:
            return self._reject(seat, decision_id, pb.REJECT_REASON_ILLEGAL_ACTION, str(exc))
        elapsed_ms = round((time.monotonic() - pending.sent_at.get(seat, 0)) * 1000, 3)
        self.log.append({**answer_event(self.state, seat, action), "ms": elapsed_ms})
        pending.answers[seat] = action
        self.seats[seat].strikes = 0
        if pending.answers.keys() == pending.ids.keys():
            pending.complete.set()
        return pb.AnswerAccepted(decision_id=decision_id)

    def _reject(self, seat: int, decision_id: str, reason: pb.RejectReason,
                message: str) -> pb.AnswerRejected:
        self._event("reject", seat=seat, decision_id=decision_id,
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
            self._publish(wire.event_to_proto(engine_event))
        termination = "normal"
        try:
            while not self.state.over:
                await self._decision_point()
        except asyncio.CancelledError:
            await self._finish("aborted")
            raise
        await self._finish(termination)

    async def _decision_point(self) -> None:
        state = self.state
        step = state.step
        pending = Pending({seat: f"{self.config.match_id}:{step}:{seat}"
                           for seat in state.pending})
        self.pending = pending
        pending.deadline = time.monotonic() + self.deadline_s
        for seat in pending.ids:
            link = self.seats[seat]
            if link.house is not None:
                action = link.house.decide(state.observation(seat))
                self.log.append(answer_event(state, seat, action))
                pending.answers[seat] = action
            else:
                self._send_request(seat)  # a struck-out seat still sees the game go on
        self._answer_for_absent()
        if pending.answers.keys() != pending.ids.keys():
            remaining = pending.deadline - time.monotonic()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(pending.complete.wait(), max(0.0, remaining))
        else:
            await asyncio.sleep(0)  # nobody to wait for (house or absent seats): yield anyway
        for seat in pending.ids:
            if seat not in pending.answers:
                self._timeout(seat)
        answers = {seat: pending.answers[seat] for seat in state.pending}
        self.pending = None
        events = state.apply(answers)
        for engine_event in events:
            self._publish(wire.event_to_proto(engine_event))

    def _send_request(self, seat: int) -> None:
        pending = self.pending
        link = self.seats[seat]
        if pending is None or link.outbox is None:
            return
        left_ms = max(0, int((pending.deadline - time.monotonic()) * 1000))
        request = wire.observation_to_request(self.state.observation(seat),
                                              pending.ids[seat], left_ms)
        pending.sent_at.setdefault(seat, time.monotonic())
        link.outbox.put_nowait(pb.PlayResponse(decision=request))

    def _answer_for_absent(self) -> None:
        """Give default actions at once to pending seats that are disconnected."""
        pending = self.pending
        if pending is None:
            return
        for seat in pending.ids:
            if seat not in pending.answers and self.seats[seat].disconnected:
                self._default(seat, "disconnected")
        if pending.answers.keys() == pending.ids.keys():
            pending.complete.set()

    def _timeout(self, seat: int) -> None:
        link = self.seats[seat]
        link.strikes += 1
        self._event("timeout", seat=seat, strikes=link.strikes)
        self._default(seat, "timeout")
        if link.strikes >= self.max_timeouts and not link.disconnected:
            link.disconnected = True
            self._event("disconnect", seat=seat, reason=f"{link.strikes} timeouts in a row")

    def _default(self, seat: int, why: str) -> None:
        assert self.pending is not None
        action = self.state.default_action(seat)
        self.log.append({**answer_event(self.state, seat, action, default=True), "why": why})
        self.pending.answers[seat] = action

    def _publish(self, public: pb.PublicEvent) -> None:
        self.public.append(public)
        message = pb.PlayResponse(event=public)
        for link in self.seats:
            if link.outbox is not None:
                link.outbox.put_nowait(message)
        for queue in self.spectators:
            queue.put_nowait(pb.WatchResponse(event=public))

    async def _finish(self, termination: str) -> None:
        """Store the replay first, then tell every seat and spectator the result."""
        totals, ranks = self.state.result()
        self._event("match_end", termination=termination)
        replay = build_replay(self.state, match_id=self.config.match_id,
                              seat_names=self.config.seat_names, events=self.log,
                              termination=termination)
        try:
            await self._on_finish(replay)
        finally:
            self.ended = pb.MatchEnded(totals=totals, ranks=ranks, termination=termination)
            self._tell_the_end()
            self.done.set()

    def _tell_the_end(self) -> None:
        assert self.ended is not None
        for link in self.seats:
            if link.outbox is not None:
                link.outbox.put_nowait(pb.PlayResponse(match_ended=self.ended))
                if not link.lasting:
                    link.outbox.put_nowait(None)
        for queue in self.spectators:
            queue.put_nowait(pb.WatchResponse(match_ended=self.ended))
            queue.put_nowait(None)

    def _match_started(self, seat: int) -> pb.PlayResponse:
        settings = {k: str(v).lower() if isinstance(v, bool) else str(v)
                    for k, v in self.state.settings.items()}
        return pb.PlayResponse(match_started=pb.MatchStarted(
            match_id=self.config.match_id, game=self.spec.id, settings=settings, seat=seat,
            seat_names=self.config.seat_names))

    def _check_all_joined(self) -> None:
        if all(link.joined_once or link.house is not None for link in self.seats):
            self._all_joined.set()

    def _event(self, kind: str, **fields: Any) -> None:
        self.log.append({"type": kind, "step": self.state.step, **fields})
        log.debug("match %s: %s %s", self.config.match_id, kind, fields)


__all__ = ["MatchRunner", "RefereeError", "SeatLink"]
