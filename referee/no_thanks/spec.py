"""No Thanks!'s registration: its ``GameSpec``, which ``bullring.referee.games`` hands to the
entry point of the group ``bullring.games``."""

from __future__ import annotations

from typing import get_args

from bullring.referee.no_thanks.engine import (
    GAME_ID,
    MAX_SEATS,
    MIN_SEATS,
    SETTINGS,
    Event,
    Observation,
    View,
    new_state,
    round_deal,
    round_plan,
)
from bullring.referee.registry import GameSpec, RoundsReplay

SPEC: GameSpec[Observation, Event, View] = GameSpec(
    GAME_ID, 1, "No Thanks!", MIN_SEATS, MAX_SEATS, SETTINGS, new_state,
    RoundsReplay(new_state, round_deal, round_plan),
    Observation, frozenset({"card", "hidden_card"}), get_args(Event),
    web_view=("bullring.referee.no_thanks", "view.js"), ladder_seats=(4, 4),
    opponents=("threshold", "random", "never_take"))
"""No Thanks!, whose states are ``GameState``s of its Observation, Event and View."""
