"""6 nimmt! (game id ``six_nimmt``, docs/rules.md §1), a game in a folder of its own.

- ``engine.py``: the decisions and the tricks (``SixNimmtState``, ``new_state``) and how a
  replay's rounds are read back (``round_deal``, ``round_plan``);
- ``rounds.py``: the rounds around them (the deal or the draft, the rows, scores, the end);
- ``values.py``: its cards, settings, public events, observation and spectator's view;
- ``spec.py``: its ``GameSpec``, all that the rest of Bullring reads of it;
- ``view.js``: its view on the web page (``GameSpec.web_view``).

The names a bot author or a test reaches for are here: ``from bullring.referee.six_nimmt
import BULLHEADS``.
"""

from __future__ import annotations

from bullring.referee.six_nimmt.engine import (
    BULLHEADS,
    GAME_ID,
    HAND_SIZE,
    HIGHEST_CARD,
    MAX_SEATS,
    MIN_SEATS,
    ROW_COUNT,
    ROW_LIMIT,
    SETTINGS,
    CardDrafted,
    CardsRevealed,
    Event,
    GameEnded,
    Observation,
    RoundEnded,
    RoundStarted,
    SettingsError,
    SixNimmtState,
    TrickResolved,
    View,
    bullheads,
    new_state,
    round_deal,
    round_plan,
)

__all__ = ["BULLHEADS", "GAME_ID", "HAND_SIZE", "HIGHEST_CARD", "MAX_SEATS", "MIN_SEATS",
           "ROW_COUNT", "ROW_LIMIT", "SETTINGS", "CardDrafted", "CardsRevealed", "Event",
           "GameEnded", "Observation", "RoundEnded", "RoundStarted", "SettingsError",
           "SixNimmtState", "TrickResolved", "View", "bullheads", "new_state", "round_deal",
           "round_plan"]
