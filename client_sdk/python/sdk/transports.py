"""The two ways the bot runner talks to the server about a seat: the bidirectional Play
stream, or a Subscribe stream with SubmitAnswer calls. Each plays until the runner is done
or the connection fails; reconnecting is the runner's."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from typing import Any

import grpc

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.sdk.seat import Seat

log = logging.getLogger("bullring.bot")
"""The runner's logger: connections, decisions answered and missed, rejections."""

RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED,
                       grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.INTERNAL,
                       grpc.StatusCode.UNKNOWN})
"""Status codes after which the runner reconnects into the same seat."""


class Connection:
    """One connection's progress: whether the server has sent anything on it."""

    def __init__(self) -> None:
        self.heard = False


async def play_stream(seat: Seat, stubs: dict[str, Any], metadata: Sequence[tuple[str, str]],
                       client: str, conn: Connection) -> pb.MatchEnded | None:
    """Play over the bidirectional stream; MatchEnded, or None if the stream just ended.

    The stream is read ahead by a task of its own while the bot decides: when the server
    ends the stream with a Closed message as the bot's answer is being written, the write
    fails (its status may even read INTERNAL), but the message has been read and is acted
    on."""
    call = stubs["Play"](metadata=metadata)
    incoming: asyncio.Queue[Any] = asyncio.Queue()
    reader = asyncio.create_task(_read_ahead(call, incoming))
    try:
        await call.write(pb.PlayRequest(join=pb.Join(client=client, ladder=seat.ladder or "",
                                                     accept_batches=True,
                                                     matches=seat.matches_left(),
                                                     games=seat.games,
                                                     practice_only=seat.practice_only)))
        while True:
            received = await incoming.get()
            if received is grpc.aio.EOF:
                return None
            if isinstance(received, grpc.aio.AioRpcError):
                raise received
            conn.heard = True
            for response in wire.unbatch(received):
                which = response.WhichOneof("body")
                if which == "match_ended":
                    if not seat.ended(response):
                        continue
                    await _close_writing(call)
                    return response.match_ended
                if which == "closed":
                    return seat.closed(response)
                answer = await seat.handle(response, time.monotonic())
                if answer is not None:
                    # If the call has ended, what was read ahead says how.
                    with contextlib.suppress(asyncio.InvalidStateError, grpc.aio.AioRpcError):
                        await call.write(pb.PlayRequest(answer=answer))
    finally:
        call.cancel()
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


async def _read_ahead(call: Any, incoming: asyncio.Queue[Any]) -> None:
    """Queue every message of ``call`` as it comes, then EOF or the call's error."""
    try:
        while (received := await call.read()) is not grpc.aio.EOF:
            incoming.put_nowait(received)
        incoming.put_nowait(grpc.aio.EOF)
    except grpc.aio.AioRpcError as e:
        incoming.put_nowait(e)


async def _close_writing(call: Any) -> None:
    with contextlib.suppress(asyncio.InvalidStateError, grpc.aio.AioRpcError):
        await call.done_writing()


async def play_unary(seat: Seat, stubs: dict[str, Any], metadata: Sequence[tuple[str, str]],
                      client: str, conn: Connection) -> pb.MatchEnded | None:
    """Play over Subscribe and SubmitAnswer; MatchEnded, or None if the stream just ended."""
    call = stubs["Subscribe"](pb.SubscribeRequest(client=client, ladder=seat.ladder or "",
                                                  accept_batches=True,
                                                  matches=seat.matches_left(),
                                                  games=seat.games,
                                                  practice_only=seat.practice_only),
                              metadata=metadata)
    try:
        while True:
            message = await call.read()
            if message is grpc.aio.EOF:
                return None
            conn.heard = True
            for response in wire.unbatch(message.message):
                if response.WhichOneof("body") == "closed":
                    return seat.closed(response)
                ended = await _handle_unary(seat, stubs, metadata, response)
                if ended is not None:
                    return ended
    finally:
        call.cancel()


async def _handle_unary(seat: Seat, stubs: dict[str, Any], metadata: Sequence[tuple[str, str]],
                        response: pb.PlayResponse) -> pb.MatchEnded | None:
    """Act on one message of a Subscribe stream; MatchEnded if the runner is done."""
    if response.WhichOneof("body") == "match_ended":
        return response.match_ended if seat.ended(response) else None
    received = time.monotonic()
    answer = await seat.handle(response, received)
    if answer is None:
        return None
    timeout = max(0.1, response.decision.time_left_ms / 1000 - (time.monotonic() - received))
    try:
        verdict = await stubs["SubmitAnswer"](pb.SubmitAnswerRequest(answer=answer),
                                              metadata=metadata, timeout=timeout)
    except grpc.aio.AioRpcError as e:
        if e.code() not in RETRYABLE:
            raise
        log.warning("answer to decision %s not delivered: %s: %s", answer.decision_id,
                    e.code().name, e.details())
        return None
    # A rejection also comes on the stream, where it is logged.
    log.debug("answer to decision %s: %s", answer.decision_id, verdict.WhichOneof("verdict"))
    return None
