"""An example bot for both games, written against the SDK alone (``pip install
client_sdk/python``). Copy it, change the methods, then test it locally and play it:

    bullring-arena --game six_nimmt --bots careful.py:Careful,greedy,random --games 200
    bullring-bot --server HOST:PORT --token TOKEN careful.py:Careful
"""

from __future__ import annotations

from typing import Any

from bullring.referee.six_nimmt import BULLHEADS, ROW_LIMIT
from bullring.sdk.bot import Bot


class Careful(Bot):
    """6 nimmt!: never the sixth card of a row if it can help it; No Thanks!: cheap cards only."""

    name = "careful"
    games = ("six_nimmt", "no_thanks")

    def play_card(self, observation: Any) -> int:
        """The highest card that lands on a row with room; else the lowest card."""
        rows = observation.rows
        safe = []
        for card in observation.decision.legal:
            below = [row for row in rows if row[-1] < card]
            if below and len(max(below, key=lambda row: row[-1])) < ROW_LIMIT:
                safe.append(card)
        return max(safe) if safe else min(observation.decision.legal)  # type: ignore[no-any-return]

    def choose_row(self, observation: Any) -> int:
        """The row with the fewest bullheads."""
        rows = observation.rows
        return min(range(len(rows)), key=lambda r: sum(BULLHEADS[c] for c in rows[r]))

    def take_or_pass(self, observation: Any) -> str:
        """Take when out of chips, or when the chips on the card pay for a third of it."""
        if observation.chips == 0 or observation.pot * 3 >= observation.card:
            return "take"
        return "pass"
