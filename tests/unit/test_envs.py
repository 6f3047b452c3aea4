"""The environments: PettingZoo's and Gymnasium's own checks, run as their authors ship them,
observations built from what a remote bot receives, and the rules the envs must keep (the
row choice, masks, rewards, what an illegal action costs)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import (
    api_test,
    parallel_api_test,
    parallel_seed_test,
    performance_benchmark,
    render_test,
    seed_test,
)
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from bullring.contract import wire
from bullring.referee import no_thanks, six_nimmt
from bullring.referee.core import DecisionKind, IllegalActionError
from bullring.referee.registry import get_game
from bullring.sdk.envs import (
    GYMNASIUM_IDS,
    NoThanksAECEnv,
    SingleAgentEnv,
    SixNimmtParallelEnv,
    encoder,
    six_nimmt_env,
)
from bullring.sdk.envs.encoding import ROW_BASE, WAIT
from bullring.sdk.house import house_bot

ACCEPTED_WARNINGS = ("probably should be gymnasium.spaces.box",
                     "Observation is not a NumPy array")
"""PettingZoo's api_test advises a Box observation; a Dict of ``observation`` and
``action_mask`` is PettingZoo's own convention for masked games (its classic games)."""

SIX_NIMMT_TABLES: list[tuple[int, dict[str, Any]]] = [
    (2, {}), (4, {}), (10, {"rounds": 1}), (3, {"variant": "professional", "rounds": 1})]
NO_THANKS_TABLES: list[tuple[int, dict[str, Any]]] = [
    (3, {}), (2, {"two_seats": True}), (5, {"hidden_card": True, "rounds": 2}),
    (4, {"tens_out": True})]

EnvFactory = Callable[..., Any]
"""Makes an environment; PettingZoo's render_test passes ``render_mode`` to it."""


def _parallel_envs() -> list[Any]:
    """Every table as a ParallelEnv: 6 nimmt! natively, No Thanks! through PettingZoo's
    ``turn_based_aec_to_parallel``."""
    six: list[Any] = [pytest.param(partial(SixNimmtParallelEnv, seats, settings),
                                   id=f"six_nimmt-{seats}-{settings}")
                      for seats, settings in SIX_NIMMT_TABLES]
    return six + [pytest.param(partial(_no_thanks_parallel, seats, settings),
                               id=f"no_thanks-{seats}-{settings}")
                  for seats, settings in NO_THANKS_TABLES]


def _no_thanks_parallel(seats: int, settings: dict[str, Any], **kwargs: Any) -> Any:
    return turn_based_aec_to_parallel(NoThanksAECEnv(seats, settings, **kwargs))


def _aec_envs() -> list[Any]:
    """Every table as an AECEnv: No Thanks! natively, 6 nimmt! as its module's ``env()``
    (PettingZoo's ``parallel_to_aec``)."""
    six: list[Any] = [pytest.param(partial(six_nimmt_env.env, seats, settings),
                                   id=f"six_nimmt-{seats}-{settings}")
                      for seats, settings in SIX_NIMMT_TABLES]
    return six + [pytest.param(partial(NoThanksAECEnv, seats, settings),
                               id=f"no_thanks-{seats}-{settings}")
                  for seats, settings in NO_THANKS_TABLES]


def _only_accepted(caught: list[warnings.WarningMessage]) -> None:
    unexpected = [str(w.message) for w in caught
                  if not any(text in str(w.message) for text in ACCEPTED_WARNINGS)]
    assert not unexpected


@pytest.mark.parametrize("make", _parallel_envs())
def test_pettingzoo_parallel_checks_pass(make: EnvFactory) -> None:
    """PettingZoo's parallel_api_test and parallel_seed_test, unmodified, pass on every
    table with no warning; the seed test samples actions without their masks, so it meets
    the illegal actions that end a game."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel_api_test(make(), num_cycles=1000)
        parallel_seed_test(make)
    _only_accepted(caught)


@pytest.mark.parametrize("make", _aec_envs())
def test_pettingzoo_aec_checks_pass(make: EnvFactory, capsys: pytest.CaptureFixture[str]) -> None:
    """PettingZoo's api_test, seed_test and render_test, unmodified, pass on every table
    with no warning but its advice on Dict observations; render_test's ``human`` mode prints
    the table."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(make(), num_cycles=1000)
        seed_test(make)
        capsys.readouterr()
        render_test(make)
    _only_accepted(caught)
    printed = capsys.readouterr().out
    assert re.search(r"^round 0$", printed, re.MULTILINE)
    assert "pending: seat 0" in printed


