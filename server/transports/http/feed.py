"""The live public feed of a match as Server-Sent Events: the very public events the gRPC
SpectatorService sends, and the match end. Never a hand, a choice before its reveal or a
chip count: those are not in public events (docs/rules.md §4)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header
from fastapi.responses import Response, StreamingResponse
from fastapi.sse import format_sse_event

from bullring.contract.messages import Ended, Event, Watched
from bullring.server.errors import MatchElsewhereError, MatchNotStartedError, UnknownMatchError
from bullring.server.match.feed import FELL_BEHIND
from bullring.server.match.runner import MatchRunner
from bullring.server.transports.http.browse import MatchId, match_info
from bullring.server.transports.http.context import Context
from bullring.server.transports.http.errors import error_responses
from bullring.server.transports.http.proto_json import watch_json

router = APIRouter(prefix="/api", tags=["browse"])

PING_S = 15.0
"""A live feed with nothing to send for this long sends a comment, so proxies and browsers
keep the connection."""
PING = b": ping\n\n"
"""That comment."""
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
"""Headers of every feed: never cached, never buffered by a proxy."""


@dataclass(frozen=True, slots=True)
class EncodedFeed:
    """An ended match's whole feed as Server-Sent Events, encoded once for every reader:
    its public events (numbered from 1), then its end."""

    body: bytes
    starts: tuple[int, ...]
    """Where each public event begins in ``body``, then where the end does."""

    def size_bytes(self) -> int:
        """The memory it holds, roughly."""
        return len(self.body) + 8 * len(self.starts)

    def after(self, skip: int) -> memoryview:
        """The feed without its first ``skip`` public events (the client has them): a view
        of ``body``, never a copy."""
        return memoryview(self.body)[self.starts[min(skip, len(self.starts) - 1)]:]


def _event(item: Watched, number: int | None) -> bytes:
    """``item`` as one Server-Sent Event: its body's name, the proto JSON, its number."""
    return format_sse_event(event="event" if isinstance(item, Event) else "match_ended",
                            data_str=json.dumps(watch_json(item)),
                            id=None if number is None else str(number))


def _encode(items: list[Watched]) -> EncodedFeed:
    """The public messages of an ended match as its encoded feed."""
    chunks: list[bytes] = []
    starts: list[int] = []
    at = 0
    for number, item in enumerate(items, 1):
        chunk = _event(item, number if isinstance(item, Event) else None)
        starts.append(at)
        chunks.append(chunk)
        at += len(chunk)
    return EncodedFeed(b"".join(chunks), tuple(starts))


async def watched(ctx: Context, match_id: MatchId
                  ) -> MatchRunner | EncodedFeed | Ended:
    """The live runner of ``match_id``; for a match that ended, its public events from the
    stored replay and its end, encoded once for every reader (or only its end, without a
    replay); 404/409 for a match that is unknown, not started, or running on another
    server."""
    runner = ctx.hub.runners.get(match_id)
    if runner is not None:
        return runner
    kept = ctx.hub.archive.peek(("feed", match_id))
    if isinstance(kept, EncodedFeed):
        return kept  # an ended match: nothing to look up again
    info = await match_info(ctx, match_id)
    if info.status == "created":
        raise MatchNotStartedError(f"match {match_id!r} has not started yet")
    if info.totals is None or info.ranks is None:
        raise MatchElsewhereError(f"match {match_id!r} is not running on this server")
    stored = await ctx.hub.archive.get(("feed", match_id), lambda: _encoded(ctx, match_id))
    if stored is not None:
        return stored
    return Ended(tuple(info.totals), tuple(info.ranks), info.termination or "")


async def _encoded(ctx: Context, match_id: str) -> EncodedFeed | None:
    """The feed of an ended match, encoded (in a worker thread); None without a replay."""
    items = await ctx.hub.ended(match_id)
    if items is None:
        return None
    return await asyncio.to_thread(_encode, items)


@router.get("/matches/{match_id}/feed", response_class=Response,
            responses=error_responses(422, refusals=(UnknownMatchError, MatchElsewhereError,
                                                     MatchNotStartedError)))
async def feed(ctx: Context,
               source: Annotated[MatchRunner | EncodedFeed | Ended, Depends(watched)],
               last_event_id: Annotated[int, Header(
                   alias="Last-Event-ID", ge=0, le=2**31,
                   description="resume after this event (sent by a reconnecting EventSource)")
               ] = 0) -> Response:
    """Stream a match's public messages from its start, as SpectatorService.Watch sends
    them: the event name is the WatchResponse body (``event``, numbered by ``id``, then
    ``match_ended``), the data is the WatchResponse as proto JSON. A match that ended is
    sent whole at once, encoded once for all its readers."""
    if isinstance(source, Ended):
        return Response(_event(source, None),
                        media_type="text/event-stream", headers=HEADERS)
    if isinstance(source, EncodedFeed):
        return Response(source.after(last_event_id or 0), media_type="text/event-stream",
                        headers=HEADERS)
    return StreamingResponse(_live(source, last_event_id or 0, ctx.metrics.stream("http_feed")),
                             media_type="text/event-stream", headers=HEADERS)


async def _live(runner: MatchRunner, skip: int, streams: Any) -> AsyncIterator[bytes]:
    """A live match's public messages from its start (those up to ``skip`` left out), then
    its end, each one Server-Sent Event; a comment every ``PING_S`` of silence, and one
    saying so if the reader fell too far behind."""
    outbox = runner.feed.watch()
    number = 0
    streams.inc()
    try:
        while True:
            if outbox.empty():
                try:
                    await asyncio.wait_for(outbox.wait(), PING_S)
                except TimeoutError:
                    yield PING
                    continue
            item = await outbox.get()
            if item is None:
                break
            if not isinstance(item, Event):  # the end
                yield _event(item, None)  # type: ignore[arg-type]
                continue
            number += 1
            if number > skip:
                yield _event(item, number)
            await asyncio.sleep(0)
    finally:
        streams.dec()
        runner.feed.unwatch(outbox)
    if outbox.stalled:  # the client resumes after its last event (Last-Event-ID)
        yield format_sse_event(comment=FELL_BEHIND)
