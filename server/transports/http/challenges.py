"""Practice matches and challenges over HTTP, as gRPC ChallengeService offers them: every
route takes a registered bot's token (``Authorization: Bearer bot_...``) and acts as that
bot."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi import Path as PathParam

from bullring.server.challenges.offers import Challenges
from bullring.server.errors import NoLadderError
from bullring.server.transports.http.context import Context, Credentials, bearer_token
from bullring.server.transports.http.errors import error_responses
from bullring.server.transports.http.models import (
    AutoAcceptIn,
    AutoAcceptOut,
    ChallengeIn,
    ChallengeList,
    ChallengeOut,
    DeclineIn,
)

router = APIRouter(prefix="/api/challenges", tags=["challenges"],
                   responses=error_responses(401, 503))

ChallengeId = Annotated[str, PathParam(min_length=1, max_length=64,
                                       description="a challenge's id")]


def _calls(ctx: Context) -> Challenges:
    if ctx.challenges is None:
        raise NoLadderError("this server runs no ladder")
    return ctx.challenges


@router.post("", response_model=ChallengeOut, status_code=201,
             responses=error_responses(400, 404, 409, 422))
async def create(ctx: Context, credentials: Credentials, body: ChallengeIn) -> ChallengeOut:
    """Challenge opponents to an unrated match: only house bots named (a practice match),
    it is accepted at once; registered bots named, it waits for each to accept. Once
    accepted it is seated as soon as its registered bots wait on the game's ladder."""
    token = bearer_token(credentials)
    return ChallengeOut.of(await _calls(ctx).create(token, body.game, body.opponents))


@router.get("", response_model=ChallengeList)
async def mine(ctx: Context, credentials: Credentials) -> ChallengeList:
    """The newest challenges the calling bot made or is named in, newest first."""
    found = await _calls(ctx).mine(bearer_token(credentials))
    return ChallengeList(challenges=[ChallengeOut.of(c) for c in found])


@router.put("/auto-accept", response_model=AutoAcceptOut,
            responses=error_responses(400, 404, 422))
async def auto_accept(ctx: Context, credentials: Credentials,
                      body: AutoAcceptIn) -> AutoAcceptOut:
    """Make the calling bot accept every challenge naming it from now on, or stop that."""
    calls = _calls(ctx)
    token = bearer_token(credentials)
    bot = await calls.bot(token)
    await calls.auto_accept(token, body.auto_accept)
    return AutoAcceptOut(bot=bot.name, auto_accept=body.auto_accept)


@router.get("/{challenge_id}", response_model=ChallengeOut, responses=error_responses(404))
async def one(ctx: Context, credentials: Credentials,
              challenge_id: ChallengeId) -> ChallengeOut:
    """One challenge the calling bot made or is named in: its status, answers, message
    (who declined and why) and, once started, its match."""
    return ChallengeOut.of(await _calls(ctx).get(bearer_token(credentials), challenge_id))


@router.post("/{challenge_id}/accept", response_model=ChallengeOut,
             responses=error_responses(403, 404, 409))
async def accept(ctx: Context, credentials: Credentials,
                 challenge_id: ChallengeId) -> ChallengeOut:
    """Accept a pending challenge naming the calling bot."""
    return ChallengeOut.of(await _calls(ctx).answer(bearer_token(credentials), challenge_id,
                                                    True))


@router.post("/{challenge_id}/decline", response_model=ChallengeOut,
             responses=error_responses(400, 403, 404, 409, 422))
async def decline(ctx: Context, credentials: Credentials, challenge_id: ChallengeId,
                  body: DeclineIn | None = None) -> ChallengeOut:
    """Decline a pending challenge naming the calling bot (the first decline ends it and
    its challenger reads why), or, as its challenger, withdraw it."""
    reason = body.reason if body is not None else ""
    return ChallengeOut.of(await _calls(ctx).answer(bearer_token(credentials), challenge_id,
                                                    False, reason))
