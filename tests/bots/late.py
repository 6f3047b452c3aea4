"""Bots that answer past a short deadline, so a time bank pays: ``Late`` takes 0.5 s over
every decision; ``SpendsItsBank`` takes 1.5 s over its first, 2 s over its second (more than
a 1 s deadline and a 1 s bank leave it: a timeout) and no time after."""

from __future__ import annotations

import time
from typing import Any

from bullring.referee.core import Action
from bullring.sdk.bot import Bot

THINKS_S = 0.5
"""How long ``Late`` takes over each decision."""


class Late(Bot):
    """Answers every decision legally, but only after THINKS_S seconds."""

    def decide(self, observation: Any) -> Action:
        """Think past the deadline, then answer."""
        time.sleep(THINKS_S)
        return observation.decision.legal[0]  # type: ignore[no-any-return]


class SpendsItsBank(Bot):
    """Answers legally: its first decision after 1.5 s, its second after 2 s, then at once."""

    THINKS_S = (1.5, 2.0)
    """How long it takes over its first decisions."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.decided = 0
        """How many decisions it has answered."""

    def decide(self, observation: Any) -> Action:
        """Think as long as THINKS_S says for this decision, then answer."""
        if self.decided < len(self.THINKS_S):
            time.sleep(self.THINKS_S[self.decided])
        self.decided += 1
        return observation.decision.legal[0]  # type: ignore[no-any-return]
