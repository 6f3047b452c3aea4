"""6 nimmt! as a PettingZoo ``ParallelEnv``: every seat chooses its card at once.

A step answers every pending decision. In a trick, that is every seat's card. When the
trick's lowest card is below every row end, the next step is the row choice: only that seat
decides (its mask holds the four rows) and every other seat answers ``WAIT``, the one action
its mask allows. The professional variant's draft is turn-based the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec

from bullring.referee.core import Action
from bullring.sdk.envs.base import RENDER_MODES, TableEnv, rewards
from bullring.sdk.envs.encoding import WAIT
from bullring.sdk.errors import EnvActionError

Obs = dict[str, np.ndarray]
"""One agent's observation: ``{"observation": float32 vector, "action_mask": int8 mask}``."""


class SixNimmtParallelEnv(TableEnv, ParallelEnv[str, Obs, int]):  # type: ignore[misc]
    """6 nimmt! for ``seats`` agents ``seat_0``… on the referee's own engine.

    Observations are built from each seat's ``six_nimmt.Observation`` (what a remote bot
    receives) by ``bullring.sdk.envs.encoding``; a seat's reward is minus the bullheads it took
    in the step, so an episode's return is minus its game total. An episode is one game
    under ``settings`` (the match settings, such as ``{"rounds": 1}``). Actions: 0 wait,
    1..104 a card, 105..108 a row.

    An action its mask forbids ends the game, as in PettingZoo's classic games: its agent is
    terminated with ``illegal_reward`` (by default minus the worst total a game can reach),
    every other agent is truncated with 0, and nothing of the step is played. With
    ``strict=True`` it raises ValueError (the referee's ``IllegalActionError``) instead.
    """

    game = "six_nimmt"
    metadata: ClassVar[dict[str, Any]] = {"name": "bullring_six_nimmt_v1",
                                          "render_modes": RENDER_MODES, "render_fps": 1,
                                          "is_parallelizable": True}

    def __init__(self, seats: int = 4, settings: Mapping[str, Any] | None = None,
                 render_mode: str | None = None, strict: bool = False,
                 illegal_reward: float | None = None) -> None:
        self._setup(seats, settings, render_mode, strict, illegal_reward)

    def reset(self, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Obs], dict[str, Any]]:
        """Deal a new game; ``seed`` restarts the sequence of game seeds."""
        self._new_game(seed)
        if self.render_mode == "human":
            self.render()
        return self._observations(), {agent: {} for agent in self.agents}

    def step(self, actions: Mapping[str, Any]) -> tuple[
            dict[str, Obs], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        """Answer every pending decision with its agent's action; every other agent may
        answer ``WAIT`` or nothing. ValueError for a missing action or one outside the action
        space; an action the mask forbids ends the game (ValueError when ``strict``)."""
        state = self._state()
        answers: dict[int, Action] = {}
        illegal: dict[str, int] = {}
        for seat, agent in enumerate(self.possible_agents):
            index = actions.get(agent)
            decision = state.pending.get(seat)
            if index is None:
                if decision is not None:
                    raise EnvActionError(f"{agent} must answer its {decision.kind} decision")
                continue
            number = self.encoder.checked_index(index)
            if not self.strict and not self.encoder.decision_mask(decision)[number]:
                illegal[agent] = number
            elif decision is None:
                if number != WAIT:
                    raise EnvActionError(f"{agent} has nothing to decide now: its only action is "
                                     f"{WAIT} (wait), not {index!r}")
            else:
                answers[seat] = self.encoder.action(decision, number)
        if illegal:
            return self._end_by_illegal(illegal)
        gained = rewards(state.apply(answers), self.seats)
        agents = self.agents
        observations = self._observations()
        rewards_by_agent = {agent: gained[seat] for seat, agent in enumerate(agents)}
        terminations = dict.fromkeys(agents, state.over)
        truncations = dict.fromkeys(agents, False)
        infos: dict[str, Any] = {agent: {} for agent in agents}
        if state.over:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return observations, rewards_by_agent, terminations, truncations, infos

    def _end_by_illegal(self, illegal: dict[str, int]) -> tuple[
            dict[str, Obs], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        """End the game: each agent in ``illegal`` (its forbidden action) is terminated with
        the penalty, every other agent truncated with 0; the state stays as it was."""
        agents = self.agents
        observations = self._observations()
        penalties = {agent: self.illegal_reward if agent in illegal else 0.0
                     for agent in agents}
        terminations = {agent: agent in illegal for agent in agents}
        truncations = {agent: agent not in illegal for agent in agents}
        infos: dict[str, Any] = {agent: ({"illegal_action": illegal[agent]}
                                         if agent in illegal else {}) for agent in agents}
        self.agents = []
        return observations, penalties, terminations, truncations, infos

    def _observations(self) -> dict[str, Obs]:
        state = self._state()
        encode = self.encoder.encode
        return {agent: encode(state.observation(seat))
                for seat, agent in enumerate(self.possible_agents) if agent in self.agents}


def parallel_env(seats: int = 4, settings: Mapping[str, Any] | None = None,
                 render_mode: str | None = None, strict: bool = False,
                 illegal_reward: float | None = None) -> SixNimmtParallelEnv:
    """A new 6 nimmt! ``ParallelEnv`` (PettingZoo's factory convention)."""
    return SixNimmtParallelEnv(seats, settings, render_mode, strict, illegal_reward)


def env(seats: int = 4, settings: Mapping[str, Any] | None = None,
        render_mode: str | None = None, strict: bool = False,
        illegal_reward: float | None = None) -> AECEnv[str, Obs, int | None]:
    """The same game as an ``AECEnv``, one agent at a time (PettingZoo's ``parallel_to_aec``):
    what AEC tools (``api_test``, ``render_test``, ``performance_benchmark``) take."""
    return parallel_to_aec(SixNimmtParallelEnv(seats, settings, render_mode, strict,
                                               illegal_reward))
