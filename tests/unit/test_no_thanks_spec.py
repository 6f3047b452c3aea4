"""More specification tests for the No Thanks! engine (docs/rules.md §2-4; docs/replay-format.md).

Companion to ``test_no_thanks.py``: defaults, words vs ``Move`` members, every bad answer
leaving the state unchanged, chip and card conservation at every step, the hidden card end
to end, and replays with default actions verifying.
Crafted positions set the engine's fields (``chips``, ``hidden_cards``, ``to_move``) and call
``_ask`` so the pending decision matches them.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from referee.core import (
    Decision,
    DecisionKind,
    IllegalActionError,
    MalformedActionError,
    NotPendingError,
    RefereeError,
    SettingsError,
)
from referee.no_thanks import (
    SETTINGS,
    CardTurnedUp,
    GameEnded,
    HiddenRevealed,
    Move,
    NoThanksState,
    Passed,
    RoundEnded,
    RoundStarted,
    Took,
    new_state,
    score,
)
from referee.registry import get_game
from referee.replay import answer_event, build_replay, verify

ALL_CARDS = frozenset(range(3, 36))
TENS = frozenset({10, 20, 30})


# -- helpers -------------------------------------------------------------------------------


def independent_score(cards: list[int], chips: int) -> int:
    """docs/rules.md §2.5 written out again, without the engine: runs count their lowest card."""
    ordered = sorted(cards)
    total = sum(c for i, c in enumerate(ordered) if i == 0 or ordered[i - 1] != c - 1)
    return total - chips


def snapshot(state: NoThanksState) -> Any:
    """Everything observable from outside: every seat's observation, the view, the replay."""
    return ([state.observation(s) for s in range(state.seats)], state.view(),
            json.dumps(state.replay_rounds()), state.step, state.over, dict(state.pending))


def random_answer(state: NoThanksState, rng: random.Random) -> dict[int, Any]:
    """One random legal answer (a Move or its plain string, at random) for the pending seat."""
    ((seat, decision),) = state.pending.items()
    move = rng.choice(decision.legal)
    return {seat: move if rng.random() < 0.5 else str(move)}


def play_out(state: NoThanksState, seed: int,
             check: Callable[[NoThanksState], None] | None = None) -> list[Any]:
    """Play ``state`` to its end with random legal answers; return every event."""
    rng = random.Random(seed)
    events: list[Any] = []
    while not state.over:
        events.extend(state.apply(random_answer(state, rng)))
        if check is not None:
            check(state)
    return events


def kind_of(state: NoThanksState, seat: int) -> DecisionKind:
    """The kind of ``seat``'s pending decision (a call, so type checkers do not narrow it)."""
    return state.pending[seat].kind


def at_take_or_pass(state: NoThanksState, seat: int, chips: int) -> NoThanksState:
    """Make ``seat`` the seat to move, holding ``chips``, with TAKE_OR_PASS pending."""
    state.to_move = seat
    state.chips[seat] = chips
    state.hidden_cards[seat] = None
    state._ask()
    return state


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


# -- whole games ---------------------------------------------------------------------------


GAMES = [
    (3, None), (4, {"rounds": 3}), (5, {"tens_out": True, "rounds": 2}), (6, None),
    (7, {"chips": 2}), (2, {"two_seats": True, "rounds": 2}),
    (4, {"hidden_card": True, "rounds": 2}), (6, {"hidden_card": True, "tens_out": True}),
]


@pytest.mark.parametrize(("seats", "settings"), GAMES)
@pytest.mark.parametrize("seed", range(6))
def test_random_games_conserve_chips_and_cards(seats: int, settings: dict[str, Any] | None,
                                                seed: int) -> None:
    """Chips in hands plus the pot stay constant at every step; every card is in exactly one
    place; each round's takes are its deck in order; scores and totals add up."""
    state = NoThanksState(seats, settings, seed=seed)
    start = state.replay_rounds()[0]["chips_start"]
    out = TENS if state.settings["tens_out"] else frozenset()

    def check(s: NoThanksState) -> None:
        if s.over:
            return
        assert sum(s.chips) + s.pot == seats * start
        assert all(c >= 0 for c in s.chips)
        record = s.replay_rounds()[-1]
        face_up = [c for hand in s.cards for c in hand]
        here = [*face_up, *([s.card] if s.card is not None else []), *s.deck]
        hidden_unused = [h for h in s.hidden_cards if h is not None]
        removed_unused = [c for c in record["removed"] if c not in face_up]
        assert set(hidden_unused) <= set(removed_unused)
        assert Counter([*here, *removed_unused, *out]) == Counter(ALL_CARDS)

    check(state)
    play_out(state, seed, check)
    rounds = state.replay_rounds()
    assert len(rounds) == state.settings["rounds"]
    for r, record in enumerate(rounds):
        assert record["start_seat"] == r % seats
        assert record["chips_start"] == start
        assert sum(record["chips"]) == seats * start
        takes = [t["card"] for t in record["turns"] if t["action"] == "take"]
        assert takes == record["deck"]
        reveals = [t["card"] for t in record["turns"] if t["action"] == "reveal_hidden"]
        assert sorted(c for cards in record["cards"] for c in cards) == sorted(
            [*record["deck"], *reveals])
        assert all(cards == sorted(cards) for cards in record["cards"])
        assert record["scores"] == [independent_score(c, n) for c, n in
                                    zip(record["cards"], record["chips"], strict=True)]
    assert list(state.totals) == [sum(r["scores"][s] for r in rounds) for s in range(seats)]


