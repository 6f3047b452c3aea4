"""Admin operations, behind the admin token: register a match (its seat tokens are shown
once), abort a match."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Depends

from server.api.browse import MatchId, match_info
from server.api.context import Context, require_admin
from server.api.errors import ApiError, error_responses
from server.api.models import AbortedOut, CreatedMatchOut, CreatedSeat, CreateMatchIn
from server.match_setup import MatchSetupError, create_match

router = APIRouter(prefix="/api/admin", tags=["admin"], dependencies=[Depends(require_admin)],
                   responses=error_responses(401, 403))


@router.post("/matches", response_model=CreatedMatchOut, status_code=201,
             responses=error_responses(400, 422))
async def create(ctx: Context, body: CreateMatchIn) -> CreatedMatchOut:
    """Register a match; its seat tokens are in this response and nowhere else."""
    house: dict[int, str] = {}
    for key, name in body.house.items():
        if not key.isdigit():
            raise ApiError(422, "invalid_request", f"house seats are numbers, not {key!r}")
        house[int(key)] = name
    try:
        created = await asyncio.to_thread(create_match, ctx.store, body.game, body.seats,
                                          body.settings, body.seed, house)
    except MatchSetupError as exc:
        raise ApiError(400, "invalid_match", str(exc)) from exc
    return CreatedMatchOut(match_id=created.match_id, game=created.game, seats=[
        CreatedSeat(seat=s, name=name, token=created.tokens[s], house=created.house.get(s))
        for s, name in enumerate(created.seat_names)])


@router.post("/matches/{match_id}/abort", response_model=AbortedOut,
             responses=error_responses(404, 409))
async def abort(ctx: Context, match_id: MatchId) -> AbortedOut:
    """Abort a match: a running one is stopped and stored as aborted (seats and spectators
    get the end); a match that never started is marked aborted."""
    info = await match_info(ctx, match_id)
    if info.status in ("finished", "aborted"):
        raise ApiError(409, "match_over", f"match {match_id!r} is already {info.status}")
    if not await ctx.hub.abort(match_id):
        if info.status == "running":
            raise ApiError(409, "match_not_live", f"match {match_id!r} runs on another server")
        await asyncio.to_thread(ctx.store.set_status, match_id, "aborted")
    return AbortedOut(match_id=match_id, status="aborted")
