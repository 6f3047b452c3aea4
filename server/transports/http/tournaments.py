"""Live tournaments over HTTP: anyone reads them (``GET /api/tournaments``, ``GET
/api/tournaments/{id}``); the admin starts one (``POST /api/admin/tournaments``) and may
cancel it (``POST /api/admin/tournaments/{id}/cancel``)."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BaseModel, ConfigDict, Field, Strict, StrictFloat, StrictStr

from bullring.server.errors import NoLadderError, NotFoundError, TournamentTooLargeError
from bullring.server.store.models import TournamentRow
from bullring.server.tournaments.live import (
    DEFAULT_WAIT_S,
    FORFEIT_AFTER,
    MAX_PACE_MS,
    cancel_tournament,
    forfeits,
    standings_json,
)
from bullring.server.tournaments.views import MAX_SCHEDULE_PAGE, SCHEDULE_PAGE, tournament_json
from bullring.server.transports.http.context import Context, require_admin
from bullring.server.transports.http.errors import beyond_schema, error_responses
from bullring.server.transports.http.models import AS_WHOLE, BOT_NAME, JsonIn, Whole

router = APIRouter(tags=["tournaments"])

TournamentId = Annotated[str, Path(min_length=1, max_length=64)]


class TournamentIn(JsonIn):
    """A live tournament to run among connected registered bots."""

    model_config = ConfigDict(extra="ignore")

    game: StrictStr = Field(min_length=1, max_length=64,
                            description="a game id (GET /api/games)")
    format: Literal["round-robin", "duplicate"] = Field(description="round-robin or duplicate")
    bots: list[Annotated[StrictStr, Field(pattern=BOT_NAME)]] = Field(
        min_length=2, max_length=16, json_schema_extra={"uniqueItems": True},
        description="registered bots' names, each once; each table seats `seats`")
    games: Whole = Field(ge=1, le=1000, description="games at every table (duplicate: rounded "
                                                  "up to whole deals)")
    seats: Annotated[int, Strict(), Field(ge=2, le=10), AS_WHOLE] | None = Field(default=None,
                              description="table size; default: every bot at one table")
    wait_s: StrictFloat = Field(default=DEFAULT_WAIT_S, ge=0, le=3600,
                          description=f"how long a game waits for an absent bot before it "
                                      f"is played with that seat on default actions; a bot "
                                      f"absent at {FORFEIT_AFTER} of its games in a row "
                                      f"forfeits (not waited for again)")
    pace_ms: Whole = Field(default=0, ge=0, le=MAX_PACE_MS,
                         description="the least time from one decision point of its matches "
                                     "to the next, in milliseconds, so people can watch the "
                                     "bots think (a final on a projector, /tv); the bots' "
                                     "deadlines are untouched. 0: machine speed")


class TournamentSummary(BaseModel):
    """A tournament as the list shows it."""

    tournament_id: str
    game: str
    format: str
    bots: list[str]
    games: int = Field(description="games at every table")
    seats: int
    pace_ms: int = Field(description="the least time from one decision point of its matches "
                                     "to the next, in ms; 0: machine speed")
    status: str = Field(description="running, finished or cancelled")
    played: int = Field(description="games over so far")
    total: int = Field(description="games in the whole schedule")
    created_at: str
    finished_at: str | None

    @classmethod
    def of(cls, row: TournamentRow) -> TournamentSummary:
        """The summary of a stored tournament."""
        return cls(**tournament_json(row))


class TournamentPage(TournamentSummary):
    """A tournament with its standings (95% intervals; null with one unit) and a page of
    its schedule."""

    forfeited: list[str]
    standings: list[dict[str, Any]] = Field(
        description="best first: bot, games, units, win_share(_ci95), mean_score(_ci95) "
                    "(the score per round), vs_field(_ci95), mean_rank, forfeited")
    schedule_offset: int = Field(description="the place in the whole schedule of the first "
                                             "game of `schedule`")
    schedule: list[dict[str, Any]] = Field(
        description=f"a page of the games in order (from `schedule_offset`, "
                    f"{SCHEDULE_PAGE} unless `limit` asks for up to {MAX_SCHEDULE_PAGE}; "
                    f"`total` counts them all): table, deal, rotation, seats, status "
                    f"(pending, running, finished, aborted or cancelled), match_id, absent, "
                    f"totals, ranks (a seed once the game is over)")

    @classmethod
    def full(cls, row: TournamentRow, offset: int = 0,
             limit: int = SCHEDULE_PAGE) -> TournamentPage:
        """The page of a stored tournament, with ``limit`` games of its schedule from game
        ``offset`` on."""
        return cls(**tournament_json(row, offset, limit))


class TournamentList(BaseModel):
    """The newest tournaments, newest first."""

    tournaments: list[TournamentSummary]


@router.get("/api/tournaments", response_model=TournamentList)
async def tournaments(ctx: Context) -> TournamentList:
    """The newest live tournaments, newest first."""
    rows = await asyncio.to_thread(ctx.store.tournaments)
    return TournamentList(tournaments=[TournamentSummary.of(r) for r in rows])


@router.get("/api/tournaments/{tournament_id}", response_model=TournamentPage,
            responses=error_responses(404, 422))
async def tournament(ctx: Context, tournament_id: TournamentId,
                     offset: Annotated[int, Query(ge=0, le=1_000_000, description=(
                         "the first game of the schedule to send"))] = 0,
                     limit: Annotated[int, Query(ge=1, le=MAX_SCHEDULE_PAGE, description=(
                         "how many games of the schedule to send"))] = SCHEDULE_PAGE
                     ) -> TournamentPage:
    """One tournament: its standings so far and a page of its schedule (``offset``,
    ``limit``; ``total`` says how many games it holds)."""
    row = await asyncio.to_thread(ctx.store.tournament, tournament_id)
    if row is None:
        raise NotFoundError(f"no tournament {tournament_id!r}")
    return TournamentPage.full(row, offset, limit)


class StandingsAfter(BaseModel):
    """A tournament's standings as they stood once its first ``after`` games were over."""

    tournament_id: str
    after: int = Field(description="the games of the schedule counted, from its start")
    standings: list[dict[str, Any]] = Field(description="best first, as the tournament's "
                                                        "standings over those games")
    forfeited: list[str] = Field(description="the bots that had forfeited by then")


