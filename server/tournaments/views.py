"""What anyone may see of a live tournament: its JSON form (the HTTP API and the command
line) and its wire form (LadderService.GetTournament, AdminService's tournament calls). The
seeds of games not over stay secret."""

from __future__ import annotations

import json
from typing import Any

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.store.models import TournamentRow
from bullring.server.store.times import iso, ms

GAME_KEYS = ("table", "deal", "rotation", "seats", "status", "match_id", "absent", "totals",
             "ranks")
"""What anyone may see of a scheduled game; its ``seed`` too once the game is over."""


SCHEDULE_PAGE = 100
"""The games of a schedule one answer holds unless it asks for another page."""
MAX_SCHEDULE_PAGE = 1000
"""The most games of a schedule one answer holds."""


def public_games(row: TournamentRow, offset: int = 0, limit: int | None = None
                 ) -> list[dict[str, Any]]:
    """The schedule as anyone may see it (a game's seed only once it is over): the games
    from ``offset`` on, ``limit`` of them (None: all)."""
    out = []
    games = json.loads(row.schedule_json)
    end = len(games) if limit is None else offset + limit
    for entry in games[offset:end]:
        shown = {key: entry[key] for key in GAME_KEYS}
        if entry["status"] not in ("pending", "running"):
            shown["seed"] = entry["seed"]
        out.append(shown)
    return out


def page_of(offset: int, limit: int) -> tuple[int, int]:
    """A page of a schedule as asked (``limit`` 0: ``SCHEDULE_PAGE``), within bounds."""
    return max(0, offset), min(limit or SCHEDULE_PAGE, MAX_SCHEDULE_PAGE)


def tournament_json(row: TournamentRow, offset: int = 0, limit: int | None = SCHEDULE_PAGE
                    ) -> dict[str, Any]:
    """A stored tournament as plain JSON values, as the API and the command line show it:
    its schedule from game ``offset`` on, ``limit`` games (None: all of them)."""
    played, total = progress(row)
    return {"tournament_id": row.id, "game": row.game, "format": row.format,
            "bots": json.loads(row.entrants_json), "games": row.games, "seats": row.seats,
            "pace_ms": row.pace_ms, "status": row.status, "played": played, "total": total,
            "created_at": iso(ms(row.created_at)), "finished_at": iso(ms(row.finished_at)),
            "forfeited": json.loads(row.forfeited_json),
            "standings": json.loads(row.standings_json), "schedule_offset": offset,
            "schedule": public_games(row, offset, limit)}


def progress(row: TournamentRow) -> tuple[int, int]:
    """How many games of ``row`` are over (finished or aborted), and how many it has."""
    games = json.loads(row.schedule_json)
    return sum(g["status"] in ("finished", "aborted") for g in games), len(games)


def tournament_to_proto(row: TournamentRow, offset: int = 0, limit: int = SCHEDULE_PAGE
                        ) -> pb.Tournament:
    """The wire form of a stored tournament (seeds of games not over stay secret), with
    ``limit`` games of its schedule from game ``offset`` on."""
    played, total = progress(row)
    standings = [pb.TournamentStanding(**{k: v for k, v in s.items() if v is not None})
                 for s in json.loads(row.standings_json)]
    schedule = [pb.TournamentGame(
        table=g["table"], deal=g["deal"], rotation=g["rotation"], seats=g["seats"],
        status=g["status"], match_id=g["match_id"] or "", absent=g["absent"],
        totals=g["totals"] or (), ranks=g["ranks"] or (), seed=g.get("seed"))
        for g in public_games(row, offset, limit)]
    return pb.Tournament(tournament_id=row.id, game=row.game, format=row.format,
                         bots=json.loads(row.entrants_json), games=row.games, seats=row.seats,
                         pace_ms=row.pace_ms, status=row.status, played=played, total=total,
                         created_ms=ms(row.created_at), finished_ms=ms(row.finished_at),
                         forfeited=json.loads(row.forfeited_json), standings=standings,
                         schedule=schedule, schedule_offset=offset)
