"""Tournaments for hackathons: round-robin and duplicate, in-process on the arena's engine path.

``bullring tournament --game GAME --format round-robin|duplicate --games N BOT...`` seats the
entrants (house bot names or ``module:Class`` specs) at every table of ``--seats`` drawn from
them (one table when they all fit) and plays ``N`` games at each table through
``arena.play_seated``, the path the local arena plays.

- **round-robin**: game ``i`` of table ``t`` gets its own deal, seeded from ``(S, t, i)``,
  and the table's lineup rotated by ``i`` seats.
- **duplicate**: the games of a table are grouped in deals; deal ``d`` is seeded from
  ``(S, d)`` alone (the same deal seed gives the same deals, docs/rules.md §3), and is played once
  in every rotation of the lineup, so every bot plays every hand. ``N`` is rounded up to a
  whole number of deals.

Results are per bot: win share, mean score per round and the bot's mean difference to the
rest of its table ("vs field"), each with a 95% interval. The interval of "vs field" is taken
over units that share luck: a game in round-robin, a deal with all its rotations in duplicate,
so duplicate pairs every bot's score with the field's on the very same hands. Scores are
penalties (6 nimmt!) or points (No Thanks!): lower is better in both, so a negative "vs field"
is a bot better than its tables.

Every game's seeds are derived from the root seed and the game's place in the schedule alone,
so ``--workers K`` gives exactly the report of one worker.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bullring.referee.registry import get_game
from bullring.referee.seeding import derive_seed
from bullring.sdk.arena import (
    bot_maker,
    overlap_note,
    play_seated,
    run_ranges,
    seating,
)
from bullring.sdk.errors import BotFailedError, TournamentError, UnknownBotError
from bullring.sdk.standings import (
    SCORE_LABEL,
    Standing,
    TableGame,
    standings,
    standings_lines,
)

FORMATS = ("round-robin", "duplicate")
"""The tournament formats: every table of entrants plays, or the same deals with seats rotated."""


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """What a tournament plays: game, format, entrants, games per table, seats, seed."""

    game: str
    format: str
    entrants: tuple[str, ...]
    """Bot specs as given: a house bot name, ``house:NAME`` or ``module:Class``."""
    games: int
    """Games at every table (duplicate: rounded up to a whole number of deals)."""
    seats: int | None = None
    """Table size; ``None``: every entrant at one table."""
    seed: int = 0
    settings: Mapping[str, Any] = field(default_factory=dict)
    replays: Path | None = None


@dataclass(frozen=True, slots=True)
class Report:
    """A finished tournament: what was played and the standings, best first."""

    game: str
    title: str
    format: str
    seed: int
    seats: int
    tables: tuple[tuple[str, ...], ...]
    games_per_table: int
    deals_per_table: int
    games: int
    settings: dict[str, Any]
    standings: tuple[Standing, ...]

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON values."""
        data = asdict(self)
        data["tables"] = [list(t) for t in self.tables]
        for standing in data["standings"]:  # one unit has no interval: null, not Infinity
            for key, value in standing.items():
                if isinstance(value, float) and not math.isfinite(value):
                    standing[key] = None
        return data


# --------------------------------------------------------------------------- entrants


def labels(entrants: Sequence[str]) -> tuple[str, ...]:
    """Each entrant's label: its spec, and ``spec#2``, ``spec#3``… for later repeats."""
    seen: dict[str, int] = {}
    out = []
    for spec in entrants:
        seen[spec] = seen.get(spec, 0) + 1
        out.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
    return tuple(out)


# --------------------------------------------------------------------------- the schedule


def table_size(config: TournamentConfig) -> int:
    """Seats per table: ``config.seats``, or every entrant when it is ``None`` or they fit."""
    n = len(config.entrants)
    return n if config.seats is None else min(config.seats, n)


def tables(config: TournamentConfig) -> list[tuple[str, ...]]:
    """Every table's lineup (entrant labels in seat order), in a fixed order."""
    return list(_lineups(labels(config.entrants), table_size(config)))


@functools.lru_cache(maxsize=8)
def _lineups(names: tuple[str, ...], seats: int) -> tuple[tuple[str, ...], ...]:
    return tuple(itertools.combinations(names, seats))


