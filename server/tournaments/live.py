"""Live tournaments: a round-robin or duplicate tournament among registered bots, played on
the live server between their ladder matches (``POST /api/admin/tournaments``,
``bullring tournament --server``).

Every table (each combination of ``seats`` entrants) plays ``games`` games, one game of a
tournament at a time, in schedule order; duplicate replays each deal with the seats rotated,
as the in-process ``bullring tournament`` does. A game is seated, unrated and before any
rated table, as soon as all its bots wait on the game's ladder (``Join(ladder=GAME)``).

Disconnects (the rule): a bot that does not wait on the ladder when its game comes up is
waited for up to ``wait_s`` seconds; then the game is seated without it, its seat answered
by the referee's default actions (it may reconnect into its seat and play on). A bot absent
at the start of ``FORFEIT_AFTER`` of its games in a row forfeits: it is marked so in the
standings, and its remaining games are seated at once, without waiting for it, on default
actions. Every match is stored (unrated, replayable); the standings, with 95% intervals
over games (round-robin) or deals (duplicate), are stored after every game.

Servers (the rule): the schedule, the match of each game (also written on the match row)
and the standings live in the database, so any server on it seats the next game and a
restarted server goes on where the tournament stood. A game whose match did not end
normally is played again from the same deal, ``MAX_TRIES`` times at most (``_play_again``).
A cancelled tournament plays none of its games not started.

Pace (the rule): a tournament created with ``pace_ms`` is played slowly, for people to watch
the bots think: each of its matches opens a decision point no sooner than ``pace_ms`` after
the last one opened (``MatchConfig.pace_ms``). The bots' deadlines are untouched.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from bullring.referee.core import RefereeError
from bullring.referee.registry import get_game
from bullring.sdk.arena import GameOutcome, seating
from bullring.sdk.standings import TableGame, standings
from bullring.sdk.tournament import FORMATS
from bullring.server.errors import (
    BotError,
    ConflictError,
    InvalidTournamentError,
    NoSuchLadderError,
    NotFoundError,
    TournamentTooLargeError,
)
from bullring.server.match.runner import MatchRunner
from bullring.server.match.setup import fresh_seed
from bullring.server.store import MatchConfig, Store
from bullring.server.store.models import TournamentRow, utcnow

log = logging.getLogger("bullring.tournaments")

FORFEIT_AFTER = 2
"""Games in a row a bot is absent at the start of before it forfeits the tournament."""
DEFAULT_WAIT_S = 30.0
"""How long a game waits for an absent bot before it is seated without it."""
MAX_GAMES = 1000
"""The most games at one table."""
MAX_ENTRANTS = 16
MAX_PACE_MS = 60_000
"""The slowest pace: a minute from one decision point of a match to the next."""

DEFAULT_MAX_SCHEDULED = 2000
"""The most games one tournament's schedule may hold (``serve --max-tournament-games``):
16 bots at tables of 8 are 12,870 tables, 10 games each 128,700 games."""

MAX_TRIES = 3
"""How many times a game whose match did not end normally is played in all."""
RECORD_GRACE_S = 30.0
"""How long a finished tournament match may stay unrecorded by its server before another
server takes its server for dead and plays the game again."""
STARTED = ("running", "finished", "aborted")
"""A game's statuses once seated."""
OVER = ("finished", "aborted", "cancelled")
"""A game's statuses once it will not be played (again)."""


