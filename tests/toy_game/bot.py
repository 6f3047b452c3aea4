"""A bot for the toy game, as its author would write one with Bullring's SDK."""

from __future__ import annotations

from typing import Any

from bullring.sdk.bot import Bot


class HighestCard(Bot):
    """Plays its highest card: never the referee's default (the lowest), so the test tells
    the bot's answers from a default."""

    games = ("toy_high_card",)

    def play_card(self, observation: Any) -> int:
        """The highest card of the hand."""
        return max(observation.hand)  # type: ignore[no-any-return]
