"""No Thanks! as a PettingZoo ``AECEnv``: one seat decides at a time."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from pettingzoo import AECEnv

from bullring.sdk.envs.base import RENDER_MODES, TableEnv, rewards
from bullring.sdk.errors import EnvActionError

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

    An action its mask forbids ends the game, as in PettingZoo's classic games: its agent is
    terminated with ``illegal_reward`` (by default minus the spread of the totals a game can
    reach), every other agent is truncated. With ``strict=True`` it raises ValueError (the
    referee's ``IllegalActionError``) instead.
    """

    game = "no_thanks"
    metadata: ClassVar[dict[str, Any]] = {"name": "bullring_no_thanks_v1",
                                          "render_modes": RENDER_MODES, "render_fps": 1,
                                          "is_parallelizable": False}

    def __init__(self, seats: int = 3, settings: Mapping[str, Any] | None = None,
                 render_mode: str | None = None, strict: bool = False,
                 illegal_reward: float | None = None) -> None:
        AECEnv.__init__(self)
        self._setup(seats, settings, render_mode, strict, illegal_reward)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game; ``seed`` restarts the sequence of game seeds."""
        self._new_game(seed)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = self._to_move()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> Obs:
        """``agent``'s observation now (its mask is all zero when it is not its turn)."""
        return self.encoder.encode(self.observation_of(agent))

    def step(self, action: Any) -> None:
        """Answer the decision of ``agent_selection``. ValueError for None or an action
        outside the action space; an action the mask forbids ends the game (ValueError when
        ``strict``)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self._state()
        seat = self.possible_agents.index(agent)
        if action is None:
            raise EnvActionError(f"{agent} must answer its decision; None is for a finished agent")
        number = self.encoder.checked_index(action)
        decision = state.pending[seat]
        if not self.strict and not self.encoder.decision_mask(decision)[number]:
            self._end_by_illegal(agent, number)
            return
        answer = self.encoder.action(decision, number)
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
        if self.render_mode == "human":
            self.render()

    def _end_by_illegal(self, agent: str, number: int) -> None:
        """End the game: ``agent`` (whose action ``number`` its mask forbids) is terminated
        with the penalty, every other agent truncated with 0; the state stays as it was."""
        self._cumulative_rewards[agent] = 0
        self._clear_rewards()
        self.rewards[agent] = self.illegal_reward
        self.terminations[agent] = True
        self.truncations = {other: other != agent for other in self.agents}
        self.infos[agent] = {"illegal_action": number}
        self._accumulate_rewards()

    def _to_move(self) -> str:
        (seat,) = self._state().pending
        return self.possible_agents[seat]


def env(seats: int = 3, settings: Mapping[str, Any] | None = None,
        render_mode: str | None = None, strict: bool = False,
        illegal_reward: float | None = None) -> NoThanksAECEnv:
    """A new No Thanks! ``AECEnv`` (PettingZoo's factory convention)."""
    return NoThanksAECEnv(seats, settings, render_mode, strict, illegal_reward)