def scheduled_games(format: str, entrants: int, games: int, seats: int) -> int:
    """How many games the schedule of a tournament holds: each table (each combination of
    ``seats`` of the ``entrants``) plays ``games`` (duplicate: whole deals of ``seats``
    rotations)."""
    per_table = -(-games // seats) * seats if format == "duplicate" else games
    return math.comb(entrants, seats) * per_table


def schedule(format: str, bots: Sequence[str], games: int, seats: int) -> list[dict[str, Any]]:
    """Every game of a tournament in order: table, deal, rotation, bots by seat, seed."""
    out: list[dict[str, Any]] = []
    for table, lineup in enumerate(itertools.combinations(bots, seats)):
        if format == "duplicate":
            for deal in range(-(-games // seats)):
                seed = fresh_seed()
                for rotation in range(seats):
                    out.append(_entry(table, deal, rotation, seating(lineup, rotation), seed))
        else:
            for game in range(games):
                out.append(_entry(table, game, game % seats, seating(lineup, game),
                                  fresh_seed()))
    return out


def _entry(table: int, deal: int, rotation: int, names: Sequence[str],
           seed: int) -> dict[str, Any]:
    return {"table": table, "deal": deal, "rotation": rotation, "seats": list(names),
            "seed": seed, "status": "pending", "match_id": None, "absent": [],
            "totals": None, "ranks": None, "round_scores": None}


def standings_json(games: Sequence[Mapping[str, Any]], forfeited: Collection[str]
                   ) -> list[dict[str, Any]]:
    """The standings over the finished ``games`` (best first), as plain JSON values: an
    interval that one unit cannot give is null."""
    played = [TableGame(g["table"], g["deal"], g["rotation"], GameOutcome(
        i, tuple(g["seats"]), tuple(g["totals"]), tuple(g["ranks"]),
        tuple(tuple(r) for r in g["round_scores"])))
        for i, g in enumerate(games) if g["status"] == "finished" and g["round_scores"]]
    out = []
    for standing in standings(played):
        row = {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
               for k, v in asdict(standing).items()}
        row["forfeited"] = standing.bot in forfeited
        out.append(row)
    return out


def forfeits(games: Sequence[Mapping[str, Any]]) -> list[str]:
    """The bots that forfeit: absent at the start of ``FORFEIT_AFTER`` of their games in a
    row, over the games started so far in schedule order."""
    streaks: dict[str, int] = {}
    out: list[str] = []
    for entry in games:
        if entry["status"] not in STARTED:
            continue
        for name in entry["seats"]:
            streaks[name] = streaks.get(name, 0) + 1 if name in entry["absent"] else 0
            if streaks[name] >= FORFEIT_AFTER and name not in out:
                out.append(name)
    return out


def _settle(row: TournamentRow, games: list[dict[str, Any]]) -> None:
    """Write ``games`` into ``row`` with the standings and forfeits they give; the last
    game over ends a running tournament."""
    forfeited = forfeits(games)
    row.schedule_json = json.dumps(games)
    row.forfeited_json = json.dumps(forfeited)
    row.standings_json = json.dumps(standings_json(games, forfeited))
    if row.status == "running" and all(g["status"] in OVER for g in games):
        row.status, row.finished_at = "finished", utcnow()
        log.info("tournament %s finished", row.id)


def _play_again(entry: dict[str, Any], why: str) -> None:
    """The rule for a game whose match did not end normally: it is played again from the
    same deal (``pending``), at most ``MAX_TRIES`` times in all, then stored ``aborted``."""
    tries = entry.get("tries", 1)
    if tries >= MAX_TRIES:
        entry["status"] = "aborted"
        return
    log.info("tournament game of match %s: %s; played again", entry["match_id"], why)
    entry.update(status="pending", match_id=None, absent=[], tries=tries + 1)


class Tournaments:
    """The live tournaments on the database, seated by this server's ladder matchmaker.

    Everything about a tournament lives in the database: its schedule (each game's match
    id once seated), standings and forfeits, and on each match the tournament game it
    plays. So any server on the database seats its next game, records the end of the
    matches it ran, and picks up the games of a server that stopped or died (see
    ``_play_again``)."""

    def __init__(self, store: Store, settings: Mapping[str, Mapping[str, Any]],
                 instance: str, poke: Callable[[], None],
                 max_scheduled: int = DEFAULT_MAX_SCHEDULED) -> None:
        self.store = store
        self.max_scheduled = max_scheduled
        """The most games one tournament's schedule may hold."""
        self.settings = settings
        self.instance = instance
        self.poke = poke
        self._blocked_since: dict[str, float] = {}
        """Tournament id -> when its next game began waiting here for an absent bot."""

    def create(self, game: str, format: str, bots: Sequence[str], games: int,
               seats: int | None = None, wait_s: float = DEFAULT_WAIT_S,
               pace_ms: int = 0) -> TournamentRow:
        """Check and store a tournament (a blocking call); the matchmaker seats its games."""
        if get_game_id(game) not in self.settings:
            raise NoSuchLadderError(f"this server runs ladders for "
                                    f"{', '.join(self.settings)}, not {game}")
        return create_tournament(self.store, game, format, bots, games, seats, wait_s,
                                 pace_ms, self.max_scheduled)

    def seat(self, game: str, waiting: Collection[str], seated: Collection[str],
             now: float) -> tuple[list[MatchConfig], float | None, bool]:
        """Seat the next game of each running tournament of ``game`` whose bots wait in
        ``waiting`` (or that waited long enough for the absent ones); a blocking call.
        Returns the matches to start, when a game waits for an absent bot in how many
        seconds to look again, and whether ``game`` has a running tournament."""
        started: list[MatchConfig] = []
        again: float | None = None
        live = False
        for row in self.store.tournaments("running"):
            if row.game != game:
                continue
            live = True
            games = json.loads(row.schedule_json)
            running = [g for g in games if g["status"] == "running"]
            if running:
                self._recover(row.id, running)
                continue
            index = next((i for i, g in enumerate(games) if g["status"] == "pending"), None)
            if index is None:
                continue
            entry = games[index]
            names: list[str] = entry["seats"]
            if any(n in seated for n in names):
                continue  # one plays a ladder match: its game follows that match
            forfeited = forfeits(games)
            absent = [n for n in names if n not in waiting]
            if any(n not in forfeited for n in absent):
                since = self._blocked_since.setdefault(row.id, now)
                if now - since < row.wait_s:
                    left = since + row.wait_s - now + 0.01
                    again = left if again is None else min(again, left)
                    continue
            settings = self.settings[game]

            def mark(locked: TournamentRow, match_id: str, index: int = index,
                     absent: list[str] = absent) -> None:
                fresh = json.loads(locked.schedule_json)
                fresh[index].update(status="running", match_id=match_id, absent=absent)
                _settle(locked, fresh)

            match_id = self.store.seat_tournament_game(row.id, index, game, settings,
                                                       entry["seed"], names, self.instance,
                                                       mark)
            if match_id is None:
                continue  # seated elsewhere meanwhile: looked at again when freed
            self._blocked_since.pop(row.id, None)
            started.append(MatchConfig(match_id, game, dict(settings), entry["seed"],
                                       tuple(names), {}, "running", rated=False,
                                       pace_ms=row.pace_ms))
            log.info("tournament %s game %d: match %s, %s%s", row.id, index, match_id,
                     ", ".join(names), f" (absent: {', '.join(absent)})" if absent else "")
        return started, again, live

    def _recover(self, tournament_id: str, running: Sequence[Mapping[str, Any]]) -> None:
        """Play again the running games whose match is over but was not recorded: aborted
        (its server stopped, or died and was swept), or finished on a server that did not
        record it within ``RECORD_GRACE_S`` (it died meanwhile)."""
        states = self.store.match_states([g["match_id"] for g in running])
        now = utcnow()
        lost = []
        for entry in running:
            status, instance, end = states.get(entry["match_id"], ("aborted", None, None))
            if status == "aborted" or (status == "finished" and instance != self.instance
                                       and end is not None
                                       and (now - end).total_seconds() > RECORD_GRACE_S):
                lost.append((entry["match_id"], status))
        if not lost:
            return

        def again(row: TournamentRow) -> bool:
            games = json.loads(row.schedule_json)
            for entry in games:
                for match_id, status in lost:
                    if entry["status"] == "running" and entry["match_id"] == match_id:
                        _play_again(entry, f"its match was {status} unrecorded")
            _settle(row, games)
            return True

        self.store.change_tournament(tournament_id, again)
        self.poke()

    def ended(self, runner: MatchRunner) -> None:
        """Record a tournament match that ended here (a blocking call); the last game ends
        the tournament. A match that did not end normally is played again."""
        if runner.config.rated:
            return  # a rated ladder match: never a tournament game
        found = self.store.tournament_game_of(runner.config.match_id)
        if found is None:
            return
        tournament_id, index = found
        state = runner.state
        match_id = runner.config.match_id

        def record(row: TournamentRow) -> bool:
            games = json.loads(row.schedule_json)
            entry = games[index]
            if entry["status"] != "running" or entry["match_id"] != match_id:
                return False  # recorded (or played again) by another server meanwhile
            if state.over:
                totals, ranks = state.result()
                entry.update(status="finished", totals=list(totals), ranks=list(ranks),
                             round_scores=[list(r) for r in state.round_scores()])
            else:
                _play_again(entry, "its match was aborted")
            _settle(row, games)
            return True

        self.store.change_tournament(tournament_id, record)
        self.poke()


def get_game_id(game: str) -> str:
    """The id of ``game`` (an id, or with its version, ``ID/1``); InvalidTournamentError
    when unknown."""
    try:
        return get_game(game).id
    except RefereeError as exc:
        raise InvalidTournamentError(str(exc)) from None


def create_tournament(store: Store, game: str, format: str, bots: Sequence[str], games: int,
                      seats: int | None = None, wait_s: float = DEFAULT_WAIT_S,
                      pace_ms: int = 0,
                      max_scheduled: int = DEFAULT_MAX_SCHEDULED) -> TournamentRow:
    """Check and store a tournament (a blocking call): any server on the database running
    ``game``'s ladder seats its games. A schedule of more than ``max_scheduled`` games is
    refused (TournamentTooLargeError) before it is built."""
    spec = get_game(get_game_id(game))
    if format not in FORMATS:
        raise InvalidTournamentError(f"unknown format {format!r}; known: "
                                     f"{', '.join(FORMATS)}")
    if not 1 <= games <= MAX_GAMES:
        raise InvalidTournamentError(f"games is 1 to {MAX_GAMES}, not {games}")
    if not 2 <= len(bots) <= MAX_ENTRANTS or len(set(bots)) != len(bots):
        raise InvalidTournamentError(f"name 2 to {MAX_ENTRANTS} different bots")
    size = len(bots) if seats is None else seats
    if not spec.min_seats <= size <= min(spec.max_seats, len(bots)):
        raise InvalidTournamentError(f"{spec.id} tables seat {spec.min_seats}-"
                                     f"{spec.max_seats}; {len(bots)} bots at "
                                     f"tables of {size} cannot play")
    if not 0 <= wait_s <= 3600:
        raise InvalidTournamentError("wait_s is 0 to 3600 seconds")
    if not 0 <= pace_ms <= MAX_PACE_MS:
        raise InvalidTournamentError(f"pace_ms is 0 to {MAX_PACE_MS} milliseconds, "
                                     f"not {pace_ms}")
    total = scheduled_games(format, len(bots), games, size)
    if total > max_scheduled:
        raise TournamentTooLargeError(
            f"{len(bots)} bots at tables of {size}, {games} games a table, schedule "
            f"{total:,} games ({math.comb(len(bots), size):,} tables); a tournament here "
            f"schedules at most {max_scheduled:,} (bullring serve --max-tournament-games): "
            f"name fewer bots or games, or tables of another size")
    row = TournamentRow(id=uuid.uuid4().hex[:12], game=spec.id, format=format,
                        entrants_json=json.dumps(list(bots)), games=games, seats=size,
                        wait_s=wait_s, pace_ms=pace_ms,
                        schedule_json=json.dumps(schedule(format, bots, games, size)))
    try:
        made = store.create_tournament(row)
    except BotError as exc:
        if "no registered" in str(exc):
            raise NotFoundError(str(exc)) from None
        raise ConflictError(str(exc)) from None
    log.info("tournament %s (%s, %s): %s, %d games a table%s", made.id, spec.id, format,
             ", ".join(bots), games, f", paced {pace_ms} ms" if pace_ms else "")
    return made


def cancel_tournament(store: Store, tournament_id: str) -> TournamentRow:
    """Cancel a running tournament (a blocking call): its games not started are never
    played (``cancelled``); a game under way plays to its end and is recorded."""
    was: list[str] = []

    def cancel(row: TournamentRow) -> bool:
        was.append(row.status)
        if row.status != "running":
            return False
        games = json.loads(row.schedule_json)
        for entry in games:
            if entry["status"] == "pending":
                entry["status"] = "cancelled"
        _settle(row, games)
        row.status, row.finished_at = "cancelled", utcnow()
        return True

    row = store.change_tournament(tournament_id, cancel)
    if row is None:
        raise NotFoundError(f"no tournament {tournament_id!r}")
    if was[-1] != "running":
        raise ConflictError(f"tournament {tournament_id} is {row.status}")
    log.info("tournament %s cancelled", tournament_id)
    return row
