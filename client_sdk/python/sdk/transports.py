"""The two ways the bot runner talks to the server about a seat: the bidirectional Play
stream, or a Subscribe stream with SubmitAnswer calls. Each plays until the runner is done
or the connection fails; reconnecting is the runner's.

Either reads the server's messages ahead, as they come, into an ``Inbox`` while the bot
decides: each message keeps the time it came (a decision's time left counts from then), and
a decision the server has already moved past (the seat's next decision, the match's end,
another match or the server's Closed has come) is not given to the bot, or stops being
waited for, so a slow bot never leaves the runner behind the server."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
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


MOVED_ON = frozenset({"decision", "match_ended", "match_started", "closed"})
"""Messages after which no decision the seat was sent before is pending any more: a seat has
one pending decision at a time, and the server sends its next only once it resolved the
last one (the seat's answer, or the default at the deadline)."""


class Connection:
    """One connection's progress: whether the server has sent anything on it."""

    def __init__(self) -> None:
        self.heard = False


class Inbox:
    """The server's messages read so far and not yet acted on, one by one (batches
    unpacked), each with the time it was read; then the end of the call (EOF or its
    error)."""

    def __init__(self) -> None:
        self._messages: deque[tuple[pb.PlayResponse, float]] = deque()
        self._end: BaseException | None = None
        self._ended = False
        self._changed = asyncio.Event()

    def put(self, message: pb.PlayResponse) -> None:
        """Keep the messages ``message`` carries, stamped with the time now."""
        received = time.monotonic()
        self._messages.extend((response, received) for response in wire.unbatch(message))
        self._changed.set()

    def end(self, error: BaseException | None = None) -> None:
        """The call ended: EOF, or ``error``."""
        self._ended, self._end = True, error
        self._changed.set()

    async def get(self) -> tuple[pb.PlayResponse, float] | None:
        """The next message and when it came; None at EOF; the call's error raised."""
        await self._until(lambda: bool(self._messages) or self._ended)
        if self._messages:
            return self._messages.popleft()
        if self._end is not None:
            raise self._end
        return None

    def moved_on(self) -> bool:
        """Whether a message read but not yet acted on shows that the server no longer
        waits for the decision being acted on (``MOVED_ON``)."""
        return any(response.WhichOneof("body") in MOVED_ON for response, _ in self._messages)

    async def wait_moved_on(self) -> None:
        """Return once ``moved_on`` holds."""
        await self._until(self.moved_on)

    async def _until(self, ready: Callable[[], bool]) -> None:
        while not ready():
            self._changed.clear()
            await self._changed.wait()


async def play_stream(seat: Seat, stubs: dict[str, Any], metadata: Sequence[tuple[str, str]],
                       client: str, conn: Connection) -> pb.MatchEnded | None:
    """Play over the bidirectional stream; MatchEnded, or None if the stream just ended.

    The stream is read ahead by a task of its own while the bot decides: when the server
    ends the stream with a Closed message as the bot's answer is being written, the write
    fails (its status may even read INTERNAL), but the message has been read and is acted
    on."""
    call = stubs["Play"](metadata=metadata)
    inbox = Inbox()
    reader = asyncio.create_task(_read_ahead(call, inbox, lambda message: message))
    try:
        await call.write(pb.PlayRequest(join=pb.Join(client=client, ladder=seat.ladder or "",
                                                     accept_batches=True,
                                                     matches=seat.matches_left(),
                                                     games=seat.games,
                                                     practice_only=seat.practice_only)))
        while (item := await inbox.get()) is not None:
            response, received = item
            conn.heard = True
            which = response.WhichOneof("body")
            if which == "match_ended":
                if not seat.ended(response):
                    continue
                await _close_writing(call)
                return response.match_ended
            if which == "closed":
                return seat.closed(response)
            answer = await seat.handle(response, received, inbox)
            if answer is not None:
                # If the call has ended, what was read ahead says how.
                with contextlib.suppress(asyncio.InvalidStateError, grpc.aio.AioRpcError):
                    await call.write(pb.PlayRequest(answer=answer))
        return None
    finally:
        call.cancel()
        await reap(reader)


async def reap(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait until it has ended. The task's own cancellation is expected and
    swallowed; a cancellation of the caller while it waits is not (a Ctrl-C that comes as a
    match ends stops the runner, instead of being taken for the reader's end)."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise


async def _read_ahead(call: Any, inbox: Inbox,
                      message: Callable[[Any], pb.PlayResponse]) -> None:
    """Put every message of ``call`` (``message`` of what it reads) in ``inbox`` as it
    comes, then its end: EOF or the call's error."""
    try:
        while (received := await call.read()) is not grpc.aio.EOF:
            inbox.put(message(received))
        inbox.end()
    except grpc.aio.AioRpcError as e:
        inbox.end(e)


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
    inbox = Inbox()
    reader = asyncio.create_task(_read_ahead(call, inbox, lambda update: update.message))
    try:
        while (item := await inbox.get()) is not None:
            response, received = item
            conn.heard = True
            if response.WhichOneof("body") == "closed":
                return seat.closed(response)
            ended = await _handle_unary(seat, stubs, metadata, response, received, inbox)
            if ended is not None:
                return ended
        return None
    finally:
        call.cancel()
        await reap(reader)


async def _handle_unary(seat: Seat, stubs: dict[str, Any], metadata: Sequence[tuple[str, str]],
                        response: pb.PlayResponse, received: float,
                        inbox: Inbox) -> pb.MatchEnded | None:
    """Act on one message of a Subscribe stream; MatchEnded if the runner is done."""
    if response.WhichOneof("body") == "match_ended":
        return response.match_ended if seat.ended(response) else None
    answer = await seat.handle(response, received, inbox)
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
