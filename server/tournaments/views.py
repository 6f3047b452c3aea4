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


def public_games(row: TournamentRow) -> list[dict[str, Any]]:
    """The schedule as anyone may see it: a game's seed only once it is over."""
    out = []
    for entry in json.loads(row.schedule_json):
        shown = {key: entry[key] for key in GAME_KEYS}
        if entry["status"] not in ("pending", "running"):
            shown["seed"] = entry["seed"]
        out.append(shown)
    return out


def tournament_json(row: TournamentRow) -> dict[str, Any]:
    """A stored tournament as plain JSON values, as the API and the command line show it."""
    played, total = progress(row)
    return {"tournament_id": row.id, "game": row.game, "format": row.format,
            "bots": json.loads(row.entrants_json), "games": row.games, "seats": row.seats,
            "pace_ms": row.pace_ms, "status": row.status, "played": played, "total": total,
            "created_at": iso(ms(row.created_at)), "finished_at": iso(ms(row.finished_at)),
            "forfeited": json.loads(row.forfeited_json),
            "standings": json.loads(row.standings_json), "schedule": public_games(row)}


def progress(row: TournamentRow) -> tuple[int, int]:
    """How many games of ``row`` are over (finished or aborted), and how many it has."""
    games = json.loads(row.schedule_json)
    return sum(g["status"] in ("finished", "aborted") for g in games), len(games)


def tournament_to_proto(row: TournamentRow) -> pb.Tournament:
    """The wire form of a stored tournament (seeds of games not over stay secret)."""
    played, total = progress(row)
    standings = [pb.TournamentStanding(**{k: v for k, v in s.items() if v is not None})
                 for s in json.loads(row.standings_json)]
    schedule = [pb.TournamentGame(
        table=g["table"], deal=g["deal"], rotation=g["rotation"], seats=g["seats"],
        status=g["status"], match_id=g["match_id"] or "", absent=g["absent"],
        totals=g["totals"] or (), ranks=g["ranks"] or (), seed=g.get("seed"))
        for g in public_games(row)]
    return pb.Tournament(tournament_id=row.id, game=row.game, format=row.format,
                         bots=json.loads(row.entrants_json), games=row.games, seats=row.seats,
                         pace_ms=row.pace_ms, status=row.status, played=played, total=total,
                         created_ms=ms(row.created_at), finished_ms=ms(row.finished_at),
                         forfeited=json.loads(row.forfeited_json), standings=standings,
                         schedule=schedule)
