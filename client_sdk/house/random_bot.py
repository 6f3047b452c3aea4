"""``random``: a uniformly random legal action for every decision, row choices included."""

from __future__ import annotations

from typing import Any

from client_sdk.bot import Bot
from referee.core import Action


class RandomBot(Bot):
    """Answers every decision with a legal action drawn uniformly from its seeded stream."""

    name = "random"

    def decide(self, observation: Any) -> Action:
        """Return a uniformly random legal action."""
        legal = observation.decision.legal
        return legal[int(self.rng.random() * len(legal))]  # type: ignore[no-any-return]
