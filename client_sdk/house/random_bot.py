"""``random``: a uniformly random legal action for every decision, row choices included."""

from __future__ import annotations

from math import floor
from typing import Any

from client_sdk.bot import Bot
from referee.core import Action


class RandomBot(Bot):
    """Answers every decision with a legal action drawn uniformly from its seeded stream."""

    name = "random"

    def decide(self, observation: Any) -> Action:
        """Return a uniformly random legal action."""
        legal = observation.decision.legal
        # floor() is int() for these non-negative values, at half the cost of a type call.
        return legal[floor(self.rng.random() * len(legal))]  # type: ignore[no-any-return]