@router.get("/api/tournaments/{tournament_id}/standings", response_model=StandingsAfter,
            responses=error_responses(404, 422))
async def standings_after(ctx: Context, tournament_id: TournamentId, after: Annotated[
        int | None, Query(ge=0, le=2**31 - 1,
                          description="count the first N games of the schedule only (the "
                                      "big screen shows the standings game by game, without "
                                      "giving away later results); default: every game")
        ] = None) -> StandingsAfter:
    """A tournament's standings over the first ``after`` games of its schedule (those of
    them that finished), as they stood when those were over."""
    row = await asyncio.to_thread(ctx.store.tournament, tournament_id)
    if row is None:
        raise NotFoundError(f"no tournament {tournament_id!r}")
    games = json.loads(row.schedule_json)
    counted = games if after is None else games[:after]
    gone = forfeits(counted)
    return StandingsAfter(tournament_id=row.id, after=len(counted),
                          standings=standings_json(counted, gone), forfeited=gone)


@router.post("/api/admin/tournaments", response_model=TournamentPage, status_code=201,
             dependencies=[Depends(require_admin)],
             responses=error_responses(400, 401, 403, 404, 409, 422,
                                       refusals=(TournamentTooLargeError,)),
             openapi_extra=beyond_schema(
                 TournamentTooLargeError, "its schedule, every table of `seats` of the `bots` "
                 "(their combinations) times `games` (duplicate: rounded up to whole deals of "
                 "`seats` rotations), holds more games than the server schedules "
                 "(`bullring serve --max-tournament-games`, 2,000 by default)"))
async def create(ctx: Context, body: TournamentIn) -> TournamentPage:
    """Start a live tournament (admin): its games are seated, unrated, between the bots'
    ladder matches as soon as the bots wait on the game's ladder."""
    if ctx.ladder is None:
        raise NoLadderError("this server runs no ladder")
    row = await asyncio.to_thread(ctx.ladder.tournaments.create, body.game, body.format,
                                  body.bots, body.games, body.seats, body.wait_s,
                                  body.pace_ms)
    ctx.ladder.poke()
    return TournamentPage.full(row)


@router.post("/api/admin/tournaments/{tournament_id}/cancel", response_model=TournamentPage,
             dependencies=[Depends(require_admin)], responses=error_responses(401, 403, 404, 409))
async def cancel(ctx: Context, tournament_id: TournamentId) -> TournamentPage:
    """Cancel a running tournament (admin): its games not started are not played; a game
    under way plays to its end. Its status is then cancelled."""
    row = await asyncio.to_thread(cancel_tournament, ctx.store, tournament_id)
    return TournamentPage.full(row)
