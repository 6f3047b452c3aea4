"""A 6 nimmt! bot whose process is killed (SIGKILL, no goodbye) the moment it must choose a row."""

from __future__ import annotations

import os
import signal
from typing import Any

from tests.bots.low_card import LowCard


class DiesOnRowChoice(LowCard):
    """Plays its lowest card (so it soon must take a row), and dies when asked which."""

    name = "dies_on_row_choice"

    def choose_row(self, observation: Any) -> int:
        """Kill this very process: the server sees the connection vanish mid-decision."""
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")
