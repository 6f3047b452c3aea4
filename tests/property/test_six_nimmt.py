"""Specification tests for the 6 nimmt! engine (docs/rules.md §1, §3, §4; docs/replay-format.md).

Crafted positions set ``rows`` and ``hands`` directly and call ``_ask_play`` so the pending
decisions match the hands; property tests play whole games with random legal answers drawn
from a seeded ``random.Random``.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.core import (
    DecisionKind,
    IllegalActionError,
    MalformedActionError,
    NotPendingError,
    SettingsError,
)
from referee.six_nimmt import (
    BULLHEADS,
    CardDrafted,
    CardsRevealed,
    GameEnded,
    Observation,
    RoundEnded,
    SixNimmtState,
    TrickResolved,
    View,
    bullheads,
)

ALL_CARDS = frozenset(range(1, 105))
ROWS = (0, 1, 2, 3)


# -- helpers -------------------------------------------------------------------------------


def cost(cards: tuple[int, ...] | list[int]) -> int:
    """Bullheads of some cards, from the docs/rules.md §1 table (independent of the engine)."""
    return sum(bullheads(c) for c in cards)


def crafted(seats: int, rows: Sequence[tuple[int, ...]], hands: Sequence[tuple[int, ...]],
            seed: int = 0) -> SixNimmtState:
    """A standard state whose table and hands are set by hand, PLAY_CARD pending for all."""
    state = SixNimmtState(seats, seed=seed)
    state._lay_rows(tuple(rows))
    state.hands = [tuple(sorted(h)) for h in hands]
    state._ask_play()
    return state


def random_answers(state: SixNimmtState, rng: random.Random) -> dict[int, Any]:
    """One random legal answer for every pending seat."""
    return {s: rng.choice(d.legal) for s, d in sorted(state.pending.items())}


def snapshot(state: SixNimmtState) -> tuple[Any, ...]:
    """Everything a caller can see of a state, for 'left unchanged' checks."""
    return (state.replay_rounds(), [state.observation(s) for s in range(state.seats)],
            dict(state.pending), state.step, state.view(), state.result(), state.over)


def play_game(seats: int, game_settings: dict[str, Any], seed: int, answer_seed: int,
              each_step: Callable[[SixNimmtState, list[Any]], None] | None = None,
              max_steps: int = 20_000) -> tuple[SixNimmtState, list[Any], list[Any]]:
    """Play a whole game with random legal answers; return (state, events, answers)."""
    state = SixNimmtState(seats, game_settings, seed=seed)
    rng = random.Random(answer_seed)
    events: list[Any] = []
    answers: list[Any] = []
    if each_step:
        each_step(state, [])
    for _ in range(max_steps):
        if state.over:
            break
        answer = random_answers(state, rng)
        answers.append(answer)
        new = state.apply(answer)
        events.extend(new)
        if each_step:
            each_step(state, new)
    assert state.over, "the game did not end"
    return state, events, answers


def place_trick(rows: tuple[tuple[int, ...], ...], plays: tuple[int, ...],
                choice: int | None) -> tuple[tuple[tuple[int, ...], ...], list[tuple[int, ...]]]:
    """An independent reading of rules 1-4: return (rows after, cards taken by seat)."""
    table = [list(r) for r in rows]
    taken: list[tuple[int, ...]] = [() for _ in plays]
    for card in sorted(plays):
        seat = plays.index(card)
        below = [r for r in ROWS if table[r][-1] < card]
        if not below:  # rule 4
            assert choice is not None
            taken[seat] = tuple(table[choice])
            table[choice] = [card]
            continue
        target = max(below, key=lambda r: table[r][-1])  # rule 2
        if len(table[target]) == 5:  # rule 3
            taken[seat] = tuple(table[target])
            table[target] = [card]
        else:
            table[target].append(card)
    return tuple(tuple(r) for r in table), taken


game_settings_strategy = st.fixed_dictionaries({
    "end_threshold": st.integers(1, 80),
    "end_rule": st.sampled_from(["at_least", "more_than"]),
    "rounds": st.sampled_from([0, 0, 1, 2, 3]),
    "variant": st.sampled_from(["standard", "professional"]),
})

FAST = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


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


# -- 3. what each seat may know -------------------------------------------------------------


def unseen_by(state: SixNimmtState, seat: int) -> list[int]:
    """Cards ``seat`` cannot see: other seats' hands and the undealt cards."""
    seen = set(state.hands[seat]) | {c for r in state.rows for c in r}
    seen |= {c for p in state.piles for c in p} | set(state.trick_plays or ())
    return sorted(ALL_CARDS - seen)


def reshuffled(state: SixNimmtState, seats: list[int], rng: random.Random) -> SixNimmtState:
    """A sibling state: the hands of ``seats`` redealt from every card none of them can see
    (their hands and the undealt cards), hand sizes kept; pending decisions follow the hands."""
    sibling = copy.deepcopy(state)
    seen = {c for r in state.rows for c in r} | {c for p in state.piles for c in p}
    seen |= set(state.trick_plays or ())
    seen |= {c for s, h in enumerate(state.hands) if s not in seats for c in h}
    hidden = sorted(ALL_CARDS - seen)
    rng.shuffle(hidden)
    for s in seats:
        size = len(state.hands[s])
        sibling.hands[s] = tuple(sorted(hidden[:size]))
        hidden = hidden[size:]
    if all(d.kind is DecisionKind.PLAY_CARD for d in state.pending.values()):
        sibling._ask_play()
    return sibling


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
