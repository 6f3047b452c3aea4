"""One seat played by an agent: the desk between the bot runner and an agent's tool calls.

The bot runner (``bullring.sdk.runner.play``) holds the connection, reconnects with its
backoff, and asks a bot for each decision. Here the bot is an ``AgentBot`` whose ``decide``
waits for the agent's answer, given through ``SeatDesk.act``; the agent learns of the
decision through ``SeatDesk.next_decision``. The desk sees every server message the runner
receives (its ``on_message``), so it also keeps the match's public events.

Everything an agent reads here comes from the seat's own DecisionRequests and the public
events: the server never sends a seat another seat's hand, chips or hidden card.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import enum
import time
from dataclasses import dataclass, field
from typing import Any

from bullring.contract import wire
from bullring.contract.comments import comment_problem
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.core import Action
from bullring.sdk.bot import Bot
from bullring.sdk.errors import AgentError

VERDICT_GRACE_S = 2.0
"""How long ``act`` waits past the deadline for the server's verdict on an answer."""


def jsonable(value: Any) -> Any:
    """``value`` (an observation, an event, their fields) as JSON values: NamedTuples become
    objects, tuples lists, enums their names or words."""
    if isinstance(value, enum.StrEnum):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: jsonable(v) for k, v in value._asdict().items()}
    if isinstance(value, (tuple, list)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return value


@dataclass
class Pending:
    """A decision the server asked of this seat, and the agent's answer once given."""

    decision_id: str
    kind: str
    observation: Any
    deadline: float
    """``time.monotonic()`` when the runner stops waiting for the answer (the server's
    deadline, counting the time bank, less the runner's safety margin)."""
    answer: concurrent.futures.Future[Action] = field(default_factory=concurrent.futures.Future)
    verdict: asyncio.Future[str] | None = None
    """Settled with "" when accepted, or the server's message when rejected."""
    comment: str = ""
    """The agent's comment on its answer (``act``'s ``comment``), sent with it."""

    def time_left_ms(self) -> int:
        """Milliseconds until the deadline (0 once it passed)."""
        return max(0, int((self.deadline - time.monotonic()) * 1000))

    def legal(self) -> list[Any]:
        """The legal actions, as JSON values."""
        return list(jsonable(self.observation.decision.legal))


@dataclass
class MatchRecord:
    """What the seat knows of its current (or last) match."""

    match_id: str
    game: str
    seat: int
    seat_names: list[str]
    rated: bool
    events: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None


class SeatDesk:
    """The seat's state as the agent sees it. Lives on the event loop that runs the runner and
    the MCP server; only ``AgentBot.decide`` runs on the runner's bot thread."""

    def __init__(self, margin_ms: int = 0) -> None:
        self.margin_ms = margin_ms
        """The runner's safety margin: a decision closes this long before its deadline."""
        self.pending: Pending | None = None
        self.match: MatchRecord | None = None
        self.matches_played = 0
        self.finished: str | None = None
        """Why the seat plays no more (the runner returned or failed), once it does not."""
        self.wanted = asyncio.Event()
        """Set when an agent first asks for a decision: only then does the seat join its
        match or ladder (no seat is played by defaults while no agent is there)."""
        self._changed = asyncio.Condition()

    # ------------------------------------------------------------------ the runner's side

    def on_message(self, response: pb.PlayResponse) -> None:
        """Take note of one server message (the runner's ``on_message``)."""
        which = response.WhichOneof("body")
        if which == "decision":
            request = response.decision
            kind = wire.KIND_FROM_PROTO.get(request.kind)
            if kind is None:
                return
            if self.pending is not None and self.pending.decision_id == request.decision_id:
                return  # asked again after a reconnect: the runner resends the same answer
            self.pending = Pending(request.decision_id, kind.name,
                                   wire.observation_from_request(request),
                                   time.monotonic() + (request.time_left_ms - self.margin_ms)
                                   / 1000)
        elif which == "match_started":
            s = response.match_started
            if self.match is None or self.match.match_id != s.match_id:
                self.match = MatchRecord(s.match_id, s.game, s.seat, list(s.seat_names),
                                         s.rated)
                self.pending = None
        elif which == "event" and self.match is not None:
            try:
                event = wire.event_from_proto(response.event)
            except ValueError:
                return
            self.match.events.append({"event": type(event).__name__, **jsonable(event._asdict())})
        elif which in ("accepted", "rejected"):
            verdict = getattr(response, which)
            self._settle(verdict.decision_id,
                         "" if which == "accepted" else verdict.message or "rejected")
        elif which == "match_ended":
            ended = response.match_ended
            if self.match is not None:
                self.match.result = {"totals": list(ended.totals), "ranks": list(ended.ranks),
                                     "termination": wire.termination_name(ended.termination)}
            self.matches_played += 1
            self.pending = None
        self._notify()

    def finish(self, why: str) -> None:
        """The runner is done: the seat plays no more."""
        self.finished = why
        self.pending = None
        self._notify()

    def _settle(self, decision_id: str, message: str) -> None:
        p = self.pending
        if p is not None and p.decision_id == decision_id and p.verdict is not None \
                and not p.verdict.done():
            p.verdict.set_result(message)

    def _notify(self) -> None:
        async def wake() -> None:
            async with self._changed:
                self._changed.notify_all()

        asyncio.get_running_loop().create_task(wake())

    # ------------------------------------------------------------------ the agent's side

    def open_decision(self) -> Pending | None:
        """The decision waiting for the agent's answer, if any."""
        p = self.pending
        if p is None or p.answer.done() or p.time_left_ms() <= 0:
            return None
        return p

    async def next_decision(self, timeout_s: float) -> Pending | None:
        """Wait up to ``timeout_s`` for a decision to answer; None if none came (the match
        may have ended: see ``match`` and ``finished``). The first call lets the seat join
        (``wanted``)."""
        self.wanted.set()
        ended_before = self.matches_played
        async with self._changed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait_for(
                    lambda: self.open_decision() is not None or self.finished is not None
                    or self.matches_played != ended_before), timeout_s)
        return self.open_decision()

    async def act(self, action: int | str, comment: str = "") -> Pending:
        """Answer the open decision with ``action`` (and ``comment``, why, kept in the
        replay) and wait for the server's verdict.

        ``AgentError`` when no decision is open, the action is not one of its legal actions
        or the comment is too long or holds a control character (the decision stays open),
        or when the server rejects it."""
        p = self.open_decision()
        if p is None:
            raise AgentError("no decision is waiting for an answer; call next_decision first")
        problem = comment_problem(comment)
        if problem is not None:
            raise AgentError(f"{problem}; answer again with a shorter, single-line comment "
                             f"within {p.time_left_ms()} ms")
        legal = p.legal()
        chosen: Any = action
        if isinstance(action, str) and action.strip().lstrip("-").isdigit():
            chosen = int(action.strip())
        elif isinstance(action, str):
            chosen = action.strip().lower()
        if chosen not in legal or isinstance(chosen, bool):
            raise AgentError(f"{action!r} is not a legal answer to this {p.kind} decision; "
                             f"answer one of {legal} within {p.time_left_ms()} ms")
        engine_action: Action = next(a for a in p.observation.decision.legal
                                     if jsonable(a) == chosen)
        p.verdict = asyncio.get_running_loop().create_future()
        p.comment = comment
        p.answer.set_result(engine_action)
        try:
            message = await asyncio.wait_for(asyncio.shield(p.verdict),
                                             p.time_left_ms() / 1000 + VERDICT_GRACE_S)
        except TimeoutError:
            raise AgentError("the server sent no verdict on the answer in time") from None
        if message:
            raise AgentError(f"the server rejected the answer: {message}")
        return p


class AgentBot(Bot):
    """The bot the runner plays the seat with: each decision waits for the agent's answer.

    If no answer comes by the deadline, ``decide`` raises ``TimeoutError`` and the server
    applies its default action, as for any silent bot."""

    name = "mcp-agent"

    def __init__(self, desk: SeatDesk, seed: int = 0) -> None:
        super().__init__(seed)
        self.desk = desk

    def decide(self, observation: Any) -> Action:
        """Wait for the agent's answer to the decision the desk holds open."""
        p = self.desk.pending
        if p is None:
            raise TimeoutError("no decision is pending")
        action = p.answer.result(timeout=max(0.0, p.deadline - time.monotonic()))
        if p.comment:
            self.comment(p.comment)
        return action
