"""The 6 nimmt! deck as RULES.md §1 describes it."""

from collections import Counter

from referee.six_nimmt import BULLHEADS, bullheads


def test_deck_totals() -> None:
    """76 cards of 1, 9 of 2, 10 of 3, 8 of 5, 1 of 7; 171 bullheads in all."""
    counts = Counter(bullheads(c) for c in range(1, 105))
    assert counts == {1: 76, 2: 9, 3: 10, 5: 8, 7: 1}
    assert sum(BULLHEADS) == 171


def test_special_cards() -> None:
    """55 carries 7, repdigits 5, tens 3, fives 2."""
    assert bullheads(55) == 7
    assert [bullheads(c) for c in (11, 22, 99)] == [5, 5, 5]
    assert [bullheads(c) for c in (10, 100)] == [3, 3]
    assert [bullheads(c) for c in (5, 95)] == [2, 2]
    assert bullheads(1) == 1
