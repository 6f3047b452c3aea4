"""Read-only public endpoints: games, leaderboard, bots, matches and replays.

Nothing here reveals a secret of a match in progress: no seed, token or hand; results and
replays only once a match has ended.
"""

from __future__ import annotations

import asyncio
import re
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse, Response
from pydantic import BeforeValidator

from bullring.errors import ConfigurationError
from bullring.referee.registry import GAMES, UnknownGameError, get_game
from bullring.server.errors import (
    MatchNotFinishedError,
    ReplayNotFoundError,
    UnknownBotNameError,
    UnknownMatchError,
)
from bullring.server.store import MatchSummary
from bullring.server.transports.http.context import Context
from bullring.server.transports.http.errors import error_responses
from bullring.server.transports.http.models import (
    BotInfo,
    BotPage,
    BotRating,
    GameInfo,
    HeadToHead,
    Leaderboard,
    LeaderboardRow,
    MatchInfo,
    MatchPage,
    RatingPoint,
    TurnInfo,
    WaitingSeat,
)

router = APIRouter(prefix="/api", tags=["browse"])

RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
"""A date-time as RFC 3339 writes it (JSON Schema's ``date-time``): date, time, offset."""


def _rfc3339(value: object) -> object:
    """``value`` if it is an RFC 3339 date-time; refused otherwise (the framework would read
    a number as a Unix time, and a date-time without an offset as the server's own)."""
    if isinstance(value, str) and not RFC3339.fullmatch(value):
        raise ConfigurationError("an RFC 3339 date-time is wanted, such as 2024-05-01T12:00:00Z")
    return value


Instant = Annotated[datetime, BeforeValidator(_rfc3339)]
"""A date-time query parameter: RFC 3339 text only."""

MatchId = Annotated[str, Path(min_length=1, max_length=64, description="a match id")]
BotName = Annotated[str, Path(min_length=1, max_length=64, description="a bot's name")]
STATUSES = ("created", "running", "finished", "aborted")
HISTORY_LIMIT = 1000
"""How many of a bot's latest rated matches its page charts, and of its latest finished
matches its head-to-head table counts."""


def game_id(game: str) -> str:
    """The plain id of ``game`` (an id, or with its version, ``ID/1``), or a 404 error."""
    try:
        return get_game(game).id
    except (UnknownGameError, ValueError) as exc:
        raise UnknownGameError(f"no game {game!r}") from exc


@router.get("/games", response_model=list[GameInfo])
async def games() -> list[GameInfo]:
    """The games this server referees."""
    return [GameInfo(id=spec.id, title=spec.title, min_seats=spec.min_seats,
                     max_seats=spec.max_seats, opponents=list(spec.opponents),
                     view=view_path(spec.id) if spec.web_view else None)
            for spec in GAMES.values()]


def view_path(game: str) -> str:
    """Where the web page fetches ``game``'s own view script (``GameSpec.web_view``)."""
    return f"/games/{game}/view.js"


@router.get("/leaderboard", response_model=Leaderboard, responses=error_responses(404, 422))
async def leaderboard(ctx: Context, game: Annotated[str | None, Query(
        min_length=1, max_length=40,
        description="a game id; omitted: the first of GET /api/games")] = None) -> Leaderboard:
    """A game's ladder, best first by the conservative rating (ordinal)."""
    if game is None and not GAMES:
        raise UnknownGameError("no game is registered")
    plain = game_id(game) if game is not None else next(iter(GAMES.values())).id
    entries = await asyncio.to_thread(ctx.store.leaderboard, plain)
    return Leaderboard(game=plain, entries=[LeaderboardRow.of(rank, entry)
                                            for rank, entry in enumerate(entries, 1)])


@router.get("/bots", response_model=list[BotInfo])
async def bots(ctx: Context) -> list[BotInfo]:
    """The registered bots, with their rated games per game."""
    games: dict[str, dict[str, int]] = {}
    for spec in GAMES.values():
        for entry in await asyncio.to_thread(ctx.store.leaderboard, spec.id):
            games.setdefault(entry.bot, {})[spec.id] = entry.games
    return [BotInfo(name=row.name, owner=row.owner, version=row.version, enabled=row.enabled,
                    house=row.house, games=games.get(row.name, {}))
            for row in await asyncio.to_thread(ctx.store.bots)]


@router.get("/bots/{name}", response_model=BotPage, responses=error_responses(404))
async def bot(ctx: Context, name: BotName) -> BotPage:
    """One registered bot's page: its ratings now, its rating history (one point per rated
    match) and its head-to-head record against each opponent. Its matches are
    ``/api/matches?bot=NAME``."""
    try:
        row = await asyncio.to_thread(ctx.store.bot, name)
    except UnknownBotNameError as exc:
        raise UnknownBotNameError(f"no bot named {name!r} is registered") from exc
    ratings: list[BotRating] = []
    played: dict[str, int] = {}
    for spec in GAMES.values():
        board = await asyncio.to_thread(ctx.store.leaderboard, spec.id)
        for rank, entry in enumerate(board, 1):
            if entry.bot == name:
                played[spec.id] = entry.games
                ratings.append(BotRating(game=spec.id, rank=rank, games=entry.games,
                                         mu=entry.mu, sigma=entry.sigma,
                                         ordinal=entry.ordinal))
    changes = await asyncio.to_thread(lambda: ctx.store.rating_changes(
        bot=name, last=HISTORY_LIMIT))
    history = [RatingPoint(match_id=c.match_id, game=c.game, version=c.version, rank=c.rank,
                           mu_before=c.mu_before, sigma_before=c.sigma_before, mu=c.mu_after,
                           sigma=c.sigma_after, ordinal=c.mu_after - 3 * c.sigma_after,
                           recorded_at=c.recorded_at) for c in changes]
    finished, _ = await asyncio.to_thread(lambda: ctx.store.match_page(
        bot=name, status="finished", limit=HISTORY_LIMIT))
    info = BotInfo(name=row.name, owner=row.owner, version=row.version, enabled=row.enabled,
                   house=row.house, games=played)
    return BotPage(bot=info, ratings=ratings, history=history,
                   head_to_head=head_to_head(name, finished))


