"""A person takes a seat in the browser: the play page, and the route behind the web page's
"play against the bots" button.

The person plays exactly as an HTTP bot does (server/transports/http/play.py): the play page
long-polls
``/api/play/poll`` and answers with ``/api/play/answer``, carrying the seat token, so the
referee applies the same deadlines, default actions, strikes and reconnection. The token
travels in the link's fragment (``/play/MATCH#TOKEN``), which a browser never sends to a
server, so it is in no request line and no server log. These matches are unrated.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field, Strict, StrictStr

from bullring.referee.core import RefereeError
from bullring.referee.registry import get_game
from bullring.server.errors import (
    HourlyQuotaError,
    HumanMatchesOffError,
    MatchSetupError,
    OpenQuotaError,
    SettingOverCapError,
    TooManyMatchesError,
)
from bullring.server.match.setup import HUMAN_DEADLINE_MS, create_match
from bullring.server.quotas import address_key
from bullring.server.transports.http.browse import MatchId, match_info
from bullring.server.transports.http.context import Context
from bullring.server.transports.http.errors import error_responses
from bullring.server.transports.http.models import AS_WHOLE, JsonIn

router = APIRouter(tags=["people"])

WEB = Path(__file__).resolve().parents[2] / "web"
"""The web page's static files."""

UNJOINED_S = 120.0
"""A match made by the button that nobody joins for this long is aborted (it no longer
counts against the server's limit nor its address's)."""


class HumanMatchIn(JsonIn):
    """A match for one person against house bots."""
    game: StrictStr = Field(max_length=40, description="a game id (GET /api/games)")
    bots: list[StrictStr] = Field(default_factory=list, max_length=9, description=(
        "the house bots, in seat order after the person (seat 0); omitted: the game's own "
        "opponents for a person (GET /api/games, each game's opponents)"))
    deadline_ms: Annotated[int, Strict(), Field(ge=1000, le=60_000), AS_WHOLE] | None = Field(
        default=None, description=(
        f"time for each decision, in ms; omitted: {HUMAN_DEADLINE_MS}, or the server's cap "
        f"if lower"))
    settings: dict[StrictStr, StrictStr] = Field(
        default_factory=dict, max_length=10,
        description='the game\'s settings by name, as text, e.g. {"rounds": "1"}')


class HumanMatchOut(BaseModel):
    """The person's match: where to play it. ``play`` holds the seat token: open it, and
    show it to nobody."""

    match_id: str
    game: str
    seat: int = Field(description="the person's seat (0)")
    seat_names: list[str]
    deadline_ms: int
    play: str = Field(description="the play page's path with the seat token in its fragment: "
                                  "/play/MATCH_ID#TOKEN")


OPEN_RETRY_S = 30
"""What Retry-After says when the server or an address has as many matches open as it may:
a match ends, or is aborted unjoined, in its own time."""


async def _open_matches(ctx: Context) -> list[str]:
    """The addresses of the button's matches still open, one entry per match; those that
    ended are forgotten, and those nobody joined for UNJOINED_S are aborted."""
    now = time.monotonic()
    for match_id, (made, _) in list(ctx.human_matches.items()):
        status = (await match_info(ctx, match_id)).status
        if status == "created" and now - made >= UNJOINED_S:
            await asyncio.to_thread(ctx.store.set_status, match_id, "aborted")
            status = "aborted"
        if status in ("finished", "aborted"):
            del ctx.human_matches[match_id]
    return [address for _, address in ctx.human_matches.values()]


@router.post("/api/human-matches", response_model=HumanMatchOut, status_code=201,
             responses=error_responses(422, refusals=(
                 MatchSetupError, SettingOverCapError, HumanMatchesOffError,
                 TooManyMatchesError, OpenQuotaError, HourlyQuotaError)))
async def create(ctx: Context, request: Request, body: HumanMatchIn) -> HumanMatchOut:
    """Make a match for one person (seat 0) against house bots, unrated, with a deadline
    for people (30 s unless ``deadline_ms`` says otherwise). The answer's ``play`` is the
    play page with the seat token: the only place the token is ever shown.

    No token is needed, so the work is bounded per address: its settings within the
    server's caps (400 ``setting_over_cap``), a few matches open at once per address and a
    few made per hour (429 ``open_quota``, ``hourly_quota`` with Retry-After), and a few
    open on the whole server (429 ``too_many_matches``)."""
    if ctx.human_limit <= 0:
        raise HumanMatchesOffError("this server makes no matches for people "
                                   "(bullring serve --human-matches 0)")
    address = address_key(request.client.host if request.client else None)
    ctx.human_hourly.take(address)
    async with ctx.human_lock:  # counted and made one at a time: no two pass one count
        open_now = await _open_matches(ctx)
        if len(open_now) >= ctx.human_limit:
            raise TooManyMatchesError(f"{ctx.human_limit} matches for people are open on this "
                                      f"server; try again when one has ended", OPEN_RETRY_S)
        mine = open_now.count(address)
        allowed = ctx.quotas.human_open_per_address
        if allowed and mine >= allowed:
            raise OpenQuotaError(f"{mine} matches for people are open from this address "
                                 f"(bullring serve --human-open-per-address {allowed}); try "
                                 f"again when one has ended", OPEN_RETRY_S)
        try:
            spec = get_game(body.game)
        except RefereeError as exc:
            raise MatchSetupError(str(exc)) from exc
        game = spec.id
        bots = body.bots or list(spec.opponents)
        if not bots:
            raise MatchSetupError(f"{game} has no house bots to play a person by default: "
                                  f"name them (bots)")
        deadline_ms = body.deadline_ms
        if deadline_ms is None:
            deadline_ms = min(HUMAN_DEADLINE_MS, ctx.caps.deadline_ms)
        settings = {**body.settings, "deadline_ms": str(deadline_ms)}
        created = await asyncio.to_thread(
            create_match, ctx.store, game, 1 + len(bots), settings, None,
            {1 + i: name for i, name in enumerate(bots)}, (0,), ctx.caps)
        ctx.human_matches[created.match_id] = (time.monotonic(), address)
    play = created.play_path(0)
    assert play is not None  # seat 0 is the person's
    return HumanMatchOut(match_id=created.match_id, game=game, seat=0,
                         seat_names=list(created.seat_names), deadline_ms=deadline_ms,
                         play=play)


@router.get("/play/{match_id}", include_in_schema=False)
async def page(match_id: MatchId) -> FileResponse:
    """The play page of a seat of ``match_id``; its script reads the seat token from the
    address's fragment."""
    return FileResponse(WEB / "play.html", headers={"Cache-Control": "no-cache"})
