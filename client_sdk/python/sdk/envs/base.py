"""What the environments share: agent names, the seeds of successive games, the text view
they render, and what an illegal action costs."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any

from gymnasium import spaces

from bullring.referee import no_thanks, six_nimmt
from bullring.referee.registry import AnyGameState, get_game
from bullring.referee.seeding import derive_seed
from bullring.sdk.envs.encoding import Encoder, encoder
from bullring.sdk.errors import EnvActionError, EnvStateError

RENDER_MODES = ["human", "ansi"]
"""What ``render_mode`` may be besides None: ``human`` prints the table after every reset and
step (and on ``render()``), ``ansi`` returns it from ``render()`` as text."""


def check_render_mode(render_mode: str | None) -> None:
    """EnvActionError (a ValueError) unless ``render_mode`` is None or one of ``RENDER_MODES``."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise EnvActionError(f"render_mode must be None, 'human' or 'ansi', not {render_mode!r}")


def rendered(render_mode: str | None, view: Any) -> str | None:
    """``render()`` of an environment in ``render_mode`` showing ``view``: the table as text
    (``ansi``), printed (``human``, returning None), or nothing (None)."""
    if render_mode == "ansi":
        return text_view(view)
    if render_mode == "human":
        print(text_view(view), end="\n\n", flush=True)
    return None


def illegal_reward_of(code: Encoder, illegal_reward: float | None) -> float:
    """The reward of an action its mask forbids: ``illegal_reward`` when given, else minus
    ``Encoder.penalty_span`` (docs/envs.md lists its figures)."""
    return -code.penalty_span if illegal_reward is None else float(illegal_reward)


def agent_names(seats: int) -> list[str]:
    """The agents of a table of ``seats``: ``seat_0``, ``seat_1``, … in seat order."""
    return [f"seat_{seat}" for seat in range(seats)]


class GameSeeds:
    """The engine seed of each game an environment plays.

    ``reset(seed=S)`` starts a new sequence: its games are seeded ``derive_seed(S, "env", k)``
    for k = 0, 1, …, so the same seed replays the same deals. Without a first seed, the
    sequence starts from a random one.
    """

    def __init__(self) -> None:
        self.root: int | None = None
        self.count = 0

    def next(self, seed: int | None) -> int:
        """The seed of the next game; ``seed`` (when given) restarts the sequence."""
        if seed is not None:
            self.root, self.count = int(seed), 0
        elif self.root is None:
            self.root, self.count = random.SystemRandom().getrandbits(63), 0
        game_seed = derive_seed(self.root, "env", self.count)
        self.count += 1
        return game_seed


def text_view(view: Any) -> str:
    """A few lines describing a spectator's view of either game (``render_mode="ansi"``)."""
    lines = [f"round {view.round}"]
    for name in view._fields:
        if name in ("round", "revealed", "history", "pending"):
            continue
        lines.append(f"{name}: {getattr(view, name)}")
    lines.append("pending: " + ", ".join(f"seat {s} {kind}" for s, kind in view.pending))
    return "\n".join(lines)


def rewards(events: Iterable[Any], seats: int) -> list[float]:
    """Each seat's reward for ``events``: minus the bullheads it took (6 nimmt!) or minus
    its round score when a round ends (No Thanks!). An episode's return is minus the total."""
    result = [0.0] * seats
    for event in events:
        if isinstance(event, six_nimmt.TrickResolved):
            for seat, cards in enumerate(event.taken):
                result[seat] -= sum(six_nimmt.BULLHEADS[c] for c in cards)
        elif isinstance(event, no_thanks.RoundEnded):
            for seat, points in enumerate(event.scores):
                result[seat] -= points
    return result


class TableEnv:
    """What both PettingZoo environments share: one table of ``seats`` agents on one game's
    engine, their spaces (one object for every agent), and the SDK observation of a seat."""

    game = ""
    """The game id, set by each environment."""

    strict = False
    """Whether an illegal action raises ValueError (the referee's ``IllegalActionError``)
    instead of ending the game for its agent with ``illegal_reward``."""
    illegal_reward = 0.0
    """The reward of an agent whose action its mask forbids, when not ``strict``."""

    def _setup(self, seats: int, settings: Mapping[str, Any] | None, render_mode: str | None,
               strict: bool, illegal_reward: float | None) -> None:
        check_render_mode(render_mode)
        self.seats = seats
        self.settings = dict(settings or {})
        self.render_mode = render_mode
        self.encoder = encoder(self.game, seats, self.settings)
        self.strict = strict
        self.illegal_reward = illegal_reward_of(self.encoder, illegal_reward)
        self.possible_agents = agent_names(seats)
        self.agents: list[str] = []
        self._observation_space = self.encoder.observation_space()
        self._action_space = self.encoder.action_space()
        self._seeds = GameSeeds()
        self.game_state: AnyGameState | None = None

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """Every agent's observation space (one object for all)."""
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """Every agent's action space (one object for all): docs/envs.md lists the actions."""
        return self._action_space

    def observation_of(self, agent: str) -> Any:
        """The SDK's observation of ``agent``'s seat now: the value a bot's ``decide`` gets."""
        return self._state().observation(self.possible_agents.index(agent))

    def render(self) -> str | None:
        """The public view as text (``render_mode="ansi"``), or printed (``"human"``)."""
        return rendered(self.render_mode, self._state().view())

    def close(self) -> None:
        """Nothing to release."""

    def _new_game(self, seed: int | None) -> AnyGameState:
        self.game_state = get_game(self.game).new_state(self.seats, self.settings,
                                                        self._seeds.next(seed))
        self.agents = self.possible_agents[:]
        return self.game_state

    def _state(self) -> AnyGameState:
        if self.game_state is None:
            raise EnvStateError("call reset() before using the environment")
        return self.game_state
