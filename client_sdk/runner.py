"""The bot runner: plays one seat of a match on a Bullring server with a ``Bot``.

``bullring bot --server HOST:PORT --token TOKEN BOT`` connects with the seat's token, loads
the bot once the match says which game it is, answers every decision within the time the
server says is left (minus a safety margin), and reconnects into the same seat when the
connection drops. The bot sees the very observation values the local arena gives it.

With a registered bot's token, ``--ladder GAME`` joins that game's ladder instead: the stream
stays open and carries one match after another, a new bot object for each; after a lost
connection the runner reconnects (with the same backoff) and the server gives the bot back
its seat, or queues it again.

A bot is named by a spec: ``house:NAME`` (a house bot), ``package.module:ClassName`` or
``path/to/file.py:ClassName`` (a ``Bot`` subclass, instantiated as ``ClassName(seed)``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import operator
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from client_sdk import wire
from client_sdk.backoff import Backoff
from client_sdk.bot import Bot
from client_sdk.bot_spec import BotFactory, bot_class, bot_factory
from client_sdk.generated.bullring.v2 import referee_pb2 as pb
from client_sdk.runner_cli import TRANSPORTS
from referee.core import Action, DecisionKind

log = logging.getLogger("bullring.bot")
"""The runner's logger: connections, decisions answered and missed, rejections."""

RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED,
                       grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.INTERNAL,
                       grpc.StatusCode.UNKNOWN})
"""Status codes after which the runner reconnects into the same seat."""

RECONNECT = Backoff(first_s=0.05, max_s=2.0, factor=2.0, jitter=0.5)
"""The pauses between reconnects: 0.05 s doubling up to 2 s, each shortened by up to half."""




# --------------------------------------------------------------------------- the bot's thread


class _BotThread:
    """One daemon thread that runs every call into the bot, in order, one at a time.

    A bot that overruns its deadline keeps running here while the runner moves on, but it is
    never called twice at once, and being a daemon it cannot keep the process alive.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[
            tuple[Callable[[], Any], asyncio.Future[Any], asyncio.AbstractEventLoop] | None
        ] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="bullring-bot", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[[], Any]) -> asyncio.Future[Any]:
        """Queue ``fn``; the future is its result. Cancelling it skips ``fn`` if not begun."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._jobs.put((fn, future, loop))
        return future

    def close(self) -> None:
        """Let the thread end after the calls already queued."""
        self._jobs.put(None)

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, future, loop = job
            if future.cancelled():
                continue
            try:
                outcome: tuple[bool, Any] = (True, fn())
            except BaseException as e:
                outcome = (False, e)
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(_settle, future, outcome)


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


# --------------------------------------------------------------------------- one seat


