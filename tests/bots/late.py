"""A bot that answers every decision 0.5 s after it comes: past a short deadline, so a time
bank pays for each answer."""

from __future__ import annotations

import time
from typing import Any

from client_sdk.bot import Bot
from referee.core import Action

THINKS_S = 0.5
"""How long it takes over each decision."""


class Late(Bot):
    """Answers every decision legally, but only after THINKS_S seconds."""

    def decide(self, observation: Any) -> Action:
        """Think past the deadline, then answer."""
        time.sleep(THINKS_S)
        return observation.decision.legal[0]  # type: ignore[no-any-return]