def deals_per_table(config: TournamentConfig) -> int:
    """Luck-sharing units per table: games (round-robin) or deals of every rotation."""
    if config.format == "duplicate":
        return -(-config.games // table_size(config))
    return config.games


def games_per_table(config: TournamentConfig) -> int:
    """Games played at every table."""
    if config.format == "duplicate":
        return deals_per_table(config) * table_size(config)
    return config.games


def validate(config: TournamentConfig) -> None:
    """Raise ``TournamentError`` or ``RefereeError`` (saying what is wrong) unless
    ``config`` can be played: known game, format, settings, seats and entrants."""
    spec = get_game(config.game)
    if config.format not in FORMATS:
        raise TournamentError(f"unknown format {config.format!r}; known: {', '.join(FORMATS)}")
    if config.games < 1:
        raise TournamentError(f"--games must be at least 1, not {config.games}")
    if len(config.entrants) < 2:
        raise TournamentError("a tournament needs at least 2 entrants")
    if config.seats is not None and config.seats < 2:
        raise TournamentError(f"--seats must be at least 2, not {config.seats}")
    if config.seats is None and len(config.entrants) > spec.max_seats:
        raise TournamentError(f"{len(config.entrants)} entrants do not fit one {spec.title} "
                              f"table ({spec.min_seats} to {spec.max_seats} seats): give --seats")
    spec.new_state(table_size(config), config.settings, 0)
    for entrant in dict.fromkeys(config.entrants):
        try:
            bot_maker(entrant, spec.id)
        except UnknownBotError as exc:
            raise TournamentError(str(exc)) from None


def _play(config: TournamentConfig, lineups: Sequence[tuple[str, ...]], specs: Mapping[str, str],
          table: int, game: int) -> TableGame:
    spec = get_game(config.game)
    k = len(lineups[table])
    if config.format == "duplicate":
        deal, rotation = divmod(game, k)
        game_seed = derive_seed(config.seed, "deal", deal)
        match_id = f"tournament-{config.seed}-t{table:03d}-d{deal:05d}-r{rotation:02d}"
    else:
        deal, rotation = game, game % k
        game_seed = derive_seed(config.seed, "game", table, game)
        match_id = f"tournament-{config.seed}-t{table:03d}-g{game:06d}"
    names = seating(lineups[table], rotation)
    # Duplicate ties a bot's random stream to the hand (deal, seat) like the deal itself, so
    # two bots that play alike score alike on a deal, whichever rotation seats them.
    bot_key = (table, deal, "seat") if config.format == "duplicate" else (table, game)
    players = [bot_maker(specs[name], spec.id)(derive_seed(config.seed, "bot", *bot_key, s))
               for s, name in enumerate(names)]
    try:
        outcome = play_seated(spec.id, names, players, config.settings, game_seed, game,
                              config.replays, match_id)
    except BotFailedError as exc:
        raise BotFailedError(f"table {table}: {exc}", detail=exc.detail) from None
    return TableGame(table, deal, rotation, outcome)


def _play_range(args: tuple[TournamentConfig, int, int]) -> list[TableGame]:
    """Games ``start`` to ``stop`` of the schedule: table by table, game by game."""
    config, start, stop = args
    lineups = _lineups(labels(config.entrants), table_size(config))
    specs = dict(zip(labels(config.entrants), config.entrants, strict=True))
    per_table = games_per_table(config)
    return [_play(config, lineups, specs, *divmod(i, per_table)) for i in range(start, stop)]


def run(config: TournamentConfig, workers: int = 1,
        progress: Callable[[int, int], None] | None = None) -> list[TableGame]:
    """Play every game of ``config`` over ``workers`` processes; games in schedule order."""
    validate(config)
    total = len(tables(config)) * games_per_table(config)
    chunk = max(1, min(100, total // (max(1, workers) * 8) or 1))
    ranges = [(config, s, min(s + chunk, total)) for s in range(0, total, chunk)]
    return run_ranges(_play_range, ranges, total, workers, progress)


def report(config: TournamentConfig, played: Sequence[TableGame]) -> Report:
    """The report of ``config`` once ``played`` holds its games."""
    spec = get_game(config.game)
    settings = dict(spec.new_state(table_size(config), config.settings, 0).settings)
    return Report(spec.id, spec.title, config.format, config.seed, table_size(config),
                  tuple(tables(config)), games_per_table(config), deals_per_table(config),
                  len(played), settings, tuple(standings(played)))


def format_report(rep: Report) -> str:
    """The report as a heading and an aligned text table."""
    score = SCORE_LABEL
    units = "deals" if rep.format == "duplicate" else "games"
    plan = (f"{rep.deals_per_table} deals x {rep.seats} rotations"
            if rep.format == "duplicate" else f"{rep.games_per_table} games")
    lines = [f"{rep.title} {rep.format} tournament, seed {rep.seed}: {len(rep.tables)} "
             f"table(s) of {rep.seats}, {plan} at each, {rep.games} games in all",
             f"(lower {score} is better; vs field = own minus table-mates' mean, per "
             f"{units[:-1]}; ± is a 95% interval)"]
    lines += standings_lines(rep.standings, rep.game)
    return "\n".join(lines)


# --------------------------------------------------------------------------- command line


def report_note(rep: Report) -> str | None:
    """A note when the two best entrants' "vs field" intervals overlap: for round-robin it
    points at the duplicate format, for duplicate at more games."""
    if len(rep.standings) < 2:
        return None
    best, second = rep.standings[0], rep.standings[1]
    if rep.format == "duplicate":
        suggestion = (f"More deals narrow the intervals: --games "
                      f"{4 * rep.games_per_table}.")
    else:
        suggestion = (f"The duplicate format deals the same hands to every seat and needs far "
                      f"fewer games: --format duplicate --seats 2 {best.bot} {second.bot}.")
    return overlap_note(best.bot, best.vs_field, best.vs_field_ci95, second.bot,
                        second.vs_field, second.vs_field_ci95, suggestion)
