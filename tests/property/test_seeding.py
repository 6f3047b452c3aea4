"""Seeded randomness of the referee (docs/rules.md §3): deals come from the match seed and the
round number alone, the same on every platform, and uniform.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bullring.referee import seeding
from bullring.referee.core import Decision, DecisionKind, competition_ranks
from bullring.referee.seeding import SeededPicks, seeded_sample
from bullring.referee.six_nimmt import SixNimmtState


@given(seed=st.integers(0, 2**64 - 1), size=st.integers(1, 104), data=st.data())
def test_sample_is_k_distinct_items_fixed_by_seed_and_path(seed: int, size: int,
                                                           data: st.DataObject) -> None:
    """k distinct items of the population; the same seed and path give the same list."""
    k = data.draw(st.integers(0, size))
    population = range(1, size + 1)
    picked = seeded_sample(population, k, seed, "deal", 3)
    assert len(picked) == len(set(picked)) == k
    assert set(picked) <= set(population)
    assert picked == seeded_sample(population, k, seed, "deal", 3)


def test_sample_depends_on_every_part_of_the_path() -> None:
    """Another seed, another round or another purpose gives another draw."""
    deck = range(1, 105)
    first = seeded_sample(deck, 44, 2026, "deal", 0)
    assert first != seeded_sample(deck, 44, 2027, "deal", 0)
    assert first != seeded_sample(deck, 44, 2026, "deal", 1)
    assert first != seeded_sample(deck, 44, 2026, "default", 0)


def reference_sample(population: list[int], k: int, path: bytes) -> list[int]:
    """The algorithm as documented, written out plainly: SHAKE-256 of the path, 8 bytes a draw
    read little-endian, multiply-and-shift onto 0..m-1, the pick swapped with the last item."""
    stream = hashlib.shake_256(path).digest(8 * k)
    deck = list(population)
    picked = []
    for n in range(k):
        bits = int.from_bytes(stream[8 * n:8 * n + 8], "little")
        left = len(deck) - n
        j = bits * left // 2**64
        picked.append(deck[j])
        deck[j] = deck[left - 1]
    return picked


def test_sample_follows_its_documented_algorithm_and_pinned_values() -> None:
    """Stored replays re-derive their deals from the seed, so the derivation must never drift
    (a change needs a new game version): it matches the plain reference and pinned values."""
    deck = list(range(1, 105))
    deal = seeded_sample(deck, 44, 2026, "deal", 0)
    assert deal == reference_sample(deck, 44, b"2026:deal:0")
    assert deal[:10] == [77, 74, 99, 37, 45, 96, 97, 59, 95, 57]
    assert seeded_sample("abcdef", 6, 7, "x") == list("fdcaeb")


def test_sample_is_uniform() -> None:
    """Every ordered pair of 2 draws from 4 items comes up equally often (within 5 sigma over
    12,000 seeds; the seeds are fixed, so the test is deterministic)."""
    runs = 12_000
    counts = Counter(tuple(seeded_sample("abcd", 2, seed, "uniform")) for seed in range(runs))
    assert len(counts) == 12
    expected = runs / 12
    sigma = (expected * (1 - 1 / 12)) ** 0.5
    assert all(abs(n - expected) < 5 * sigma for n in counts.values()), counts


def test_sample_rejects_a_size_outside_the_population() -> None:
    """Asking for more items than there are (or fewer than none) is a clear ValueError."""
    with pytest.raises(ValueError, match="cannot draw 5 items from a population of 4"):
        seeded_sample("abcd", 5, 0)
    with pytest.raises(ValueError):
        seeded_sample("abcd", -1, 0)


def test_deal_is_the_seeded_sample_of_seed_and_round() -> None:
    """docs/rules.md §3: round r's hands and rows are the sample drawn with the path ("deal", r)."""
    state = SixNimmtState(3, seed=99)
    cards = seeded_sample(range(1, 105), 34, 99, "deal", 0)
    assert state.hands == [tuple(sorted(cards[i:i + 10])) for i in (0, 10, 20)]
    assert state.rows == tuple((c,) for c in cards[30:])


@pytest.mark.parametrize(("totals", "ranks"), [
    ((5, 5, 9), (1, 1, 3)),
    ((9, 5, 5, 1), (4, 2, 2, 1)),
    ((0, 0), (1, 1)),
    ((70, 12, 33, 12, 40), (5, 1, 3, 1, 4)),
])
def test_competition_ranks(totals: tuple[int, ...], ranks: tuple[int, ...]) -> None:
    """Lower totals rank better; equal totals share a place and the next place is skipped."""
    assert competition_ranks(totals) == ranks


@settings(deadline=None)  # decks of up to a million cards: a timing is no part of this test
@given(stream=st.binary(min_size=8, max_size=8 * 60).filter(lambda b: len(b) % 8 == 0),
       extra=st.integers(0, 2**20))
def test_both_ways_of_picking_agree(stream: bytes, extra: int) -> None:
    """The compiled module picks a byte at a time, the interpreter a 64-bit word at a time:
    the same picks from the same stream, for small decks and large ones."""
    size = len(stream) // 8 + extra
    assert seeding.pick_by_bytes(list(range(size)), stream) == \
        seeding.pick_by_words(list(range(size)), stream)


def _asking(legal: int) -> Decision:
    return Decision(0, DecisionKind.PLAY_CARD, tuple(range(legal)))


def reference_picks(sizes: list[int], path: str) -> list[int]:
    """``SeededPicks`` as documented, written out plainly: block b is 256 bytes of SHAKE-256
    over ``PATH:picks:b``, 4 bytes a pick read little-endian, ``w * m >> 32``."""
    words: list[int] = []
    for block in range(len(sizes) // 64 + 1):
        stream = hashlib.shake_256(f"{path}:picks:{block}".encode()).digest(256)
        words += [int.from_bytes(stream[i:i + 4], "little") for i in range(0, 256, 4)]
    return [w * m >> 32 for w, m in zip(words, sizes, strict=False)]


def test_picks_follow_their_documented_stream_and_pinned_values() -> None:
    """The house ``random`` bot's picks come from the seed alone (compiled or not, across
    blocks of the stream): the plain reference, and values pinned against drift."""
    sizes = [10, 9, 4, 8, 104, 2, 1, 7] * 25
    picks = SeededPicks(2026, "random")
    got = [picks.pick(_asking(m)) for m in sizes]
    assert got == reference_picks(sizes, "2026:random")
    assert got[:8] == [7, 5, 2, 3, 12, 1, 0, 6]


def test_picks_depend_on_seed_and_path() -> None:
    """Another seed or another path gives another stream."""
    def first(seed: int, *parts: object) -> list[object]:
        picks = SeededPicks(seed, *parts)
        return [picks.pick(_asking(104)) for _ in range(10)]
    assert first(1, "random") == first(1, "random")
    assert first(1, "random") != first(2, "random")
    assert first(1, "random") != first(1, "other")


def test_picks_are_uniform() -> None:
    """Each of 4 and of 10 legal actions comes up equally often (within 5 sigma over 20,000
    picks of a fixed seed, so the test is deterministic)."""
    for legal in (4, 10):
        picks = SeededPicks(7, "uniform")
        counts = Counter(picks.pick(_asking(legal)) for _ in range(20_000))
        expected = 20_000 / legal
        sigma = (expected * (1 - 1 / legal)) ** 0.5
        assert sorted(counts) == list(range(legal))
        assert all(abs(n - expected) < 5 * sigma for n in counts.values()), counts