class _Seat:
    """What survives reconnects: the bot, the match, and the answers already given."""

    def __init__(self, spec: str, factory: BotFactory, seed: int, margin_ms: int,
                 on_message: Callable[[pb.PlayResponse], None] | None,
                 ladder: str | None = None, matches: int = 0,
                 games: Sequence[str] = ()) -> None:
        self.spec = spec
        self.games = list(games)
        """The games the bot plays, told to the server at Join (a seat of another game is
        refused before it is taken)."""
        self.ladder = ladder
        """The game whose ladder this bot plays, or None for one seat of one match."""
        self.matches = matches
        """Leave the ladder after this many matches (0: never)."""
        self.played = 0
        self.last_ended: pb.MatchEnded | None = None
        self.factory = factory
        self.seed = seed
        self.margin_ms = margin_ms
        self.on_message = on_message
        self.bot: Bot | None = None
        self.match_id: str | None = None
        self.answers: dict[str, pb.Action] = {}
        """Actions sent by decision id: a decision resent after a reconnect gets the same."""
        self.thread = _BotThread()

    async def handle(self, response: pb.PlayResponse, received: float) -> pb.Answer | None:
        """Act on one server message; return the answer to send, if any."""
        if self.on_message is not None:
            self.on_message(response)
        which = response.WhichOneof("body")
        if which == "match_started":
            self._start(response.match_started)
        elif which == "decision":
            return await self._decide(response.decision, received)
        elif which == "rejected":
            r = response.rejected
            self.answers.pop(r.decision_id, None)
            log.warning("answer to decision %s rejected (%s): %s", r.decision_id,
                        pb.RejectReason.Name(r.reason), r.message)
        elif which == "accepted":
            log.debug("answer to decision %s accepted", response.accepted.decision_id)
        elif which == "event":
            self._event(response.event)
        elif which == "ladder_queued":
            log.info("waiting on the %s ladder as %s", response.ladder_queued.game,
                     response.ladder_queued.bot)
            if response.ladder_queued.notice:
                log.warning("%s", response.ladder_queued.notice)
        return None

    def ended(self, response: pb.PlayResponse) -> bool:
        """A match ended; True when the runner is done (one match, or the ladder's count)."""
        if self.on_message is not None:
            self.on_message(response)
        self.last_ended = response.match_ended
        if self.ladder is None:
            return True
        self.played += 1
        ended = response.match_ended
        log.info("match %s ended: totals %s ranks %s (%s); %d played", self.match_id,
                 list(ended.totals), list(ended.ranks), wire.termination_name(ended.termination),
                 self.played)
        return 0 < self.matches <= self.played

    def closed(self, response: pb.PlayResponse) -> pb.MatchEnded | None:
        """The server ended the connection on purpose (Closed). Its ladder matches all
        played: the last result. Replaced by a newer connection, token revoked, bot disabled:
        raise, never reconnect (RuntimeError, PermissionError). A lapsed HTTP lease: None,
        so the runner joins again."""
        if self.on_message is not None:
            self.on_message(response)
        closed = response.closed
        log.warning("the server ended the connection (%s): %s",
                    pb.CloseReason.Name(closed.reason) if closed.reason in
                    pb.CloseReason.values() else closed.reason, closed.message)
        if closed.reason == pb.CLOSE_REASON_MATCHES_PLAYED and self.last_ended is not None:
            return self.last_ended
        if closed.reason == pb.CLOSE_REASON_LEASE_EXPIRED:
            return None
        if closed.reason in (pb.CLOSE_REASON_TOKEN_REVOKED, pb.CLOSE_REASON_BOT_DISABLED):
            raise PermissionError(f"the server ended the stream: {closed.message}")
        raise RuntimeError(f"the server ended the stream: {closed.message}")

    def matches_left(self) -> int:
        """For Join.matches: the ladder matches still to play (the one in progress counts,
        so a reconnect takes it back); 0 for no limit, or for one seat of one match."""
        if self.ladder is None or self.matches <= 0:
            return 0
        return self.matches - self.played

    def _start(self, started: pb.MatchStarted) -> None:
        seats = ", ".join(started.seat_names)
        if self.bot is not None and started.match_id == self.match_id:
            log.info("resumed match %s, seat %d", started.match_id, started.seat)
            return
        if self.bot is not None and self.ladder is None:
            log.warning("the token now plays match %s, not %s; starting a new bot",
                        started.match_id, self.match_id)
        self.bot = self.factory(started.game, self.seed)
        self.match_id = started.match_id
        self.answers.clear()
        log.info("match %s started: %s, seat %d of [%s], playing %s%s", started.match_id,
                 started.game, started.seat, seats, self.spec,
                 "" if started.rated or self.ladder is None else " (unrated)")

    def _event(self, public: pb.PublicEvent) -> None:
        try:
            event = wire.event_from_proto(public)
        except ValueError as e:
            log.warning("an event this runner cannot read (%s): %s", e, public)
            return
        log.debug("event %s %s", type(event).__name__, event)
        on_event = getattr(self.bot, "on_event", None)
        if not callable(on_event):
            return
        name, fields = type(event).__name__, event._asdict()

        def call() -> None:
            try:
                on_event(name, fields)
            except Exception:
                log.exception("the bot's on_event(%r) raised", name)

        self.thread.submit(call)

    async def _decide(self, request: pb.DecisionRequest, received: float) -> pb.Answer | None:
        did = request.decision_id
        if self.bot is None:
            log.warning("decision %s came before MatchStarted; ignored", did)
            return None
        if did in self.answers:
            log.info("decision %s asked again; sending the same answer", did)
            return pb.Answer(decision_id=did, action=self.answers[did])
        kind = wire.KIND_FROM_PROTO.get(request.kind)
        if kind is None:
            log.error("decision %s has an unknown kind %d; not answered", did, request.kind)
            return None
        budget_s = (request.time_left_ms - self.margin_ms) / 1000 - (time.monotonic() - received)
        if budget_s <= 0:
            log.warning("missed decision %s (%s): only %d ms left, margin %d ms", did, kind.name,
                        request.time_left_ms, self.margin_ms)
            return None
        observation = wire.observation_from_request(request)
        bot = self.bot
        began = time.monotonic()
        try:
            action: Action = await asyncio.wait_for(
                self.thread.submit(lambda: bot.decide(observation)), budget_s)
        except TimeoutError:
            log.warning("missed decision %s (%s): the bot did not answer within %.0f ms; the "
                        "server applies the default action", did, kind.name, budget_s * 1000)
            return None
        except Exception:
            log.exception("the bot raised on decision %s (%s); not answered, the server "
                          "applies the default action", did, kind.name)
            return None
        taken_ms = (time.monotonic() - began) * 1000
        proto = _encode(kind, action)
        if proto is None:
            log.error("decision %s (%s): the bot answered %r, which is not a %s; not answered",
                      did, kind.name, action, _ACTION_NOUN[wire.ACTION_FIELD[kind]])
            return None
        self.answers[did] = proto
        log.info("decision %s (%s): answered %r in %.1f ms", did, kind.name, action, taken_ms)
        return pb.Answer(decision_id=did, action=proto)


