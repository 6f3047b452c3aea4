"""Admin operations, behind the admin token: the bot registry (as gRPC AdminService and
``bullring bots`` offer it), registering a match (its seat tokens are shown once) and
aborting one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, TypeVar

from fastapi import APIRouter, Depends, Path

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.errors import (
    InvalidRequestError,
    MatchElsewhereError,
    MatchOverError,
    MatchSetupError,
)
from bullring.server.match.setup import create_match
from bullring.server.transports.http.browse import MatchId, match_info
from bullring.server.transports.http.context import Context, require_admin
from bullring.server.transports.http.errors import beyond_schema, error_responses
from bullring.server.transports.http.models import (
    AbortedOut,
    BotEnabledOut,
    BotTokenOut,
    BotVersionOut,
    CreatedMatchOut,
    CreatedSeat,
    CreateMatchIn,
    NewBotIn,
)

router = APIRouter(prefix="/api/admin", tags=["admin"], dependencies=[Depends(require_admin)],
                   responses=error_responses(401, 403))


@router.post("/matches", response_model=CreatedMatchOut, status_code=201,
             responses=error_responses(422, refusals=(MatchSetupError,)),
             openapi_extra=beyond_schema(MatchSetupError, "a seat named both in `humans` and "
                                                          "in `house`"))
async def create(ctx: Context, body: CreateMatchIn) -> CreatedMatchOut:
    """Register a match; its seat tokens (and a person's seat's play page) are in this
    response and nowhere else."""
    house: dict[int, str] = {}
    for key, name in body.house.items():
        if not key.isdigit():
            raise InvalidRequestError(f"house seats are numbers, not {key!r}")
        house[int(key)] = name
    created = await asyncio.to_thread(create_match, ctx.store, body.game, body.seats,
                                      body.settings, body.seed, house, body.humans)
    return CreatedMatchOut(match_id=created.match_id, game=created.game, seats=[
        CreatedSeat(seat=s, name=name, token=created.tokens[s], house=created.house.get(s),
                    human=s in created.humans, play=created.play_path(s))
        for s, name in enumerate(created.seat_names)])


@router.post("/matches/{match_id}/abort", response_model=AbortedOut,
             responses=error_responses(404, 409))
async def abort(ctx: Context, match_id: MatchId) -> AbortedOut:
    """Abort a match: a running one is stopped and stored as aborted (seats and spectators
    get the end); a match that never started is marked aborted."""
    info = await match_info(ctx, match_id)
    if info.status in ("finished", "aborted"):
        raise MatchOverError(f"match {match_id!r} is already {info.status}")
    if not await ctx.hub.abort(match_id):
        if info.status == "running":
            raise MatchElsewhereError(f"match {match_id!r} runs on another server")
        await asyncio.to_thread(ctx.store.set_status, match_id, "aborted")
    return AbortedOut(match_id=match_id, status="aborted")


BotName = Annotated[str, Path(min_length=1, max_length=64, description="a bot's name")]
T = TypeVar("T")


async def registry(work: Callable[[], T]) -> T:
    """Run one registry change (its refusals answer as server/errors.py's table says)."""
    return await asyncio.to_thread(work)


@router.post("/bots", response_model=BotTokenOut, status_code=201,
             responses=error_responses(400, 409, 422))
async def add_bot(ctx: Context, body: NewBotIn) -> BotTokenOut:
    """Register a bot; its token is in this response only."""
    token = await registry(lambda: ctx.store.add_bot(body.name, body.owner))
    return BotTokenOut(name=body.name, token=token)


@router.post("/bots/{name}/version", response_model=BotVersionOut,
             responses=error_responses(404))
async def new_version(ctx: Context, name: BotName) -> BotVersionOut:
    """Start a new version of a bot: its ratings keep their mean, widen their uncertainty."""
    return BotVersionOut(name=name, version=await registry(lambda: ctx.store.new_version(name)))


@router.post("/bots/{name}/enable", response_model=BotEnabledOut,
             responses=error_responses(404))
async def enable(ctx: Context, name: BotName) -> BotEnabledOut:
    """Let a bot be seated again."""
    await registry(lambda: ctx.store.set_enabled(name, True))
    return BotEnabledOut(name=name, enabled=True)


@router.post("/bots/{name}/disable", response_model=BotEnabledOut,
             responses=error_responses(404))
async def disable(ctx: Context, name: BotName) -> BotEnabledOut:
    """Stop seating a bot; it leaves the leaderboard, and its streams and polls end at once."""
    await registry(lambda: ctx.store.set_enabled(name, False))
    if ctx.ladder is not None:
        ctx.ladder.revoke(name, pb.CLOSE_REASON_BOT_DISABLED)
    return BotEnabledOut(name=name, enabled=False)


@router.post("/bots/{name}/rotate-token", response_model=BotTokenOut,
             responses=error_responses(400, 404))
async def rotate_token(ctx: Context, name: BotName) -> BotTokenOut:
    """Give a bot a new token; the old one stops working, and its streams and polls end at
    once."""
    token = await registry(lambda: ctx.store.rotate_token(name))
    if ctx.ladder is not None:
        ctx.ladder.revoke(name, pb.CLOSE_REASON_TOKEN_REVOKED)
    return BotTokenOut(name=name, token=token)
