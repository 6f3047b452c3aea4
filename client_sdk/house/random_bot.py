"""``random``: a uniformly random legal action for every decision, row choices included."""

from __future__ import annotations

from math import floor
from typing import Any

from client_sdk.bot import Bot
from referee.core import Action, Decision


class RandomBot(Bot):
    """Answers every decision with a legal action drawn uniformly from its seeded stream."""

    name = "random"
    decision_only = True

    def decide(self, observation: Any) -> Action:
        """Return a uniformly random legal action."""
        return self.decide_on(observation.decision)

    def decide_on(self, decision: Decision) -> Action:
        """Return a uniformly random legal action of ``decision``."""
        legal = decision.legal
        # floor() is int() for these non-negative values, at half the cost of a type call.
        return legal[floor(self.rng.random() * len(legal))]
