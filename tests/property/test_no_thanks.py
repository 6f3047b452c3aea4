"""No Thanks! as docs/rules.md §2-4 say: material, turns, scoring, variants, secrets, bad input."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bullring.referee.core import (
    ActionError,
    DecisionKind,
    IllegalActionError,
    NotPendingError,
    SettingsError,
)
from bullring.referee.no_thanks import Move, NoThanksState, Observation, View, score


def random_answer(state: NoThanksState, rng: random.Random) -> dict[int, Any]:
    """One uniformly random legal answer for the seat to move."""
    ((seat, decision),) = state.pending.items()
    return {seat: rng.choice(decision.legal)}


def play_out(state: NoThanksState, rng: random.Random) -> list[Any]:
    """Play ``state`` to its end with random answers; return every event."""
    events: list[Any] = []
    while not state.over:
        events.extend(state.apply(random_answer(state, rng)))
    return events


def test_scoring_example() -> None:
    """27 28 29 30 33 with 5 chips scores 27 + 33 - 5 = 55: a run counts its lowest card."""
    assert score([27, 28, 29, 30, 33], 5) == 55
    assert score([], 3) == -3
    assert score([35, 3, 4, 34], 0) == 3 + 34


@pytest.mark.parametrize("seats,chips", [(3, 11), (4, 11), (5, 11), (6, 9), (7, 7)])
def test_chips_by_seat_count(seats: int, chips: int) -> None:
    """11 chips with 3-5 seats, 9 with 6, 7 with 7."""
    state = NoThanksState(seats, seed=1)
    assert state.chips == [chips] * seats
    assert state.replay_rounds()[0]["chips_start"] == chips


def test_two_seats_need_the_setting() -> None:
    """2 seats only with two_seats=true, and then 11 chips each."""
    with pytest.raises(SettingsError, match=r"seats.*two_seats"):
        NoThanksState(2)
    assert NoThanksState(2, {"two_seats": True}).chips == [11, 11]


def test_deck_and_removed_cards() -> None:
    """Cards 3..35: 9 removed face down, 24 in the deck; tens_out removes 10, 20, 30 openly."""
    state = NoThanksState(4, seed=3)
    record = state.replay_rounds()[0]
    assert len(record["removed"]) == 9 and len(record["deck"]) == 24
    assert sorted(record["removed"] + record["deck"]) == list(range(3, 36))
    tens = NoThanksState(4, {"tens_out": True}, seed=3)
    record = tens.replay_rounds()[0]
    assert len(record["removed"]) == 6 and len(record["deck"]) == 24
    assert not {10, 20, 30} & set(record["removed"] + record["deck"])
    assert tens.chips == [10] * 4
    assert tens.observation(0).out == (10, 20, 30)


def test_pass_and_take() -> None:
    """A pass pays a chip and moves the turn on; a take gets the pot and decides again."""
    state = NoThanksState(3, seed=5)
    card = state.card
    assert set(state.pending) == {0}
    state.apply({0: "pass"})
    state.apply({1: Move.PASS})
    assert (state.pot, state.chips) == (2, [10, 10, 11])
    state.apply({2: "take"})
    assert state.cards[2] == (card,) and state.chips[2] == 13 and state.pot == 0
    assert set(state.pending) == {2} and state.card != card


def test_seat_without_chips_must_take() -> None:
    """A seat with no chips cannot pass: its only legal action is take."""
    state = NoThanksState(3, {"chips": 1}, seed=2)
    state.apply({0: "pass"})
    state.apply({1: "pass"})
    state.apply({2: "pass"})
    assert state.pending[0].legal == (Move.TAKE,)
    before = copy.deepcopy(state.replay_rounds())
    with pytest.raises(IllegalActionError, match="no chips cannot pass"):
        state.apply({0: "pass"})
    assert state.replay_rounds() == before and state.chips == [0, 0, 0]
    assert state.default_action(0) == Move.TAKE


@given(seed=st.integers(0, 2**32), seats=st.integers(3, 7), rounds=st.integers(1, 3),
       tens_out=st.booleans(), hidden=st.booleans())
@settings(max_examples=60, deadline=None)
def test_invariants_over_random_games(seed: int, seats: int, rounds: int, tens_out: bool,
                                      hidden: bool) -> None:
    """Chips are conserved, every card is accounted for, the game ends after `rounds`
    rounds exactly when the deck runs out, and scores follow the rule."""
    if hidden and seats > (6 if tens_out else 9):
        return
    state = NoThanksState(seats, {"rounds": rounds, "tens_out": tens_out,
                                  "hidden_card": hidden}, seed)
    rng = random.Random(seed)
    started = 0
    while not state.over:
        assert sum(state.chips) + state.pot == state.chips_start * seats
        record = state.rounds_log[-1]
        face_up = [c for cards in state.cards for c in cards]
        hidden_held = [c for c in state.hidden_cards if c is not None]
        deck_left = [*state.deck, state.card]
        in_play = sorted(face_up + deck_left + [c for c in record["removed"]
                                                if c not in face_up])
        assert in_play == sorted(c for c in range(3, 36) if c not in state.out)
        assert set(hidden_held) <= set(record["removed"])
        assert len(face_up) == len(set(face_up))
        started = state.round
        state.apply(random_answer(state, rng))
    assert started == rounds - 1 and len(state.rounds_log) == rounds
    totals = [0] * seats
    assert not state.deck
    for record in state.replay_rounds():
        assert sum(record["chips"]) == state.chips_start * seats
        for seat in range(seats):
            assert record["scores"][seat] == score(record["cards"][seat], record["chips"][seat])
            totals[seat] += record["scores"][seat]
        assert sum(len(c) for c in record["cards"]) == 24 + sum(
            1 for t in record["turns"] if t["action"] == "reveal_hidden")
    assert list(state.totals) == totals


def test_same_seed_same_answers_same_replay() -> None:
    """The same seed with the same answers gives an identical replay and result."""
    a = NoThanksState(5, {"rounds": 2, "hidden_card": True}, seed=9)
    b = NoThanksState(5, {"rounds": 2, "hidden_card": True}, seed=9)
    assert play_out(a, random.Random(1)) == play_out(b, random.Random(1))
    assert a.replay_rounds() == b.replay_rounds() and a.result() == b.result()


def test_deals_depend_on_seed_and_round_only() -> None:
    """Whatever is played, the same seed gives the same removed cards and deck order."""
    a = NoThanksState(4, {"rounds": 2}, seed=4)
    b = NoThanksState(4, {"rounds": 2}, seed=4)
    play_out(a, random.Random(1))
    play_out(b, random.Random(2))
    for ra, rb in zip(a.replay_rounds(), b.replay_rounds(), strict=True):
        assert (ra["removed"], ra["deck"]) == (rb["removed"], rb["deck"])
    assert a.replay_rounds()[0]["start_seat"] == 0 and a.replay_rounds()[1]["start_seat"] == 1


def test_hidden_card_variant() -> None:
    """Each seat gets one removed card, sees only its own, may reveal it before deciding;
    a revealed card scores, an unused one never does."""
    state = NoThanksState(4, {"hidden_card": True}, seed=6)
    removed = set(state.replay_rounds()[0]["removed"])
    assert all(c in removed for c in state.hidden_cards)
    ((seat, decision),) = state.pending.items()
    assert decision.kind is DecisionKind.REVEAL_HIDDEN_CARD
    assert state.default_action(seat) == Move.KEEP
    hidden = state.hidden_cards[seat]
    state.apply({seat: "reveal"})
    assert hidden in state.cards[seat] and state.hidden_cards[seat] is None
    assert state.pending[seat].kind is DecisionKind.TAKE_OR_PASS
    assert state.replay_rounds()[0]["turns"][-1] == {"seat": seat, "action": "reveal_hidden",
                                                     "card": hidden}
    play_out(state, random.Random(3))
    final = state.replay_rounds()[0]
    for s in range(4):
        assert final["scores"][s] == score(final["cards"][s], final["chips"][s])


# -- what each seat may know ---------------------------------------------------------------


def hide_from(state: NoThanksState, seat: int, rng: random.Random) -> NoThanksState:
    """A sibling state that differs from ``state`` only in what ``seat`` cannot know:
    other seats' chips and hidden cards, the removed cards and the order of the deck."""
    other = copy.deepcopy(state)
    others = [s for s in range(state.seats) if s != seat]
    for s in others:
        other.chips[s] = rng.randrange(0, 40)
    unseen = [c for s in others if (c := other.hidden_cards[s]) is not None]
    record = other.rounds_log[-1]
    face_up = {c for cards in other.cards for c in cards}
    removed_unseen = [c for c in record["removed"] if c not in face_up
                      and c not in unseen and c != other.hidden_cards[seat]]
    pool = unseen + removed_unseen + other.deck
    rng.shuffle(pool)
    for s in others:
        if other.hidden_cards[s] is not None:
            other.hidden_cards[s] = pool.pop()
    other.deck = pool[:len(other.deck)]
    return other


