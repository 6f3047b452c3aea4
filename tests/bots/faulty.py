"""6 nimmt! bots that misbehave, for arena and tournament tests (raise, illegal, exit)."""

from __future__ import annotations

from typing import Any

from bullring.sdk.bot import Bot


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


class Exits(Bot):
    """Exits its process (status 3, as ``sys.exit(3)``) on its first card."""

    name = "exits"
    games = ("six_nimmt",)

    def play_card(self, observation: Any) -> int:
        """Leave."""
        raise SystemExit(3)