@pytest.mark.parametrize("make", [pytest.param(partial(six_nimmt_env.env, 4), id="six_nimmt"),
                                  pytest.param(partial(NoThanksAECEnv, 3), id="no_thanks")])
def test_pettingzoo_performance_benchmark_runs(make: EnvFactory,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """PettingZoo's performance_benchmark (five seconds of masked random play, resetting at
    each game's end) runs to its end on both games."""
    performance_benchmark(make())
    printed = capsys.readouterr().out
    turns = re.search(r"^([0-9.]+) turns per second$", printed, re.MULTILINE)
    assert turns is not None and float(turns.group(1)) > 0, printed
    assert "Finished performance benchmark" in printed


def test_six_nimmt_same_seed_same_game() -> None:
    """The same seed plays the same game under masked play, another seed another game
    (parallel_seed_test's unmasked actions end a game at its first step)."""
    for seats, settings in SIX_NIMMT_TABLES:
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
    alone for a row (its mask: the four rows); the others may only wait (a strict env
    refuses anything else), and the chosen row's bullheads are that seat's negative reward."""
    env = SixNimmtParallelEnv(3, {"rounds": 1}, strict=True)
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


def _not_in_hand(observation: dict[str, np.ndarray]) -> int:
    """A card action the mask forbids."""
    return int(np.flatnonzero(observation["action_mask"][1:ROW_BASE] == 0)[0]) + 1


def test_an_illegal_action_ends_the_parallel_game_with_the_penalty() -> None:
    """A card not in the hand ends the 6 nimmt! game, as PettingZoo's classic games end
    theirs: its agent is terminated with minus the worst total a game can reach (237 at
    the default settings: the end threshold 66 plus every bullhead, 171), every other agent
    truncated with 0, nothing of the step played, and no agent left."""
    env = SixNimmtParallelEnv(3)
    assert env.illegal_reward == -(66 + sum(six_nimmt.BULLHEADS)) == -237
    observations, _ = env.reset(seed=2)
    actions = {a: int(np.flatnonzero(o["action_mask"])[0]) for a, o in observations.items()}
    actions["seat_1"] = _not_in_hand(observations["seat_1"])
    after, rewards, terminations, truncations, infos = env.step(actions)
    assert rewards == {"seat_0": 0.0, "seat_1": -237.0, "seat_2": 0.0}
    assert terminations == {"seat_0": False, "seat_1": True, "seat_2": False}
    assert truncations == {"seat_0": True, "seat_1": False, "seat_2": True}
    assert infos["seat_1"] == {"illegal_action": actions["seat_1"]}
    assert env.agents == []
    assert all(np.array_equal(after[a]["observation"], observations[a]["observation"])
               for a in observations)
    assert SixNimmtParallelEnv(3, {"rounds": 1}).illegal_reward == -171
    assert SixNimmtParallelEnv(3, illegal_reward=-1).illegal_reward == -1


def test_an_illegal_action_ends_the_aec_games_with_the_penalty() -> None:
    """Through the AEC API (No Thanks! natively, 6 nimmt! through ``parallel_to_aec``) an
    illegal action gives its agent the penalty (No Thanks! at 3 seats: minus 660, the spread
    between the worst total, every card, and the best, every chip), and the game ends once
    every agent has stepped ``None`` through ``agent_iter``."""
    assert NoThanksAECEnv(3).illegal_reward == -660
    for env, offender in ((NoThanksAECEnv(3), "seat_0"), (six_nimmt_env.env(3), "seat_2")):
        env.reset(seed=5)
        finished: dict[str, tuple[float, bool, bool]] = {}
        for agent in env.agent_iter(100):
            obs, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                finished[agent] = (reward, terminated, truncated)
                env.step(None)
                continue
            forbidden = np.flatnonzero(obs["action_mask"] == 0)
            env.step(int(forbidden[0]) if agent == offender else
                     int(np.flatnonzero(obs["action_mask"])[0]))
        assert env.agents == []
        penalty = env.unwrapped.illegal_reward
        assert finished == {a: (penalty, True, False) if a == offender else (0.0, False, True)
                            for a in env.possible_agents}


def test_an_illegal_action_ends_the_single_agent_episode() -> None:
    """In the Gymnasium env an illegal action ends the episode, terminated, with the
    penalty and ``info["illegal_action"]``; a further step is refused until reset."""
    env = SingleAgentEnv("six_nimmt", ("random",))
    obs, _ = env.reset(seed=1)
    action = _not_in_hand(obs)
    obs, reward, terminated, truncated, info = env.step(action)
    assert (reward, terminated, truncated) == (-237.0, True, False)
    assert info["illegal_action"] == action
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    obs, _ = env.reset()
    assert env.step(int(np.flatnonzero(obs["action_mask"])[0]))[1] > -237


def test_a_strict_env_raises_the_referees_error_and_changes_nothing() -> None:
    """With ``strict=True`` an illegal action raises ``IllegalActionError`` (a ValueError),
    in every env, and the game goes on from where it was; an action outside the action
    space is refused in either mode."""
    six = SixNimmtParallelEnv(2, strict=True)
    observations, _ = six.reset(seed=1)
    with pytest.raises(IllegalActionError):
        six.step({a: _not_in_hand(o) for a, o in observations.items()})
    six.step({a: int(np.flatnonzero(o["action_mask"])[0]) for a, o in observations.items()})
    nt = NoThanksAECEnv(3, strict=True)
    nt.reset(seed=1)
    with pytest.raises(IllegalActionError):
        nt.step(3)
    nt.step(0)
    single = SingleAgentEnv("no_thanks", ("random", "random"), strict=True)
    single.reset(seed=1)
    with pytest.raises(IllegalActionError):
        single.step(2)
    assert single.step(1)[2] is False
    for strict in (True, False):
        parallel = SixNimmtParallelEnv(2, strict=strict)
        observations, _ = parallel.reset(seed=1)
        with pytest.raises(ValueError, match="not in the action space"):
            parallel.step(dict.fromkeys(observations, 109))
        turns = NoThanksAECEnv(3, strict=strict)
        turns.reset(seed=1)
        with pytest.raises(ValueError, match="not in the action space"):
            turns.step(4)


def test_human_rendering_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    """``render_mode="human"`` prints the table at reset and after each step (render()
    returns None, as PettingZoo and Gymnasium want); ``ansi`` returns the same text."""
    human = SixNimmtParallelEnv(2, render_mode="human")
    observations, _ = human.reset(seed=8)
    text = SixNimmtParallelEnv(2, render_mode="ansi")
    text.reset(seed=8)
    assert capsys.readouterr().out == f"{text.render()}\n\n"
    human.step({a: int(np.flatnonzero(o["action_mask"])[0]) for a, o in observations.items()})
    assert human.render() is None
    printed = capsys.readouterr().out
    assert printed.count("round 0") == 2 and "trick: 1" in printed
    with pytest.raises(ValueError, match="'human' or 'ansi'"):
        SingleAgentEnv(render_mode="rgb_array")


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


@pytest.mark.parametrize("env_id", list(GYMNASIUM_IDS))
@pytest.mark.parametrize("render_mode", [None, "human", "ansi"])
def test_gymnasium_check_env_passes(env_id: str, render_mode: str | None) -> None:
    """Gymnasium's check_env, as shipped (render and close checks included), passes on each
    registered game with no warning; its step checks sample unmasked actions, which end
    the episode. A whole game through ``gymnasium.make``'s own checking wrappers warns of
    nothing either."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(gymnasium.make(env_id, render_mode=render_mode).unwrapped)
        env = gymnasium.make(env_id)
        obs, info = env.reset(seed=4)
        done = False
        while not done:
            obs, _, done, truncated, info = env.step(env.action_space.sample(obs["action_mask"]))
            assert not truncated
        assert "totals" in info
    assert [str(w.message) for w in caught] == []


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
