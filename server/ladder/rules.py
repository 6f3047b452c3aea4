"""The ladder's settings and rules of seating: table sizes, the ladder options a server
runs with, house bot names, how many tables a queue fills, and the checks of a challenge."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bullring.errors import ConfigurationError
from bullring.referee.core import RefereeError
from bullring.referee.registry import GAMES, get_game
from bullring.sdk.house import HOUSE_BOTS
from bullring.server.errors import (
    BotDisabledError,
    HouseBotError,
    InvalidChallengeError,
    NoSuchLadderError,
)
from bullring.server.quotas import MatchCaps
from bullring.server.store import (
    DEFAULT_CHALLENGE_EXPIRY_S,
    HOUSE_PREFIX,
    Challenge,
    Store,
)
from bullring.server.store.models import BotRow
from bullring.server.tournaments.live import DEFAULT_MAX_SCHEDULED

log = logging.getLogger("bullring.ladder")

@dataclass(frozen=True, slots=True)
class TableSize:
    """How many seats a ladder table of one game has: from ``minimum`` to ``maximum``."""

    minimum: int
    maximum: int

    @classmethod
    def parse(cls, text: str) -> TableSize:
        """``4-5`` or ``4``."""
        low, _, high = text.partition("-")
        try:
            size = cls(int(low), int(high or low))
        except ValueError:
            raise ConfigurationError(f"a table size is N or MIN-MAX, not {text!r}") from None
        if not 2 <= size.minimum <= size.maximum:
            raise ConfigurationError(f"a table size needs 2 <= MIN <= MAX, not {text!r}")
        return size


def default_table_size(game: str) -> TableSize:
    """The table size of ``game``'s ladder unless configured: its spec's ``ladder_seats``,
    else every table its rules allow."""
    spec = get_game(game)
    low, high = spec.ladder_seats or (spec.min_seats, spec.max_seats)
    return TableSize(low, high)


def registered_games() -> tuple[str, ...]:
    """The id of every registered game, each once, in the registry's order."""
    return tuple(dict.fromkeys(spec.id for spec in GAMES.values()))


@dataclass(frozen=True, slots=True)
class LadderOptions:
    """Which ladders a server runs, their table sizes and settings, and its house bots."""

    games: tuple[str, ...] = field(default_factory=registered_games)
    """The games whose ladders run; by default every registered game's."""
    table_sizes: Mapping[str, TableSize] = field(default_factory=dict)
    settings: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Match settings per game (``deadline_ms``, ``rounds``...)."""
    house_bots: tuple[str, ...] = ()
    """House bot kinds that wait on the ladders (``greedy``, ``random``, ...); a kind given
    twice is two bots."""
    house_rest_s: float = 1.0
    """How long a house bot rests after a match before it can be seated again."""
    sweep_s: float = 5.0
    """How often (PostgreSQL) the server looks for dead servers' matches to abort."""
    challenge_expiry_s: float = DEFAULT_CHALLENGE_EXPIRY_S
    """How long a challenge waits for its opponents' answers before it expires."""
    max_tournament_games: int = DEFAULT_MAX_SCHEDULED
    """The most games one live tournament's schedule may hold."""


def house_names(kinds: Sequence[str]) -> list[tuple[str, str]]:
    """Registered names for house bot kinds: ``greedy,random,random`` gives house-greedy,
    house-random, house-random-2."""
    seen: dict[str, int] = {}
    names = []
    for kind in kinds:
        if kind not in HOUSE_BOTS:
            raise ConfigurationError(f"unknown house bot {kind!r}; known: {', '.join(HOUSE_BOTS)}")
        seen[kind] = seen.get(kind, 0) + 1
        names.append((f"house-{kind}" + (f"-{seen[kind]}" if seen[kind] > 1 else ""), kind))
    return names


def make_challenge(store: Store, bot: BotRow, game: str, opponents: Sequence[str],
                   games: Sequence[str], house: Mapping[str, str],
                   expiry_s: float = DEFAULT_CHALLENGE_EXPIRY_S,
                   open_limit: int = 0, caps: MatchCaps | None = None) -> Challenge:
    """Check and store a challenge of ``bot`` at ``game`` (one of ``games``, the ladders
    run) against ``opponents``; ``house`` maps house bots' registered names to their kinds.
    Unanswered for ``expiry_s`` seconds, it expires. ``open_limit``: the most challenges
    ``bot`` may have waiting (0: no limit); ``caps``: the largest table it may ask for."""
    if bot.house is not None:
        raise HouseBotError(f"{bot.name!r} is a house bot")
    if not bot.enabled:
        raise BotDisabledError(f"bot {bot.name!r} is disabled")
    try:
        spec = get_game(game)
    except RefereeError as exc:
        raise InvalidChallengeError(str(exc)) from None
    if spec.id not in games:
        raise NoSuchLadderError(f"this server runs ladders for {', '.join(games)}, "
                                f"not {spec.id}")
    seats = 1 + len(opponents)
    if not spec.min_seats <= seats <= spec.max_seats:
        raise InvalidChallengeError(f"{spec.id} seats {spec.min_seats}-{spec.max_seats}: name "
                                    f"{spec.min_seats - 1}-{spec.max_seats - 1} opponents, "
                                    f"not {len(opponents)}")
    if caps is not None:
        caps.check(seats, {})
    named = []
    for name in opponents:
        if name in house:
            name = HOUSE_PREFIX + house[name]
        if name.startswith(HOUSE_PREFIX):
            kind = name[len(HOUSE_PREFIX):]
            if kind not in HOUSE_BOTS:
                raise InvalidChallengeError(f"unknown house bot {kind!r}; "
                                            f"known: {', '.join(HOUSE_BOTS)}")
            if spec.id not in HOUSE_BOTS[kind].games:
                raise InvalidChallengeError(f"house bot {kind!r} does not play {spec.id}")
        named.append(name)
    challenge = store.create_challenge(spec.id, bot.name, named, expiry_s, open_limit)
    log.info("challenge %s (%s): %s against %s, %s", challenge.id, spec.id, bot.name,
             ", ".join(named), challenge.status)
    return challenge


def practice_seat_names(specs: Sequence[str]) -> list[str]:
    """Seat names for a challenge's seats: a bot's name, or ``house:KIND`` (``-2``... for a
    kind named again), which no registered bot can be named."""
    seen: dict[str, int] = {}
    names = []
    for spec in specs:
        seen[spec] = seen.get(spec, 0) + 1
        names.append(spec + (f"-{seen[spec]}" if seen[spec] > 1 else ""))
    return names


def plan_tables(waiting: int, size: TableSize) -> list[int]:
    """Table sizes seating as many of ``waiting`` bots as possible, as evenly as possible."""
    if waiting < size.minimum:
        return []
    tables = math.ceil(waiting / size.maximum)
    if tables * size.minimum > waiting:
        tables = waiting // size.minimum
    seated = min(waiting, tables * size.maximum)
    base, extra = divmod(seated, tables)
    return [base + (1 if t < extra else 0) for t in range(tables)]