def head_to_head(name: str, matches: list[MatchSummary]) -> list[HeadToHead]:
    """``name``'s record against each registered opponent over ``matches`` (finished ones
    it sat in), by game, most played first."""
    records: dict[tuple[str, str], list[int]] = {}
    for match in matches:
        if match.ranks is None or name not in match.seat_bots:
            continue
        mine = match.ranks[match.seat_bots.index(name)]
        for seat, other in enumerate(match.seat_bots):
            if other is None or other == name:
                continue
            record = records.setdefault((match.game, other), [0, 0, 0])
            theirs = match.ranks[seat]
            record[0 if mine < theirs else 1 if mine == theirs else 2] += 1
    rows = [HeadToHead(opponent=other, game=game, matches=sum(r), wins=r[0], draws=r[1],
                       losses=r[2]) for (game, other), r in records.items()]
    return sorted(rows, key=lambda h: (h.game, -h.matches, h.opponent))


@router.get("/matches", response_model=MatchPage, responses=error_responses(404, 422))
async def matches(
    ctx: Context,
    game: Annotated[str | None, Query(min_length=1, max_length=40)] = None,
    status: Annotated[str | None, Query(pattern="^(created|running|finished|aborted)$")] = None,
    bot: Annotated[str | None, Query(min_length=1, max_length=100,
                                     description="matches with a seat of this name")] = None,
    since: Annotated[Instant | None, Query(description="created at or after")] = None,
    until: Annotated[Instant | None, Query(description="created before")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> MatchPage:
    """Matches, newest first, filtered and one page at a time."""
    plain = None if game is None else game_id(game)
    page, total = await asyncio.to_thread(
        lambda: ctx.store.match_page(game=plain, status=status, bot=bot, since=since,
                                     until=until, limit=limit, offset=offset))
    return MatchPage(matches=[MatchInfo.of(s, is_live(ctx, s.match_id)) for s in page],
                     total=total, limit=limit, offset=offset)


async def match_info(ctx: Context, match_id: str) -> MatchInfo:
    """The public summary of one match, or a 404 error."""
    page, _ = await asyncio.to_thread(lambda: ctx.store.match_page(match_id=match_id,
                                                                   limit=1))
    if not page:
        raise UnknownMatchError(f"no match {match_id!r}")
    return MatchInfo.of(page[0], is_live(ctx, match_id))


def is_live(ctx: Context, match_id: str) -> bool:
    """Whether ``match_id`` is being played by this server now."""
    runner = ctx.hub.runners.get(match_id)
    return runner is not None and not runner.done.is_set()


@router.get("/matches/{match_id}", response_model=MatchInfo, responses=error_responses(404))
async def match(ctx: Context, match_id: MatchId) -> MatchInfo:
    """One match: its game, status, seats and (once ended) its result."""
    return await match_info(ctx, match_id)


@router.get("/matches/{match_id}/turn", response_model=TurnInfo,
            responses=error_responses(404))
async def turn(ctx: Context, match_id: MatchId) -> TurnInfo:
    """Whose turn it is in a running match: the seats that must still answer the decision
    in progress and the milliseconds left to each (with a time bank, what is left of each
    one's bank, which its milliseconds left count). Public facts only: never a choice, a
    hand, or how long a seat took (those are in the replay once the match has ended)."""
    runner = ctx.hub.runners.get(match_id)
    if runner is None or runner.done.is_set():
        info = await match_info(ctx, match_id)  # 404 for an unknown match
        return TurnInfo(match_id=info.id, running=False, deadline_ms=None, waiting=[])
    names, clock = runner.config.seat_names, runner.clock
    return TurnInfo(match_id=match_id, running=runner.started.is_set(),
                    deadline_ms=round(runner.deadline_s * 1000),
                    waiting=[WaitingSeat(seat=seat, name=names[seat], ms_left=round(left * 1000),
                                         bank_ms=round(clock.bank_ms[seat]) if clock.banked
                                         else None)
                             for seat, left in runner.waiting()])


@router.get("/matches/{match_id}/replay", response_model=dict[str, Any],
            response_class=JSONResponse, responses=error_responses(404, 409))
async def replay(ctx: Context, match_id: MatchId) -> Response:
    """The replay (format bullring.replay/1) of a match that has ended; 409 before. Its
    ``events`` are the match log: every answer with its seat, step and action, how long the
    seat took (``ms``, for a bot that connects) and whether it was a default action
    (``default``, with ``why``: a timeout or a disconnected seat). These are published
    only once the match is over. The stored text is sent as it is, read once per match and
    shared by every reader."""
    info = await match_info(ctx, match_id)
    if info.status not in ("finished", "aborted"):
        raise MatchNotFinishedError(f"match {match_id!r} is {info.status}; its replay exists "
                                    f"once it ends")
    try:
        stored = await ctx.hub.replay_json(match_id)
    except UnknownMatchError as exc:
        raise ReplayNotFoundError(str(exc)) from exc
    return Response(stored, media_type="application/json")
