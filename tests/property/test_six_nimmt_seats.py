"""Specification tests for the 6 nimmt! engine, continued (docs/rules.md §1, §3, §4): what
each seat may know, bad input, and the default actions. Crafted positions and random games
come from ``tests/property/six_nimmt_games.py``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bullring.referee.core import (
    DecisionKind,
    IllegalActionError,
    MalformedActionError,
    NotPendingError,
    SettingsError,
)
from bullring.referee.six_nimmt import (
    Observation,
    SixNimmtState,
    TrickResolved,
    View,
)
from tests.property.six_nimmt_games import (
    ALL_CARDS,
    ROWS,
    crafted,
    play_game,
    reshuffled,
    snapshot,
)

# -- 3. what each seat may know -------------------------------------------------------------


def unseen_by(state: SixNimmtState, seat: int) -> list[int]:
    """Cards ``seat`` cannot see: other seats' hands and the undealt cards."""
    seen = set(state.hands[seat]) | {c for r in state.rows for c in r}
    seen |= {c for p in state.piles for c in p} | set(state.trick_plays or ())
    return sorted(ALL_CARDS - seen)


PUBLIC_CARD_FIELDS = {"rows", "piles", "revealed", "trick_plays"}
OBSERVATION_FIELDS = ("seat", "round", "trick", "hand", "rows", "piles", "penalties", "totals",
                      "revealed", "trick_plays", "pool", "decision")
VIEW_FIELDS = ("round", "trick", "rows", "piles", "penalties", "totals", "revealed",
               "trick_plays", "pool", "pending")


def check_no_leak(state: SixNimmtState, rng: random.Random) -> None:
    """Differential leak check of one moment of a standard game."""
    seat = rng.randrange(state.seats)
    others = [s for s in range(state.seats) if s != seat]
    sibling = reshuffled(state, others, rng)
    assert sibling.hands[seat] == state.hands[seat]
    assert state.observation(seat) == sibling.observation(seat)
    everyone = reshuffled(state, list(range(state.seats)), rng)
    assert state.view() == everyone.view()
    for s in range(state.seats):
        obs = state.observation(s)
        foreign = {c for o, h in enumerate(state.hands) if o != s for c in h}
        assert obs.hand == state.hands[s]
        assert not foreign & set(obs.hand)
        assert not foreign & set(obs.pool)
        if obs.decision is not None:
            assert obs.decision.seat == s
            if obs.decision.kind is DecisionKind.PLAY_CARD:
                assert obs.decision.legal == obs.hand
            else:
                assert obs.decision.legal == ROWS
        # public card fields hold played cards only, never a card still in a hand
        for name in PUBLIC_CARD_FIELDS:
            value = getattr(obs, name) or ()
            flat = {c for part in value for c in (part if isinstance(part, tuple) else (part,))}
            assert not foreign & flat, name


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seats=st.integers(2, 10), seed=st.integers(0, 2**32), answer_seed=st.integers(0, 2**32))
def test_observation_hides_other_hands(seats: int, seed: int, answer_seed: int) -> None:
    """docs/rules.md §4: a seat's observation is the same whatever the other seats hold (their
    hands redealt from their cards and the undealt ones, sizes kept), both while cards are
    being chosen and while a row choice is pending; the spectator view does not change when
    any hands are redealt; no observation shows a card of another seat's hand."""
    probe = random.Random(answer_seed ^ 0x5EED)

    def each_step(state: SixNimmtState, _events: list[Any]) -> None:
        if state.over:
            return
        choosing = any(d.kind is DecisionKind.CHOOSE_ROW for d in state.pending.values())
        if choosing or probe.random() < 0.2:
            check_no_leak(state, probe)

    play_game(seats, {"rounds": 1}, seed, answer_seed, each_step)


def test_leak_check_runs_during_a_row_choice() -> None:
    """While a row choice is pending, the other seats' hands are still hidden and nothing else
    is: the chooser's and every other seat's observation ignore a redeal of the hands."""
    state = crafted(3, [(61,), (70, 80), (90,), (41, 42, 43, 45, 60)],
                    [(62, 100), (29, 101), (30, 102)])
    state.apply({0: 62, 1: 29, 2: 30})
    assert set(state.pending) == {1}
    rng = random.Random(0)
    for _ in range(20):
        check_no_leak(state, rng)


