"""A bot that always thinks longer than any deadline in the tests: it sleeps 1.5 s."""

from __future__ import annotations

import time
from typing import Any

from bullring.referee.core import Action
from bullring.sdk.bot import Bot


class Sleepy(Bot):
    """Answers every decision legally, but only after 1.5 seconds."""

    def decide(self, observation: Any) -> Action:
        """Sleep past the deadline, then answer."""
        time.sleep(1.5)
        return observation.decision.legal[0]  # type: ignore[no-any-return]
