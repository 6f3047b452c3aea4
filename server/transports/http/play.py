"""HTTP play: a bot without gRPC. The bearer token names a match's seat, or a registered bot
that plays a game's ladder (``?ladder=GAME``), one match after another.

- ``GET /api/play/stream``: Server-Sent Events, the same messages as BotService.Subscribe;
- ``GET /api/play/poll``: the same messages by long-poll (see server/transports/http/polling.py);
- ``POST /api/play/answer``: the same verdict as BotService.SubmitAnswer.

They attach to the match runner (or join the ladder) and submit through it exactly as the
gRPC servicer does, so decision ids, idempotent answers, deadlines, strikes, in-band
rejections and the rule that the newest connection of a token takes over are the same.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Hashable
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.sse import EventSourceResponse, ServerSentEvent

from bullring.contract import codec
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.contract.messages import Accepted
from bullring.referee.registry import UnknownGameError
from bullring.server.errors import (
    BotDisabledError,
    DatabaseUnavailableError,
    GameMismatchError,
    HouseBotError,
    InvalidRequestError,
    LadderNeedsBotTokenError,
    LadderRequiredError,
    MatchElsewhereError,
    MatchOverError,
    NoLadderError,
    NoSuchLadderError,
    NotAuthenticatedError,
    ShuttingDownError,
    UnknownMatchError,
)
from bullring.server.fleet.relay import RelayedSeat
from bullring.server.ladder.seating import LadderSession
from bullring.server.match.outbox import Outbox
from bullring.server.store.models import BotRow
from bullring.server.transports.http.context import Context, Credentials, bearer_token
from bullring.server.transports.http.errors import beyond_schema, error_responses
from bullring.server.transports.http.models import AnswerIn, PollResult, Verdict
from bullring.server.transports.http.polling import Connect
from bullring.server.transports.http.proto_json import to_json
from bullring.server.transports.http.serving import HANG_UP
from bullring.server.transports.stalls import guarded

router = APIRouter(prefix="/api/play", tags=["play"])

INT32 = range(-(2**31), 2**31)
"""The values a proto int32 (a card or a row on the gRPC wire) can carry."""

ANSWER_REFUSALS = (NotAuthenticatedError, UnknownMatchError, MatchOverError,
                   MatchElsewhereError, InvalidRequestError, DatabaseUnavailableError)
"""What an answer may be refused with (its verdict, accepted or rejected, is in-band)."""

CONNECT_REFUSALS = (*ANSWER_REFUSALS, LadderRequiredError, LadderNeedsBotTokenError,
                    BotDisabledError, HouseBotError, UnknownGameError, GameMismatchError,
                    NoSuchLadderError, NoLadderError, ShuttingDownError)
"""What joining a seat or a ladder may be refused with."""

FRAMEWORK = {400: "bad_request: the request could not be read"}
"""The framework's own refusals of a play route."""

Player = tuple[str, int] | BotRow
"""Who a bearer token names: a seat (match id, seat) or a registered bot."""


async def player(ctx: Context, credentials: Credentials) -> Player:
    """The seat or the registered bot the bearer token names (401 if none)."""
    token = bearer_token(credentials)
    found = await ctx.hub.identify(token)
    if found is None:
        raise NotAuthenticatedError(ctx.hub.refusal(token))
    if isinstance(found, BotRow):
        return await ctx.hub.bot_for_token(token, fresh=True) or found
    return found


Caller = Annotated[Player, Depends(player)]

LadderParam = Annotated[str | None, Query(
    max_length=40, description="with a registered bot's token: the id of the game whose "
                               "ladder to join (GET /api/games; omitted: the server's "
                               "ladder, if it runs one; required if it runs several)")]
MatchesParam = Annotated[int, Query(
    ge=0, le=2**31, description="with ladder: play this many matches, then the connection "
                                "ends (closed, CLOSE_REASON_MATCHES_PLAYED); 0: no limit")]
PracticeOnlyParam = Annotated[bool, Query(
    description="with ladder: never seat this connection at a rated table; it waits for the "
                "bot's practice matches and challenges (as Join.practice_only)")]
