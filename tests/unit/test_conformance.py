"""The engine conformance suite: every game in the registry (referee/registry.py) keeps the
decision-point contract. A game installed from any distribution is checked here without a
line changed (tests/toy_game shows it with a tiny game): it only has to give its two hooks
(``Hooks`` below) by an entry point of the group ``bullring.conformance``.

For each game, over random legal play at every seat count it allows: each pending decision
offers legal actions, and its default is one of them; the game ends, with ranks that follow
the totals and totals that add the round scores; the same seed and answers replay identically
and the replay verifies; a seat's observation is the same whatever it may not see; bad
settings and seat counts are refused naming what was wrong; an answer that is malformed, not
legal, or from a seat not asked changes nothing.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, NamedTuple

import pytest

from bullring.referee.core import (
    DecisionKind,
    IllegalActionError,
    MalformedActionError,
    NotPendingError,
    SettingsError,
    competition_ranks,
)
from bullring.referee.registry import GAMES, AnyGameState, GameSpec
from bullring.referee.replay import answer_event, build_replay, verify
from tests.property import six_nimmt_games, test_no_thanks


class Hooks(NamedTuple):
    """What a game gives the conformance suite besides its registry entry."""

    hide_from: Callable[[Any, int, random.Random], Any]
    """A copy of the state changed in everything the seat may not see (other hands, the
    deck's order, hidden counts...): the seat's observation must not change."""
    check: Callable[[Any, list[Any]], None]
    """The game's own invariants (every card accounted for...), after each apply."""


def _six_nimmt_hide(state: Any, seat: int, rng: random.Random) -> Any:
    others = [s for s in range(state.seats) if s != seat]
    return six_nimmt_games.reshuffled(state, others, rng)


def _no_check(_state: Any, _events: list[Any]) -> None:
    """No invariants beyond the generic ones (the game's own tests check more)."""


HOOKS: dict[str, Hooks] = {
    "six_nimmt": Hooks(_six_nimmt_hide, _no_check),
    "no_thanks": Hooks(test_no_thanks.hide_from, _no_check),
}
"""The hooks of the games Bullring comes with, by game id."""

CONFORMANCE_GROUP = "bullring.conformance"
"""The entry point group where another distribution gives its game's hooks: by game id, a
module (or any object) with ``hide_from`` and ``check``."""

WORDS = ("take", "pass", "reveal", "keep")
"""Actions answered with a word (by kind) rather than a number."""


def specs() -> list[Any]:
    """Every registered game, as pytest parameters named by versioned id."""
    return [pytest.param(spec, id=spec.versioned_id) for spec in GAMES.values()]


def seat_counts(spec: GameSpec[Any, Any, Any]) -> list[int]:
    """The fewest, a middle and the most seats the game can be played at with its default
    settings."""
    counts = []
    for seats in range(spec.min_seats, spec.max_seats + 1):
        try:
            spec.new_state(seats, None, 0)
        except SettingsError:
            continue
        counts.append(seats)
    return sorted({counts[0], counts[len(counts) // 2], counts[-1]})


def quick_settings(spec: GameSpec[Any, Any, Any]) -> dict[str, Any]:
    """One round where the game has a ``rounds`` setting, to keep the suite fast."""
    return {"rounds": 1} if any(s.name == "rounds" for s in spec.settings) else {}


def play(spec: GameSpec[Any, Any, Any], seats: int, seed: int, answer_seed: int,
         each_step: Callable[[AnyGameState, list[Any]], None] | None = None
         ) -> tuple[AnyGameState, list[Any], list[dict[str, Any]]]:
    """Play a whole game with random legal answers; return the state, its events and the
    answer log."""
    state = spec.new_state(seats, quick_settings(spec), seed)
    rng = random.Random(answer_seed)
    events: list[Any] = list(state.opening)
    log: list[dict[str, Any]] = []
    for _ in range(100_000):
        if state.over:
            break
        answers = {s: rng.choice(d.legal) for s, d in sorted(state.pending.items())}
        log += [answer_event(state, s, a) for s, a in answers.items()]
        new = state.apply(answers)
        events += new
        if each_step:
            each_step(state, new)
    assert state.over, "the game did not end"
    return state, events, log


def hooks(spec: GameSpec[Any, Any, Any]) -> Hooks:
    """The game's hooks (HOOKS, else its distribution's entry point), or a failure saying
    they are missing."""
    if spec.id in HOOKS:
        return HOOKS[spec.id]
    for point in entry_points(group=CONFORMANCE_GROUP, name=spec.id):
        given = point.load()
        return Hooks(given.hide_from, given.check)
    pytest.fail(f"{spec.versioned_id} has no conformance hooks: give them by an entry point "
                f"{spec.id!r} of the group {CONFORMANCE_GROUP!r}")


@pytest.mark.parametrize("spec", specs())
def test_random_games_keep_the_contract(spec: GameSpec[Any, Any, Any]) -> None:
    """Every pending decision is its seat's, offers legal actions, and its default is one of
    them (validate agrees); the game ends with no decision pending, ranks that follow the
    totals, and totals that add the round scores; the game's own invariants hold throughout."""
    check = hooks(spec).check

    def each_step(state: AnyGameState, events: list[Any]) -> None:
        check(state, events)
        for seat, decision in state.pending.items():
            assert decision.seat == seat and 0 <= seat < state.seats
            assert decision.legal, f"seat {seat} has nothing legal"
            default = state.default_action(seat)
            assert default in decision.legal
            state.validate(seat, default)

    for seats in seat_counts(spec):
        for seed in range(3):
            state, _, _ = play(spec, seats, seed, seed + 100, each_step)
            assert not state.pending
            totals, ranks = state.result()
            assert ranks == competition_ranks(totals)
            assert totals == tuple(sum(r[s] for r in state.round_scores())
                                   for s in range(seats))


@pytest.mark.parametrize("spec", specs())
def test_same_seed_and_answers_replay_identically_and_verify(spec: GameSpec[Any, Any, Any]) -> None:
    """A game is a function of its seed and answers: played twice it gives the same events,
    observations and rounds, and its replay re-checks (referee/replay.py)."""
    for seats in seat_counts(spec):
        seen: list[list[Any]] = [[], []]
        runs = []
        for run in range(2):
            def record(state: AnyGameState, events: list[Any], out: list[Any] = seen[run]
                       ) -> None:
                out.append((events, [state.observation(s) for s in range(state.seats)],
                            state.view()))
            runs.append(play(spec, seats, 7, 8, record))
        assert seen[0] == seen[1]
        assert runs[0][1] == runs[1][1]
        state, _, log = runs[0]
        assert state.replay_rounds() == runs[1][0].replay_rounds()
        verify(build_replay(state, match_id="m", seat_names=[f"s{i}" for i in range(seats)],
                            events=log))


@pytest.mark.parametrize("spec", specs())
def test_no_seat_sees_what_the_rules_hide(spec: GameSpec[Any, Any, Any]) -> None:
    """At every step, changing everything a seat may not see leaves its observation as it
    was (the game's ``hide_from`` hook says what that is)."""
    hide_from = hooks(spec).hide_from
    rng = random.Random(3)

    def each_step(state: AnyGameState, _events: list[Any]) -> None:
        if state.over:
            return
        for seat in range(state.seats):
            assert hide_from(state, seat, rng).observation(seat) == state.observation(seat)

    for seats in seat_counts(spec):
        play(spec, seats, seats, 5, each_step)


@pytest.mark.parametrize("spec", specs())
def test_bad_settings_and_seat_counts_are_refused_by_name(spec: GameSpec[Any, Any, Any]) -> None:
    """An unknown setting, a value outside each setting's range or choices, and a seat count
    outside the game's limits raise SettingsError naming the setting (or "seats")."""
    seats = seat_counts(spec)[0]
    cases: list[tuple[int, dict[str, Any], str]] = [
        (spec.min_seats - 1, {}, "seats"), (spec.max_seats + 1, {}, "seats"),
        (seats, {"no_such_setting": 1}, "no_such_setting")]
    for setting in spec.settings:
        if isinstance(setting.default, bool):
            cases.append((seats, {setting.name: "maybe"}, setting.name))
        elif isinstance(setting.default, int):
            cases.append((seats, {setting.name: "abc"}, setting.name))
            if setting.minimum is not None:
                cases.append((seats, {setting.name: setting.minimum - 1}, setting.name))
            if setting.maximum is not None:
                cases.append((seats, {setting.name: setting.maximum + 1}, setting.name))
        else:
            cases.append((seats, {setting.name: "no-such-choice"}, setting.name))
    for count, raw, name in cases:
        with pytest.raises(SettingsError, match=name):
            spec.new_state(count, raw, 0)


@pytest.mark.parametrize("spec", specs())
def test_bad_answers_change_nothing(spec: GameSpec[Any, Any, Any]) -> None:
    """An answer from a seat not asked is NotPendingError, one of the wrong type is
    MalformedActionError, one not legal now is IllegalActionError; each leaves every
    observation, the view and the step as they were, and the game plays on."""
    rng = random.Random(11)

    def snapshot(state: AnyGameState) -> Any:
        return ([state.observation(s) for s in range(state.seats)], state.view(), state.step,
                state.replay_rounds())

    def each_step(state: AnyGameState, _events: list[Any]) -> None:
        if state.over or rng.random() > 0.3:
            return
        before = snapshot(state)
        seat, decision = rng.choice(sorted(state.pending.items()))
        numbers = decision.kind not in (DecisionKind.TAKE_OR_PASS,
                                        DecisionKind.REVEAL_HIDDEN_CARD)
        wrong_type: Any = "take" if numbers else 1
        not_legal: Any = (10_000 if numbers else "reveal"
                          if decision.kind is DecisionKind.TAKE_OR_PASS else "pass")
        idle = [s for s in range(state.seats) if s not in state.pending]
        valid = {s: d.legal[0] for s, d in state.pending.items()}
        tries: list[tuple[dict[int, Any], type[Exception]]] = [
            ({**valid, seat: wrong_type}, MalformedActionError),
            ({**valid, seat: not_legal}, IllegalActionError)]
        if idle:
            tries.append(({**valid, idle[0]: valid[seat]}, NotPendingError))
        for answers, error in tries:
            with pytest.raises(error):
                state.apply(answers)
            assert snapshot(state) == before

    for seats in seat_counts(spec)[:2]:
        play(spec, seats, 21, 22, each_step)

