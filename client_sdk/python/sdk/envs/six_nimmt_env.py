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
from pettingzoo import ParallelEnv

from bullring.referee.core import Action
from bullring.sdk.envs.base import TableEnv, rewards
from bullring.sdk.envs.encoding import WAIT

Obs = dict[str, np.ndarray]
"""One agent's observation: ``{"observation": float32 vector, "action_mask": int8 mask}``."""


class SixNimmtParallelEnv(TableEnv, ParallelEnv[str, Obs, int]):  # type: ignore[misc]
    """6 nimmt! for ``seats`` agents ``seat_0``… on the referee's own engine.

    Observations are built from each seat's ``six_nimmt.Observation`` (what a remote bot
    receives) by ``bullring.sdk.envs.encoding``; a seat's reward is minus the bullheads it took
    in the step, so an episode's return is minus its game total. An episode is one game
    under ``settings`` (the match settings, such as ``{"rounds": 1}``). Actions: 0 wait,
    1..104 a card, 105..108 a row.
    """

    game = "six_nimmt"
    metadata: ClassVar[dict[str, Any]] = {"name": "bullring_six_nimmt_v1",
                                          "render_modes": ["ansi"], "is_parallelizable": True}

    def __init__(self, seats: int = 4, settings: Mapping[str, Any] | None = None,
                 render_mode: str | None = None) -> None:
        self._setup(seats, settings, render_mode)

    def reset(self, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Obs], dict[str, Any]]:
        """Deal a new game; ``seed`` restarts the sequence of game seeds."""
        self._new_game(seed)
        return self._observations(), {agent: {} for agent in self.agents}

    def step(self, actions: Mapping[str, Any]) -> tuple[
            dict[str, Obs], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        """Answer every pending decision with its agent's action; every other agent may
        answer ``WAIT`` or nothing. ValueError for a missing or illegal action."""
        state = self._state()
        answers: dict[int, Action] = {}
        for seat, agent in enumerate(self.possible_agents):
            index = actions.get(agent)
            decision = state.pending.get(seat)
            if decision is None:
                if index is not None and int(index) != WAIT:
                    raise ValueError(f"{agent} has nothing to decide now: its only action is "
                                     f"{WAIT} (wait), not {index!r}")
                continue
            if index is None:
                raise ValueError(f"{agent} must answer its {decision.kind} decision")
            answers[seat] = self.encoder.action(decision, int(index))
        gained = rewards(state.apply(answers), self.seats)
        agents = self.agents
        observations = self._observations()
        rewards_by_agent = {agent: gained[seat] for seat, agent in enumerate(agents)}
        terminations = dict.fromkeys(agents, state.over)
        truncations = dict.fromkeys(agents, False)
        infos: dict[str, Any] = {agent: {} for agent in agents}
        if state.over:
            self.agents = []
        return observations, rewards_by_agent, terminations, truncations, infos

    def _observations(self) -> dict[str, Obs]:
        state = self._state()
        encode = self.encoder.encode
        return {agent: encode(state.observation(seat))
                for seat, agent in enumerate(self.possible_agents) if agent in self.agents}


def parallel_env(seats: int = 4, settings: Mapping[str, Any] | None = None,
                 render_mode: str | None = None) -> SixNimmtParallelEnv:
    """A new 6 nimmt! ``ParallelEnv`` (PettingZoo's factory convention)."""
    return SixNimmtParallelEnv(seats, settings, render_mode)
