"""The ladder as the commands see it, on the database or on a running server.

``LocalLadder`` opens the database (``--db``); ``RemoteLadder`` asks a server over gRPC
(``--server``): the public reads need nothing, the changes need the admin token. Both give
the same plain values, so a command prints the same lines either way.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from bullring import commandline as cli
from bullring.server.cli import options
from bullring.server.store.times import iso, ms

if TYPE_CHECKING:
    from bullring.server.store import MatchSummary, Store

Row = dict[str, Any]
"""One row of a listing, as plain JSON values."""

PAGE = 100
"""Matches asked for per call when listing them all."""


class LadderAccess(Protocol):
    """What the ladder commands do, wherever the ladder is."""

    def leaderboard(self, game: str) -> list[Row]:
        """A game's rated bots, best conservative estimate first."""

    def bots(self) -> list[Row]:
        """The registered bots, by name."""

    def matches(self, *, bot: str | None, since: datetime | None, until: datetime | None,
                game: str | None, status: str | None, limit: int) -> list[Row]:
        """The match log, newest first."""

    def finished_match_ids(self) -> Iterator[str]:
        """Every finished match, newest first."""

    def replay(self, match_id: str) -> dict[str, Any]:
        """A finished match's replay."""

    def add_bot(self, name: str, owner: str) -> str:
        """Register a bot; its token."""

    def new_version(self, name: str) -> int:
        """Start a bot's new version; its number."""

    def set_enabled(self, name: str, enabled: bool) -> None:
        """Enable or disable a bot."""

    def rotate_token(self, name: str) -> str:
        """A bot's new token."""

    def create_match(self, game: str, seats: int, settings: Mapping[str, str],
                     seed: int | None, house: Mapping[int, str], humans: Sequence[int] = ()
                     ) -> tuple[str, list[str | None]]:
        """Store a match with a person in each seat of ``humans``; its id and a token per
        seat (None: a house seat)."""

    def rotate_admin_token(self) -> str:
        """A new admin token (the old one stops working)."""

    def create_tournament(self, game: str, format: str, bots: list[str], games: int,
                          seats: int | None, wait_s: float | None, pace_ms: int = 0
                          ) -> Row:
        """Start a live tournament; it as ``tournament`` shows it."""

    def tournament(self, tournament_id: str) -> Row:
        """A live tournament: its standings so far and its schedule."""

    def cancel_tournament(self, tournament_id: str) -> Row:
        """Cancel a running tournament; it, cancelled."""


def access(args: argparse.Namespace) -> LadderAccess:
    """The ladder named by the command's ``--server`` or ``--db``."""
    if getattr(args, "server", None):
        return RemoteLadder(args.server, getattr(args, "admin_token", None))
    return LocalLadder(options.open_store(args))


def _summary_row(s: MatchSummary) -> Row:
    return {"match_id": s.match_id, "game": s.game, "status": s.status,
            "created_at": iso(ms(s.created_at)), "finished_at": iso(ms(s.finished_at)),
            "seats": list(s.seat_names),
            "totals": None if s.totals is None else list(s.totals), "rated": s.rated,
            "humans": list(s.humans)}


class LocalLadder:
    """The ladder in a database this process opens."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def leaderboard(self, game: str) -> list[Row]:
        """A game's rated bots, best conservative estimate first."""
        return [{k: getattr(e, k) for k in e.__slots__} for e in self.store.leaderboard(game)]

    def bots(self) -> list[Row]:
        """The registered bots, by name."""
        return [{"name": b.name, "owner": b.owner, "version": b.version, "enabled": b.enabled,
                 "house": b.house, "playing": b.current_match} for b in self.store.bots()]

    def matches(self, *, bot: str | None, since: datetime | None, until: datetime | None,
                game: str | None, status: str | None, limit: int) -> list[Row]:
        """The match log, newest first."""
        page, _ = self.store.match_page(bot=bot, since=since, until=until, game=game,
                                        status=status, limit=limit)
        return [_summary_row(s) for s in page]

    def finished_match_ids(self) -> Iterator[str]:
        """Every finished match, newest first."""
        offset = 0
        while True:
            page, _ = self.store.match_page(status="finished", limit=PAGE, offset=offset)
            yield from (s.match_id for s in page)
            if len(page) < PAGE:
                return
            offset += PAGE

    def replay(self, match_id: str) -> dict[str, Any]:
        """A finished match's replay."""
        return self.store.replay(match_id)

    def add_bot(self, name: str, owner: str) -> str:
        """Register a bot; its token."""
        return self.store.add_bot(name, owner)

    def new_version(self, name: str) -> int:
        """Start a bot's new version; its number."""
        return self.store.new_version(name)

    def set_enabled(self, name: str, enabled: bool) -> None:
        """Enable or disable a bot."""
        self.store.set_enabled(name, enabled)

    def rotate_token(self, name: str) -> str:
        """A bot's new token."""
        return self.store.rotate_token(name)

    def create_match(self, game: str, seats: int, settings: Mapping[str, str],
                     seed: int | None, house: Mapping[int, str], humans: Sequence[int] = ()
                     ) -> tuple[str, list[str | None]]:
        """Store a match with a person in each seat of ``humans``; its id and a token per
        seat (None: a house seat)."""
        from bullring.server.match.setup import create_match

        created = create_match(self.store, game, seats, settings, seed, house, humans)
        return created.match_id, list(created.tokens)

    def rotate_admin_token(self) -> str:
        """A new admin token (the old one stops working)."""
        return self.store.rotate_admin_token()

    def create_tournament(self, game: str, format: str, bots: list[str], games: int,
                          seats: int | None, wait_s: float | None, pace_ms: int = 0
                          ) -> Row:
        """Store a live tournament: the servers on this database running ``game``'s ladder
        seat its games."""
        from bullring.server.tournaments import live as tournaments
        from bullring.server.tournaments.views import tournament_json

        row = tournaments.create_tournament(
            self.store, game, format, bots, games, seats,
            tournaments.DEFAULT_WAIT_S if wait_s is None else wait_s, pace_ms)
        return tournament_json(row)

    def tournament(self, tournament_id: str) -> Row:
        """A live tournament: its standings so far and its schedule."""
        from bullring.server.tournaments.views import tournament_json

        row = self.store.tournament(tournament_id)
        if row is None:
            raise cli.NotFoundError(f"no tournament {tournament_id!r}")
        return tournament_json(row)

    def cancel_tournament(self, tournament_id: str) -> Row:
        """Cancel a running tournament; it, cancelled."""
        from bullring.server.tournaments.live import cancel_tournament
        from bullring.server.tournaments.views import tournament_json

        return tournament_json(cancel_tournament(self.store, tournament_id))


