"""HTTP play: a seat's bot without gRPC. The bearer token names the match and the seat.

- ``GET /api/play/stream``: Server-Sent Events, the same messages as BotService.Subscribe;
- ``GET /api/play/poll``: the same messages by long-poll (see server/api/polling.py);
- ``POST /api/play/answer``: the same verdict as BotService.SubmitAnswer.

Both attach to the match runner and submit through it exactly as the gRPC servicer does, so
decision ids, idempotent answers, deadlines and in-band rejections are the same.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.sse import EventSourceResponse, ServerSentEvent

from client_sdk.generated.bullring.v2 import referee_pb2 as pb
from server.api.context import Context, Credentials, bearer_token
from server.api.errors import ApiError, error_responses
from server.api.models import AnswerIn, PollResult, Verdict
from server.api.proto_json import to_json
from server.hub import MatchOverError
from server.match_runner import MatchRunner
from server.store import UnknownMatchError

router = APIRouter(prefix="/api/play", tags=["play"])

INT32 = range(-(2**31), 2**31)
"""The values a proto int32 (a card or a row on the gRPC wire) can carry."""


async def seat(ctx: Context, credentials: Credentials) -> tuple[MatchRunner, int]:
    """The runner and seat the bearer token plays (starting the runner on first use)."""
    found = await ctx.hub.seat_for_token(bearer_token(credentials))
    if found is None:
        raise ApiError(401, "unauthorized", "unknown token")
    match_id, seat_index = found
    try:
        return await ctx.hub.runner(match_id), seat_index
    except MatchOverError as exc:
        raise ApiError(409, "match_over", str(exc)) from exc
    except UnknownMatchError as exc:
        raise ApiError(404, "match_not_found", str(exc)) from exc


Seat = Annotated[tuple[MatchRunner, int], Depends(seat)]

ERRORS = {401: "unauthorized: no bearer token, or a token the server does not know",
          404: "match_not_found: the token's match is not stored",
          409: "match_over: the token's match has ended",
          422: "invalid_request: a malformed query or body (not JSON, two action fields, a "
               "number out of the int32 range)",
          400: "bad_request: the request could not be read"}
"""The specific error codes of the play routes, by status."""


@router.get("/stream", response_class=EventSourceResponse,
            responses=error_responses(401, 404, 409, codes=ERRORS))
async def stream(playing: Seat) -> AsyncIterator[ServerSentEvent]:
    """Join the seat and stream its messages as Server-Sent Events: the event name is the
    PlayResponse body (match_started, decision, event, match_ended, ...), the data is the
    PlayResponse as proto JSON. Closing the stream disconnects the seat, like a gRPC stream."""
    runner, seat_index = playing
    outbox, connection = runner.attach(seat_index)
    try:
        number = 0
        while (raw := await outbox.get()) is not None:
            number += 1
            item = pb.PlayResponse.FromString(raw)
            yield ServerSentEvent(event=item.WhichOneof("body"), data=to_json(item),
                                  id=str(number))
    finally:
        runner.detach(seat_index, connection, "HTTP stream closed")


@router.get("/poll", response_model=PollResult,
            responses=error_responses(401, 404, 409, 422, codes=ERRORS))
async def poll(ctx: Context, playing: Seat,
               after: Annotated[int | None, Query(
                   ge=0, le=2**62, description="the last seq received; omit it to join")] = None,
               wait_ms: Annotated[int, Query(
                   ge=0, le=25_000, description="how long to wait for a message")] = 20_000,
               ) -> PollResult:
    """Long-poll the seat's messages. Without ``after`` this joins the seat (the match start
    and any pending decision come again); with ``after`` it returns the messages numbered
    above it, waiting up to ``wait_ms`` for one. Poll at least every 30 s to keep the seat."""
    runner, seat_index = playing
    session = ctx.polls.session(runner, seat_index, after)
    messages, closed = await session.poll(0 if after is None else after, wait_ms / 1000)
    return PollResult(messages=messages, closed=closed)


@router.post("/answer", response_model=Verdict, response_model_exclude_none=True,
             responses=error_responses(400, 401, 404, 409, 422, codes=ERRORS))
async def answer(body: AnswerIn, playing: Seat) -> Verdict:
    """Answer the pending decision with ``decision_id``. The verdict is in-band, as on gRPC:
    ``accepted`` (a repeated answer is accepted again and counted once) or ``rejected`` with
    a reason (MALFORMED_ACTION, ILLEGAL_ACTION, NOT_PENDING) and a precise message."""
    runner, seat_index = playing
    given = [(field, value) for field, value in (("card", body.action.card),
                                                 ("row", body.action.row),
                                                 ("word", body.action.word))
             if value is not None]
    if len(given) > 1:
        raise ApiError(422, "invalid_request", "an action has one of card, row or word")
    field, action = given[0] if given else (None, None)
    if isinstance(action, int) and action not in INT32:
        raise ApiError(422, "invalid_request", f"{action} is out of the int32 range")
    verdict = runner.submit(seat_index, body.decision_id, action, field=field)
    runner.settle()
    if isinstance(verdict, pb.AnswerAccepted):
        return Verdict(accepted=to_json(verdict))
    return Verdict(rejected=to_json(verdict))
