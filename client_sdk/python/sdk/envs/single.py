"""Either game as a Gymnasium ``Env`` for one learning seat against bots."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np

from bullring.referee.core import Action
from bullring.referee.registry import AnyGameState, get_game
from bullring.referee.seeding import derive_seed
from bullring.sdk.arena import make_bot
from bullring.sdk.bot import Bot
from bullring.sdk.envs.base import (
    RENDER_MODES,
    GameSeeds,
    check_render_mode,
    illegal_reward_of,
    rendered,
    rewards,
)
from bullring.sdk.envs.encoding import encoder
from bullring.sdk.errors import EnvActionError, EnvStateError

Obs = dict[str, np.ndarray]
"""The observation: ``{"observation": float32 vector, "action_mask": int8 mask}``."""


class SingleAgentEnv(gymnasium.Env[dict[str, Any], np.int64]):
    """One seat of ``game`` learns; ``opponents`` (house bot names or bot specs, as the
    arena takes them: ``random``, ``greedy``, ``module:Class``) fill the other seats.

    The learner sits at ``seat``, or, when ``seat`` is None, at seat ``k % seats`` in the
    k-th game after a seeded reset, as the arena rotates its lineup. A step answers the
    learner's pending decision (its mask says which actions are legal), lets the bots answer
    theirs (in the same trick, when 6 nimmt!'s cards are chosen at once), and returns when
    the learner must decide again or the game is over. Observations, actions and rewards are
    those of ``SixNimmtParallelEnv`` and ``NoThanksAECEnv`` for that seat; ``info`` holds the
    ``action_mask`` too and, at the end, the game's ``totals`` and ``ranks``.

    An action the mask forbids ends the episode (``terminated``) with ``illegal_reward``, by
    default minus the spread of the totals a game can reach; ``info["illegal_action"]``
    names it. With ``strict=True`` it raises ValueError (the referee's
    ``IllegalActionError``) instead. Gymnasium knows both games as ``bullring/SixNimmt-v1``
    and ``bullring/NoThanks-v1`` (``gymnasium.make``, with these arguments).
    """

    metadata: dict[str, Any] = {"render_modes": RENDER_MODES, "render_fps": 1}  # noqa: RUF012

    def __init__(self, game: str = "six_nimmt", opponents: Sequence[str] = ("random",),
                 settings: Mapping[str, Any] | None = None, seat: int | None = None,
                 render_mode: str | None = None, strict: bool = False,
                 illegal_reward: float | None = None) -> None:
        check_render_mode(render_mode)
        self.game_spec = get_game(game)
        self.opponents = tuple(opponents)
        self.seats = len(self.opponents) + 1
        if seat is not None and not 0 <= seat < self.seats:
            raise EnvActionError(f"seat must be 0..{self.seats - 1}, not {seat!r}")
        self.fixed_seat = seat
        self.settings = dict(settings or {})
        self.render_mode = render_mode
        self.encoder = encoder(self.game_spec.id, self.seats, self.settings)
        self.strict = strict
        self.illegal_reward = illegal_reward_of(self.encoder, illegal_reward)
        self.observation_space = self.encoder.observation_space()
        self.action_space = self.encoder.action_space()
        for name in dict.fromkeys(self.opponents):
            make_bot(name, self.game_spec.id)
        self._seeds = GameSeeds()
        self.game_state: AnyGameState | None = None
        self.seat = 0
        self.bots: dict[int, Bot] = {}
        self.ended = False
        """Whether an illegal action ended this game (a further step waits for reset)."""

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Obs, dict[str, Any]]:
        """Deal a new game and play the bots up to the learner's first decision."""
        super().reset(seed=seed)
        game_seed = self._seeds.next(seed)
        self.seat = (self.fixed_seat if self.fixed_seat is not None
                     else (self._seeds.count - 1) % self.seats)
        others = [s for s in range(self.seats) if s != self.seat]
        self.bots = {s: make_bot(name, self.game_spec.id, derive_seed(game_seed, "bot", s))
                     for s, name in zip(others, self.opponents, strict=True)}
        self.game_state = self.game_spec.new_state(self.seats, self.settings, game_seed)
        self.ended = False
        self._advance({})
        if self.render_mode == "human":
            self.render()
        return self._observe()

    def step(self, action: Any) -> tuple[Obs, float, bool, bool, dict[str, Any]]:
        """Answer the learner's decision with ``action``. ValueError for an action outside
        the action space; an action the mask forbids ends the episode (ValueError when
        ``strict``)."""
        state = self._state()
        decision = state.pending.get(self.seat)
        if decision is None or self.ended:
            raise EnvStateError("the game is over: call reset()")
        number = self.encoder.checked_index(action)
        if not self.strict and not self.encoder.decision_mask(decision)[number]:
            self.ended = True
            observation, info = self._observe()
            info["illegal_action"] = number
            return observation, self.illegal_reward, True, False, info
        reward = self._advance({self.seat: self.encoder.action(decision, number)})
        if self.render_mode == "human":
            self.render()
        observation, info = self._observe()
        return observation, reward, state.over, False, info

    def observation_of(self) -> Any:
        """The SDK's observation of the learner's seat now: the value a bot's ``decide`` gets."""
        return self._state().observation(self.seat)

    def render(self) -> str | None:
        """The public view as text (``render_mode="ansi"``), or printed (``"human"``)."""
        return rendered(self.render_mode, self._state().view())

    def _state(self) -> AnyGameState:
        if self.game_state is None:
            raise EnvStateError("call reset() before using the environment")
        return self.game_state

    def _advance(self, answers: dict[int, Action]) -> float:
        """Apply ``answers`` with the bots' for the same decisions, then the bots' alone
        until the learner must decide or the game ends; the learner's reward meanwhile."""
        state = self._state()
        reward = 0.0
        while not state.over:
            if self.seat in state.pending and self.seat not in answers:
                break
            for seat in state.pending:
                if seat != self.seat:
                    answers[seat] = self.bots[seat].decide(state.observation(seat))
            reward += rewards(state.apply(answers), self.seats)[self.seat]
            answers = {}
        return reward

    def _observe(self) -> tuple[Obs, dict[str, Any]]:
        state = self._state()
        observation = self.encoder.encode(state.observation(self.seat))
        info: dict[str, Any] = {"action_mask": observation["action_mask"]}
        if state.over:
            totals, ranks = state.result()
            info.update(totals=totals, ranks=ranks)
        return observation, info