GamesParam = Annotated[str | None, Query(
    max_length=200, description="the ids of the games the bot plays, comma-separated "
                                "(GET /api/games): a seat or ladder of another game is "
                                "refused (409 game_mismatch) and stays free; omitted: any "
                                "game")]


def _games(games: str | None) -> list[str]:
    return [g.strip() for g in (games or "").split(",") if g.strip()]


async def _connection(ctx: Context, caller: Player, ladder: str | None, matches: int,
                      games: str | None, via: str, practice_only: bool = False
                      ) -> tuple[Hashable, Connect]:
    """Check that ``caller`` may connect as asked, before anything changes (4xx if not);
    return its connection key and what opens the connection."""
    wanted = _games(games)
    if isinstance(caller, BotRow):
        if ctx.ladder is None:
            raise NoLadderError("this server runs no ladder")
        hub_ladder, bot = ctx.ladder, caller
        ladder = hub_ladder.check(bot, ladder or "", wanted)

        def join() -> tuple[Outbox, Callable[[str], None]]:
            session: LadderSession = hub_ladder.join(bot, ladder, matches, wanted, via,
                                                     practice_only)
            return session.outbox, lambda reason: hub_ladder.leave(session, reason)

        return _key(bot), join
    if ladder:
        raise LadderNeedsBotTokenError("ladder= is for a registered bot's token; this token "
                                       "names a seat")
    match_id, seat = caller
    runner = await ctx.hub.seat_runner(match_id, seat, wanted)

    def attach() -> tuple[Outbox, Callable[[str], None]]:
        outbox, connection = runner.attach(seat, via=via)
        return outbox, lambda reason: runner.detach(seat, connection, reason)

    return _key(caller), attach


def _key(caller: Player) -> Hashable:
    """What identifies ``caller``'s long-poll connections: its bot, or its seat."""
    return ("bot", caller.name) if isinstance(caller, BotRow) else ("seat", *caller)


def _peer(request: Request) -> str:
    client = request.client
    return "unknown peer" if client is None else f"{client.host}:{client.port}"


async def stream_connection(ctx: Context, caller: Caller, request: Request,
                            ladder: LadderParam = None, matches: MatchesParam = 0,
                            games: GamesParam = None, practice_only: PracticeOnlyParam = False
                            ) -> AsyncIterator[tuple[Outbox, Callable[[str], None]]]:
    """The connection of an event stream, opened after every check and before its response
    starts (so a refusal is its 4xx JSON error, never a stream that drops), and closed once
    the response has ended whatever ended it."""
    _, connect = await _connection(ctx, caller, ladder, matches, games,
                                   f"HTTP stream from {_peer(request)}", practice_only)
    outbox, on_close = connect()
    try:
        yield outbox, on_close
    finally:
        on_close("HTTP stream closed")


StreamConnection = Annotated[tuple[Outbox, Callable[[str], None]], Depends(stream_connection)]
"""An event stream's connection: its outbox, and what ends it (told why)."""


@router.get("/stream", response_class=EventSourceResponse,
            responses=error_responses(codes=FRAMEWORK, refusals=CONNECT_REFUSALS))
async def stream(ctx: Context, connection: StreamConnection, request: Request
                 ) -> AsyncIterator[ServerSentEvent]:
    """Join the seat (or, with ``ladder`` and a registered bot's token, the ladder) and
    stream its messages as Server-Sent Events: the event name is the PlayResponse body
    (match_started, decision, event, match_ended, ladder_queued, closed, ...), the data is
    the PlayResponse as proto JSON, the id numbers them. Closing the stream disconnects the
    seat, like a gRPC stream; a newer connection with the same token ends this one (event
    ``closed``), and so does the server when a write waits ``--stall-timeout`` for the
    client to read (``closed``, CLOSE_REASON_STALLED; if the client still reads nothing, its
    connection is closed)."""
    outbox, on_close = connection
    client = request.scope.get("extensions", {}).get(HANG_UP)
    async with guarded(outbox, ctx.stall_s, on_close, ctx.metrics, "http_stream", client):
        number = 0
        while (raw := await outbox.get()) is not None:
            number += 1
            item = codec.to_proto(raw)
            yield ServerSentEvent(event=item.WhichOneof("body"), data=to_json(item),
                                  id=str(number))


