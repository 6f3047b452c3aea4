"""The two games Bullring comes with, each one ``GameSpec``: the entry points of the
``bullring.games`` group in ``bullring-sdk``'s metadata (client_sdk/python/pyproject.toml)
name these, exactly as another distribution's entry points name its own games
(``bullring.referee.registry``)."""

from __future__ import annotations

from typing import get_args

from bullring.referee import no_thanks, six_nimmt
from bullring.referee.registry import GameSpec, RoundsReplay

SIX_NIMMT: GameSpec[six_nimmt.Observation, six_nimmt.Event, six_nimmt.View] = GameSpec(
    "six_nimmt", 1, "6 nimmt!", six_nimmt.MIN_SEATS, six_nimmt.MAX_SEATS, six_nimmt.SETTINGS,
    six_nimmt.new_state,
    RoundsReplay(six_nimmt.new_state, six_nimmt.round_deal, six_nimmt.round_plan),
    six_nimmt.Observation, frozenset({"trick_plays"}), get_args(six_nimmt.Event),
    web_view=("bullring.referee", "web/six_nimmt.js"), ladder_seats=(4, 5),
    opponents=("greedy", "greedy", "random"))
"""6 nimmt!, whose states are ``GameState``s of ``six_nimmt``'s Observation, Event and View."""

NO_THANKS: GameSpec[no_thanks.Observation, no_thanks.Event, no_thanks.View] = GameSpec(
    "no_thanks", 1, "No Thanks!", no_thanks.MIN_SEATS, no_thanks.MAX_SEATS, no_thanks.SETTINGS,
    no_thanks.new_state,
    RoundsReplay(no_thanks.new_state, no_thanks.round_deal, no_thanks.round_plan),
    no_thanks.Observation, frozenset({"card", "hidden_card"}), get_args(no_thanks.Event),
    web_view=("bullring.referee", "web/no_thanks.js"), ladder_seats=(4, 4),
    opponents=("threshold", "random", "never_take"))
"""No Thanks!, whose states are ``GameState``s of ``no_thanks``'s Observation, Event and View."""
