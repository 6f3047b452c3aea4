"""Specification tests for the 6 nimmt! engine (docs/rules.md §1, §3, §4; docs/replay-format.md).

Crafted positions set ``rows`` and ``hands`` directly and call ``_ask_play`` so the pending
decisions match the hands; property tests play whole games with random legal answers drawn
from a seeded ``random.Random``.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bullring.referee.core import DecisionKind
from bullring.referee.six_nimmt import (
    BULLHEADS,
    CardDrafted,
    CardsRevealed,
    GameEnded,
    RoundEnded,
    SixNimmtState,
    TrickResolved,
    bullheads,
)
from tests.property.six_nimmt_games import (
    FAST,
    ROWS,
    cost,
    crafted,
    game_settings_strategy,
    place_trick,
    play_game,
    random_answers,
)

# -- 1. material and the worked examples -------------------------------------------------


def test_deck_totals() -> None:
    """Deck oracle: 76 cards of 1, 9 of 2, 10 of 3, 8 of 5, 1 of 7; 171 bullheads in all."""
    counts = Counter(bullheads(c) for c in range(1, 105))
    assert counts == {1: 76, 2: 9, 3: 10, 5: 8, 7: 1}
    assert sum(BULLHEADS) == 171
    assert sum(counts.values()) == 104


def test_special_cards() -> None:
    """55 carries 7, repdigits 5, other tens 3, other fives 2, everything else 1."""
    assert bullheads(55) == 7
    assert [bullheads(c) for c in (11, 22, 33, 44, 66, 77, 88, 99)] == [5] * 8
    assert [bullheads(c) for c in (10, 50, 100)] == [3, 3, 3]
    assert [bullheads(c) for c in (5, 95)] == [2, 2]
    assert [bullheads(c) for c in (1, 101, 104)] == [1, 1, 1]


def test_worked_example_a() -> None:
    """Example A: 63 is below every row end, its seat takes the chosen row 4 and 63 starts it;
    64 and 67 follow 63; 94 is the sixth card of row 1 and 99 the sixth card of row 2."""
    row1 = (70, 71, 72, 73, 93)
    row2 = (74, 75, 76, 77, 96)
    # by seat: 99, 63, 94, 67, 64 (seat order differs from card order on purpose)
    hands = [(99, 1), (63, 2), (94, 3), (67, 4), (64, 6)]
    state = crafted(5, [row1, row2, (91,), (104,)], hands)
    events = state.apply({0: 99, 1: 63, 2: 94, 3: 67, 4: 64})
    assert events == [CardsRevealed(0, 0, (99, 63, 94, 67, 64))]
    assert set(state.pending) == {1}
    assert state.pending[1].kind is DecisionKind.CHOOSE_ROW
    assert state.pending[1].legal == ROWS
    # the chooser sees every card of the trick before choosing (rule 4)
    assert state.observation(1).trick_plays == (99, 63, 94, 67, 64)

    (resolved,) = [e for e in state.apply({1: 3}) if isinstance(e, TrickResolved)]
    assert resolved.row_choice == (1, 3)
    assert resolved.rows_after == ((94,), (99,), (91,), (63, 64, 67))
    assert resolved.taken == (row2, (104,), row1, (), ())
    assert state.rows == resolved.rows_after
    assert state.penalties == (cost(row2), 1, cost(row1), 0, 0) == (10, 1, 7, 0, 0)
    assert state.piles == resolved.taken


def test_worked_example_b() -> None:
    """Example B: 45 goes to the row ending 42 (closer below than 41); that row holds 5 cards,
    so the seat takes them and 45 starts the row."""
    row4 = (36, 37, 38, 39, 42)
    state = crafted(2, [(5,), (20, 21), (30, 41), row4], [(45, 90), (25, 91)])
    (resolved,) = [e for e in state.apply({0: 45, 1: 25}) if isinstance(e, TrickResolved)]
    assert resolved.row_choice is None
    assert resolved.rows_after == ((5,), (20, 21, 25), (30, 41), (45,))
    assert resolved.taken == (row4, ())
    assert state.penalties == (cost(row4), 0) == (5, 0)


def test_worked_example_c() -> None:
    """Example C: 29 is lowest and its seat chooses row 1, so row 1 ends with 29; 62 then
    follows the closest lower end, now in row 4, which holds 5 cards: the 62 takes row 4."""
    row4 = (41, 42, 43, 45, 60)
    state = crafted(2, [(61,), (70, 80), (90,), row4], [(62, 100), (29, 101)])
    state.apply({0: 62, 1: 29})
    assert {s: d.kind for s, d in state.pending.items()} == {1: DecisionKind.CHOOSE_ROW}
    (resolved,) = [e for e in state.apply({1: 0}) if isinstance(e, TrickResolved)]
    assert resolved.row_choice == (1, 0)
    assert resolved.rows_after == ((29,), (70, 80), (90,), (62,))
    assert resolved.taken == (row4, (61,))
    assert state.penalties == (cost(row4), 1) == (8, 1)
    tricks = state.replay_rounds()[0]["tricks"]
    assert tricks[-1]["row_choice"] == {"seat": 1, "row": 0}
    assert tricks[-1]["taken"] == [list(row4), [61]]


# -- 2. properties of whole games ----------------------------------------------------------


class GameChecker:
    """Checks every invariant of docs/rules.md §1 after each apply of a random game."""

    def __init__(self, seats: int, game_settings: dict[str, Any]) -> None:
        self.seats = seats
        self.settings = game_settings
        self.rows_before: tuple[tuple[int, ...], ...] = ()
        self.round_ends: list[RoundEnded] = []

    def __call__(self, state: SixNimmtState, events: list[Any]) -> None:
        record = state.rounds_log[-1]
        drafting = state.professional and "hands" not in record
        hands_cards = [c for h in state.hands for c in h]
        if drafting:
            deck = set(range(1, 10 * self.seats + 5))
            cards = hands_cards + list(state.pool)
            assert len(cards) == len(set(cards)), "a card appears twice"
            assert set(cards) == deck
        else:
            deal = [c for h in record["hands"] for c in h] + [c for r in record["rows"] for c in r]
            cards = (hands_cards + [c for r in state.rows for c in r]
                     + [c for p in state.piles for c in p] + list(state.trick_plays or ()))
            assert len(cards) == len(set(cards)), "a card appears twice"
            assert set(cards) == set(deal), "the cards in play are not the round's deal"
            assert len(deal) == 10 * self.seats + 4
            assert len(state.rows) == 4
            for row in state.rows:
                assert 1 <= len(row) <= 5
                assert list(row) == sorted(row)
            for seat, hand in enumerate(state.hands):
                assert list(hand) == sorted(hand)
                assert len(hand) == 10 - state.trick - (state.trick_plays is not None)
                assert state.penalties[seat] == cost(state.piles[seat])
        for event in events:
            if isinstance(event, TrickResolved):
                choice = None if event.row_choice is None else event.row_choice[1]
                assert (event.rows_after, list(event.taken)) == place_trick(
                    self.rows_before, event.plays, choice)
                if event.row_choice is not None:
                    low = min(event.plays)
                    assert event.row_choice[0] == event.plays.index(low)
                    assert low < min(r[-1] for r in self.rows_before)
            if isinstance(event, RoundEnded):
                self.check_round_end(state, event, events)
        self.rows_before = state.rows

    def check_round_end(self, state: SixNimmtState, event: RoundEnded, events: list[Any]) -> None:
        record = state.replay_rounds()[event.round]
        for seat in range(self.seats):
            took = [c for t in record["tricks"] for c in t["taken"][seat]]
            assert event.penalties[seat] == cost(took)
        assert record["penalties"] == list(event.penalties)
        previous = self.round_ends[-1].totals if self.round_ends else (0,) * self.seats
        assert event.totals == tuple(p + q for p, q in zip(previous, event.penalties,
                                                            strict=True))
        self.round_ends.append(event)
        fixed = self.settings["rounds"]
        threshold = self.settings["end_threshold"]
        if fixed:
            should_end = event.round + 1 == fixed
        elif self.settings["end_rule"] == "at_least":
            should_end = max(event.totals) >= threshold
        else:
            should_end = max(event.totals) > threshold
        ended = any(isinstance(e, GameEnded) for e in events)
        assert ended == should_end == state.over, (event, self.settings)
        if not ended:
            assert state.round == event.round + 1


@FAST
@given(seats=st.integers(2, 10), seed=st.integers(0, 2**64 - 1),
       answer_seed=st.integers(0, 2**32), game_settings=game_settings_strategy)
def test_random_games_keep_every_rule(seats: int, seed: int, answer_seed: int,
                                      game_settings: dict[str, Any]) -> None:
    """At every step: each card of the round's deal is in exactly one place (hands, rows,
    piles, or the revealed trick while a row choice is pending); rows are ascending with 1..5
    cards; every trick is placed by rules 1-4; a seat's round penalty is the bullheads of the
    cards it took; totals add the round penalties; the game ends after exactly the round
    docs/rules.md says (at_least: some total >= threshold, more_than: > threshold, rounds=N:
    N rounds)."""
    checker = GameChecker(seats, game_settings)
    state, events, _ = play_game(seats, game_settings, seed, answer_seed, checker)
    replay = state.replay_rounds()
    if game_settings["rounds"]:
        assert len(replay) == game_settings["rounds"]
    totals = tuple(sum(r["penalties"][s] for r in replay) for s in range(seats))
    assert state.result()[0] == totals
    assert isinstance(events[-1], GameEnded)
    assert events[-1].totals == totals
    assert [isinstance(e, GameEnded) for e in events].count(True) == 1
    for record in replay:
        assert len(record["tricks"]) == 10


@FAST
@given(seats=st.integers(2, 10), seed=st.integers(0, 2**32), answer_seed=st.integers(0, 2**32),
       variant=st.sampled_from(["standard", "professional"]))
def test_end_threshold_boundary(seats: int, seed: int, answer_seed: int, variant: str) -> None:
    """A total exactly equal to end_threshold ends the game under at_least but not under
    more_than; one above it ends both; one below it ends neither (same seed, same answers)."""
    probe, _, _ = play_game(seats, {"rounds": 1, "variant": variant}, seed, answer_seed)
    top = max(probe.totals)
    cases = [(top, "at_least", True), (top, "more_than", False), (top - 1, "more_than", True),
             (top + 1, "at_least", False)]
    for threshold, rule, ends_after_round_0 in cases:
        if threshold < 1:
            continue
        chosen = {"variant": variant, "end_threshold": threshold, "end_rule": rule}
        state = SixNimmtState(seats, chosen, seed=seed)
        rng = random.Random(answer_seed)
        while state.round == 0 and not state.over:
            state.apply(random_answers(state, rng))
        assert state.totals == probe.totals
        assert state.over == ends_after_round_0, (threshold, rule, state.totals)


@FAST
@given(seats=st.integers(2, 10), seed=st.integers(0, 2**32),
       answer_seed=st.integers(0, 2**32), game_settings=game_settings_strategy)
def test_same_seed_and_answers_replay_identically(seats: int, seed: int, answer_seed: int,
                                                  game_settings: dict[str, Any]) -> None:
    """The same seed and the same answers give the same replay rounds, events and result."""
    first, events1, answers1 = play_game(seats, game_settings, seed, answer_seed)
    second, events2, answers2 = play_game(seats, game_settings, seed, answer_seed)
    assert answers1 == answers2
    assert first.replay_rounds() == second.replay_rounds()
    assert events1 == events2
    assert first.result() == second.result()


@FAST
@given(seats=st.integers(2, 10), seed=st.integers(0, 2**32),
       answer_seeds=st.lists(st.integers(0, 2**32), min_size=2, max_size=2, unique=True))
def test_deals_depend_only_on_seed_and_round(seats: int, seed: int,
                                             answer_seeds: list[int]) -> None:
    """docs/rules.md §3: a round's deal comes from the seed and the round number alone, so two games
    with the same seed and different answers get the same hands and rows in every round
    both reach (round 0 always)."""
    game_settings = {"rounds": 2}
    first, _, _ = play_game(seats, game_settings, seed, answer_seeds[0])
    second, _, _ = play_game(seats, game_settings, seed, answer_seeds[1])
    for one, two in zip(first.replay_rounds(), second.replay_rounds(), strict=True):
        assert one["hands"] == two["hands"]
        assert one["rows"] == two["rows"]
    fresh = SixNimmtState(seats, seed=seed)
    assert [list(h) for h in fresh.hands] == first.replay_rounds()[0]["hands"]


@FAST
@given(seats=st.integers(2, 10), answer_seed=st.integers(0, 2**32))
def test_professional_draft(seats: int, answer_seed: int) -> None:
    """Professional variant: the deck is 1..10*seats+4, all face up; seats draft one card at a
    time in seat order, the first drafter rotating each round, until each holds 10; the 4
    left over start the rows."""
    deck = list(range(1, 10 * seats + 5))
    state, _, _ = play_game(seats, {"variant": "professional", "rounds": 2}, 7, answer_seed)
    for number, record in enumerate(state.replay_rounds()):
        draft = record["draft"]
        assert [p["seat"] for p in draft] == [(number + i) % seats for i in range(10 * seats)]
        assert sorted(c for h in record["hands"] for c in h) == sorted(p["card"] for p in draft)
        for seat, hand in enumerate(record["hands"]):
            assert len(hand) == 10
            assert hand == sorted(p["card"] for p in draft if p["seat"] == seat)
        drafted = {p["card"] for p in draft}
        assert sorted(drafted | {r[0] for r in record["rows"]}) == deck
        assert sorted(r[0] for r in record["rows"]) == sorted(set(deck) - drafted)


def test_professional_draft_pool_and_events() -> None:
    """At the start of a professional round the pool is the whole deck 1..10*seats+4 and only
    the first drafter is asked; each pick is a public CardDrafted event."""
    state = SixNimmtState(3, {"variant": "professional"}, seed=5)
    assert state.pool == tuple(range(1, 35))
    assert {s: d.kind for s, d in state.pending.items()} == {0: DecisionKind.DRAFT_CARD}
    assert state.pending[0].legal == state.pool
    assert state.apply({0: 17}) == [CardDrafted(0, 0, 17)]
    assert 17 not in state.pool
    assert state.hands[0] == (17,)
    assert set(state.pending) == {1}


def test_professional_draft_shows_no_stale_rows() -> None:
    """During the draft no row is laid yet (the 4 left-over cards start the rows only after
    it), so no card is shown both in the pool and in a row, in any round."""
    rng = random.Random(3)
    state = SixNimmtState(2, {"variant": "professional", "rounds": 2}, seed=1)
    while not state.over:
        if state.pending and next(iter(state.pending.values())).kind is DecisionKind.DRAFT_CARD:
            view = state.view()
            shown = [c for r in view.rows for c in r] + list(view.pool)
            assert len(shown) == len(set(shown)), f"round {state.round}: {view.rows}"
        state.apply(random_answers(state, rng))