class RemoteLadder:
    """The ladder of a running server, over gRPC: reads on LadderService, changes on
    AdminService with the admin token."""

    def __init__(self, address: str, admin_token: str | None) -> None:
        self.address = address
        self.admin_token = admin_token

    def _call(self, service: str, method: str, request: Any, admin: bool = False) -> Any:
        import asyncio

        import grpc

        from bullring.contract import wire

        metadata: tuple[tuple[str, str], ...] = ()
        if admin:
            args = argparse.Namespace(admin_token=self.admin_token)
            metadata = (("authorization", f"Bearer {options.admin_token(args)}"),)

        async def call() -> Any:
            async with grpc.aio.insecure_channel(self.address) as channel:
                stubs = wire.admin_stub(channel) if service == "admin" else \
                    wire.ladder_stub(channel)
                return await stubs[method](request, metadata=metadata, timeout=30)

        try:
            return asyncio.run(call())
        except grpc.aio.AioRpcError as exc:
            raise _rpc_error(self.address, exc) from None

    def _admin(self, method: str, request: Any) -> Any:
        return self._call("admin", method, request, admin=True)

    @staticmethod
    def _pb() -> Any:
        from bullring.contract.generated.bullring.v2 import referee_pb2

        return referee_pb2

    def leaderboard(self, game: str) -> list[Row]:
        """A game's rated bots, best conservative estimate first."""
        reply = self._call("ladder", "GetLeaderboard",
                           self._pb().GetLeaderboardRequest(game=game))
        return [{"bot": e.bot, "version": e.version, "games": e.games, "mu": e.mu,
                 "sigma": e.sigma, "ordinal": e.ordinal} for e in reply.entries]

    def bots(self) -> list[Row]:
        """The registered bots, by name."""
        reply = self._call("ladder", "ListBots", self._pb().ListBotsRequest())
        return [{"name": b.name, "owner": b.owner, "version": b.version, "enabled": b.enabled,
                 "house": b.house or None, "playing": b.current_match or None}
                for b in reply.bots]

    def _page(self, **filters: Any) -> list[Row]:
        reply = self._call("ladder", "ListMatches", self._pb().ListMatchesRequest(**filters))
        return [{"match_id": m.match_id, "game": m.game, "status": m.status,
                 "created_at": iso(m.created_ms), "finished_at": iso(m.finished_ms),
                 "seats": list(m.seats),
                 "totals": list(m.totals) if m.status in ("finished", "aborted") and m.totals
                 else None, "rated": m.rated, "humans": list(m.humans)}
                for m in reply.matches]

    def matches(self, *, bot: str | None, since: datetime | None, until: datetime | None,
                game: str | None, status: str | None, limit: int) -> list[Row]:
        """The match log, newest first."""
        return self._page(bot=bot or "", since_ms=ms(since), until_ms=ms(until),
                          game=game or "", status=status or "", limit=limit)

    def finished_match_ids(self) -> Iterator[str]:
        """Every finished match, newest first."""
        offset = 0
        while True:
            page = self._page(status="finished", limit=PAGE, offset=offset)
            yield from (row["match_id"] for row in page)
            if len(page) < PAGE:
                return
            offset += PAGE

    def replay(self, match_id: str) -> dict[str, Any]:
        """A finished match's replay."""
        import json

        reply = self._call("ladder", "GetReplay", self._pb().GetReplayRequest(match_id=match_id))
        result: dict[str, Any] = json.loads(reply.replay)
        return result

    def add_bot(self, name: str, owner: str) -> str:
        """Register a bot; its token."""
        return str(self._admin("RegisterBot",
                               self._pb().RegisterBotRequest(name=name, owner=owner)).token)

    def new_version(self, name: str) -> int:
        """Start a bot's new version; its number."""
        return int(self._admin("NewBotVersion",
                               self._pb().NewBotVersionRequest(name=name)).version)

    def set_enabled(self, name: str, enabled: bool) -> None:
        """Enable or disable a bot."""
        self._admin("SetBotEnabled", self._pb().SetBotEnabledRequest(name=name,
                                                                      enabled=enabled))

    def rotate_token(self, name: str) -> str:
        """A bot's new token."""
        return str(self._admin("RotateBotToken",
                               self._pb().RotateBotTokenRequest(name=name)).token)

    def create_match(self, game: str, seats: int, settings: Mapping[str, str],
                     seed: int | None, house: Mapping[int, str], humans: Sequence[int] = ()
                     ) -> tuple[str, list[str | None]]:
        """Store a match with a person in each seat of ``humans``; its id and a token per
        seat (None: a house seat). Without a seed (or with 0) the server deals from a fresh
        random one."""
        reply = self._admin("CreateMatch", self._pb().CreateMatchRequest(
            game=game, seats=seats, settings=dict(settings), seed=seed or 0,
            house=dict(house), humans=list(humans)))
        return reply.match_id, [token or None for token in reply.tokens]

    def rotate_admin_token(self) -> str:
        """A new admin token (the old one stops working)."""
        return str(self._admin("RotateAdminToken", self._pb().RotateAdminTokenRequest()).token)

    def create_tournament(self, game: str, format: str, bots: list[str], games: int,
                          seats: int | None, wait_s: float | None, pace_ms: int = 0
                          ) -> Row:
        """Start a live tournament on the server."""
        reply = self._admin("CreateTournament", self._pb().CreateTournamentRequest(
            game=game, format=format, bots=bots, games=games, seats=seats or 0,
            wait_s=wait_s, pace_ms=pace_ms))
        return _tournament_row(reply.tournament)

    def tournament(self, tournament_id: str) -> Row:
        """A live tournament: its standings so far and its schedule."""
        return _tournament_row(self._call("ladder", "GetTournament", self._pb()
                                          .GetTournamentRequest(tournament_id=tournament_id))
                               .tournament)

    def cancel_tournament(self, tournament_id: str) -> Row:
        """Cancel a running tournament; it, cancelled."""
        return _tournament_row(self._admin("CancelTournament", self._pb()
                                           .CancelTournamentRequest(tournament_id=tournament_id))
                               .tournament)


