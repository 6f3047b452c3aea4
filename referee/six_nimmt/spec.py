"""6 nimmt!'s registration: its ``GameSpec``, which ``bullring.referee.games`` hands to the
entry point of the group ``bullring.games``."""

from __future__ import annotations

from typing import get_args

from bullring.referee.registry import GameSpec, RoundsReplay
from bullring.referee.six_nimmt import engine
from bullring.referee.six_nimmt.values import (
    GAME_ID,
    MAX_SEATS,
    MIN_SEATS,
    SETTINGS,
    Event,
    Observation,
    View,
)

SPEC: GameSpec[Observation, Event, View] = GameSpec(
    GAME_ID, 1, "6 nimmt!", MIN_SEATS, MAX_SEATS, SETTINGS, engine.new_state,
    RoundsReplay(engine.new_state, engine.round_deal, engine.round_plan),
    Observation, frozenset({"trick_plays"}), get_args(Event),
    web_view=("bullring.referee.six_nimmt", "view.js"), ladder_seats=(4, 5),
    opponents=("greedy", "greedy", "random"))
"""6 nimmt!, whose states are ``GameState``s of its Observation, Event and View."""
