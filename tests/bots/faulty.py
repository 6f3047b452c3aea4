"""6 nimmt! bots that misbehave, for tournament tests: one raises, one answers illegally."""

from __future__ import annotations

from typing import Any

from client_sdk.bot import Bot


class Raises(Bot):
    """Raises on its first card."""

    name = "raises"
    games = ("six_nimmt",)

    def play_card(self, observation: Any) -> int:
        """Fail."""
        raise RuntimeError("out of ideas")


class Illegal(Bot):
    """Plays card 0, which no hand ever holds."""

    name = "illegal"
    games = ("six_nimmt",)

    def play_card(self, observation: Any) -> int:
        """A card not in the hand."""
        return 0
