"""6 nimmt! material: the cards and their bullheads (RULES.md §1)."""

from __future__ import annotations

HIGHEST_CARD = 104


def bullheads(card: int) -> int:
    """Return the penalty points printed on ``card`` (1..104)."""
    if not 1 <= card <= HIGHEST_CARD:
        raise ValueError(f"6 nimmt! cards run from 1 to {HIGHEST_CARD}, not {card!r}")
    repdigit = card >= 11 and card % 11 == 0 and card < 100
    if card == 55:
        return 7
    if repdigit:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


BULLHEADS: tuple[int, ...] = (0, *(bullheads(c) for c in range(1, HIGHEST_CARD + 1)))
"""Bullheads indexed by card number (index 0 unused)."""
