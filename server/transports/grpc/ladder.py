"""LadderService: what anyone may read of the ladder, over gRPC, without a token.

The same facts as the HTTP API's public endpoints (server/transports/http/browse.py and
server/transports/http/tournaments.py): the leaderboard, the registered bots, the match log
(results only
once a match has ended), the replays of matches that ended and the live tournaments. Nothing
here reveals a secret of a match in progress.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import grpc

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.registry import UnknownGameError, get_game
from bullring.server.errors import (
    InvalidRequestError,
    MatchNotFinishedError,
    NotFoundError,
    UnknownMatchError,
)
from bullring.server.store import MatchSummary, Store
from bullring.server.store.times import ms
from bullring.server.tournaments.views import page_of, tournament_to_proto
from bullring.server.transports.grpc.calls import Context, unary_method

STATUSES = ("created", "running", "finished", "aborted")
"""A match's statuses."""


class LadderService:
    """GetLeaderboard, ListBots, ListMatches, GetReplay and GetTournament."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def handler(self) -> grpc.GenericRpcHandler:
        """The generic handler serving this service's methods."""
        work: dict[str, Callable[[Any], Any]] = {
            "GetLeaderboard": self.leaderboard,
            "ListBots": self.bots,
            "ListMatches": self.matches,
            "GetReplay": self.replay,
            "GetTournament": self.tournament,
        }
        return grpc.method_handlers_generic_handler(wire.LADDER_SERVICE, {
            name: grpc.unary_unary_rpc_method_handler(
                unary_method(request, _threaded(work[name])),
                response_serializer=response.SerializeToString)
            for name, (request, response) in wire.LADDER_METHODS.items()})

    def leaderboard(self, request: pb.GetLeaderboardRequest) -> pb.GetLeaderboardResponse:
        """A game's rated, enabled bots, best conservative rating first."""
        game = _game(request.game)
        return pb.GetLeaderboardResponse(game=game, entries=[
            pb.LeaderboardEntry(bot=e.bot, version=e.version, games=e.games, mu=e.mu,
                                sigma=e.sigma, ordinal=e.ordinal)
            for e in self.store.leaderboard(game)])

    def bots(self, request: pb.ListBotsRequest) -> pb.ListBotsResponse:
        """The registered bots, by name."""
        return pb.ListBotsResponse(bots=[
            pb.RegisteredBot(name=b.name, owner=b.owner, version=b.version, enabled=b.enabled,
                             house=b.house or "", current_match=b.current_match or "")
            for b in self.store.bots()])

    def matches(self, request: pb.ListMatchesRequest) -> pb.ListMatchesResponse:
        """One page of the match log, newest first."""
        if request.status and request.status not in STATUSES:
            raise InvalidRequestError(f"unknown status {request.status!r}; known: "
                                  f"{', '.join(STATUSES)}")
        if not 0 <= request.limit <= 1000 or request.offset < 0:
            raise InvalidRequestError("limit is 1 to 1000 (0: 50) and offset at least 0")
        page, total = self.store.match_page(
            game=_game(request.game) if request.game else None,
            status=request.status or None, bot=request.bot or None,
            since=_when(request.since_ms), until=_when(request.until_ms),
            limit=request.limit or 50, offset=request.offset)
        return pb.ListMatchesResponse(matches=[_summary(s) for s in page], total=total)

    def replay(self, request: pb.GetReplayRequest) -> pb.GetReplayResponse:
        """The replay of a match that has ended."""
        page, _ = self.store.match_page(match_id=request.match_id, limit=1)
        if not page:
            raise UnknownMatchError(f"no match {request.match_id!r}")
        if page[0].status not in ("finished", "aborted"):
            raise MatchNotFinishedError(f"match {request.match_id!r} is {page[0].status}; "
                                        f"its replay exists once it ends")
        return pb.GetReplayResponse(replay=self.store.replay_text(request.match_id).encode())

    def tournament(self, request: pb.GetTournamentRequest) -> pb.GetTournamentResponse:
        """A live tournament: its standings so far and its schedule."""
        row = self.store.tournament(request.tournament_id)
        if row is None:
            raise NotFoundError(f"no tournament {request.tournament_id!r}")
        offset, limit = page_of(request.schedule_offset, request.schedule_limit)
        return pb.GetTournamentResponse(tournament=tournament_to_proto(row, offset, limit))


def _game(name: str) -> str:
    try:
        return get_game(name).id
    except UnknownGameError:
        raise UnknownGameError(f"no game {name!r}") from None


def _when(ms: int) -> datetime | None:
    return datetime.fromtimestamp(ms / 1000, UTC) if ms else None


def _summary(s: MatchSummary) -> pb.MatchSummary:
    return pb.MatchSummary(match_id=s.match_id, game=s.game, status=s.status,
                           seats=s.seat_names, created_ms=ms(s.created_at),
                           finished_ms=ms(s.finished_at), totals=s.totals or (),
                           ranks=s.ranks or (), termination=s.termination or "",
                           rated=s.rated, humans=s.humans)


def _threaded(work: Callable[[Any], Any]) -> Callable[[Any, Context], Awaitable[Any]]:
    async def run(request: Any, _context: Context) -> Any:
        return await asyncio.to_thread(work, request)
    return run