def test_no_field_carries_unrevealed_answers() -> None:
    """Simultaneous answers are applied all at once, so neither observation nor view has a
    field that could hold some seats' answers before the reveal: their fields are exactly the
    public ones plus the seat's own hand and decision; a partial answer set changes nothing."""
    assert Observation._fields == OBSERVATION_FIELDS
    assert View._fields == VIEW_FIELDS
    state = SixNimmtState(4, seed=11)
    before = snapshot(state)
    hand0 = state.hands[0]
    with pytest.raises(IllegalActionError):
        state.apply({0: hand0[0], 1: state.hands[1][0]})
    assert snapshot(state) == before
    assert state.view().pending == tuple((s, DecisionKind.PLAY_CARD) for s in range(4))
    assert state.view().trick_plays is None


# -- 4. bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(("seats", "raw", "names"), [
    (11, None, ["seats", "2 to 10"]),
    (1, None, ["seats", "2 to 10"]),
    (4, {"variant": "tactical"}, ["variant", "standard", "professional"]),
    (4, {"end_threshold": 0}, ["end_threshold", "1", "10000"]),
    (4, {"colour": "red"}, ["colour", "end_threshold", "end_rule", "rounds", "variant"]),
    (4, {"end_rule": "maybe"}, ["end_rule", "at_least", "more_than"]),
    (4, {"rounds": -1}, ["rounds", "0", "1000"]),
])
def test_bad_settings_are_rejected(seats: int, raw: dict[str, Any] | None,
                                   names: list[str]) -> None:
    """Seat counts outside 2..10 and settings outside what docs/rules.md allows raise SettingsError
    whose message names the setting (or "seats") and what is allowed."""
    with pytest.raises(SettingsError) as info:
        SixNimmtState(seats, raw, seed=1)
    message = str(info.value)
    for name in names:
        assert name in message


def choose_row_state() -> SixNimmtState:
    """Example C's position with the row choice of seat 1 pending."""
    state = crafted(2, [(61,), (70, 80), (90,), (41, 42, 43, 45, 60)], [(1, 62, 100), (29, 101)])
    state.apply({0: 62, 1: 29})
    return state


@pytest.mark.parametrize(("make", "answers", "error"), [
    (lambda: crafted(2, [(10,), (20,), (30,), (40,)], [(1, 50), (60, 70)]),
     {0: 51, 1: 60}, IllegalActionError),
    (lambda: crafted(2, [(10,), (20,), (30,), (40,)], [(1, 50), (60, 70)]),
     {0: True, 1: 60}, MalformedActionError),
    (lambda: crafted(2, [(10,), (20,), (30,), (40,)], [(1, 50), (60, 70)]),
     {0: 50, 1: 50}, IllegalActionError),
    (lambda: crafted(2, [(10,), (20,), (30,), (40,)], [(1, 50), (60, 70)]),
     {0: "50", 1: 60}, MalformedActionError),
    (lambda: crafted(2, [(10,), (20,), (30,), (40,)], [(1, 50), (60, 70)]),
     {0: 50}, IllegalActionError),
    (lambda: crafted(2, [(10,), (20,), (30,), (40,)], [(1, 50), (60, 70)]),
     {0: 50, 1: 60, 2: 1}, NotPendingError),
    (choose_row_state, {1: 7}, IllegalActionError),
    (choose_row_state, {1: -1}, IllegalActionError),
    (choose_row_state, {1: True}, MalformedActionError),
    (choose_row_state, {1: "0"}, MalformedActionError),
    (choose_row_state, {0: 0}, NotPendingError),
    (choose_row_state, {0: 0, 1: 0}, NotPendingError),
    (choose_row_state, {}, IllegalActionError),
    (lambda: SixNimmtState(3, {"variant": "professional"}), {0: 35}, IllegalActionError),
    (lambda: SixNimmtState(3, {"variant": "professional"}), {1: 1}, NotPendingError),
])
def test_illegal_answers_change_nothing(make: Callable[[], SixNimmtState],
                                        answers: dict[int, Any],
                                        error: type[Exception]) -> None:
    """A card not in the hand, a row outside 0..3 (or a bool), an answer from a seat with no
    decision pending and a missing answer raise IllegalActionError (MalformedActionError for
    one of the wrong type, NotPendingError for a seat that is not pending) and leave the state
    exactly as it was; the seat may answer again."""
    state = make()
    before = snapshot(state)
    with pytest.raises(error):
        state.apply(answers)
    assert snapshot(state) == before
    for seat, action in answers.items():
        if seat not in state.pending:
            with pytest.raises(NotPendingError):
                state.validate(seat, action)
        elif action not in state.pending[seat].legal or isinstance(action, bool):
            with pytest.raises(error if error is MalformedActionError else IllegalActionError):
                state.validate(seat, action)
    state.apply({s: state.default_action(s) for s in state.pending})
    assert state.step == before[3] + 1


