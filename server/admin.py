"""AdminService: the bot registry, match creation and live tournaments over gRPC, for
callers holding the admin token."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from sqlalchemy.exc import OperationalError

from client_sdk import wire
from client_sdk.generated.bullring.v2 import referee_pb2 as pb
from server.db_retry import DatabaseUnavailableError
from server.ladder import Ladder
from server.match_setup import MatchSetupError, create_match
from server.service import UNAVAILABLE, bearer_token
from server.store import BotError, BotNameTakenError, Store, UnknownBotNameError
from server.tournament_views import tournament_to_proto
from server.tournaments import (
    DEFAULT_WAIT_S,
    TournamentRequestError,
    cancel_tournament,
)


class AdminService:
    """RegisterBot, NewBotVersion, SetBotEnabled, RotateBotToken, CreateMatch,
    RotateAdminToken, CreateTournament and CancelTournament; each checks the admin token
    (UNAUTHENTICATED without one, PERMISSION_DENIED with a wrong one)."""

    def __init__(self, store: Store, ladder: Ladder | None = None) -> None:
        self.store = store
        self.ladder = ladder
        """Told of a rotated token or a disabled bot, so its streams end at once."""

    async def _call(self, raw: bytes, context: grpc.aio.ServicerContext[Any, Any],
                    request_type: Any, work: Callable[[Any], Any]) -> Any:
        token = bearer_token(context.invocation_metadata())
        if token is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                                "missing 'authorization: Bearer ADMIN_TOKEN' metadata")
        try:
            admin = await asyncio.to_thread(self.store.is_admin_token, str(token))
        except DatabaseUnavailableError:
            await context.abort(grpc.StatusCode.UNAVAILABLE, UNAVAILABLE)
        if not admin:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "not the admin token")
        request = request_type()
        try:
            request.ParseFromString(raw)
        except (DecodeError, RuntimeWarning, ValueError):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"malformed {request_type.DESCRIPTOR.name}")
        try:
            return await asyncio.to_thread(work, request)
        except UnknownBotNameError as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
        except BotNameTakenError as exc:
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, str(exc))
        except (BotError, MatchSetupError) as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except TournamentRequestError as exc:
            await context.abort(TOURNAMENT_CODES[exc.code], str(exc))
        except (DatabaseUnavailableError, OperationalError):
            # Not retried when unsafe to repeat (a new bot, a new token): the caller decides.
            await context.abort(grpc.StatusCode.UNAVAILABLE, UNAVAILABLE)

    def _method(self, name: str, request_type: Any, work: Callable[[Any], Any]
                ) -> Callable[[bytes, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]:
        async def handle(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            response = await self._call(raw, context, request_type, work)
            self._after(name, request_type.FromString(raw))
            return response
        return handle

    def _after(self, method: str, request: Any) -> None:
        """After a rotated token or a disabled bot, end the bot's streams here at once;
        after a new tournament, seat its first game."""
        if self.ladder is None:
            return
        if method == "CreateTournament":
            self.ladder.poke()
        elif method == "RotateBotToken":
            self.ladder.revoke(request.name, pb.CLOSE_REASON_TOKEN_REVOKED)
        elif method == "SetBotEnabled" and not request.enabled:
            self.ladder.revoke(request.name, pb.CLOSE_REASON_BOT_DISABLED)

    def _create_tournament(self, request: pb.CreateTournamentRequest
                           ) -> pb.CreateTournamentResponse:
        """Start a live tournament on this server's ladder (a blocking call)."""
        if self.ladder is None:
            raise TournamentRequestError(409, "this server runs no ladder")
        wait_s = request.wait_s if request.HasField("wait_s") else DEFAULT_WAIT_S
        row = self.ladder.tournaments.create(request.game, request.format, list(request.bots),
                                             request.games, request.seats or None, wait_s)
        return pb.CreateTournamentResponse(tournament=tournament_to_proto(row))

    def handler(self) -> grpc.GenericRpcHandler:
        """The generic handler serving this service's methods."""
        store = self.store
        work: dict[str, Callable[[Any], Any]] = {
            "RegisterBot": lambda r: pb.RegisterBotResponse(token=store.add_bot(r.name, r.owner)),
            "NewBotVersion": lambda r: pb.NewBotVersionResponse(
                version=store.new_version(r.name)),
            "SetBotEnabled": lambda r: _enable(store, r.name, r.enabled),
            "RotateBotToken": lambda r: pb.RotateBotTokenResponse(
                token=store.rotate_token(r.name)),
            "CreateMatch": lambda r: _create_match(store, r),
            "RotateAdminToken": lambda r: pb.RotateAdminTokenResponse(
                token=store.rotate_admin_token()),
            "CreateTournament": self._create_tournament,
            "CancelTournament": lambda r: pb.CancelTournamentResponse(
                tournament=tournament_to_proto(cancel_tournament(store, r.tournament_id))),
        }
        return grpc.method_handlers_generic_handler(wire.ADMIN_SERVICE, {
            name: grpc.unary_unary_rpc_method_handler(
                self._method(name, request, work[name]),
                response_serializer=response.SerializeToString)
            for name, (request, response) in wire.ADMIN_METHODS.items()})


TOURNAMENT_CODES = {400: grpc.StatusCode.INVALID_ARGUMENT, 404: grpc.StatusCode.NOT_FOUND,
                    409: grpc.StatusCode.FAILED_PRECONDITION}
"""A refused tournament request's gRPC status, by its HTTP status."""


def _enable(store: Store, name: str, enabled: bool) -> pb.SetBotEnabledResponse:
    store.set_enabled(name, enabled)
    return pb.SetBotEnabledResponse()


def _create_match(store: Store, request: pb.CreateMatchRequest) -> pb.CreateMatchResponse:
    """Register a match; an unset seed (0) deals from a fresh random one, as over HTTP."""
    created = create_match(store, request.game, request.seats, dict(request.settings),
                           request.seed or None, dict(request.house))
    return pb.CreateMatchResponse(match_id=created.match_id,
                                  tokens=[token or "" for token in created.tokens])
