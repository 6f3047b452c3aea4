"""The JSON Schema of a match's settings (``bullring.server.transports.http.setup_schema``)
says exactly which true/false settings a table takes together: every combination it allows
starts a match, and every one it forbids is one the engine refuses (checked with
jsonschema_rs, the validator schemathesis generates with)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import jsonschema_rs
import pytest

from bullring.referee.core import RefereeError
from bullring.referee.registry import GAMES
from bullring.server.transports.http.setup_schema import _tables, settings_schema


def _starts(game: str, seats: int, settings: Mapping[str, object]) -> bool:
    try:
        GAMES[game].new_state(seats, dict(settings), 0)
    except RefereeError:
        return False
    return True


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_settings_schema_allows_exactly_the_flags_a_table_takes(game: str) -> None:
    """At every table size, each combination of the game's true/false settings (given as
    ``true``/``false`` text, as the server reads it) is valid for the schema exactly when the
    engine starts a match with it: No Thanks!'s ``hidden_card`` with ``tens_out`` at seven
    seats is ruled out, a flag given as ``false`` beside ``two_seats`` at two seats is not."""
    spec = GAMES[game]
    flags = [s.name for s in spec.settings if isinstance(s.default, bool)]
    ruled_out = []
    for seats in _tables(spec, 20):
        validator = jsonschema_rs.validator_for(settings_schema(spec, seats))
        for values in itertools.product((True, False), repeat=len(flags)):
            settings = dict(zip(flags, values, strict=True))
            text = {name: str(value).lower() for name, value in settings.items()}
            allowed = validator.is_valid(text)
            assert allowed == _starts(game, seats, settings), (seats, settings)
            if not allowed:
                ruled_out.append((seats, settings))
    if spec.id == "no_thanks":
        assert any(seats == 7 and settings["hidden_card"] and settings["tens_out"]
                   for seats, settings in ruled_out), ruled_out
