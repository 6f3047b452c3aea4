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

from fastapi import APIRouter
from fastapi.responses import FileResponse
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from bullring.referee.core import RefereeError
from bullring.referee.registry import get_game
from bullring.server.errors import HumanMatchesOffError, MatchSetupError, TooManyMatchesError
from bullring.server.match.setup import HUMAN_DEADLINE_MS, create_match
from bullring.server.transports.http.browse import MatchId, match_info
from bullring.server.transports.http.context import Context
from bullring.server.transports.http.errors import error_responses

router = APIRouter(tags=["people"])

WEB = Path(__file__).resolve().parents[2] / "web"
"""The web page's static files."""

OPPONENTS = {"six_nimmt": ("greedy", "greedy", "random"),
             "no_thanks": ("threshold", "random", "never_take")}
"""The house bots a person plays against, by game, unless the request names others."""

UNJOINED_S = 600.0
"""A match made by the button that nobody joins for this long is aborted (it no longer
counts against the server's limit)."""


class HumanMatchIn(BaseModel):
    """A match for one person against house bots."""

    model_config = ConfigDict(extra="forbid")
    game: StrictStr = Field(max_length=40, description="six_nimmt or no_thanks")
    bots: list[StrictStr] = Field(default_factory=list, max_length=9, description=(
        "the house bots, in seat order after the person (seat 0); omitted: three, "
        "greedy, greedy, random for six_nimmt and threshold, random, never_take for "
        "no_thanks"))
    deadline_ms: StrictInt = Field(default=HUMAN_DEADLINE_MS, ge=1000, le=60_000,
                                   description="time for each decision, in ms")
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


async def _open_matches(ctx: Context) -> int:
    """How many of the button's matches are still open; those that ended are forgotten,
    and those nobody joined for UNJOINED_S are aborted."""
    now = time.monotonic()
    for match_id, made in list(ctx.human_matches.items()):
        status = (await match_info(ctx, match_id)).status
        if status == "created" and now - made >= UNJOINED_S:
            await asyncio.to_thread(ctx.store.set_status, match_id, "aborted")
            status = "aborted"
        if status in ("finished", "aborted"):
            del ctx.human_matches[match_id]
    return len(ctx.human_matches)


@router.post("/api/human-matches", response_model=HumanMatchOut, status_code=201,
             responses=error_responses(422, refusals=(MatchSetupError, HumanMatchesOffError,
                                                      TooManyMatchesError)))
async def create(ctx: Context, body: HumanMatchIn) -> HumanMatchOut:
    """Make a match for one person (seat 0) against house bots, unrated, with a deadline
    for people (30 s unless ``deadline_ms`` says otherwise). The answer's ``play`` is the
    play page with the seat token: the only place the token is ever shown."""
    if ctx.human_limit <= 0:
        raise HumanMatchesOffError("this server makes no matches for people "
                                   "(bullring serve --human-matches 0)")
    if await _open_matches(ctx) >= ctx.human_limit:
        raise TooManyMatchesError(f"{ctx.human_limit} matches for people are open on this server; "
                       f"try again when one has ended")
    try:
        game = get_game(body.game).id
    except RefereeError as exc:
        raise MatchSetupError(str(exc)) from exc
    bots = body.bots or list(OPPONENTS.get(game, ()))
    settings = {**body.settings, "deadline_ms": str(body.deadline_ms)}
    created = await asyncio.to_thread(
        create_match, ctx.store, game, 1 + len(bots), settings, None,
        {1 + i: name for i, name in enumerate(bots)}, (0,))
    ctx.human_matches[created.match_id] = time.monotonic()
    play = created.play_path(0)
    assert play is not None  # seat 0 is the person's
    return HumanMatchOut(match_id=created.match_id, game=game, seat=0,
                         seat_names=list(created.seat_names), deadline_ms=body.deadline_ms,
                         play=play)


@router.get("/play/{match_id}", include_in_schema=False)
async def page(match_id: MatchId) -> FileResponse:
    """The play page of a seat of ``match_id``; its script reads the seat token from the
    address's fragment."""
    return FileResponse(WEB / "play.html", headers={"Cache-Control": "no-cache"})
