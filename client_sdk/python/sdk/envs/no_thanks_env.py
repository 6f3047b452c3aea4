"""No Thanks! as a PettingZoo ``AECEnv``: one seat decides at a time."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from pettingzoo import AECEnv

from bullring.sdk.envs.base import TableEnv, rewards

Obs = dict[str, np.ndarray]
"""One agent's observation: ``{"observation": float32 vector, "action_mask": int8 mask}``."""


class NoThanksAECEnv(TableEnv, AECEnv[str, Obs, int]):  # type: ignore[misc]
    """No Thanks! for ``seats`` agents ``seat_0``… on the referee's own engine.

    ``agent_selection`` is the seat to move. Observations are built from each seat's
    ``no_thanks.Observation`` (what a remote bot receives; never another seat's chips) by
    ``bullring.sdk.envs.encoding``. Actions: 0 take, 1 pass, 2 reveal, 3 keep (the last two
    answer the ``hidden_card`` variant's question). At the end of each round every seat's
    reward is minus its round score, so an episode's return is minus its game total. Two
    seats need ``settings={"two_seats": True}``, as in a match.
    """

    game = "no_thanks"
    metadata: ClassVar[dict[str, Any]] = {"name": "bullring_no_thanks_v1",
                                          "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(self, seats: int = 3, settings: Mapping[str, Any] | None = None,
                 render_mode: str | None = None) -> None:
        AECEnv.__init__(self)
        self._setup(seats, settings, render_mode)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game; ``seed`` restarts the sequence of game seeds."""
        self._new_game(seed)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = self._to_move()

    def observe(self, agent: str) -> Obs:
        """``agent``'s observation now (its mask is all zero when it is not its turn)."""
        return self.encoder.encode(self.observation_of(agent))

    def step(self, action: Any) -> None:
        """Answer the decision of ``agent_selection``; ValueError for an illegal action."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self._state()
        seat = self.possible_agents.index(agent)
        if action is None:
            raise ValueError(f"{agent} must answer its decision; None is for a finished agent")
        answer = self.encoder.action(state.pending[seat], int(action))
        events = state.apply({seat: answer})
        self._cumulative_rewards[agent] = 0
        self._clear_rewards()
        for s, reward in enumerate(rewards(events, self.seats)):
            self.rewards[self.possible_agents[s]] = reward
        if state.over:
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = self._to_move()
        self._accumulate_rewards()

    def _to_move(self) -> str:
        (seat,) = self._state().pending
        return self.possible_agents[seat]


def env(seats: int = 3, settings: Mapping[str, Any] | None = None,
        render_mode: str | None = None) -> NoThanksAECEnv:
    """A new No Thanks! ``AECEnv`` (PettingZoo's factory convention)."""
    return NoThanksAECEnv(seats, settings, render_mode)
