"""The live public feed of a match as Server-Sent Events: the very public events the gRPC
SpectatorService sends, and the match end. Never a hand, a choice before its reveal or a
chip count: those are not in public events (docs/rules.md §4)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Annotated

from fastapi import APIRouter, Depends, Header
from fastapi.sse import EventSourceResponse, ServerSentEvent

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.errors import MatchElsewhereError, MatchNotStartedError, UnknownMatchError
from bullring.server.match.feed import FELL_BEHIND
from bullring.server.match.runner import MatchRunner
from bullring.server.transports.http.browse import MatchId, match_info
from bullring.server.transports.http.context import Context
from bullring.server.transports.http.errors import error_responses
from bullring.server.transports.http.proto_json import to_json

router = APIRouter(prefix="/api", tags=["browse"])


async def watched(ctx: Context, match_id: MatchId
                  ) -> MatchRunner | list[pb.WatchResponse] | pb.MatchEnded:
    """The live runner of ``match_id``; for a match that ended, its public events from the
    stored replay and its end (or only its end, without a replay); 404/409 for a match that
    is unknown, not started, or running on another server."""
    runner = ctx.hub.runners.get(match_id)
    if runner is not None:
        return runner
    info = await match_info(ctx, match_id)
    if info.status == "created":
        raise MatchNotStartedError(f"match {match_id!r} has not started yet")
    if info.totals is None or info.ranks is None:
        raise MatchElsewhereError(f"match {match_id!r} is not running on this server")
    stored = await ctx.hub.ended(match_id)
    if stored is not None:
        return stored
    return pb.MatchEnded(totals=info.totals, ranks=info.ranks,
                         termination=wire.TERMINATION.get(info.termination or "",
                                                          pb.TERMINATION_UNSPECIFIED))


@router.get("/matches/{match_id}/feed", response_class=EventSourceResponse,
            responses=error_responses(422, refusals=(UnknownMatchError, MatchElsewhereError,
                                                     MatchNotStartedError)))
async def feed(ctx: Context,
               source: Annotated[MatchRunner | list[pb.WatchResponse] | pb.MatchEnded,
                                 Depends(watched)],
               last_event_id: Annotated[int | None, Header(
                   alias="Last-Event-ID", ge=0, le=2**31,
                   description="resume after this event (sent by a reconnecting EventSource)")
               ] = None) -> AsyncIterator[ServerSentEvent]:
    """Stream a match's public messages from its start, as SpectatorService.Watch sends
    them: the event name is the WatchResponse body (``event``, numbered by ``id``, then
    ``match_ended``), the data is the WatchResponse as proto JSON."""
    if isinstance(source, pb.MatchEnded):
        yield ServerSentEvent(event="match_ended",
                              data=to_json(pb.WatchResponse(match_ended=source)))
        return
    if isinstance(source, list):
        for event in _numbered(source, last_event_id or 0):
            yield event
        return
    outbox = source.feed.watch()
    number = 0
    streams = ctx.metrics.stream("http_feed")
    streams.inc()
    try:
        while (raw := await outbox.get()) is not None:
            item = pb.WatchResponse.FromString(raw)
            for event in _numbered([item], last_event_id or 0, number):
                yield event
            number += item.WhichOneof("body") != "match_ended"
            await asyncio.sleep(0)
    finally:
        streams.dec()
        source.feed.unwatch(outbox)
    if outbox.stalled:  # the client resumes after its last event (Last-Event-ID)
        yield ServerSentEvent(comment=FELL_BEHIND)


def _numbered(items: list[pb.WatchResponse], skip: int, before: int = 0
              ) -> Iterator[ServerSentEvent]:
    """``items`` as Server-Sent Events: public events numbered on from ``before`` (those up
    to ``skip`` left out: the client has them), the end unnumbered."""
    number = before
    for item in items:
        if item.WhichOneof("body") == "match_ended":
            yield ServerSentEvent(event="match_ended", data=to_json(item))
            continue
        number += 1
        if number > skip:
            yield ServerSentEvent(event="event", data=to_json(item), id=str(number))
