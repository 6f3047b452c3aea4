"""Seats relayed between the servers of a fleet through a NATS broker (``bullring serve
--broker``).

Servers sharing one PostgreSQL database take turns at the ladder's tables
(``bullring.server.store.turns``); with a broker a table may mix bots connected to several
servers. The server whose turn it is runs the match (the *match's server*). For a seat whose
bot is connected to another server (the *bot's server*) it attaches an outbox to the seat as
a stream would, and a pump empties it into frames (``bullring.server.fleet.frames``) for that
server, each message as the gRPC stream writes it; taking a request out of that outbox to
publish it is its sending, which starts the seat's clock. The bot's server reads the frames
back into typed messages (``bullring.contract.codec.play_message``) and puts them in the
bot's ladder connection, which its transport writes as for a match of its own
(``RelayedSeat``). The bot's answers go back to the match's server; the verdict of one
answered on a stream joins the seat's outbox there before the events and the next request
that the answer brings, so they reach the bot in the order a local match sends them. Every
frame for a server goes to its one subject, read in order by one subscription: a reply on a
subject of its own (NATS request/reply) would be read beside it, in no set order.

Every server publishes that it is alive each second (``frames.ALIVE``). A server that has
heard nothing of itself for ``SILENCE_S`` (its link to the broker is down), or nothing of a
server it shares seats with, ends those seats within seconds: the match's server aborts
the match (stored once, as aborted, unrated), the bot's server ends the bot's connection so
that it connects again and waits for its next table. A match whose game is over is recorded
as finished only once every server it relays a seat to has answered a ping at its end
(``MatchRunner.vet``), else as aborted: a seat that played on defaults for want of the link
does not count against its bot.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias
from urllib.parse import urlsplit, urlunsplit

from bullring.contract import codec, wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.contract.messages import Accepted, Closed, Ended, Rejected, Started, Verdict
from bullring.server.errors import BrokerError
from bullring.server.fleet import frames
from bullring.server.fleet.frames import Kind
from bullring.server.match.hub import MatchHub
from bullring.server.match.outbox import Outbox
from bullring.server.match.runner import MatchRunner
from bullring.server.store import MatchConfig

if TYPE_CHECKING:
    from nats.aio.client import Client
    from nats.aio.msg import Msg

log = logging.getLogger("bullring.fleet")

BEAT_S = 1.0
"""How often a server publishes that it is alive."""
SILENCE_S = 3.0
"""A server not heard for this long is gone from the broker (this one too: its link is down);
the seats shared with it end."""
CHECK_S = 0.5
"""How often the links are looked at."""
ASK_S = 5.0
"""How long an answer given outside a stream (SubmitAnswer, HTTP) waits for its verdict."""
CONNECT_S = 5.0
"""How long starting waits for the broker (and for its first message back)."""
FORGET_S = 60.0
"""A server not heard for this long is forgotten."""
STOP_S = 2.0
"""How long stopping waits for the last frames (the aborted matches' ends) to go out."""
PUMP = "relay-pump-"
"""The name of a pump's task, before its match's id."""
UNREACHED = "the server running this match could not be reached"
"""Why an answer that got no verdict is rejected."""


class SeatKeeper(Protocol):
    """What the ladder of the bot's server does with the seats relayed to it."""

    def take_relayed(self, seat: RelayedSeat) -> bool:
        """Seat the bot's ladder connection here in ``seat`` (``seat.take``); False if the
        bot has no connection here that may play it."""

    def relayed_over(self, seat: RelayedSeat) -> None:
        """``seat``'s match ended (its end was relayed): the bot waits for its next one."""

    def relayed_cut(self, seat: RelayedSeat, closed: Closed | None) -> None:
        """``seat`` ends for the bot's connection here: with ``closed`` as its last message
        (a newer connection took the seat on the match's server), or with none (the link
        was lost: the connection ends so that the bot connects again)."""

    def link_changed(self, up: bool) -> None:
        """This server's link to the broker is up, or was lost."""


@dataclass(eq=False)
class _Outgoing:
    """On the match's server: a seat of a match here whose bot is connected to ``server``."""

    runner: MatchRunner
    seat: int
    bot: str
    server: str
    outbox: Outbox | None = None
    """The outbox its pump empties, while the bot's connection there is attached."""
    connection: int = 0


class RelayedSeat:
    """On the bot's server: the bot's seat in a match another server (``host``) runs. The
    ladder holds it where it holds a local match's runner: its connection attaches to it and
    detaches from it, and its answers go through it."""

    def __init__(self, relay: Relay, seat: int, bot: str, host: str, started: Started
                 ) -> None:
        self.relay = relay
        self.seat = seat
        self.bot = bot
        self.host = host
        """The instance id of the match's server."""
        self.config = MatchConfig(started.match_id, started.game, started.settings, 0,
                                  started.seat_names, {}, "running", started.rated)
        """The match, as its start tells it (no seed: that stays on the match's server)."""
        self.outbox: Outbox | None = None
        """The outbox of the bot's connection that plays the seat now, if any."""
        self.connection = 0

    @property
    def match_id(self) -> str:
        """The match's id."""
        return self.config.match_id

    def take(self, outbox: Outbox) -> int:
        """Attach the bot's connection whose outbox the match's first messages go to (the
        match's server attached this seat already); return the connection's number."""
        self.outbox = outbox
        self.connection += 1
        return self.connection

    def attach(self, seat: int, outbox: Outbox | None = None, via: str = ""
               ) -> tuple[Outbox, int]:
        """A newer connection of the bot plays the seat (as ``MatchRunner.attach``): the
        match's server sends it the match's start and any pending request again."""
        assert outbox is not None  # a ladder connection's
        connection = self.take(outbox)
        self.relay.send(self.host, frames.encode(Kind.ATTACH, self.match_id, seat,
                                                 self.relay.instance, via.encode()))
        return outbox, connection

    def detach(self, seat: int, connection: int, reason: str) -> None:
        """The bot's connection ``connection`` ended (as ``MatchRunner.detach``): the seat
        is disconnected on the match's server until the bot is back."""
        if connection != self.connection or self.outbox is None:
            return
        self.outbox = None
        self.relay.send(self.host, frames.encode(Kind.DETACH, self.match_id, seat,
                                                 self.relay.instance, reason.encode()))

    def answer(self, answer: pb.Answer) -> None:
        """Send an answer read on the bot's stream; its verdict comes back to the stream,
        before what the answer brings."""
        self.relay.send(self.host, frames.encode(Kind.ANSWER, self.match_id, self.seat,
                                                 self.relay.instance,
                                                 answer.SerializeToString()))

    async def ask(self, answer: pb.Answer) -> Verdict:
        """Send an answer given outside a stream and wait for its verdict (rejected as not
        pending if none comes within ``ASK_S``)."""
        return await self.relay.ask(self, answer)


SeatHost: TypeAlias = MatchRunner | RelayedSeat
"""Where a bot's seat is played: a match here, or a match on another server relayed here."""


class Relay:
    """This server's link to the fleet's broker, and the seats it relays either way."""

    def __init__(self, url: str, instance: str, hub: MatchHub) -> None:
        self.url = url
        self.shown = _without_secrets(url)
        """The broker's URL for the log and messages: without a user or password in it."""
        self.instance = instance
        """This server's instance id (``InstanceGuard``): its subject is named after it."""
        self.hub = hub
        self.keeper: SeatKeeper | None = None
        """The ladder that takes the seats relayed here (set by it)."""
        self._nc: Client | None = None
        self._heard: dict[str, float] = {}
        """When each server (this one too) was last heard alive (monotonic seconds)."""
        self._outgoing: dict[tuple[str, int], _Outgoing] = {}
        """The seats of matches here whose bots are connected elsewhere, by (match, seat)."""
        self._relayed: dict[tuple[str, int], RelayedSeat] = {}
        """The seats of bots connected here in matches run elsewhere, by (match, seat)."""
        self._asked: dict[int, tuple[asyncio.Future[Verdict], str]] = {}
        """Answers waiting for their verdict, by number: the future and the decision id."""
        self._pinged: dict[int, asyncio.Future[None]] = {}
        """Pings waiting for their pong, by number."""
        self._numbers = 0
        self._queue: collections.deque[tuple[str, bytes]] = collections.deque()
        """Frames to publish, in order."""
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        """The relay's tasks: sending, beating, watching, a pump per relayed seat."""
        self._up = False
        self._stopping = False
        self._aborting: set[str] = set()

    # -- the link --------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to the broker and wait until this server hears itself there (BrokerError
        if it cannot within ``CONNECT_S``)."""
        try:
            import nats
        except ImportError:
            raise BrokerError("--broker needs the NATS client: pip install 'bullring[fleet]'"
                              ) from None
        try:
            self._nc = await asyncio.wait_for(nats.connect(
                self.url, name=f"bullring-{self.instance}", allow_reconnect=True,
                connect_timeout=2, reconnect_time_wait=1, max_reconnect_attempts=-1,
                ping_interval=1, max_outstanding_pings=2, error_cb=self._error,
                disconnected_cb=self._disconnected, reconnected_cb=self._reconnected),
                CONNECT_S)
        except TimeoutError:
            raise BrokerError(f"cannot reach the broker at {self.shown} within "
                              f"{CONNECT_S:g} s") from None
        except Exception as exc:  # nats-py's own errors, OSError
            raise BrokerError(f"cannot reach the broker at {self.shown}: "
                              f"{str(exc) or type(exc).__name__}") from None
        nc = self._nc
        await nc.subscribe(frames.subject(self.instance), cb=self._on_frame,
                           pending_msgs_limit=-1, pending_bytes_limit=-1)
        await nc.subscribe(frames.ALIVE, cb=self._on_alive)
        self._spawn(self._sender(), "relay-sender")
        self._spawn(self._beat(), "relay-beat")
        began = time.monotonic()
        while not self.up:
            if time.monotonic() - began > CONNECT_S:
                await self.stop()
                raise BrokerError(f"the broker at {self.shown} did not pass this server's "
                                  f"messages back within {CONNECT_S:g} s")
            await asyncio.sleep(0.02)
        self._up = True
        self._spawn(self._watch(), "relay-watch")
        log.info("linked to the broker at %s as server %s", self.shown, self.instance)

    async def stop(self) -> None:
        """Stop relaying and close the link, once the ends of the matches the hub aborted
        are published (within ``STOP_S``)."""
        self._stopping = True
        pumps = [t for t in self._tasks if t.get_name().startswith(PUMP)]
        if pumps:
            await asyncio.wait(pumps, timeout=STOP_S)
        nc = self._nc
        if nc is not None and nc.is_connected:
            began = time.monotonic()
            while self._queue and time.monotonic() - began < STOP_S:
                await asyncio.sleep(0.01)
            with contextlib.suppress(Exception):
                await nc.flush(timeout=int(STOP_S))
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        for key in list(self._relayed):
            self._cut(key, None)
        self._nc = None
        if nc is not None:
            with contextlib.suppress(Exception):
                await nc.close()

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        """Run ``work`` as one of the relay's tasks (stopping cancels it)."""
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @property
    def up(self) -> bool:
        """Whether the link works: connected, and this server heard itself lately."""
        nc = self._nc
        return nc is not None and nc.is_connected and \
            time.monotonic() - self._heard.get(self.instance, -SILENCE_S) < SILENCE_S

    def heard(self) -> list[str]:
        """The other servers heard alive lately."""
        now = time.monotonic()
        return [i for i, at in self._heard.items()
                if i != self.instance and now - at < SILENCE_S]

    def send(self, server: str, frame: bytes) -> None:
        """Publish ``frame`` for ``server``, after every frame sent before it."""
        self._queue.append((frames.subject(server), frame))
        self._wake.set()

    async def _sender(self) -> None:
        """Publish the queued frames in order (dropped while the link is down: the seats
        they were for end)."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            nc = self._nc
            while self._queue:
                subject, frame = self._queue.popleft()
                if nc is None or not nc.is_connected:
                    continue
                try:
                    await nc.publish(subject, frame)
                except Exception as exc:  # nats-py's own errors while the link goes down
                    log.debug("a relay frame was not published: %s", exc)

    async def _beat(self) -> None:
        while True:
            self._queue.append((frames.ALIVE, self.instance.encode()))
            self._wake.set()
            await asyncio.sleep(BEAT_S)

    async def _on_alive(self, message: Msg) -> None:
        self._heard[message.data.decode("ascii", "replace")] = time.monotonic()

    async def _error(self, exc: Exception) -> None:
        log.debug("broker: %s", exc)

    async def _disconnected(self) -> None:
        if not self._stopping:
            log.warning("the link to the broker at %s is down", self.shown)
            # At once, not on the next look, and apart from the client's reconnecting.
            self._spawn(self._check(), "relay-lost")

    async def _reconnected(self) -> None:
        log.warning("the link to the broker at %s is back", self.shown)

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(CHECK_S)
            try:
                await self._check()
            except Exception:
                log.exception("looking at the links to the fleet's servers failed")

    async def _check(self) -> None:
        """End the seats shared with servers not heard lately (all of them when this one's
        own link is down), and tell the ladder when the link goes down or comes back."""
        up = self.up
        if up != self._up:
            self._up = up
            if self.keeper is not None:
                self.keeper.link_changed(up)
        heard = set(self.heard())
        now = time.monotonic()
        for instance in [i for i, at in self._heard.items() if now - at > FORGET_S]:
            del self._heard[instance]  # gone (or of another fleet on the same broker)
        lost = [key for key, seat in self._relayed.items() if not up or seat.host not in heard]
        for key in lost:
            seat = self._relayed[key]
            log.warning("bot %s: match %s on server %s is out of reach; its connection ends",
                        seat.bot, seat.match_id, seat.host)
            self._cut(key, None)
        if not up:
            for future, decision_id in self._asked.values():
                if not future.done():
                    future.set_result(Rejected(decision_id, pb.REJECT_REASON_NOT_PENDING,
                                               UNREACHED))
        matches = {key[0]: out.server for key, out in self._outgoing.items()
                   if (not up or out.server not in heard) and out.runner.ended is None}
        for match_id, server in matches.items():
            if match_id in self._aborting:
                continue
            self._aborting.add(match_id)
            log.warning("match %s: server %s, where a bot of it is connected, is out of "
                        "reach; the match is aborted", match_id, server)
            try:
                await self.hub.abort(match_id)
            finally:
                self._aborting.discard(match_id)

    # -- the match's server ------------------------------------------------------------------

    def relay(self, runner: MatchRunner, seat: int, bot: str, server: str) -> None:
        """Play ``seat`` of ``runner``'s match (here) through the connection of ``bot`` on
        ``server``: attach an outbox to it and pump that into frames for that server."""
        out = _Outgoing(runner, seat, bot, server)
        self._outgoing[(runner.config.match_id, seat)] = out
        runner.vet = functools.partial(self._vet, runner.config.match_id)
        self._attach(out, f"relay to server {server}")

    def _attach(self, out: _Outgoing, via: str) -> None:
        if out.outbox is not None:
            out.outbox.close()  # quietly: the newer connection is attached at once
        outbox, out.connection = out.runner.attach(out.seat, via=via)
        out.outbox = outbox
        self._spawn(self._pump(out, outbox), f"{PUMP}{out.runner.config.match_id}")

    async def _pump(self, out: _Outgoing, outbox: Outbox) -> None:
        """Publish what ``outbox`` holds for the bot's server as it comes, until its end;
        taking a request out starts the seat's clock."""
        head = frames.head(Kind.PLAY, out.runner.config.match_id, out.seat, self.instance,
                           out.bot)
        subject = frames.subject(out.server)
        try:
            ended = False
            while not ended:
                await outbox.wait()
                taken = []
                while not outbox.empty():
                    item = outbox.get_nowait()
                    if item is None:
                        ended = True
                        break
                    taken.append(codec.play_bytes(item))
                outbox.written()  # being published: their requests are sent
                if taken:
                    self._queue.append((subject, head + frames.pack(taken)))
                    self._wake.set()
        finally:
            if out.outbox is outbox:
                out.outbox = None
                held = out.runner.seats[out.seat].outbox
                key = (out.runner.config.match_id, out.seat)
                if held is not None and held is not outbox and self._outgoing.get(key) is out:
                    # A connection of the bot to this server took the seat (REPLACED was
                    # relayed): the seat is relayed no more, its match needs that link no more.
                    del self._outgoing[key]

    async def _vet(self, match_id: str) -> bool:
        """Whether the link to every server a seat of ``match_id`` is relayed to held to
        the match's end: each answers a ping within ``SILENCE_S``. Else its end is recorded
        as aborted: a seat may have played on defaults for want of the link."""
        servers = {out.server for key, out in self._outgoing.items() if key[0] == match_id}
        if not servers:
            return True  # its relayed seats were all taken by connections to this server
        if not self.up:
            log.warning("match %s ended while the link to the broker was down: it is "
                        "recorded as aborted", match_id)
            return False
        pinged = {}
        for server in servers:
            self._numbers += 1
            pinged[self._numbers] = asyncio.get_running_loop().create_future()
            self.send(server, frames.encode(Kind.PING, match_id, 0, self.instance,
                                            number=self._numbers))
        self._pinged.update(pinged)
        try:
            _, silent = await asyncio.wait(pinged.values(), timeout=SILENCE_S)
        finally:
            for number in pinged:
                self._pinged.pop(number, None)
        if silent:
            log.warning("match %s: a server where a bot of it is connected did not answer "
                        "at its end; it is recorded as aborted", match_id)
        return not silent

    def _pong(self, frame: frames.Frame) -> None:
        """A server answered a ping."""
        future = self._pinged.get(frame.number)
        if future is not None and not future.done():
            future.set_result(None)

    def match_over(self, match_id: str) -> None:
        """``match_id`` (here) is over and stored: forget its relayed seats."""
        for key in [k for k in self._outgoing if k[0] == match_id]:
            del self._outgoing[key]

    def _answered(self, frame: frames.Frame) -> None:
        """An answer from the bot's server: submit it; its verdict goes to the seat's
        outbox ahead of what it brings (an answer read on a stream), or back by number."""
        out = self._outgoing.get((frame.match_id, frame.seat))
        try:
            answer = pb.Answer.FromString(frame.body)
        except Exception:  # protobuf's DecodeError: not from a server of this fleet
            log.warning("a malformed answer was relayed from server %s", frame.sender)
            return
        if out is None or out.server != frame.sender or out.runner.ended is not None:
            verdict: Verdict = Rejected(answer.decision_id, pb.REJECT_REASON_NOT_PENDING,
                                        "no match of this bot is in progress there")
            runner = None
        else:
            runner = out.runner
            verdict = runner.submit(out.seat, answer.decision_id,
                                    wire.action_from_proto(answer.action),
                                    field=wire.action_field(answer.action),
                                    comment=answer.comment)
        outbox = None if out is None else out.outbox
        if frame.number == 0 and outbox is not None and not outbox.ended:
            outbox.put_nowait(verdict)
        else:
            self.send(frame.sender, frames.encode(
                Kind.VERDICT, frame.match_id, frame.seat, self.instance,
                codec.play_bytes(verdict), number=frame.number))
        if runner is not None:
            runner.settle()

    def _attached(self, frame: frames.Frame) -> None:
        """The bot's connection on its server is back (or is a newer one): attach anew."""
        out = self._outgoing.get((frame.match_id, frame.seat))
        if out is not None and out.server == frame.sender and out.runner.ended is None:
            self._attach(out, frame.body.decode("utf-8", "replace"))

    def _detached(self, frame: frames.Frame) -> None:
        """The bot's connection on its server ended: the seat is disconnected here."""
        out = self._outgoing.get((frame.match_id, frame.seat))
        if out is None or out.server != frame.sender or out.outbox is None:
            return
        outbox, out.outbox = out.outbox, None
        out.runner.detach(out.seat, out.connection, frame.body.decode("utf-8", "replace"))
        outbox.close()

    # -- the bot's server --------------------------------------------------------------------

    def _played(self, frame: frames.Frame) -> None:
        """Messages for a seat relayed here: into the bot's connection, in order."""
        key = (frame.match_id, frame.seat)
        messages = [codec.play_message(m) for m in frames.unpack(frame.body)]
        seat = self._relayed.get(key)
        if seat is None:
            first = messages[0] if messages else None
            if type(first) is not Started:
                self._refuse(frame, "the seat's connection here has ended")
                return
            seat = RelayedSeat(self, frame.seat, frame.bot, frame.sender, first)
            if self.keeper is None or not self.keeper.take_relayed(seat):
                self._refuse(frame, f"bot {frame.bot} has no connection to server "
                                    f"{self.instance} that may play this match")
                return
            self._relayed[key] = seat
        for message in messages:
            if seat.outbox is not None:
                seat.outbox.put_nowait(message)
            if type(message) is Ended:
                del self._relayed[key]
                if self.keeper is not None:
                    self.keeper.relayed_over(seat)
                return
            if type(message) is Closed:
                self._cut(key, message)
                return

    def _refuse(self, frame: frames.Frame, why: str) -> None:
        """Tell the match's server that the seat of ``frame`` has no connection here."""
        self.send(frame.sender, frames.encode(Kind.DETACH, frame.match_id, frame.seat,
                                              self.instance, why.encode()))

    def _cut(self, key: tuple[str, int], closed: Closed | None) -> None:
        """End the relayed seat ``key`` here (see ``SeatKeeper.relayed_cut``)."""
        seat = self._relayed.pop(key, None)
        if seat is not None and self.keeper is not None:
            self.keeper.relayed_cut(seat, closed)

    async def ask(self, seat: RelayedSeat, answer: pb.Answer) -> Verdict:
        """Send ``answer`` for ``seat`` and wait for its verdict (see ``RelayedSeat.ask``)."""
        if not self.up:
            return Rejected(answer.decision_id, pb.REJECT_REASON_NOT_PENDING, UNREACHED)
        self._numbers += 1
        number = self._numbers
        future: asyncio.Future[Verdict] = asyncio.get_running_loop().create_future()
        self._asked[number] = (future, answer.decision_id)
        self.send(seat.host, frames.encode(Kind.ANSWER, seat.match_id, seat.seat,
                                           self.instance, answer.SerializeToString(),
                                           number=number))
        try:
            return await asyncio.wait_for(future, ASK_S)
        except TimeoutError:
            return Rejected(answer.decision_id, pb.REJECT_REASON_NOT_PENDING, UNREACHED)
        finally:
            self._asked.pop(number, None)

    def _ping(self, frame: frames.Frame) -> None:
        """Answer a ping (every frame before it is handled)."""
        self.send(frame.sender, frames.encode(Kind.PONG, frame.match_id, frame.seat,
                                              self.instance, number=frame.number))

    def _verdict(self, frame: frames.Frame) -> None:
        """The verdict of an answer asked for by number."""
        waiting = self._asked.get(frame.number)
        if waiting is not None and not waiting[0].done():
            verdict = codec.play_message(frame.body)
            if isinstance(verdict, Accepted | Rejected):
                waiting[0].set_result(verdict)

    # -- frames in -------------------------------------------------------------------------

    async def _on_frame(self, message: Msg) -> None:
        try:
            frame = frames.decode(message.data)
            HANDLERS[frame.kind](self, frame)
        except Exception:
            log.exception("a relay frame could not be handled")


def _without_secrets(url: str) -> str:
    """``url`` without the user and password it may hold."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


HANDLERS: dict[Kind, Callable[[Relay, frames.Frame], None]] = {
    Kind.PLAY: Relay._played,
    Kind.VERDICT: Relay._verdict,
    Kind.ANSWER: Relay._answered,
    Kind.ATTACH: Relay._attached,
    Kind.DETACH: Relay._detached,
    Kind.PING: Relay._ping,
    Kind.PONG: Relay._pong,
}
"""What a server does with each kind of frame it reads."""