@pytest.mark.parametrize("variant", [{}, {"hidden_card": True}, {"tens_out": True}])
def test_no_seat_sees_what_the_rules_hide(variant: dict[str, bool]) -> None:
    """Changing everything a seat may not know leaves its observation unchanged, and the
    spectator view shows no seat's chips or hidden card at all."""
    for game in range(30):
        rng = random.Random(game)
        state = NoThanksState(5, variant, seed=game)
        while not state.over:
            for seat in range(state.seats):
                sibling = hide_from(state, seat, rng)
                assert sibling.observation(seat) == state.observation(seat)
            everyone = copy.deepcopy(state)
            for s in range(state.seats):
                everyone.chips[s] += 7
            everyone.deck.reverse()
            assert everyone.view() == state.view()
            state.apply(random_answer(state, rng))


def test_observation_fields_are_the_public_ones() -> None:
    """An observation holds only its own chips and hidden card beside public facts."""
    assert Observation._fields == ("seat", "round", "card", "pot", "chips", "hidden_card",
                                   "cards", "deck_left", "history", "totals", "out",
                                   "decision")
    assert "chips" not in View._fields and "hidden_card" not in View._fields


# -- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize("seats,setting,match", [
    (8, {}, "seats"),
    (1, {}, "seats"),
    (2, {}, "two_seats"),
    (4, {"rounds": 0}, "rounds"),
    (4, {"chips": -1}, "chips"),
    (4, {"hidden_card": "maybe"}, "hidden_card"),
    (4, {"colour": "red"}, "colour"),
    (7, {"hidden_card": True, "tens_out": True}, "hidden_card"),
])
def test_bad_settings_name_the_setting(seats: int, setting: dict[str, Any], match: str) -> None:
    """Bad settings raise SettingsError naming the setting and what is allowed."""
    with pytest.raises(SettingsError, match=match):
        NoThanksState(seats, setting)


@pytest.mark.parametrize("answer", [{1: "pass"}, {0: "fold"}, {0: 1}, {0: "reveal"}, {},
                                    {0: "pass", 1: "pass"}])
def test_illegal_answers_change_nothing(answer: dict[int, Any]) -> None:
    """An answer that is malformed, not legal now, or from a seat not pending raises a
    typed error and leaves the state as it was."""
    state = NoThanksState(3, seed=8)
    before = (copy.deepcopy(state.replay_rounds()), [state.observation(s) for s in range(3)],
              state.step, dict(state.pending))
    with pytest.raises(ActionError):
        state.apply(answer)
    after = (state.replay_rounds(), [state.observation(s) for s in range(3)], state.step,
             dict(state.pending))
    assert after == before
    state.apply({0: "pass"})


def test_answer_from_a_seat_not_pending_is_named() -> None:
    """The error for a seat that is not to move is NotPendingError and names the seat."""
    state = NoThanksState(3, seed=8)
    with pytest.raises(NotPendingError, match="seat 2"):
        state.validate(2, "take")
