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

from client_sdk.arena import GameOutcome, seating
from client_sdk.standings import TableGame, standings
from client_sdk.tournament_cli import FORMATS
from referee.core import RefereeError
from referee.registry import get_game
from server.match_runner import MatchRunner
from server.match_setup import fresh_seed
from server.models import TournamentRow
from server.store import BotError, MatchConfig, Store

log = logging.getLogger("bullring.tournaments")

FORFEIT_AFTER = 2
"""Games in a row a bot is absent at the start of before it forfeits the tournament."""
DEFAULT_WAIT_S = 30.0
"""How long a game waits for an absent bot before it is seated without it."""
MAX_GAMES = 1000
"""The most games at one table."""
MAX_ENTRANTS = 16


class TournamentRequestError(ValueError):
    """A tournament that cannot be run as asked; ``code`` is the HTTP status to answer."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


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


class Tournaments:
    """The live tournaments this server runs, seated by its ladder's matchmaker."""

    def __init__(self, store: Store, settings: Mapping[str, Mapping[str, Any]],
                 instance: str, poke: Callable[[], None]) -> None:
        self.store = store
        self.settings = settings
        self.instance = instance
        self.poke = poke
        self._blocked_since: dict[str, float] = {}
        self._streaks: dict[str, dict[str, int]] = {}
        self._playing: dict[str, tuple[str, int]] = {}
        """Tournament match id -> (tournament id, game index)."""

    def create(self, game: str, format: str, bots: Sequence[str], games: int,
               seats: int | None = None, wait_s: float = DEFAULT_WAIT_S) -> TournamentRow:
        """Check and store a tournament (a blocking call); the matchmaker seats its games."""
        try:
            spec = get_game(game)
        except RefereeError as exc:
            raise TournamentRequestError(400, str(exc)) from None
        if spec.id not in self.settings:
            raise TournamentRequestError(409, f"this server runs ladders for "
                                              f"{', '.join(self.settings)}, not {spec.id}")
        if format not in FORMATS:
            raise TournamentRequestError(400, f"unknown format {format!r}; known: "
                                              f"{', '.join(FORMATS)}")
        if not 1 <= games <= MAX_GAMES:
            raise TournamentRequestError(400, f"games is 1 to {MAX_GAMES}, not {games}")
        if not 2 <= len(bots) <= MAX_ENTRANTS or len(set(bots)) != len(bots):
            raise TournamentRequestError(400, f"name 2 to {MAX_ENTRANTS} different bots")
        size = len(bots) if seats is None else seats
        if not spec.min_seats <= size <= min(spec.max_seats, len(bots)):
            raise TournamentRequestError(400, f"{spec.id} tables seat {spec.min_seats}-"
                                              f"{spec.max_seats}; {len(bots)} bots at "
                                              f"tables of {size} cannot play")
        if not 0 <= wait_s <= 3600:
            raise TournamentRequestError(400, "wait_s is 0 to 3600 seconds")
        row = TournamentRow(id=uuid.uuid4().hex[:12], game=spec.id, format=format,
                            entrants_json=json.dumps(list(bots)), games=games, seats=size,
                            wait_s=wait_s,
                            schedule_json=json.dumps(schedule(format, bots, games, size)))
        try:
            made = self.store.create_tournament(row)
        except BotError as exc:
            raise TournamentRequestError(404 if "no registered" in str(exc) else 409,
                                         str(exc)) from None
        log.info("tournament %s (%s, %s): %s, %d games a table", made.id, spec.id, format,
                 ", ".join(bots), games)
        return made

    def seat(self, game: str, waiting: Collection[str], seated: Collection[str],
             now: float) -> tuple[list[MatchConfig], float | None]:
        """Seat the next game of each running tournament of ``game`` whose bots wait in
        ``waiting`` (or that waited long enough for the absent ones); a blocking call.
        Returns the matches to start and, when a game waits for an absent bot, in how many
        seconds to look again."""
        started: list[MatchConfig] = []
        again: float | None = None
        for row in self.store.tournaments("running"):
            if row.game != game:
                continue
            games = json.loads(row.schedule_json)
            if any(g["status"] == "running" for g in games):
                continue
            index = next((i for i, g in enumerate(games) if g["status"] == "pending"), None)
            if index is None:
                continue
            entry = games[index]
            names: list[str] = entry["seats"]
            if any(n in seated for n in names):
                continue  # one plays a ladder match: its game follows that match
            forfeited: list[str] = json.loads(row.forfeited_json)
            absent = [n for n in names if n not in waiting]
            if any(n not in forfeited for n in absent):
                since = self._blocked_since.setdefault(row.id, now)
                if now - since < row.wait_s:
                    left = since + row.wait_s - now + 0.01
                    again = left if again is None else min(again, left)
                    continue
            settings = self.settings[game]
            match_id = self.store.seat_tournament_game(row.id, game, settings, entry["seed"],
                                                       names, self.instance)
            if match_id is None:
                continue  # a bot was seated elsewhere meanwhile: looked at again when freed
            self._blocked_since.pop(row.id, None)
            streaks = self._streaks.setdefault(row.id, {})
            for name in names:
                streaks[name] = streaks.get(name, 0) + 1 if name in absent else 0
                if streaks[name] >= FORFEIT_AFTER and name not in forfeited:
                    forfeited.append(name)
                    log.info("tournament %s: %s forfeits (absent at %d games in a row)",
                             row.id, name, FORFEIT_AFTER)
            entry.update(status="running", match_id=match_id, absent=absent)
            self.store.save_tournament(row.id, games, json.loads(row.standings_json),
                                       forfeited, False)
            self._playing[match_id] = (row.id, index)
            started.append(MatchConfig(match_id, game, dict(settings), entry["seed"],
                                       tuple(names), {}, "running", rated=False))
            log.info("tournament %s game %d: match %s, %s%s", row.id, index, match_id,
                     ", ".join(names), f" (absent: {', '.join(absent)})" if absent else "")
        return started, again

    def ended(self, runner: MatchRunner) -> None:
        """Record a tournament match that ended (a blocking call); the last game ends it."""
        found = self._playing.pop(runner.config.match_id, None)
        if found is None:
            return
        tournament_id, index = found
        row = self.store.tournament(tournament_id)
        if row is None:
            return
        games = json.loads(row.schedule_json)
        entry = games[index]
        state = runner.state
        if state.over:
            totals, ranks = state.result()
            entry.update(status="finished", totals=list(totals), ranks=list(ranks),
                         round_scores=[list(r) for r in state.round_scores()])
        else:
            entry["status"] = "aborted"
        forfeited = json.loads(row.forfeited_json)
        done = all(g["status"] in ("finished", "aborted") for g in games)
        self.store.save_tournament(tournament_id, games, standings_json(games, forfeited),
                                   forfeited, done)
        if done:
            log.info("tournament %s finished", tournament_id)
        self.poke()


def public_games(row: TournamentRow) -> list[dict[str, Any]]:
    """The schedule as anyone may see it: a game's seed only once it is over."""
    out = []
    for entry in json.loads(row.schedule_json):
        shown = dict(entry)
        if entry["status"] in ("pending", "running"):
            shown.pop("seed")
        out.append(shown)
    return out
