"""The toy game of the tests, a game from a distribution of its own (tests/toy_game).

Installed (its ``pyproject.toml``), it registers itself with Bullring by one entry point of
the group ``bullring.games`` naming ``SPEC`` below, and its two conformance hooks by one of
``bullring.conformance`` (``conformance``): nothing else in the repository names it but its
messages in proto/bullring/v2/referee.proto. The page draws it with its generic view.
"""

from __future__ import annotations

from typing import get_args

from bullring.referee.registry import GameSpec

from .engine import GAME_ID, MAX_SEATS, MIN_SEATS, SETTINGS, Event, Observation, View, new_state

SPEC: GameSpec[Observation, Event, View] = GameSpec(
    GAME_ID, 1, "High card", MIN_SEATS, MAX_SEATS, SETTINGS, new_state,
    observation=Observation, events=get_args(Event))
"""The toy game's registration: what Bullring knows of it."""
