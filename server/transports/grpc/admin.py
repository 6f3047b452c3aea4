"""AdminService: the bot registry, match creation and live tournaments over gRPC, for
callers holding the admin token."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.errors import NoLadderError, NotAdminError
from bullring.server.ladder.seating import Ladder
from bullring.server.match.setup import create_match
from bullring.server.store import Store
from bullring.server.tournaments.live import DEFAULT_WAIT_S, cancel_tournament
from bullring.server.tournaments.views import tournament_to_proto
from bullring.server.transports.grpc.calls import Context, required_token, unary_method


class AdminService:
    """RegisterBot, NewBotVersion, SetBotEnabled, RotateBotToken, CreateMatch,
    RotateAdminToken, CreateTournament and CancelTournament; each checks the admin token
    (UNAUTHENTICATED without one, PERMISSION_DENIED with a wrong one)."""

    def __init__(self, store: Store, ladder: Ladder | None = None) -> None:
        self.store = store
        self.ladder = ladder
        """Told of a rotated token or a disabled bot, so its streams end at once."""

    async def _admin(self, context: Context) -> None:
        """Refuse a call without the admin token."""
        token = required_token(context, "ADMIN_TOKEN")
        if not await asyncio.to_thread(self.store.is_admin_token, token):
            raise NotAdminError()

    def _method(self, name: str, request_type: Any, work: Callable[[Any], Any]
                ) -> Callable[[bytes, Context], Awaitable[Any]]:
        async def handle(request: Any, _context: Context) -> Any:
            # Not retried when unsafe to repeat (a new bot, a new token): the caller decides.
            response = await asyncio.to_thread(work, request)
            self._after(name, request)
            return response
        return unary_method(request_type, handle, self._admin)

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
            raise NoLadderError("this server runs no ladder")
        wait_s = request.wait_s if request.HasField("wait_s") else DEFAULT_WAIT_S
        row = self.ladder.tournaments.create(request.game, request.format, list(request.bots),
                                             request.games, request.seats or None, wait_s,
                                             request.pace_ms)
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


def _enable(store: Store, name: str, enabled: bool) -> pb.SetBotEnabledResponse:
    store.set_enabled(name, enabled)
    return pb.SetBotEnabledResponse()


def _create_match(store: Store, request: pb.CreateMatchRequest) -> pb.CreateMatchResponse:
    """Register a match; an unset seed (0) deals from a fresh random one, as over HTTP. A
    person's seat (``humans``) comes back with its play page."""
    created = create_match(store, request.game, request.seats, dict(request.settings),
                           request.seed or None, dict(request.house), list(request.humans))
    return pb.CreateMatchResponse(
        match_id=created.match_id, tokens=[token or "" for token in created.tokens],
        seat_names=created.seat_names,
        play=[created.play_path(seat) or "" for seat in range(len(created.seat_names))])
