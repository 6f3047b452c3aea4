"""``greedy``: 6 nimmt! one ply deep: the card that costs least now, tight fits first."""

from __future__ import annotations

from typing import Any

from bullring.referee.six_nimmt import BULLHEADS, ROW_LIMIT
from bullring.sdk.bot import Bot


def row_cost(row: tuple[int, ...]) -> int:
    """Bullheads in ``row``."""
    return sum(BULLHEADS[c] for c in row)


def immediate_cost(card: int, rows: tuple[tuple[int, ...], ...]) -> tuple[int, int]:
    """Return (bullheads taken, gap to the row end) if ``card`` were placed alone now."""
    below = [(card - row[-1], row) for row in rows if row[-1] < card]
    if not below:
        return min(row_cost(row) for row in rows), 0
    gap, row = min(below)
    return (row_cost(row) if len(row) >= ROW_LIMIT else 0), gap


class GreedyBot(Bot):
    """Plays the card that would cost least if placed now; takes the cheapest row."""

    name = "greedy"
    games = ("six_nimmt",)

    def play_card(self, observation: Any) -> int:
        """The cheapest card now; among equals, the tightest fit, then the lowest card."""
        rows = observation.rows
        return min(observation.decision.legal,  # type: ignore[no-any-return]
                   key=lambda card: (*immediate_cost(card, rows), card))

    def choose_row(self, observation: Any) -> int:
        """The row with the fewest bullheads (then the fewest cards)."""
        rows = observation.rows
        return min(range(len(rows)), key=lambda r: (row_cost(rows[r]), len(rows[r]), r))

    def draft_card(self, observation: Any) -> int:
        """Draft the cheapest card, low cards first (they are safe row takers)."""
        return min(observation.pool, key=lambda c: (BULLHEADS[c], c))  # type: ignore[no-any-return]
