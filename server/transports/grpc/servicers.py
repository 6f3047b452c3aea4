"""The gRPC servicers: they translate protobuf to domain values, check who asks, and hand
over to the match runner. Bearer tokens are checked by an interceptor."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc

from bullring.contract import codec, wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.contract.messages import Accepted, Outgoing, Rejected, Verdict
from bullring.server.errors import (
    FellBehindError,
    InvalidRequestError,
    JoinTimeoutError,
    NoLadderError,
    NotAuthenticatedError,
    UnknownMatchError,
    abort_grpc,
    answer_grpc,
)
from bullring.server.fleet.relay import RelayedSeat, SeatHost
from bullring.server.ladder.seating import Ladder
from bullring.server.match.clock import loop_watch
from bullring.server.match.feed import FELL_BEHIND
from bullring.server.match.hub import MatchHub
from bullring.server.match.outbox import Outbox
from bullring.server.match.runner import MatchRunner
from bullring.server.metrics import ServerMetrics
from bullring.server.store.models import BotRow
from bullring.server.transports.grpc.calls import at_once, bearer_token, parsed, read_request
from bullring.server.transports.limits import Limits
from bullring.server.transports.stalls import guarded

Route = Callable[[], tuple[SeatHost, int] | None]
"""Where a stream's answers go now: a live match and seat (here, or relayed from the server
that runs it), or nowhere."""

CLOSE_STATUS: dict[int, grpc.StatusCode] = {
    pb.CLOSE_REASON_REPLACED: grpc.StatusCode.ABORTED,
    pb.CLOSE_REASON_TOKEN_REVOKED: grpc.StatusCode.UNAUTHENTICATED,
    pb.CLOSE_REASON_BOT_DISABLED: grpc.StatusCode.PERMISSION_DENIED,
    pb.CLOSE_REASON_STALLED: grpc.StatusCode.RESOURCE_EXHAUSTED,
}
"""The status a stream ends with after its in-band Closed message, by reason (OK for the
others)."""


class BotService:
    """BotService: Play (bidirectional), Subscribe + SubmitAnswer (server stream + unary).

    A seat token plays its one seat; a registered bot's token plays the ladder."""

    def __init__(self, hub: MatchHub, ladder: Ladder | None = None,
                 limits: Limits | None = None,
                 metrics: ServerMetrics | None = None) -> None:
        self.hub = hub
        self.ladder = ladder
        limits = limits or Limits()
        self.join_timeout_s = limits.header_timeout_s
        """How soon a Play stream must send its Join (the limits' header timeout)."""
        self.stall_s = limits.stall_timeout_s
        """How long one write of a stream may wait for its client to read."""
        self.metrics = metrics if metrics is not None else ServerMetrics()
        """Where the streams are counted."""

    async def _bot(self, context: grpc.aio.ServicerContext[Any, Any],
                   fresh: bool = False) -> BotRow | None:
        """The registered bot the call's token names (read anew when ``fresh``: joins see
        a rotated token or a disabled bot at once)."""
        token = bearer_token(context.invocation_metadata())
        if token is None or not token.startswith("bot_"):
            return None
        return await answer_grpc(context, self.hub.bot_for_token(token, fresh))

    async def _join_message(self, requests: AsyncIterator[bytes],
                            context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        """The Join that must open a Play stream, within ``join_timeout_s`` not counting
        the time the server itself ran late (a stream that sends nothing holds nothing for
        long: DEADLINE_EXCEEDED; a busy server does not end a stream it was slow to read)."""
        watch = loop_watch()
        reading = asyncio.ensure_future(anext(aiter(requests), None))
        wait_s, late = self.join_timeout_s, watch.late_now()
        try:
            while not reading.done():
                await asyncio.wait((reading,), timeout=wait_s)
                wait_s, late = watch.late_now() - late, watch.late_now()
                if not reading.done() and wait_s <= 0:
                    await abort_grpc(context, JoinTimeoutError(
                        f"no Join within {self.join_timeout_s:g} s of opening Play"))
        finally:
            # The call may end first (aborted, or cancelled by the client): the read then
            # fails on its own; take its error so it is not reported as never retrieved.
            reading.add_done_callback(_retrieved)
        message = parsed(pb.PlayRequest, reading.result())
        if message is None or message.WhichOneof("body") != "join":
            await abort_grpc(context, InvalidRequestError(
                "the first message of Play must be a well-formed Join"))
        return message

    def _ladder_route(self, bot: str) -> Route:
        ladder = self.ladder
        return lambda: None if ladder is None else ladder.target(bot)

    async def _seat(self, context: grpc.aio.ServicerContext[Any, Any],
                    games: Sequence[str] = ()) -> tuple[MatchRunner, int]:
        """The live match and seat the call's seat token names; refused before the match
        is started if the bot's ``games`` (empty: any) leave its game out."""
        token = bearer_token(context.invocation_metadata())

        async def find() -> tuple[MatchRunner, int]:
            found = None if token is None else await self.hub.seat_for_token(token)
            if found is None:
                raise NotAuthenticatedError("unknown token")
            match_id, seat = found
            return await self.hub.seat_runner(match_id, seat, games), seat
        return await answer_grpc(context, find())

    async def play(self, requests: AsyncIterator[bytes],
                   context: grpc.aio.ServicerContext[Any, Any]
                   ) -> AsyncIterator[bytes]:
        """One bidirectional stream: Join first, then answers; messages back. A seat token
        plays its seat; a registered bot's token plays one ladder match after another."""
        bot = await self._bot(context, fresh=True)
        message = await self._join_message(requests, context)
        join = message.join
        outbox, route, leave = await self._connect(bot, join, context, "gRPC Play")
        problem: list[str] = []
        reader = asyncio.create_task(self._read(requests, route, outbox, problem))
        why = "gRPC Play stream closed"
        try:
            async with guarded(outbox, self.stall_s, leave, self.metrics, "grpc_play"):
                async for item in _drain(outbox, join.accept_batches):
                    yield item
                if problem:
                    why = problem[0]
                    await abort_grpc(context, InvalidRequestError(problem[0]))
                await _closed_status(outbox, context)
        except asyncio.CancelledError:
            why = CANCELLED
            raise
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
            leave(why)

    async def _connect(self, bot: BotRow | None, join: pb.Join | pb.SubscribeRequest,
                       context: grpc.aio.ServicerContext[Any, Any], transport: str
                       ) -> tuple[Outbox, Route, Callable[[str], None]]:
        """Connect a stream: to the ladder for a registered ``bot``, else to the seat of the
        call's token. Returns its outbox, where its answers go, and what ends it (told why)."""
        via = f"{transport} from {context.peer()}"
        if bot is not None:
            ladder = self.ladder
            if ladder is None:
                await abort_grpc(context, NoLadderError("this server runs no ladder"))
            session = await answer_grpc(context, at_once(
                ladder.join, bot, join.ladder, join.matches, list(join.games), via,
                join.practice_only))
            return (session.outbox, self._ladder_route(bot.name),
                    lambda why: ladder.leave(session, why))
        runner, seat = await self._seat(context, list(join.games))
        outbox, connection = runner.attach(seat, via=via)
        return (outbox, lambda: (runner, seat),
                lambda why: runner.detach(seat, connection, outbox.why_ended(why)))

    async def _read(self, requests: AsyncIterator[bytes], route: Route,
                    outbox: Outbox, problem: list[str]) -> None:
        try:
            async for raw in requests:
                message = parsed(pb.PlayRequest, raw)
                if message is None:
                    problem.append("malformed PlayRequest: not a valid protobuf message")
                    break
                if message.WhichOneof("body") != "answer":
                    continue  # a repeated Join changes nothing
                target = route()
                if target is None:
                    outbox.put_nowait(self._unrouted(message.answer))
                elif isinstance(target[0], RelayedSeat):
                    target[0].answer(message.answer)  # its verdict comes back in order
                else:
                    runner = target[0]
                    outbox.put_nowait(self._submit(runner, target[1], message.answer))
                    runner.settle()
                if outbox.ended:
                    break  # a client that reads nothing is read no more (its writes block)
        except (grpc.aio.AioRpcError, asyncio.CancelledError):
            pass
        finally:
            if problem:
                outbox.put_nowait(None)

    def _unrouted(self, answer: pb.Answer) -> Rejected:
        """The verdict of an answer of a bot that plays no match now."""
        self.hub.tally.answer_unrouted()
        return Rejected(answer.decision_id, pb.REJECT_REASON_NOT_PENDING,
                        "no match of this bot is in progress here")

    @staticmethod
    def _submit(runner: MatchRunner, seat: int, answer: pb.Answer) -> Verdict:
        return runner.submit(seat, answer.decision_id, wire.action_from_proto(answer.action),
                             field=wire.action_field(answer.action), comment=answer.comment)

    async def subscribe(self, raw: bytes, context: grpc.aio.ServicerContext[Any, Any]
                        ) -> AsyncIterator[bytes]:
        """A seat's (or a ladder bot's) server stream, for clients that answer with
        SubmitAnswer."""
        request = await answer_grpc(context, at_once(read_request, pb.SubscribeRequest, raw))
        bot = await self._bot(context, fresh=True)
        outbox, _, leave = await self._connect(bot, request, context, "gRPC Subscribe")
        why = "gRPC Subscribe stream closed"
        try:
            async with guarded(outbox, self.stall_s, leave, self.metrics, "grpc_subscribe"):
                async for item in _drain(outbox, request.accept_batches):
                    yield codec.subscribed(item)
                await _closed_status(outbox, context)
        except asyncio.CancelledError:
            why = CANCELLED
            raise
        finally:
            leave(why)

    async def submit_answer(self, raw: bytes, context: grpc.aio.ServicerContext[Any, Any]
                            ) -> pb.SubmitAnswerResponse:
        """Answer one decision; the verdict is returned (and not repeated on the stream)."""
        message = await answer_grpc(context, at_once(read_request, pb.SubmitAnswerRequest, raw))
        bot = await self._bot(context)
        target: tuple[SeatHost, int] | None
        if bot is not None:
            target = self._ladder_route(bot.name)()
        else:
            target = await self._seat(context)
        verdict: Verdict
        if target is None:
            verdict = self._unrouted(message.answer)
        elif isinstance(target[0], RelayedSeat):
            verdict = await target[0].ask(message.answer)
        else:
            runner = target[0]
            verdict = self._submit(runner, target[1], message.answer)
            runner.settle()  # the verdict goes back in the response, the events on the stream
        if isinstance(verdict, Accepted):
            return pb.SubmitAnswerResponse(accepted=pb.AnswerAccepted(
                decision_id=verdict.decision_id))
        return pb.SubmitAnswerResponse(rejected=codec.rejected_proto(verdict))

    def handler(self) -> grpc.GenericRpcHandler:
        """The generic handler serving this service's methods."""
        return grpc.method_handlers_generic_handler(wire.BOT_SERVICE, {  # streams yield bytes
            "Play": grpc.stream_stream_rpc_method_handler(self.play),
            "Subscribe": grpc.unary_stream_rpc_method_handler(self.subscribe),
            "SubmitAnswer": grpc.unary_unary_rpc_method_handler(
                self.submit_answer,
                response_serializer=pb.SubmitAnswerResponse.SerializeToString),
        })


class SpectatorService:
    """SpectatorService.Watch: the public events of a live match."""

    def __init__(self, hub: MatchHub, metrics: ServerMetrics | None = None) -> None:
        self.hub = hub
        self.metrics = metrics if metrics is not None else ServerMetrics()
        """Where the spectators' streams are counted."""

    async def watch(self, raw: bytes, context: grpc.aio.ServicerContext[Any, Any]
                    ) -> AsyncIterator[bytes]:
        """Stream the match's public events from its start, then its end (for a match no
        longer live here, from its stored replay), each a serialized WatchResponse. A
        spectator that falls ``MAX_UNREAD_BYTES`` behind is ended: RESOURCE_EXHAUSTED."""
        message = await answer_grpc(context, at_once(read_request, pb.WatchRequest, raw))
        runner = self.hub.runners.get(message.match_id)
        if runner is None:
            ended = await answer_grpc(context, self.hub.ended(message.match_id))
            if ended is None:
                await abort_grpc(context, UnknownMatchError(_no_match(message.match_id)))
            for stored in ended:
                yield codec.watch_bytes(stored)
            return
        outbox = runner.feed.watch()
        streams = self.metrics.stream("grpc_watch")
        streams.inc()
        try:
            while (item := await outbox.get()) is not None:
                yield codec.watch_bytes(item)  # type: ignore[arg-type]  # events, the end
        finally:
            streams.dec()
            runner.feed.unwatch(outbox)  # a spectator that left is fed no more
        if outbox.stalled:
            await abort_grpc(context, FellBehindError(FELL_BEHIND))

    def handler(self) -> grpc.GenericRpcHandler:
        """The generic handler serving this service's methods."""
        return grpc.method_handlers_generic_handler(wire.SPECTATOR_SERVICE, {
            "Watch": grpc.unary_stream_rpc_method_handler(self.watch),
        })



async def _closed_status(outbox: Outbox, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    """End the call with the status that matches the Closed message the server ended
    ``outbox`` with, if any (the message went first, in-band)."""
    closed = outbox.closed_by
    if closed is not None and closed.reason in CLOSE_STATUS:
        await context.abort(CLOSE_STATUS[closed.reason], closed.message)


async def _drain(outbox: Outbox, batches: bool) -> AsyncIterator[bytes]:
    """Every message of a seat's ``outbox`` until its end, each a serialized PlayResponse;
    with ``batches``, the messages ready at once go out together as one batch."""
    while (item := await outbox.get()) is not None:
        if batches and not outbox.empty():
            batch, ended = _take_ready(outbox, item)
            yield batch
            if ended:
                return
        else:
            yield codec.play_bytes(item)


CANCELLED = "the call was cancelled (the client cancelled it, or its connection was lost)"
"""Why a stream ended when its call was cancelled under it, for the log."""


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Take a finished task's outcome (so an error nobody awaits is not logged)."""
    if not task.cancelled():
        task.exception()


def _no_match(match_id: str) -> str:
    """Why a spectator gets NOT_FOUND; an id longer than any match's is not echoed back."""
    if len(match_id) > MAX_ID_ECHO:
        return f"no match has an id of {len(match_id)} characters"
    return f"no live or ended match {match_id!r} here"


MAX_ID_ECHO = 64
"""The longest id an error message repeats (match ids are 12 characters)."""


def _take_ready(outbox: Outbox, first: Outgoing) -> tuple[bytes, bool]:
    """``first`` and every message already waiting in ``outbox``, as one serialized
    PlayResponse (a batch if more than one); True if the outbox's end came among them."""
    parts = [codec.play_bytes(first)]
    ended = False
    while not outbox.empty():
        item = outbox.get_nowait()
        if item is None:
            ended = True
            break
        parts.append(codec.play_bytes(item))
    return (parts[0] if len(parts) == 1 else codec.batch(parts)), ended

