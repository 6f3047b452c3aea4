"""The environments: PettingZoo's and Gymnasium's API checks, observations built from what a
remote bot receives, and the rules the envs must keep (the row choice, masks, rewards)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test, seed_test

from bullring.contract import wire
from bullring.referee import no_thanks, six_nimmt
from bullring.referee.core import DecisionKind
from bullring.referee.registry import get_game
from bullring.sdk.envs import NoThanksAECEnv, SingleAgentEnv, SixNimmtParallelEnv, encoder
from bullring.sdk.envs.encoding import ROW_BASE, WAIT
from bullring.sdk.house import house_bot

ACCEPTED_WARNINGS = ("probably should be gymnasium.spaces.box",
                     "Observation is not a NumPy array")
"""PettingZoo's api_test advises a Box observation; a Dict of ``observation`` and
``action_mask`` is PettingZoo's own convention for masked games (its classic games)."""


def _only_accepted(caught: list[warnings.WarningMessage]) -> None:
    unexpected = [str(w.message) for w in caught
                  if not any(text in str(w.message) for text in ACCEPTED_WARNINGS)]
    assert not unexpected


@pytest.mark.parametrize("seats, settings", [(2, {}), (4, {}), (10, {"rounds": 1}),
                                             (3, {"variant": "professional", "rounds": 1})])
def test_six_nimmt_passes_pettingzoo_parallel_api_test(seats: int,
                                                       settings: dict[str, Any]) -> None:
    """PettingZoo's parallel_api_test passes on the 6 nimmt! env, with no warning, at 2, 4
    and 10 seats and in the drafted variant; the same seed plays the same game."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel_api_test(SixNimmtParallelEnv(seats, settings), num_cycles=1000)
    _only_accepted(caught)
    # PettingZoo's parallel_seed_test samples actions without their masks; this is it, masked.
    assert _masked_play(seats, settings, 9) == _masked_play(seats, settings, 9)
    assert _masked_play(seats, settings, 9) != _masked_play(seats, settings, 10)


def _masked_play(seats: int, settings: dict[str, Any], seed: int) -> list[bytes]:
    """Every observation vector of a game played by mask-sampled actions seeded ``seed``."""
    env = SixNimmtParallelEnv(seats, settings)
    observations, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen: list[bytes] = []
    while env.agents:
        seen.extend(o["observation"].tobytes() for o in observations.values())
        actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"])))
                   for a, o in observations.items()}
        observations, *_ = env.step(actions)
    return seen


@pytest.mark.parametrize("seats, settings", [(3, {}), (2, {"two_seats": True}),
                                             (5, {"hidden_card": True, "rounds": 2}),
                                             (4, {"tens_out": True})])
def test_no_thanks_passes_pettingzoo_api_test(seats: int, settings: dict[str, Any]) -> None:
    """PettingZoo's api_test (and its seed test) passes on the No Thanks! env, with no
    warning but its advice on Dict observations, in every variant."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(NoThanksAECEnv(seats, settings), num_cycles=1000)
        seed_test(lambda: NoThanksAECEnv(seats, settings))
    _only_accepted(caught)


def _observations_along_a_game(game: str, seats: int, settings: dict[str, Any],
                               seed: int) -> list[Any]:
    """Every observation of every seat along one game played by random house bots."""
    state = get_game(game).new_state(seats, settings, seed)
    bots = [house_bot("random", game, seed + s) for s in range(seats)]
    seen: list[Any] = []
    while not state.over:
        observations = {s: state.observation(s) for s in range(seats)}
        seen.extend(observations.values())
        state.apply({s: bots[s].decide(observations[s]) for s in state.pending})
    seen.extend(state.observation(s) for s in range(seats))
    return seen


@pytest.mark.parametrize("game, seats, settings", [
    ("six_nimmt", 4, {}), ("six_nimmt", 3, {"variant": "professional", "rounds": 1}),
    ("no_thanks", 4, {"hidden_card": True}), ("no_thanks", 3, {"tens_out": True})])
def test_vectors_are_the_same_from_the_wire(game: str, seats: int,
                                            settings: dict[str, Any]) -> None:
    """A seat's vector and mask are the same whether built from the engine's observation or
    from the observation a remote bot rebuilds from its DecisionRequest, and lie in the
    observation space: a policy trained in the env sees on the ladder what it learned on."""
    code = encoder(game, seats, settings)
    space = code.observation_space()
    pending = 0
    for observation in _observations_along_a_game(game, seats, settings, seed=5):
        local = code.encode(observation)
        assert space.contains(local)
        if observation.decision is None:
            continue
        pending += 1
        remote = wire.observation_from_request(
            wire.observation_to_request(observation, "d", 1000))
        sent = code.encode(remote)
        assert np.array_equal(local["observation"], sent["observation"])
        assert np.array_equal(local["action_mask"], sent["action_mask"])
        legal = {code.action(observation.decision, int(i))
                 for i in np.flatnonzero(local["action_mask"])}
        assert legal == set(observation.decision.legal)
    assert pending > 20