def test_answers_count_by_seat_whatever_their_order() -> None:
    """Simultaneous answers are matched to seats by key, not by the order they arrive in."""
    forward = crafted(3, [(10,), (20,), (30,), (40,)], [(11, 50), (21, 60), (31, 70)])
    backward = crafted(3, [(10,), (20,), (30,), (40,)], [(11, 50), (21, 60), (31, 70)])
    forward.apply({0: 11, 1: 60, 2: 31})
    backward.apply({2: 31, 1: 60, 0: 11})
    assert backward.hands == forward.hands == [(50,), (21,), (70,)]
    assert backward.rows == forward.rows
    assert backward.revealed == ((11, 60, 31),)


@pytest.mark.parametrize("card", [50.0, True, "50", None])
def test_a_card_of_the_wrong_type_is_malformed(card: object) -> None:
    """A card must be an int: 50.0, True (== 1) or "50" are malformed even if equal to one."""
    state = crafted(2, [(10,), (20,), (30,), (40,)], [(1, 50), (60, 70)])
    before = snapshot(state)
    with pytest.raises(MalformedActionError) as info:
        state.apply({0: card, 1: 60})  # type: ignore[dict-item]
    assert info.value.seat == 0
    assert snapshot(state) == before


def test_illegal_answer_error_is_precise() -> None:
    """The error names the seat and the action, and says why it is not allowed."""
    state = choose_row_state()
    with pytest.raises(IllegalActionError) as info:
        state.apply({1: 7})
    assert (info.value.seat, info.value.action) == (1, 7)
    assert "0..3" in str(info.value)
    with pytest.raises(NotPendingError) as not_pending:
        state.validate(0, 2)
    assert not_pending.value.seat == 0


# -- 5. default actions ------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(seats=st.integers(2, 10), seed=st.integers(0, 2**32), steps=st.integers(0, 9))
def test_play_card_default_is_deterministic_card_from_hand(seats: int, seed: int,
                                                           steps: int) -> None:
    """PLAY_CARD default: a card from the seat's hand, the same for the same seed and step."""
    first = SixNimmtState(seats, seed=seed)
    second = SixNimmtState(seats, seed=seed)
    for state in (first, second):
        for _ in range(steps):
            if any(d.kind is not DecisionKind.PLAY_CARD for d in state.pending.values()):
                break
            state.apply({s: state.default_action(s) for s in state.pending})
    assert first.step == second.step
    for seat, decision in first.pending.items():
        default = first.default_action(seat)
        assert default == second.default_action(seat) == first.default_action(seat)
        if decision.kind is DecisionKind.PLAY_CARD:
            assert default in first.hands[seat]


@pytest.mark.parametrize(("rows", "expected"), [
    # fewest bullheads: 31 -> 1 (row 2)
    ([(10,), (20, 21), (31,), (55,)], 2),
    # bullheads tie at 3 for rows 1 and 3: fewer cards wins even at a higher index
    ([(55,), (71, 72, 73), (99,), (80,)], 3),
    # bullheads and card count tie for rows 1 and 2: the lower index wins
    ([(55,), (71, 72, 73), (81, 82, 83), (88,)], 1),
])
def test_choose_row_default(rows: list[tuple[int, ...]], expected: int) -> None:
    """CHOOSE_ROW default: the row with the fewest bullheads; ties go to fewer cards, then to
    the lower row index."""
    state = crafted(2, rows, [(5, 6), (8, 9)])
    state.apply({0: 5, 1: 9})
    assert set(state.pending) == {0}
    assert state.default_action(0) == expected
    resolved = [e for e in state.apply({0: expected}) if isinstance(e, TrickResolved)]
    assert resolved[0].taken[0] == rows[expected]


def test_draft_default_is_lowest_card_left() -> None:
    """DRAFT_CARD default: the lowest card left in the pool, at every pick."""
    state = SixNimmtState(3, {"variant": "professional"}, seed=2)
    assert state.default_action(0) == 1
    for card in (1, 2, 34, 5, 3):
        (seat,) = state.pending
        state.apply({seat: card})
        (seat,) = state.pending
        assert state.default_action(seat) == min(state.pool)
    assert state.default_action(seat) == 4
    with pytest.raises(NotPendingError):
        state.default_action((seat + 1) % 3)
