"""A 6 nimmt! bot that takes a moment over each decision, so that a ladder match lasts long
enough (a second or so) for a test to act while it is in flight."""

from __future__ import annotations

import time
from typing import Any

from tests.bots.low_card import LowCard

THINKS_S = 0.05
"""How long ``Pondering`` takes over each decision: ten tricks make half a second."""


class Pondering(LowCard):
    """LowCard that thinks ``THINKS_S`` over every decision, well within any deadline."""

    name = "pondering"

    def decide(self, observation: Any) -> Any:
        """Think a moment, then play as LowCard."""
        time.sleep(THINKS_S)
        return super().decide(observation)