def _optional(message: Any, name: str) -> Any:
    return getattr(message, name) if message.HasField(name) else None


STANDING_FIELDS = ("bot", "games", "units", "win_share", "win_share_ci95", "mean_score",
                   "mean_score_ci95", "vs_field", "vs_field_ci95", "mean_rank", "forfeited")
"""A standing's fields, in the order the database holds them."""


def _tournament_row(t: Any) -> Row:
    """A wire Tournament as the plain values ``LocalLadder.tournament`` gives."""
    schedule = []
    for g in t.schedule:
        game = {"table": g.table, "deal": g.deal, "rotation": g.rotation,
                "seats": list(g.seats), "status": g.status, "match_id": g.match_id or None,
                "absent": list(g.absent), "totals": list(g.totals) or None,
                "ranks": list(g.ranks) or None}
        if g.HasField("seed"):
            game["seed"] = g.seed
        schedule.append(game)
    return {"tournament_id": t.tournament_id, "game": t.game, "format": t.format,
            "bots": list(t.bots), "games": t.games, "seats": t.seats, "pace_ms": t.pace_ms,
            "status": t.status,
            "played": t.played, "total": t.total, "created_at": iso(t.created_ms),
            "finished_at": iso(t.finished_ms), "forfeited": list(t.forfeited),
            "standings": [{k: _optional(s, k) if k.endswith("_ci95") else getattr(s, k)
                           for k in STANDING_FIELDS} for s in t.standings],
            "schedule": schedule}


def _rpc_error(address: str, exc: Any) -> cli.CommandError:
    """A gRPC status as the command's error: refused, unreachable, not found or bad input."""
    import grpc

    code, details = exc.code(), exc.details() or "(no details)"
    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return cli.RefusedError(f"{address} refused the admin token: {details}")
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return cli.UnreachableError(f"no answer from {address}: {details}")
    if code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.ALREADY_EXISTS):
        return cli.NotFoundError(details)
    if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION):
        return cli.UsageError(details)
    return cli.CommandError(f"{address}: {code.name}: {details}")
