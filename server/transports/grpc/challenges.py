"""ChallengeService over gRPC: practice matches and challenges (``bullring.server.challenges``)
for the registered bot whose token each call carries."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.challenges.offers import Challenges
from bullring.server.store import Challenge
from bullring.server.store.times import ms
from bullring.server.transports.grpc.calls import Context, required_token, unary_method


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
