"""No Thanks! (game id ``no_thanks``, docs/rules.md §2), a game in a folder of its own.

- ``engine.py``: its rules (``NoThanksState``, ``new_state``), settings, events and
  observations, and how a replay's rounds are read back (``round_deal``, ``round_plan``);
- ``spec.py``: its ``GameSpec``, all that the rest of Bullring reads of it;
- ``view.js``: its view on the web page (``GameSpec.web_view``).

The names a bot author or a test reaches for are here: ``from bullring.referee.no_thanks
import score``.
"""

from __future__ import annotations

from bullring.referee.no_thanks.engine import (
    GAME_ID,
    HIGHEST_CARD,
    LOWEST_CARD,
    MAX_SEATS,
    MIN_SEATS,
    SETTINGS,
    TENS,
    CardTurnedUp,
    Event,
    GameEnded,
    HiddenRevealed,
    Move,
    NoThanksState,
    Observation,
    Passed,
    RoundEnded,
    RoundStarted,
    Took,
    Turn,
    View,
    chips_for,
    new_state,
    round_deal,
    round_plan,
    score,
)

__all__ = ["GAME_ID", "HIGHEST_CARD", "LOWEST_CARD", "MAX_SEATS", "MIN_SEATS", "SETTINGS",
           "TENS", "CardTurnedUp", "Event", "GameEnded", "HiddenRevealed", "Move",
           "NoThanksState", "Observation", "Passed", "RoundEnded", "RoundStarted", "Took",
           "Turn", "View", "chips_for", "new_state", "round_deal", "round_plan", "score"]
