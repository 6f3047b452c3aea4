"""More specification tests for the No Thanks! engine (docs/rules.md §2-4; docs/replay-format.md).

Companion to ``tests/property/test_no_thanks.py``: material and scoring, settings, turns,
defaults, words vs ``Move`` members, and every bad answer leaving the state unchanged; whole
games, the hidden card, secrecy and replays are in ``test_no_thanks_games.py``. Crafted
positions come from ``no_thanks_positions.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from bullring.referee.core import (
    DecisionKind,
    IllegalActionError,
    MalformedActionError,
    NotPendingError,
    RefereeError,
    SettingsError,
)
from bullring.referee.no_thanks import (
    SETTINGS,
    CardTurnedUp,
    Move,
    NoThanksState,
    Passed,
    Took,
    new_state,
    score,
)
from tests.unit.no_thanks_positions import (
    ALL_CARDS,
    TENS,
    at_take_or_pass,
    play_out,
    snapshot,
)

# -- material and scoring ------------------------------------------------------------------


def test_score_counts_only_the_lowest_card_of_each_run_minus_chips() -> None:
    """docs/rules.md §2.5: 27, 28, 29, 30, 33 and 5 chips score 27 + 33 - 5 = 55; order is free."""
    assert score([27, 28, 29, 30, 33], 5) == 55
    assert score((33, 30, 29, 28, 27), 5) == 55
    assert score([], 11) == -11
    assert score([3, 5, 7], 0) == 15
    assert score(range(3, 36), 0) == 3


@pytest.mark.parametrize(("seats", "chips"), [(3, 11), (4, 11), (5, 11), (6, 9), (7, 7)])
def test_chips_by_seat_count_and_zero_means_auto(seats: int, chips: int) -> None:
    """docs/rules.md §2.2: 11 chips with 3-5 seats, 9 with 6, 7 with 7; ``chips`` = 0 is auto."""
    for settings in (None, {"chips": 0}):
        state = NoThanksState(seats, settings)
        assert state.replay_rounds()[0]["chips_start"] == chips
        assert [state.observation(s).chips for s in range(seats)] == [chips] * seats


def test_chips_with_two_seats_tens_out_and_a_fixed_count() -> None:
    """2 seats get 11 chips; tens_out gives 10 each unless ``chips`` is set, which wins."""
    assert NoThanksState(2, {"two_seats": True}).observation(0).chips == 11
    assert NoThanksState(6, {"tens_out": True}).observation(0).chips == 10
    assert NoThanksState(7, {"tens_out": True, "chips": 5}).observation(6).chips == 5
    assert NoThanksState(4, {"chips": 1}).observation(2).chips == 1


@pytest.mark.parametrize("seed", range(5))
def test_deck_of_24_after_9_cards_removed_face_down(seed: int) -> None:
    """docs/rules.md §2.1: 33 cards 3..35; 9 removed face down, the other 24 are the deck."""
    state = NoThanksState(4, seed=seed)
    first = state.replay_rounds()[0]
    assert len(first["removed"]) == 9 and len(first["deck"]) == 24
    assert set(first["removed"]) | set(first["deck"]) == ALL_CARDS
    assert not set(first["removed"]) & set(first["deck"])
    obs = state.observation(0)
    assert obs.card == first["deck"][0]
    assert obs.deck_left == 23
    assert obs.pot == 0 and obs.out == ()


@pytest.mark.parametrize("seed", range(5))
def test_tens_out_removes_10_20_30_openly_and_6_face_down(seed: int) -> None:
    """docs/rules.md §2 tens_out: 10, 20, 30 out (known to all), 6 removed face down, 24 in deck."""
    state = NoThanksState(5, {"tens_out": True}, seed=seed)
    first = state.replay_rounds()[0]
    assert len(first["removed"]) == 6 and len(first["deck"]) == 24
    assert set(first["removed"]) | set(first["deck"]) == ALL_CARDS - TENS
    assert set(state.observation(0).out) == TENS
    assert set(state.view().out) == TENS


# -- settings ------------------------------------------------------------------------------


def test_settings_are_written_out_with_defaults() -> None:
    """Every declared setting appears in ``settings`` with its default (docs/replay-format.md)."""
    state = new_state(3)
    assert state.game == "no_thanks"
    assert state.settings == {s.name: s.default for s in SETTINGS}
    assert state.settings["rounds"] == 1 and state.settings["chips"] == 0
    assert state.settings["hidden_card"] is False and state.settings["tens_out"] is False
    assert state.settings["two_seats"] is False
    assert state.settings["deadline_ms"] == 1000


def test_two_seats_need_the_two_seats_setting() -> None:
    """docs/rules.md §2 choice: 2 seats only with an explicit setting; the error names it."""
    with pytest.raises(SettingsError, match="two_seats"):
        NoThanksState(2)
    assert NoThanksState(2, {"two_seats": True}).seats == 2


@pytest.mark.parametrize("seats", [0, 1, 8, 10])
def test_seat_counts_outside_3_to_7_are_refused(seats: int) -> None:
    """docs/rules.md §2: 3 to 7 seats; the error says what is allowed and what was asked."""
    with pytest.raises(SettingsError, match=rf"seats.*3 to 7.*{seats}"):
        NoThanksState(seats)
    with pytest.raises(SettingsError, match="seats"):
        NoThanksState(seats, {"two_seats": True})


@pytest.mark.parametrize(("settings", "word"), [
    ({"colour": "red"}, "colour"),
    ({"chips": -1}, "chips"),
    ({"rounds": 0}, "rounds"),
    ({"rounds": 101}, "rounds"),
    ({"hidden_card": "maybe"}, "hidden_card"),
])
def test_bad_settings_are_refused_by_name(settings: dict[str, Any], word: str) -> None:
    """Unknown settings and out-of-range values raise SettingsError naming the setting."""
    with pytest.raises(SettingsError, match=word):
        NoThanksState(4, settings)


def test_chips_above_100_are_refused() -> None:
    """``chips`` is 0 (auto) or a fixed number 1..100."""
    with pytest.raises(SettingsError, match="chips"):
        NoThanksState(4, {"chips": 101})


def test_hidden_card_needs_a_removed_card_per_seat() -> None:
    """hidden_card deals one removed card per seat: 7 seats with tens_out (6 removed) fail."""
    with pytest.raises(SettingsError, match="hidden_card"):
        NoThanksState(7, {"hidden_card": True, "tens_out": True})
    assert NoThanksState(6, {"hidden_card": True, "tens_out": True}).seats == 6
    assert NoThanksState(7, {"hidden_card": True}).seats == 7


def test_settings_accept_command_line_text() -> None:
    """Settings given as text (the CLI's ``key=value``) parse like native values."""
    state = NoThanksState(4, {"rounds": "2", "hidden_card": "true", "chips": "3"})
    assert state.settings["rounds"] == 2 and state.settings["hidden_card"] is True
    assert state.observation(0).chips == 3


# -- turns ---------------------------------------------------------------------------------


def test_start_seat_turns_up_the_first_card_and_decides() -> None:
    """Round 0 starts at seat 0 with TAKE_OR_PASS, legal (pass, take) while it has chips."""
    state = NoThanksState(4, seed=3)
    assert list(state.pending) == [0]
    decision = state.pending[0]
    assert decision.kind is DecisionKind.TAKE_OR_PASS
    assert decision.legal == (Move.PASS, Move.TAKE)
    assert state.observation(0).decision == decision
    assert state.observation(1).decision is None
    assert state.view().pending == ((0, DecisionKind.TAKE_OR_PASS),)


def test_pass_pays_a_chip_and_moves_the_turn_on() -> None:
    """Passing puts one chip on the card; the next seat decides on the same card."""
    state = NoThanksState(3, seed=1)
    card = state.observation(0).card
    assert card is not None
    assert state.apply({0: Move.PASS}) == [Passed(0, 0, card, 1)]
    assert state.observation(0).chips == 10
    assert state.observation(1).card == card and state.observation(1).pot == 1
    assert list(state.pending) == [1]
    state.apply({1: "pass"})
    assert list(state.pending) == [2] and state.observation(2).pot == 2


def test_take_gets_card_and_pot_and_the_same_seat_decides_again() -> None:
    """Taking gains the card and its chips; the next card is turned up for the same seat."""
    state = NoThanksState(3, seed=1)
    card = state.observation(0).card
    assert card is not None
    state.apply({0: "pass"})
    state.apply({1: "pass"})
    events = state.apply({2: "take"})
    assert events[0] == Took(0, 2, card, 2)
    assert isinstance(events[1], CardTurnedUp) and events[1].deck_left == 22
    obs = state.observation(2)
    assert obs.chips == 13 and obs.cards[2] == (card,) and obs.pot == 0
    assert obs.card == state.replay_rounds()[0]["deck"][1]
    assert list(state.pending) == [2]


def test_a_seat_without_chips_must_take() -> None:
    """docs/rules.md §2.3: a seat with no chips cannot pass; TAKE_OR_PASS then offers only take."""
    state = at_take_or_pass(NoThanksState(4), 1, 0)
    assert state.pending[1].legal == (Move.TAKE,)


def test_turns_are_logged_with_the_pot_before_the_action() -> None:
    """docs/replay-format.md: a turn is {seat, card, pot before the action, action}, as history."""
    state = NoThanksState(3, seed=5)
    card = state.observation(0).card
    state.apply({0: "pass"})
    state.apply({1: "take"})
    turns = state.replay_rounds()[0]["turns"]
    assert turns == [{"seat": 0, "card": card, "pot": 0, "action": "pass"},
                     {"seat": 1, "card": card, "pot": 1, "action": "take"}]
    assert [tuple(t) for t in state.observation(2).history] == [
        (0, card, 0, "pass"), (1, card, 1, "take")]


def test_moves_and_their_plain_strings_are_the_same_answer() -> None:
    """An answer may be a ``Move`` member or its string value; both give the same game."""
    a, b = NoThanksState(4, seed=9), NoThanksState(4, seed=9)
    for move in ("pass", "pass", "take", "pass", "take", "take"):
        ((seat, _),) = a.pending.items()
        assert a.apply({seat: move}) == b.apply({seat: Move(move)})
    assert snapshot(a) == snapshot(b)


# -- defaults ------------------------------------------------------------------------------


def test_default_is_pass_with_a_chip_else_take() -> None:
    """docs/rules.md §3: a silent seat passes if it has a chip, else takes."""
    state = NoThanksState(4)
    assert state.default_action(0) == Move.PASS
    at_take_or_pass(state, 0, 0)
    assert state.default_action(0) == Move.TAKE
    with pytest.raises(NotPendingError):
        state.default_action(1)


def test_default_for_the_hidden_card_is_keep() -> None:
    """docs/rules.md §3: a silent seat keeps its hidden card."""
    state = NoThanksState(4, {"hidden_card": True})
    assert state.pending[0].kind is DecisionKind.REVEAL_HIDDEN_CARD
    assert state.default_action(0) == Move.KEEP


@pytest.mark.parametrize("settings", [None, {"hidden_card": True, "rounds": 2}])
def test_a_game_of_defaults_ends(settings: dict[str, Any] | None) -> None:
    """Default actions are always legal and a game of only defaults comes to an end."""
    state = NoThanksState(5, settings, seed=2)
    while not state.over:
        ((seat, _),) = state.pending.items()
        action = state.default_action(seat)
        state.validate(seat, action)
        state.apply({seat: action})
    assert len(state.replay_rounds()) == state.settings["rounds"]


# -- illegal answers -----------------------------------------------------------------------


@pytest.mark.parametrize(("answers", "error"), [
    ({0: "pass"}, IllegalActionError),          # no chips (crafted)
    ({0: "nope"}, MalformedActionError),        # not a word of the game
    ({0: "TAKE"}, MalformedActionError),        # words are lower case
    ({0: 1}, MalformedActionError),             # not a word at all
    ({0: None}, MalformedActionError),
    ({0: "reveal"}, IllegalActionError),        # not this decision's word
    ({0: "keep"}, IllegalActionError),
    ({1: "take"}, NotPendingError),             # a seat that is not to move
    ({0: "take", 1: "take"}, NotPendingError),  # an extra answer
    ({}, IllegalActionError),                   # no answer
])
def test_illegal_answers_raise_and_change_nothing(answers: dict[int, Any],
                                                   error: type[Exception]) -> None:
    """docs/rules.md §3: an illegal answer raises a precise typed error; the state is unchanged."""
    state = at_take_or_pass(NoThanksState(3, seed=4), 0, 0)
    before = snapshot(state)
    with pytest.raises(error):
        state.apply(answers)
    assert snapshot(state) == before
    for seat, action in answers.items():
        if seat == 0 and action == "take":
            continue
        with pytest.raises(error):
            state.validate(seat, action)
    assert snapshot(state) == before


def test_passing_without_chips_says_why() -> None:
    """The error for passing with no chips names the seat, the answer and the reason."""
    state = at_take_or_pass(NoThanksState(3), 0, 0)
    with pytest.raises(IllegalActionError, match="no chips") as info:
        state.apply({0: Move.PASS})
    assert info.value.seat == 0 and info.value.action == "pass"


def test_answers_after_the_end_are_not_pending() -> None:
    """Once the game is over no seat has a decision pending."""
    state = NoThanksState(3, seed=1)
    play_out(state, 1)
    assert state.pending == {}
    with pytest.raises(NotPendingError):
        state.apply({0: "take"})
    with pytest.raises(NotPendingError):
        state.validate(0, "take")


def test_an_empty_answer_after_the_end_is_a_referee_error() -> None:
    """Every bad input raises a typed referee error, even an empty batch after the end."""
    state = NoThanksState(3, seed=1)
    play_out(state, 1)
    with pytest.raises(RefereeError) as info:
        state.apply({})
    assert isinstance(info.value, NotPendingError)


def test_pass_at_a_reveal_decision_is_not_blamed_on_chips() -> None:
    """Passing while REVEAL_HIDDEN_CARD is pending is refused for the right reason."""
    state = NoThanksState(3, {"hidden_card": True})
    with pytest.raises(IllegalActionError) as info:
        state.apply({0: "pass"})
    assert "chips" not in info.value.reason