def test_a_row_choice_is_a_step_of_its_seat_alone() -> None:
    """When a trick's lowest card is below every row end, the next step asks that seat
    alone for a row (its mask: the four rows); the others may only wait, and the chosen
    row's bullheads are that seat's negative reward."""
    env = SixNimmtParallelEnv(3, {"rounds": 1})
    observations, _ = env.reset(seed=0)
    for _ in range(200):
        state = env.game_state
        assert state is not None
        if state.pending and next(iter(state.pending.values())).kind is DecisionKind.CHOOSE_ROW:
            break
        lowest = {agent: int(np.flatnonzero(obs["action_mask"])[0])
                  for agent, obs in observations.items()}
        observations, *_ = env.step(lowest)
    else:
        pytest.fail("no row choice in 200 steps")
    (chooser,) = state.pending
    agent = f"seat_{chooser}"
    rows = env.observation_of(agent).rows
    for name, obs in observations.items():
        expected = [ROW_BASE + r for r in range(4)] if name == agent else [WAIT]
        assert list(np.flatnonzero(obs["action_mask"])) == expected
    with pytest.raises(ValueError, match="nothing to decide"):
        env.step({name: ROW_BASE for name in observations})
    observations, rewards, *_ = env.step({agent: ROW_BASE + 2})
    cost = sum(six_nimmt.BULLHEADS[c] for c in rows[2])
    assert rewards[agent] <= -cost


def test_returns_are_minus_the_game_totals() -> None:
    """Over a whole game each agent's rewards add up to minus its total, in both games."""
    six = SixNimmtParallelEnv(4)
    observations, _ = six.reset(seed=3)
    returns = dict.fromkeys(six.possible_agents, 0.0)
    while six.agents:
        actions = {a: six.action_space(a).sample(o["action_mask"])
                   for a, o in observations.items()}
        observations, rewards, *_ = six.step(actions)
        for agent, reward in rewards.items():
            returns[agent] += reward
    assert six.game_state is not None
    assert [-returns[a] for a in six.possible_agents] == list(six.game_state.totals)
    nt = NoThanksAECEnv(3, {"rounds": 2})
    nt.reset(seed=3)
    nt_returns = dict.fromkeys(nt.possible_agents, 0.0)
    for agent in nt.agent_iter():
        obs, reward, done, _, _ = nt.last()
        nt_returns[agent] += reward
        nt.step(None if done else nt.action_space(agent).sample(obs["action_mask"]))
    assert nt.game_state is not None
    assert [-nt_returns[a] for a in nt.possible_agents] == list(nt.game_state.totals)


def test_no_thanks_vector_never_holds_another_seats_chips() -> None:
    """Chips are hidden (docs/rules.md §4): another seat's chips never change a seat's
    vector, while its own chips do."""
    state = no_thanks.new_state(3, {}, 1)
    code = encoder("no_thanks", 3)
    before = code.vector(state.observation(2))
    state.chips[0] += 5
    assert np.array_equal(before, code.vector(state.observation(2)))
    assert not np.array_equal(code.vector(state.observation(0)),
                              code.vector(no_thanks.new_state(3, {}, 1).observation(0)))


@pytest.mark.parametrize("game, opponents", [("six_nimmt", ("random",)),
                                             ("no_thanks", ("threshold", "random"))])
def test_single_agent_env_passes_gymnasium_checks(game: str, opponents: tuple[str, ...]) -> None:
    """The Gymnasium env resets, seeds and steps as Gymnasium's checker wants (its step
    check samples unmasked actions, so the env's illegal-action error is what it meets: the
    checker runs on a wrapper that answers a masked-out action with the first legal one)."""
    env = SingleAgentEnv(game, opponents)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(_FirstLegal(env), skip_render_check=True)
    assert not [w for w in caught if "action_mask" not in str(w.message)]
    env.reset(seed=1)
    with pytest.raises(ValueError):
        env.step(0 if game == "six_nimmt" else 3)


class _FirstLegal(SingleAgentEnv):
    """A SingleAgentEnv whose step replaces an illegal action with the first legal one."""

    def __init__(self, env: SingleAgentEnv) -> None:
        super().__init__(env.game_spec.id, env.opponents, env.settings)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        mask = self.encoder.mask(self.observation_of())
        if not mask[int(action)]:
            action = int(np.flatnonzero(mask)[0])
        return super().step(action)


def test_single_agent_env_plays_whole_games_against_house_bots() -> None:
    """The learner's seat rotates game by game, it is asked only its own decisions, and at
    the end ``info`` has the game's totals and ranks, its return minus its total."""
    env = SingleAgentEnv("six_nimmt", ("greedy", "random"))
    seats = []
    for game in range(3):
        obs, info = env.reset(seed=11 if game == 0 else None)
        seats.append(env.seat)
        total, done = 0.0, False
        while not done:
            assert env.observation_of().decision.seat == env.seat
            action = env.action_space.sample(obs["action_mask"])
            obs, reward, done, truncated, info = env.step(action)
            total += reward
            assert not truncated
        assert -total == info["totals"][env.seat]
        assert len(info["ranks"]) == 3
    assert seats == [0, 1, 2]



@pytest.mark.parametrize("seats", [2, 3])
def test_no_thanks_observations_stay_in_their_space_when_every_seat_passes(seats: int) -> None:
    """Seats that pass whenever they may pass more often in a round than there are chips
    (each takes a pot back and passes again): every observation is in the space."""
    settings = {"two_seats": True} if seats == 2 else {}
    env = NoThanksAECEnv(seats, settings)
    env.reset(seed=3)
    space = env.observation_space(env.agents[0])
    layout = encoder("no_thanks", seats, settings).layout
    chips = no_thanks.new_state(seats, settings, 0).chips_start * seats
    most = 0.0
    while not all(env.terminations.values()):
        observed = env.observe(env.agent_selection)
        assert space.contains(observed), observed["observation"][layout.parts["passes"]]
        most = max(most, float(observed["observation"][layout.parts["passes"]].max()))
        mask = observed["action_mask"]
        env.step(1 if mask[1] else int(np.flatnonzero(mask)[0]))
    assert most > chips  # the case the space must hold
