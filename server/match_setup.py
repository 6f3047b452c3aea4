"""Registering a match: check the game, seats, settings and house bots, then store it.

Shared by ``bullring match create`` and the HTTP admin API, so both refuse the same input
with the same message.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from client_sdk.house import UnknownBotError, house_bot
from referee.core import RefereeError
from referee.registry import get_game
from server.errors import MatchSetupError
from server.store import Store


@dataclass(frozen=True, slots=True)
class CreatedMatch:
    """A stored match: its id, game, seat names and one token per seat (None: house)."""

    match_id: str
    game: str
    seat_names: tuple[str, ...]
    tokens: tuple[str | None, ...]
    house: dict[int, str]


HUMAN_DEADLINE_MS = 30_000
"""The deadline of each decision in a match with a person's seat, unless its settings say
otherwise: time for a person to read the table and click (a bot's default is 1000 ms)."""


def human_settings(settings: Mapping[str, str]) -> dict[str, str]:
    """``settings`` of a match where a person plays: ``deadline_ms`` is HUMAN_DEADLINE_MS
    unless given."""
    return {"deadline_ms": str(HUMAN_DEADLINE_MS), **settings}


def fresh_seed() -> int:
    """A root seed nobody can guess: a match created without one deals from this."""
    return secrets.randbelow(2**31)  # the seed column is a 32-bit integer


def create_match(store: Store, game: str, seats: int, settings: Mapping[str, str],
                 seed: int | None = None, house: Mapping[int, str] | None = None,
                 names: Mapping[int, str] | None = None) -> CreatedMatch:
    """Validate and store a new match; raise MatchSetupError with a precise message.
    Without ``seed``, the match deals from a fresh random one (stored, shown in its replay
    once it has ended). ``names`` names seats that no house bot plays (default
    ``seatN``)."""
    if seed is None:
        seed = fresh_seed()
    house = dict(house or {})
    for seat in house:
        if not 0 <= seat < seats:
            raise MatchSetupError(f"house seat {seat} is not a seat of a {seats}-seat match "
                                  f"(0..{seats - 1})")
    try:
        spec = get_game(game)
        state = spec.new_state(seats, dict(settings), seed)
        for name in house.values():
            house_bot(name, spec.id)
    except (RefereeError, UnknownBotError) as exc:
        raise MatchSetupError(str(exc)) from exc
    given = dict(names or {})
    seat_names = tuple(house.get(s, given.get(s, f"seat{s}")) for s in range(seats))
    match_id, tokens = store.create_match(spec.id, state.settings, seed, seat_names, house)
    return CreatedMatch(match_id, spec.id, seat_names, tuple(tokens), house)
