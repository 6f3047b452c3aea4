"""Close relatives of the house ``greedy`` bot, for tests and benchmarks of duplicate play."""

from __future__ import annotations

from typing import Any

from bullring.sdk.house.greedy import GreedyBot


class ShortestRow(GreedyBot):
    """Plays greedy's cards, but when it must take a row, takes the shortest one."""

    name = "shortest_row"

    def choose_row(self, observation: Any) -> int:
        """The row with the fewest cards (then the lowest index)."""
        rows = observation.rows
        return min(range(len(rows)), key=lambda r: (len(rows[r]), r))
