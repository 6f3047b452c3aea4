"""A tiny 6 nimmt! bot for runner tests: always the lowest card, always row 0."""

from __future__ import annotations

from typing import Any

from bullring.sdk.bot import Bot


class LowCard(Bot):
    """Plays its lowest card and takes row 0."""

    name = "low_card"
    games = ("six_nimmt",)

    def play_card(self, observation: Any) -> int:
        """The lowest card in the hand."""
        return min(observation.hand)  # type: ignore[no-any-return]

    def choose_row(self, observation: Any) -> int:
        """Row 0."""
        return 0
