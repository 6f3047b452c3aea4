"""What the big screen follows (``GET /api/tv``, read by the ``/tv`` page): the featured
game, chosen by one rule (docs/tv.md):

1. a tournament on air: the newest running one, else the newest that finished within the
   last ``rewind`` seconds (a tournament played at machine speed is over before anyone
   looks), with the game its broadcast begins at;
2. else the best-rated match live on this server: the highest mean leaderboard rating of its
   seats (a seat that is no rated bot counts as the lowest rating on the board);
3. else the latest finished match.

Public facts only, as everywhere under ``/api``: the page then plays the match's public feed
(``/api/matches/{id}/feed``) at a pace people can follow, never ahead of the game.
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from bullring.server.store import MatchSummary
from bullring.server.store.base import utc
from bullring.server.store.models import TournamentRow, utcnow
from bullring.server.tournaments.live import OVER
from bullring.server.transports.http.browse import is_live
from bullring.server.transports.http.context import ApiContext, Context
from bullring.server.transports.http.errors import error_responses
from bullring.server.transports.http.models import MatchInfo
from bullring.server.transports.http.tournaments import TournamentSummary

router = APIRouter(prefix="/api", tags=["browse"])

REWIND_S = 60.0
"""How far back a broadcast reaches by default: a tournament that finished this recently is
still on air, and a tournament's broadcast begins at its first game that ended this recently
(or is not over)."""
MAX_REWIND_S = 3600.0
LIVE_LOOKED_AT = 100
"""How many of the newest running matches the choice of the best-rated one looks at."""


class OnAir(BaseModel):
    """What the big screen follows now."""

    kind: str = Field(description="tournament (a tournament on air), live (the best-rated "
                                  "match live here), latest (the latest finished match) or "
                                  "none")
    tournament: TournamentSummary | None = Field(
        default=None, description="with kind tournament: the tournament")
    from_game: int | None = Field(
        default=None, description="with kind tournament: the game (its index in the "
                                  "schedule, from 0) the broadcast begins at: the first not "
                                  "over, or that ended within the last `rewind` seconds")
    match: MatchInfo | None = Field(default=None,
                                    description="with kind live or latest: the match")


@router.get("/tv", response_model=OnAir, responses=error_responses(422))
async def on_air(ctx: Context, rewind: Annotated[float, Query(
        ge=0, le=MAX_REWIND_S, description="how far back, in seconds, a tournament is still "
                                           "on air and its broadcast begins")] = REWIND_S
                 ) -> OnAir:
    """The featured game the big screen (``/tv``) follows: the tournament on air (running,
    or finished within ``rewind`` seconds) with the game its broadcast begins at; else the
    best-rated match live on this server; else the latest finished match."""
    return await asyncio.to_thread(featured, ctx, rewind)


def featured(ctx: ApiContext, rewind_s: float) -> OnAir:
    """The rule of ``GET /api/tv`` (a blocking call)."""
    found = _tournament_on_air(ctx, rewind_s)
    if found is not None:
        row, start = found
        return OnAir(kind="tournament", tournament=TournamentSummary.of(row), from_game=start)
    store = ctx.store
    running, _ = store.match_page(status="running", limit=LIVE_LOOKED_AT)
    live = [m for m in running if is_live(ctx, m.match_id)]
    if live:
        boards: dict[str, dict[str, float]] = {}
        for match in live:
            if match.game not in boards:
                boards[match.game] = {e.bot: e.ordinal for e in store.leaderboard(match.game)}
        best = max(live, key=lambda m: (rating(m, boards[m.game]), m.created_at))
        return OnAir(kind="live", match=MatchInfo.of(best, True))
    latest, _ = store.match_page(status="finished", limit=1)
    if latest:
        return OnAir(kind="latest", match=MatchInfo.of(latest[0], False))
    return OnAir(kind="none")


def rating(match: MatchSummary, board: dict[str, float]) -> float:
    """The mean leaderboard rating (ordinal) of ``match``'s seats; a seat that is no rated
    bot counts as the lowest rating on ``board`` (0 on an empty board)."""
    lowest = min(board.values(), default=0.0)
    seats = [board.get(bot, lowest) if bot is not None else lowest
             for bot in match.seat_bots] or [lowest]
    return sum(seats) / len(seats)


def _tournament_on_air(ctx: ApiContext, rewind_s: float) -> tuple[TournamentRow, int] | None:
    """The tournament on air and the game its broadcast begins at, or None."""
    store = ctx.store
    since = utcnow() - timedelta(seconds=rewind_s)
    running = store.tournaments("running", limit=1)
    rows = running or [row for row in store.tournaments("finished", limit=10)
                       if row.finished_at is not None and utc(row.finished_at) >= since]
    if not rows:
        return None
    row = rows[0]
    games = json.loads(row.schedule_json)
    ended = store.match_states([g["match_id"] for g in games
                                if g["match_id"] and g["status"] in OVER])
    for index, game in enumerate(games):
        if game["status"] == "cancelled":
            continue
        if game["status"] not in OVER:
            return row, index
        end = ended.get(game["match_id"], ("", None, None))[2]
        if end is not None and end >= since:
            return row, index
    return row, max(0, len(games) - 1)