@router.get("/poll", response_model=PollResult,
            responses=error_responses(codes=FRAMEWORK, refusals=CONNECT_REFUSALS),
            openapi_extra=beyond_schema(InvalidRequestError, "`after` greater than the `seq` "
                                        "of the connection's newest message"))
async def poll(ctx: Context, caller: Caller, request: Request, ladder: LadderParam = None,
               matches: MatchesParam = 0, games: GamesParam = None,
               practice_only: PracticeOnlyParam = False,
               after: Annotated[int | None, Query(
                   ge=0, le=2**62, description="the last seq received; omit it to join")] = None,
               wait_ms: Annotated[int, Query(
                   ge=0, le=25_000, description="how long to wait for a message")] = 20_000,
               ) -> PollResult:
    """Long-poll the messages of the seat (or, with ``ladder`` and a registered bot's token,
    of its ladder place: match after match, numbered on). Without ``after`` this joins (the
    match start and any pending decision come again; an older connection of the token is
    replaced); with ``after`` it returns the messages numbered above it, waiting up to
    ``wait_ms`` for one. Poll at least every 30 s to keep the connection."""
    wait_s = wait_ms / 1000
    if after is not None:
        found = ctx.polls.find(_key(caller), after)
        if isinstance(found, tuple):
            return PollResult(messages=found[0], closed=found[1])
        if found is not None:
            messages, closed = await found.poll(after, wait_s)
            return PollResult(messages=messages, closed=closed)
    via = f"HTTP long-poll from {_peer(request)}"
    key, connect = await _connection(ctx, caller, ladder, matches, games, via, practice_only)
    session = ctx.polls.join(key, after, connect, via)
    messages, closed = await session.poll(0 if after is None else after, wait_s)
    return PollResult(messages=messages, closed=closed)


@router.post("/answer", response_model=Verdict, response_model_exclude_none=True,
             responses=error_responses(codes=FRAMEWORK, refusals=ANSWER_REFUSALS))
async def answer(ctx: Context, body: AnswerIn, caller: Caller) -> Verdict:
    """Answer the pending decision with ``decision_id`` (a registered bot's token answers
    for its seat in its current ladder match). The verdict is in-band, as on gRPC:
    ``accepted`` (a repeated answer is accepted again and counted once) or ``rejected`` with
    a reason (MALFORMED_ACTION, ILLEGAL_ACTION, NOT_PENDING) and a precise message."""
    given = [(field, value) for field, value in (("card", body.action.card),
                                                 ("row", body.action.row),
                                                 ("word", body.action.word))
             if value is not None]
    if len(given) > 1 or len(body.action.model_fields_set) > 1:
        raise InvalidRequestError("an action has one of card, row or word")
    field, action = given[0] if given else (None, None)
    if isinstance(action, int) and action not in INT32:
        raise InvalidRequestError(f"{action} is out of the int32 range")
    if isinstance(caller, BotRow):
        target = None if ctx.ladder is None else ctx.ladder.target(caller.name)
        if target is None:
            ctx.hub.tally.answer_unrouted()
            return Verdict(rejected=to_json(pb.AnswerRejected(
                decision_id=body.decision_id, reason=pb.REJECT_REASON_NOT_PENDING,
                message="no match of this bot is in progress here")))
        host, seat_index = target
    else:
        host, seat_index = await ctx.hub.runner(caller[0]), caller[1]
    if isinstance(host, RelayedSeat):  # a match on another server: its verdict comes back
        relayed = pb.Answer(decision_id=body.decision_id, comment=body.comment)
        if field is not None:
            setattr(relayed.action, field, action)
        verdict = await host.ask(relayed)
    else:
        verdict = host.submit(seat_index, body.decision_id, action, field=field,
                              comment=body.comment)
        host.settle()
    if isinstance(verdict, Accepted):
        return Verdict(accepted=to_json(codec.accepted_proto(verdict)))
    return Verdict(rejected=to_json(codec.rejected_proto(verdict)))