_ACTION_NOUN = {"card": "card", "row": "row index", "word": "word"}
"""What each ``Action`` field holds, for messages."""


def _encode(kind: DecisionKind, action: Any) -> pb.Action | None:
    """The wire form of ``action``, or None if it is of the wrong type for ``kind``."""
    if wire.ACTION_FIELD[kind] == "word":
        return wire.action_to_proto(kind, action) if isinstance(action, str) else None
    if isinstance(action, bool):
        return None
    try:
        number = operator.index(action)  # ints, and integer types such as numpy's
    except TypeError:
        return None
    return wire.action_to_proto(kind, number)


# --------------------------------------------------------------------------- transports


class _Connection:
    """One connection's progress: whether the server has sent anything on it."""

    def __init__(self) -> None:
        self.heard = False


async def _play_stream(seat: _Seat, stubs: dict[str, Any], metadata: Sequence[tuple[str, str]],
                       client: str, conn: _Connection) -> pb.MatchEnded | None:
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
                                                     games=seat.games)))
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


async def _play_unary(seat: _Seat, stubs: dict[str, Any], metadata: Sequence[tuple[str, str]],
                      client: str, conn: _Connection) -> pb.MatchEnded | None:
    """Play over Subscribe and SubmitAnswer; MatchEnded, or None if the stream just ended."""
    call = stubs["Subscribe"](pb.SubscribeRequest(client=client, ladder=seat.ladder or "",
                                                  accept_batches=True,
                                                  matches=seat.matches_left(),
                                                  games=seat.games),
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


async def _handle_unary(seat: _Seat, stubs: dict[str, Any], metadata: Sequence[tuple[str, str]],
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


# --------------------------------------------------------------------------- play


def _channel_options() -> list[tuple[str, int]]:
    # A private subchannel per channel, so each attempt really dials instead of inheriting
    # gRPC's own (much longer) reconnect backoff; the runner does the backing off.
    return [*wire.channel_options(), ("grpc.use_local_subchannel_pool", 1),
            ("grpc.initial_reconnect_backoff_ms", int(RECONNECT.first_s * 1000)),
            ("grpc.max_reconnect_backoff_ms", int(RECONNECT.max_s * 1000))]


async def _connect(channel: grpc.aio.Channel) -> bool:
    """Dial ``channel``; True once it is ready, False when the attempt fails."""
    state = channel.get_state(try_to_connect=True)
    while state is not grpc.ChannelConnectivity.READY:
        if state in (grpc.ChannelConnectivity.TRANSIENT_FAILURE,
                     grpc.ChannelConnectivity.SHUTDOWN):
            return False
        await channel.wait_for_state_change(state)
        state = channel.get_state(try_to_connect=True)
    return True


def _refusal(e: grpc.aio.AioRpcError) -> Exception:
    """The exception ``play`` raises for a status it does not retry."""
    code, details = e.code(), e.details() or "(no details)"
    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return PermissionError(f"the server refused the token: {code.name}: {details}")
    if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED):
        return ValueError(f"the server rejected the request: {code.name}: {details}")
    return RuntimeError(f"the server ended the seat's stream: {code.name}: {details}")


async def play(server: str, token: str, bot_spec: str, *, seed: int = 0,
               transport: str = "stream", margin_ms: int = 50, give_up_after_s: float = 60.0,
               client: str = "bullring-python",
               on_message: Callable[[pb.PlayResponse], None] | None = None,
               ladder: str | None = None, matches: int = 0) -> pb.MatchEnded:
    """Play the seat ``token`` names on ``server`` with the bot ``bot_spec``; return the result.

    With ``ladder`` (a game id) and a registered bot's token, play that game's ladder: one
    match after another on the same stream, until ``matches`` have ended (0: forever); the
    last result is returned.

    The bot is made (``load_bot(bot_spec, game, seed)``) when MatchStarted arrives. Each
    decision is answered if the bot decides within the time left minus ``margin_ms``;
    otherwise nothing is sent and the server applies its default action. ``on_message`` is
    called with every message from the server, before the runner acts on it.

    When the connection fails (UNAVAILABLE, CANCELLED, DEADLINE_EXCEEDED, INTERNAL, UNKNOWN)
    or the stream ends before MatchEnded, the runner reconnects into the same seat with
    exponential backoff and jitter (0.05 s doubling up to 2 s). It raises
    ``ConnectionError`` once ``give_up_after_s`` has passed without a working connection
    (one on which the server sent something), ``PermissionError`` at once for
    UNAUTHENTICATED / PERMISSION_DENIED, ``ValueError`` for INVALID_ARGUMENT /
    RESOURCE_EXHAUSTED or a bad bot spec, and ``RuntimeError`` for any other status.

    A stream the server ends on purpose carries a last ``Closed`` message, acted on before
    the status (which a client still writing may see as INTERNAL): replaced by a newer
    connection with the same token raises ``RuntimeError``, a rotated token or a disabled
    bot ``PermissionError``, each with the server's message; none is reconnected. The
    bot's ``games`` go in the Join, so a seat or ladder of another game is refused
    (FAILED_PRECONDITION: ``RuntimeError``) before it is taken.
    """
    if transport not in TRANSPORTS:
        raise ValueError(f"unknown transport {transport!r}; use one of {', '.join(TRANSPORTS)}")
    if margin_ms < 0:
        raise ValueError(f"margin_ms must be >= 0, not {margin_ms}")
    seat = _Seat(bot_spec, bot_factory(bot_spec), seed, margin_ms, on_message, ladder, matches,
                 bot_class(bot_spec).games)
    session = _play_stream if transport == "stream" else _play_unary
    metadata = (("authorization", f"Bearer {token}"),)
    down_since = time.monotonic()
    failures = 0
    last_error = "no attempt yet"
    try:
        while True:
            remaining = give_up_after_s - (time.monotonic() - down_since)
            if remaining <= 0:
                raise ConnectionError(f"gave up on {server} after {give_up_after_s:g} s "
                                      f"without a connection; last error: {last_error}")
            conn = _Connection()
            log.info("connecting to %s (%s)%s", server, transport,
                     f", attempt {failures + 1}" if failures else "")
            async with grpc.aio.insecure_channel(server, options=_channel_options()) as channel:
                try:
                    ready = await asyncio.wait_for(_connect(channel), remaining)
                    last_error = "cannot connect"
                except TimeoutError:
                    ready, last_error = False, "connecting timed out"
                if ready:
                    log.info("connected to %s", server)
                    try:
                        ended = await session(seat, wire.bot_stub(channel), metadata, client,
                                              conn)
                    except grpc.aio.AioRpcError as e:
                        if e.code() not in RETRYABLE:
                            raise _refusal(e) from None
                        last_error = f"{e.code().name}: {e.details()}"
                    else:
                        if ended is not None:
                            if ladder is None:
                                log.info("match %s ended: totals %s ranks %s (%s)",
                                         seat.match_id, list(ended.totals), list(ended.ranks),
                                         wire.termination_name(ended.termination))
                            return ended
                        last_error = "the stream ended before MatchEnded"
            if conn.heard:
                down_since, failures = time.monotonic(), 0
            failures += 1
            delay = RECONNECT.pause(failures)
            remaining = give_up_after_s - (time.monotonic() - down_since)
            log.warning("connection to %s failed (%s); reconnecting in %.2f s", server, last_error,
                        max(0.0, min(delay, remaining)))
            await asyncio.sleep(max(0.0, min(delay, remaining)))
    finally:
        seat.thread.close()