@pytest.mark.parametrize("seed", range(4))
def test_the_game_ends_when_the_last_round_s_deck_is_empty(seed: int) -> None:
    """After ``rounds`` rounds, each ending when its last card is taken, the game is over."""
    state = NoThanksState(4, {"rounds": 3}, seed=seed)
    events = play_out(state, seed)
    kinds = [type(e) for e in events]
    assert state.over and state.pending == {}
    assert state.observation(0).deck_left == 0 and state.observation(0).card is None
    assert kinds.count(RoundEnded) == 3
    assert kinds.count(RoundStarted) == 2  # round 0 starts in __init__
    assert kinds.count(Took) == 3 * 24
    ended = [e for e in events if isinstance(e, RoundEnded)]
    assert ended[-1].totals == state.totals
    assert events[-1] == GameEnded(*state.result())
    totals, ranks = state.result()
    assert ranks == tuple(1 + sum(o < t for o in totals) for t in totals)


def test_chips_reset_each_round_and_the_start_seat_rotates() -> None:
    """Each round deals the starting chips again; round r starts at seat r % seats."""
    state = NoThanksState(3, {"rounds": 4}, seed=8)
    rng = random.Random(8)
    seen_round = -1
    while not state.over:
        obs = state.observation(next(iter(state.pending)))
        if obs.round != seen_round:
            seen_round = obs.round
            assert list(state.pending) == [obs.round % 3]
            assert [state.observation(s).chips for s in range(3)] == [11, 11, 11]
            assert obs.history == () and obs.pot == 0
            assert obs.cards == ((), (), ())
        state.apply(random_answer(state, rng))
    assert seen_round == 3


# -- the hidden card -----------------------------------------------------------------------


def test_hidden_cards_come_from_the_removed_cards() -> None:
    """hidden_card: each seat is dealt a different one of the removed cards, seen by itself."""
    state = NoThanksState(5, {"hidden_card": True}, seed=6)
    record = state.replay_rounds()[0]
    hidden = [state.observation(s).hidden_card for s in range(5)]
    assert None not in hidden and len(set(hidden)) == 5
    assert set(hidden) <= set(record["removed"])
    assert not set(hidden) & set(record["deck"])


def test_hidden_card_variant_end_to_end() -> None:
    """Reveal is asked before each TAKE_OR_PASS while unrevealed; a revealed card scores,
    an unused one never does."""
    state = NoThanksState(3, {"hidden_card": True}, seed=12)
    hidden0 = state.observation(0).hidden_card
    assert hidden0 is not None
    assert state.pending[0] == Decision(0, DecisionKind.REVEAL_HIDDEN_CARD,
                                        (Move.REVEAL, Move.KEEP))
    # keep: the same seat goes on to TAKE_OR_PASS, and is asked again on its next decision
    assert state.apply({0: "keep"}) == []
    assert kind_of(state, 0) is DecisionKind.TAKE_OR_PASS
    state.apply({0: "take"})
    assert kind_of(state, 0) is DecisionKind.REVEAL_HIDDEN_CARD
    # reveal: the card joins the face-up cards, publicly, and is not asked about again
    assert state.apply({0: Move.REVEAL}) == [HiddenRevealed(0, 0, hidden0)]
    assert kind_of(state, 0) is DecisionKind.TAKE_OR_PASS
    assert hidden0 in state.observation(1).cards[0]
    assert state.observation(0).hidden_card is None
    assert state.replay_rounds()[0]["turns"][-1] == {"seat": 0, "action": "reveal_hidden",
                                                     "card": hidden0}
    state.apply({0: "pass"})
    assert kind_of(state, 1) is DecisionKind.REVEAL_HIDDEN_CARD
    state.apply({1: "keep"})
    state.apply({1: "pass"})
    state.apply({2: "keep"})
    state.apply({2: "pass"})
    assert kind_of(state, 0) is DecisionKind.TAKE_OR_PASS  # seat 0 revealed already
    hidden1, hidden2 = state.observation(1).hidden_card, state.observation(2).hidden_card
    while not state.over:
        ((seat, decision),) = state.pending.items()
        state.apply({seat: "keep" if decision.kind is DecisionKind.REVEAL_HIDDEN_CARD
                     else state.default_action(seat)})
    record = state.replay_rounds()[0]
    assert hidden0 in record["cards"][0]
    assert hidden1 not in record["cards"][1] and hidden2 not in record["cards"][2]
    assert record["scores"] == [independent_score(c, n) for c, n in
                                zip(record["cards"], record["chips"], strict=True)]


