"""One seat as the bot runner plays it: the bot, the match, and the answers already given,
all of which survive reconnects; what the runner does with each message from the server."""

from __future__ import annotations

import asyncio
import logging
import operator
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.core import Action, DecisionKind
from bullring.sdk.bot import Bot
from bullring.sdk.bot_spec import BotFactory
from bullring.sdk.bot_thread import BotThread
from bullring.sdk.errors import AccessEndedError, StreamClosedError

log = logging.getLogger("bullring.bot")
"""The runner's logger: connections, decisions answered and missed, rejections."""


class Ahead(Protocol):
    """What the runner has read beyond the message it acts on (``transports.Inbox``)."""

    def moved_on(self) -> bool:
        """Whether the server no longer waits for the decision being acted on."""

    async def wait_moved_on(self) -> None:
        """Return once ``moved_on`` holds."""


class MovedOn(Exception):
    """The server moved past a decision while the bot was deciding it."""


class Seat:
    """What survives reconnects: the bot, the match, and the answers already given."""

    def __init__(self, spec: str, factory: BotFactory, seed: int, margin_ms: int,
                 on_message: Callable[[pb.PlayResponse], None] | None,
                 ladder: str | None = None, matches: int = 0,
                 games: Sequence[str] = (), practice_only: bool = False) -> None:
        self.spec = spec
        self.games = list(games)
        """The games the bot plays, told to the server at Join (a seat of another game is
        refused before it is taken)."""
        self.ladder = ladder
        """The game whose ladder this bot plays, or None for one seat of one match."""
        self.matches = matches
        """Leave the ladder after this many matches (0: never)."""
        self.practice_only = practice_only
        """Join.practice_only: never seated at a rated table, only in the bot's practice
        matches and challenges."""
        self.played = 0
        self.queued = False
        """Whether the ladder has queued the bot yet (said at INFO the first time only)."""
        self.last_ended: pb.MatchEnded | None = None
        self.factory = factory
        self.seed = seed
        self.margin_ms = margin_ms
        self.on_message = on_message
        self.bot: Bot | None = None
        self.match_id: str | None = None
        self.answers: dict[str, pb.Answer] = {}
        """Answers sent by decision id: a decision resent after a reconnect gets the same."""
        self.thread = BotThread()

    async def handle(self, response: pb.PlayResponse, received: float,
                     ahead: Ahead | None = None) -> pb.Answer | None:
        """Act on one server message, which came at ``received`` (``time.monotonic()``);
        return the answer to send, if any. With ``ahead``, a decision the server has moved
        past is not answered: not given to the bot if it already has, not waited for once
        it does."""
        if self.on_message is not None:
            self.on_message(response)
        which = response.WhichOneof("body")
        if which == "match_started":
            self._start(response.match_started)
        elif which == "decision":
            return await self._decide(response.decision, received, ahead)
        elif which == "rejected":
            r = response.rejected
            self.answers.pop(r.decision_id, None)
            log.warning("answer to decision %s rejected (%s): %s", r.decision_id,
                        pb.RejectReason.Name(r.reason), r.message)
        elif which == "accepted":
            log.debug("answer to decision %s accepted", response.accepted.decision_id)
        elif which == "event":
            self._event(response.event)
        elif which == "ladder_queued":
            # Said once; between matches it is every match's, and only -v shows it.
            log.log(logging.DEBUG if self.queued else logging.INFO,
                    "waiting on the %s ladder as %s", response.ladder_queued.game,
                    response.ladder_queued.bot)
            self.queued = True
            if response.ladder_queued.notice:
                log.warning("%s", response.ladder_queued.notice)
        return None

    def ended(self, response: pb.PlayResponse) -> bool:
        """A match ended; True when the runner is done (one match, or the ladder's count)."""
        if self.on_message is not None:
            self.on_message(response)
        self.last_ended = response.match_ended
        if self.ladder is None:
            return True
        self.played += 1
        ended = response.match_ended
        log.debug("match %s ended: totals %s ranks %s (%s); %d played", self.match_id,
                  list(ended.totals), list(ended.ranks),
                  wire.termination_name(ended.termination), self.played)
        return 0 < self.matches <= self.played

    def closed(self, response: pb.PlayResponse) -> pb.MatchEnded | None:
        """The server ended the connection on purpose (Closed). Its ladder matches all
        played: the last result. Replaced by a newer connection, token revoked, bot disabled:
        raise, never reconnect (RuntimeError, PermissionError). A lapsed HTTP lease, or a
        stream the server ended because it was not read (stalled): None, so the runner
        joins again."""
        if self.on_message is not None:
            self.on_message(response)
        closed = response.closed
        log.warning("the server ended the connection (%s): %s",
                    pb.CloseReason.Name(closed.reason) if closed.reason in
                    pb.CloseReason.values() else closed.reason, closed.message)
        if closed.reason == pb.CLOSE_REASON_MATCHES_PLAYED and self.last_ended is not None:
            return self.last_ended
        if closed.reason in (pb.CLOSE_REASON_LEASE_EXPIRED, pb.CLOSE_REASON_STALLED):
            return None
        if closed.reason in (pb.CLOSE_REASON_TOKEN_REVOKED, pb.CLOSE_REASON_BOT_DISABLED):
            raise AccessEndedError(f"the server ended the stream: {closed.message}")
        raise StreamClosedError(f"the server ended the stream: {closed.message}")

    def matches_left(self) -> int:
        """For Join.matches: the ladder matches still to play (the one in progress counts,
        so a reconnect takes it back); 0 for no limit, or for one seat of one match."""
        if self.ladder is None or self.matches <= 0:
            return 0
        return self.matches - self.played

    def _start(self, started: pb.MatchStarted) -> None:
        seats = ", ".join(started.seat_names)
        if self.bot is not None and started.match_id == self.match_id:
            log.info("resumed match %s, seat %d", started.match_id, started.seat)
            return
        if self.bot is not None and self.ladder is None:
            log.warning("the token now plays match %s, not %s; starting a new bot",
                        started.match_id, self.match_id)
        self.bot = self.factory(started.game, self.seed)
        self.match_id = started.match_id
        self.answers.clear()
        log.debug("match %s started: %s, seat %d of [%s], playing %s%s", started.match_id,
                  started.game, started.seat, seats, self.spec,
                  "" if started.rated or self.ladder is None else " (unrated)")

    def _event(self, public: pb.PublicEvent) -> None:
        try:
            event = wire.event_from_proto(public)
        except ValueError as e:
            log.warning("an event this runner cannot read (%s): %s", e, public)
            return
        log.debug("event %s %s", type(event).__name__, event)
        on_event = getattr(self.bot, "on_event", None)
        if not callable(on_event):
            return
        name, fields = type(event).__name__, event._asdict()

        def call() -> None:
            try:
                on_event(name, fields)
            except Exception:
                log.exception("the bot's on_event(%r) raised", name)

        self.thread.submit(call)

    async def _decide(self, request: pb.DecisionRequest, received: float,
                      ahead: Ahead | None) -> pb.Answer | None:
        did = request.decision_id
        if self.bot is None:
            log.warning("decision %s came before MatchStarted; ignored", did)
            return None
        if did in self.answers:
            log.debug("decision %s asked again; sending the same answer", did)
            return self.answers[did]
        kind = wire.KIND_FROM_PROTO.get(request.kind)
        if kind is None:
            log.error("decision %s has an unknown kind %d; not answered", did, request.kind)
            return None
        if ahead is not None and ahead.moved_on():
            log.debug("decision %s (%s) not given to the bot: the server has moved past it "
                      "and applied the default action", did, kind.name)
            return None
        budget_s = (request.time_left_ms - self.margin_ms) / 1000 - (time.monotonic() - received)
        if budget_s <= 0:
            log.warning("missed decision %s (%s): only %d ms left, margin %d ms", did, kind.name,
                        request.time_left_ms, self.margin_ms)
            return None
        observation = wire.observation_from_request(request)
        bot = self.bot
        began = time.monotonic()

        def decide() -> tuple[Action, str]:
            bot.pop_comment()  # one left by on_event, or by a decision given up on
            return bot.decide(observation), bot.pop_comment()
        try:
            action, comment = await _within(self.thread.submit(decide), budget_s, ahead)
        except TimeoutError:
            log.warning("missed decision %s (%s): the bot did not answer within %.0f ms; the "
                        "server applies the default action", did, kind.name, budget_s * 1000)
            return None
        except MovedOn:
            log.warning("missed decision %s (%s): the server moved past it before the bot "
                        "answered, with the default action", did, kind.name)
            return None
        except Exception:
            log.exception("the bot raised on decision %s (%s); not answered, the server "
                          "applies the default action", did, kind.name)
            return None
        taken_ms = (time.monotonic() - began) * 1000
        proto = _encode(kind, action)
        if proto is None:
            log.error("decision %s (%s): the bot answered %r, which is not a %s; not answered",
                      did, kind.name, action, _ACTION_NOUN[wire.ACTION_FIELD[kind]])
            return None
        answer = self.answers[did] = pb.Answer(decision_id=did, action=proto, comment=comment)
        log.debug("decision %s (%s): answered %r in %.1f ms", did, kind.name, action, taken_ms)
        return answer


