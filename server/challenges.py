"""Practice matches and challenges, the same over gRPC (ChallengeService) and HTTP
(``/api/challenges``).

A registered bot (its token) challenges named opponents to an unrated match of a game:
house bots (``house:greedy``) or registered bots. A practice match names only house bots
and is accepted at once; a registered opponent's owner accepts or declines with that bot's
token, or sets the bot to accept every challenge. Once accepted, the ladder seats the match
as soon as every registered bot in it waits on the game's ladder (``Join(ladder=GAME)``),
before any rated table; it is stored unrated (``rated`` false in MatchStarted, the match
log and the replay) and never changes a rating. The first decline ends the challenge; its
status and message say who declined and why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import grpc

from client_sdk import wire
from client_sdk.generated.bullring.v2 import referee_pb2 as pb
from server.errors import InvalidChallengeError, NotAuthenticatedError, NotFoundError
from server.grpc_calls import Context, required_token, unary_method
from server.hub import MatchHub
from server.ladder import Ladder
from server.ladder_access import ms
from server.models import BotRow
from server.store import Challenge, UnknownBotNameError

MAX_OPPONENTS = 16
"""The most opponents a challenge may name (beyond every game's table)."""


class Challenges:
    """The challenge calls, for the bot whose token each one carries."""

    def __init__(self, hub: MatchHub, ladder: Ladder) -> None:
        self.hub = hub
        self.ladder = ladder

    async def bot(self, token: str) -> BotRow:
        """The registered bot ``token`` belongs to (UNAUTHENTICATED otherwise)."""
        found = await self.hub.bot_for_token(token) if token.startswith("bot_") else None
        if found is None:
            raise NotAuthenticatedError("this is not a registered bot's token")
        return found

    async def create(self, token: str, game: str, opponents: Sequence[str]) -> Challenge:
        """Challenge ``opponents`` (in seat order after the caller) to a match of ``game``."""
        bot = await self.bot(token)
        if not opponents or len(opponents) > MAX_OPPONENTS:
            raise InvalidChallengeError(f"name 1 to {MAX_OPPONENTS} opponents: house:KIND or "
                                        f"registered bots")
        if any(not 0 < len(name) <= 72 for name in opponents):
            raise InvalidChallengeError("an opponent is house:KIND or a registered bot's name "
                                        "(1-64 characters)")
        made = await asyncio.to_thread(self.ladder.challenge, bot, game, list(opponents))
        if made.status == "accepted":
            self.ladder.answered()
        return made

    async def mine(self, token: str) -> list[Challenge]:
        """The newest challenges the caller made or is named in, newest first."""
        bot = await self.bot(token)
        return await asyncio.to_thread(self.hub.store.challenges, bot.name)

    async def get(self, token: str, challenge_id: str) -> Challenge:
        """One challenge the caller made or is named in."""
        bot = await self.bot(token)
        found = await asyncio.to_thread(self.hub.store.challenge, _checked(challenge_id))
        if bot.name not in found.bots:
            raise NotFoundError(f"no challenge {challenge_id!r} names {bot.name!r}")
        return found

    async def answer(self, token: str, challenge_id: str, accept: bool,
                     reason: str = "") -> Challenge:
        """Accept or decline a challenge naming the caller; its challenger declining it
        withdraws it."""
        bot = await self.bot(token)
        answered = await asyncio.to_thread(self.hub.store.answer_challenge,
                                           _checked(challenge_id), bot.name, accept, reason)
        if answered.status == "accepted":
            self.ladder.answered()
        return answered

    async def auto_accept(self, token: str, on: bool) -> None:
        """Whether the caller accepts every challenge naming it without being asked (the
        challenges already pending still wait for an answer)."""
        bot = await self.bot(token)
        try:
            await asyncio.to_thread(self.hub.store.set_auto_accept, bot.name, on)
        except UnknownBotNameError as exc:
            raise NotFoundError(str(exc)) from None


def _checked(challenge_id: str) -> str:
    if not 0 < len(challenge_id) <= 64 or "\x00" in challenge_id:
        raise NotFoundError(f"no challenge {challenge_id[:64]!r}")
    return challenge_id


def challenge_to_proto(challenge: Challenge) -> pb.Challenge:
    """The wire form of ``challenge``."""
    return pb.Challenge(challenge_id=challenge.id, game=challenge.game,
                        challenger=challenge.challenger, opponents=challenge.opponents,
                        answers=challenge.answers, status=challenge.status,
                        message=challenge.message, match_id=challenge.match_id or "",
                        created_ms=ms(challenge.created_at))


class ChallengeService:
    """ChallengeService over gRPC: each call carries a registered bot's token."""

    def __init__(self, challenges: Challenges) -> None:
        self.challenges = challenges

    def handler(self) -> grpc.GenericRpcHandler:
        """The generic handler serving this service's methods."""
        calls = self.challenges
        work: dict[str, Callable[[str, Any], Awaitable[Any]]] = {
            "CreateChallenge": lambda t, r: _one(pb.CreateChallengeResponse, calls.create(
                t, r.game, list(r.opponents))),
            "ListChallenges": lambda t, r: _many(calls.mine(t)),
            "GetChallenge": lambda t, r: _one(pb.GetChallengeResponse,
                                              calls.get(t, r.challenge_id)),
            "AnswerChallenge": lambda t, r: _one(pb.AnswerChallengeResponse, calls.answer(
                t, r.challenge_id, r.accept, r.reason)),
            "SetAutoAccept": lambda t, r: _done(calls.auto_accept(t, r.auto_accept)),
        }
        return grpc.method_handlers_generic_handler(wire.CHALLENGE_SERVICE, {
            name: grpc.unary_unary_rpc_method_handler(
                unary_method(request, _with_token(work[name]), _token_given),
                response_serializer=response.SerializeToString)
            for name, (request, response) in wire.CHALLENGE_METHODS.items()})


async def _one(response: Any, call: Awaitable[Challenge]) -> Any:
    return response(challenge=challenge_to_proto(await call))


async def _many(call: Awaitable[list[Challenge]]) -> pb.ListChallengesResponse:
    return pb.ListChallengesResponse(challenges=[challenge_to_proto(c) for c in await call])


async def _done(call: Awaitable[None]) -> pb.SetAutoAcceptResponse:
    await call
    return pb.SetAutoAcceptResponse()


async def _token_given(context: Context) -> None:
    """Refuse a call without a token before its request is read."""
    required_token(context, "BOT_TOKEN")


def _with_token(work: Callable[[str, Any], Awaitable[Any]]
                ) -> Callable[[Any, Context], Awaitable[Any]]:
    """``work`` given the call's bot token (UNAUTHENTICATED without one) and its request."""
    async def run(request: Any, context: Context) -> Any:
        return await work(required_token(context, "BOT_TOKEN"), request)
    return run
