"""Registering a match: check the game, seats, settings, house bots and people's seats, then
store it.

Shared by ``bullring match create``, gRPC CreateMatch, the HTTP admin API and the web page's
"play against the bots" button, so all refuse the same input with the same message and name
a person's seat alike.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from bullring.referee.core import RefereeError
from bullring.referee.registry import get_game
from bullring.sdk.errors import UnknownBotError
from bullring.sdk.house import house_bot
from bullring.server.errors import MatchSetupError
from bullring.server.quotas import MatchCaps
from bullring.server.store import Store


@dataclass(frozen=True, slots=True)
class CreatedMatch:
    """A stored match: its id, game, seat names, one token per seat (None: house) and the
    seats a person plays."""

    match_id: str
    game: str
    seat_names: tuple[str, ...]
    tokens: tuple[str | None, ...]
    house: dict[int, str]
    humans: tuple[int, ...] = ()

    def play_path(self, seat: int) -> str | None:
        """The play page of a person's ``seat`` with its token in the fragment
        (``/play/MATCH_ID#TOKEN``); None for any other seat."""
        token = self.tokens[seat]
        if seat not in self.humans or token is None:
            return None
        return play_path(self.match_id, token)


def play_path(match_id: str, token: str) -> str:
    """The play page of ``match_id``'s seat with ``token``, the token in the fragment (which
    a browser never sends to a server)."""
    return f"/play/{match_id}#{token}"


HUMAN_NAME = "human"
"""The name of a person's seat, as the seat names, spectators and the replay show it (with
several people at the table, ``humanN`` for seat N)."""


def human_names(humans: Collection[int]) -> dict[int, str]:
    """The names of the people's seats ``humans``: ``human`` for one, ``humanN`` for each of
    several."""
    if len(humans) == 1:
        return {seat: HUMAN_NAME for seat in humans}
    return {seat: f"{HUMAN_NAME}{seat}" for seat in humans}


def house_seat_names(house: Mapping[int, str]) -> dict[int, str]:
    """The names of the house seats ``house`` (seat: kind of house bot): the kind, and for
    a kind seated again ``-2``, ``-3``... in seat order (``greedy``, ``greedy-2``), as the
    ladder names its house bots, so every page and replay tells two seats apart."""
    seen: dict[str, int] = {}
    names = {}
    for seat in sorted(house):
        kind = house[seat]
        seen[kind] = seen.get(kind, 0) + 1
        names[seat] = kind + (f"-{seen[kind]}" if seen[kind] > 1 else "")
    return names


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
                 humans: Collection[int] = (), caps: MatchCaps | None = None) -> CreatedMatch:
    """Validate and store a new match; raise MatchSetupError with a precise message.
    Without ``seed``, the match deals from a fresh random one (stored, shown in its replay
    once it has ended). A person plays each seat of ``humans``: it is named so
    (``human_names``), and the match's deadline is HUMAN_DEADLINE_MS unless ``settings``
    give one; a house seat is named by ``house_seat_names``, any other ``seatN``. With
    ``caps`` (a match made without the admin token), a table or a setting above its cap is
    refused (SettingOverCapError)."""
    if seed is None:
        seed = fresh_seed()
    house = dict(house or {})
    for seat in house:
        if not 0 <= seat < seats:
            raise MatchSetupError(f"house seat {seat} is not a seat of a {seats}-seat match "
                                  f"(0..{seats - 1})")
    people = sorted(set(humans))
    for seat in people:
        if not 0 <= seat < seats or seat in house:
            raise MatchSetupError(f"a person's seat {seat} is not a free seat of this "
                                  f"{seats}-seat match (0..{seats - 1}, no house seat)")
    if people:
        settings = human_settings(settings)
    try:
        spec = get_game(game)
        state = spec.new_state(seats, dict(settings), seed)
        for name in house.values():
            house_bot(name, spec.id)
    except (RefereeError, UnknownBotError) as exc:
        raise MatchSetupError(str(exc)) from exc
    if caps is not None:
        caps.check(seats, state.settings, spec.settings)
    given = {**human_names(people), **house_seat_names(house)}
    seat_names = tuple(given.get(s, f"seat{s}") for s in range(seats))
    match_id, tokens = store.create_match(spec.id, state.settings, seed, seat_names, house,
                                          people)
    return CreatedMatch(match_id, spec.id, seat_names, tuple(tokens), house, tuple(people))
