"""Specification tests for No Thanks! whole games (docs/rules.md §2-4; docs/replay-format.md):
chip and card conservation at every step, the end of the game, the hidden card end to end,
what a seat may know, and replays (with default actions) verifying. Crafted positions come
from ``no_thanks_positions.py``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from bullring.referee.core import (
    Decision,
    DecisionKind,
)
from bullring.referee.no_thanks import (
    CardTurnedUp,
    GameEnded,
    HiddenRevealed,
    Move,
    NoThanksState,
    Passed,
    RoundEnded,
    RoundStarted,
    Took,
)
from bullring.referee.registry import get_game
from bullring.referee.replay import answer_event, build_replay, verify
from tests.unit.no_thanks_positions import (
    ALL_CARDS,
    TENS,
    independent_score,
    kind_of,
    play_out,
    random_answer,
)

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