# -- what a seat may know ------------------------------------------------------------------


@pytest.mark.parametrize("settings", [None, {"hidden_card": True}])
def test_observations_never_hold_another_seat_s_secrets(settings: dict[str, Any] | None) -> None:
    """docs/rules.md §4: changing others' chips, hidden cards, removed cards or the deck order
    changes nothing a seat observes but its own; the view changes for none of them."""
    state = NoThanksState(4, settings, seed=3)
    rng = random.Random(3)
    for _ in range(15):
        state.apply(random_answer(state, rng))
    before = [state.observation(s) for s in range(4)]
    view = state.view()
    state.chips = [c + 7 for c in state.chips]
    state.hidden_cards = [None if h is None else h + 40 for h in state.hidden_cards]
    state.deck = list(reversed(state.deck))
    state.rounds_log[-1]["removed"] = [99]
    for s in range(4):
        after = state.observation(s)
        assert after._replace(chips=before[s].chips, hidden_card=before[s].hidden_card) \
            == before[s]
    assert state.view() == view
    assert "chips" not in view._fields and "hidden_card" not in view._fields


def test_events_hold_only_public_facts() -> None:
    """Events carry no seat's chip count, and no removed or hidden card unless revealed."""
    state = NoThanksState(4, {"hidden_card": True, "rounds": 2}, seed=1)
    events = play_out(state, 1)
    removed = [set(r["removed"]) for r in state.replay_rounds()]
    assert any(isinstance(e, HiddenRevealed) for e in events)
    for event in events:
        assert "chips" not in event._fields
        if isinstance(event, CardTurnedUp | Passed | Took):
            assert event.card not in removed[event.round]
        if isinstance(event, HiddenRevealed):
            assert event.card in removed[event.round]


# -- randomness and replays ----------------------------------------------------------------


@pytest.mark.parametrize("settings", [{"rounds": 3}, {"hidden_card": True, "rounds": 2}])
def test_same_seed_and_answers_give_the_same_replay(settings: dict[str, Any]) -> None:
    """Determinism: the same seed and the same answers give identical replay_rounds."""
    a, b = NoThanksState(5, settings, seed=77), NoThanksState(5, settings, seed=77)
    assert play_out(a, 5) == play_out(b, 5)
    assert a.replay_rounds() == b.replay_rounds()
    assert a.result() == b.result()


def test_deals_depend_on_the_seed_and_round_alone() -> None:
    """docs/rules.md §3: removed cards, deck order and hidden cards do not depend on the play."""
    a = NoThanksState(4, {"rounds": 3, "hidden_card": True}, seed=21)
    b = NoThanksState(4, {"rounds": 3, "hidden_card": True}, seed=21)
    play_out(a, 1)
    play_out(b, 2)
    deal = ("removed", "deck", "hidden", "start_seat", "chips_start")
    for ra, rb in zip(a.replay_rounds(), b.replay_rounds(), strict=True):
        assert {k: ra.get(k) for k in deal} == {k: rb.get(k) for k in deal}
    assert a.replay_rounds()[0]["turns"] != b.replay_rounds()[0]["turns"]
    other = NoThanksState(4, {"rounds": 3, "hidden_card": True}, seed=22)
    assert other.replay_rounds()[0]["deck"] != a.replay_rounds()[0]["deck"]


def test_replay_rounds_is_a_copy() -> None:
    """Changing what replay_rounds returned does not change the match's log."""
    state = NoThanksState(3, seed=1)
    play_out(state, 1)
    before = json.dumps(state.replay_rounds())
    rounds = state.replay_rounds()
    rounds[0]["removed"].append(1000)
    rounds[0]["cards"][0].append(1000)
    assert json.dumps(state.replay_rounds()) == before


@pytest.mark.parametrize("settings", [None, {"hidden_card": True, "tens_out": True,
                                             "rounds": 2}])
def test_replays_with_default_actions_verify(settings: dict[str, Any] | None) -> None:
    """A replay of a random game, some answers defaults, verifies after a JSON round trip."""
    spec = get_game("no_thanks")
    state = spec.new_state(4, settings, 31)
    rng = random.Random(31)
    log: list[dict[str, Any]] = []
    while not state.over:
        ((seat, decision),) = state.pending.items()
        default = rng.random() < 0.2
        action = state.default_action(seat) if default else rng.choice(decision.legal)
        log.append(answer_event(state, seat, action, default=default))
        state.apply({seat: action})
    replay = build_replay(state, match_id="t", seat_names=list("abcd"), events=log)
    verify(json.loads(json.dumps(replay)))