async def _within(job: asyncio.Future[Any], budget_s: float, ahead: Ahead | None) -> Any:
    """``job``'s result once it is done within ``budget_s``: else TimeoutError, or MovedOn
    as soon as ``ahead`` shows the server has moved past the decision. Either cancels
    ``job`` (the bot's thread skips it if it has not begun). A cancellation of the caller
    (Ctrl-C) cancels ``job`` and propagates, even when ``job`` has just finished: hence
    ``asyncio.timeout``, not Python 3.11's ``asyncio.wait_for``, which then returns the
    result and drops the cancellation."""
    if ahead is None:
        async with asyncio.timeout(budget_s):
            return await job
    past = asyncio.ensure_future(ahead.wait_moved_on())
    try:
        done, _ = await asyncio.wait({job, past}, timeout=budget_s,
                                     return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        job.cancel()
        raise
    finally:
        past.cancel()
    if job in done:
        return job.result()
    job.cancel()
    raise MovedOn() if past in done else TimeoutError()


_ACTION_NOUN = {"card": "card", "row": "row index", "word": "word"}
"""What each ``Action`` field holds, for messages."""


def _encode(kind: DecisionKind, action: Any) -> pb.Action | None:
    """The wire form of ``action``, or None if it is of the wrong type for ``kind``."""
    if wire.ACTION_FIELD[kind] == "word":
        return wire.action_to_proto(kind, action) if isinstance(action, str) else None
    if isinstance(action, bool):
        return None
    try:
        number = operator.index(action)  # ints, and integer types such as numpy's
    except TypeError:
        return None
    return wire.action_to_proto(kind, number)
