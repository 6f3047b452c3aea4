"""The match runner's clock: a seat's deadline runs from when its request is taken out of
the seat's outbox to be written, not from when a busy server queued it; a request nobody
takes still ends in a timeout, so a match never hangs; and a connection that stopped
reading is dropped before its queue grows without bound."""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from pathlib import Path
from typing import Any

import grpc

from bullring.contract import codec, wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.contract.messages import Accepted
from bullring.referee.six_nimmt import new_state
from bullring.server.match.hub import MatchHub
from bullring.server.match.outbox import MAX_UNREAD_BYTES, Outbox
from bullring.server.match.runner import MatchRunner
from bullring.server.store import MatchConfig, Store
from bullring.server.transports.grpc.servicers import BotService


async def _nothing(_replay: dict[str, Any]) -> None:
    return None


async def _watched(spectator: Outbox) -> pb.WatchResponse | None:
    """A spectator's next message, as the gRPC stream writes it (None: the end)."""
    item = await spectator.get()
    return None if item is None else pb.WatchResponse.FromString(
        codec.watch_bytes(item))  # type: ignore[arg-type]  # an event or the end


def _runner(deadline_ms: int, **settings_given: Any) -> MatchRunner:
    """A 2-seat 6 nimmt! match: seat 0 for the test, seat 1 a house bot."""
    settings = new_state(2, {"deadline_ms": deadline_ms, **settings_given}).settings
    config = MatchConfig("clock", "six_nimmt", dict(settings), 7, ("test", "house"),
                         {1: "random"}, "created")
    return MatchRunner(config, _nothing)


async def _next_request(outbox: Outbox) -> pb.DecisionRequest:
    """Take messages from ``outbox`` (as its stream would) up to the next decision request."""
    while True:
        item = await outbox.get()
        assert item is not None, "the connection ended before a request came"
        message = pb.PlayResponse.FromString(codec.play_bytes(item))
        if message.WhichOneof("body") == "decision":
            return message.decision


async def _answer_first_request(runner: MatchRunner
                                ) -> tuple[Outbox, asyncio.Task[None], pb.DecisionRequest]:
    """Connect seat 0, start the match and answer its first request (first legal action),
    without settling the point; return the outbox, the match's task and that request."""
    outbox, _ = runner.attach(0)
    task = asyncio.create_task(runner.run())
    first = await _next_request(outbox)
    runner.submit(0, first.decision_id, wire.action_from_proto(first.legal[0]), field="card")
    return outbox, task, first


def test_a_request_held_in_the_outbox_keeps_the_seats_full_deadline() -> None:
    """A request that sits in the outbox longer than the deadline (the server was busy) is
    sent with the full deadline left, and an answer given right after it is taken is
    accepted with no timeout charged."""
    async def body() -> None:
        runner = _runner(500)
        outbox, _ = runner.attach(0)
        task = asyncio.create_task(runner.run())
        await runner.started.wait()  # the first request is queued by now
        await asyncio.sleep(0.7)  # a busy server: the request waits 1.4 deadlines
        request = await _next_request(outbox)  # after match start and opening events
        assert request.time_left_ms == 500
        verdict = runner.submit(0, request.decision_id, wire.action_from_proto(request.legal[0]),
                                field="card")
        assert isinstance(verdict, Accepted)
        assert not [e for e in runner.log if e["type"] == "timeout"]
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    asyncio.run(body())


def test_after_a_quick_answer_the_next_request_keeps_its_whole_deadline() -> None:
    """One timer serves all of a match's decision points and is left running when a point
    ends early: a point that follows one answered at once still times out only a full
    deadline after its own request was taken, not when the earlier point's timer fires."""
    async def body() -> None:
        runner = _runner(400)
        outbox, task, _ = await _answer_first_request(runner)
        runner.settle()
        await _next_request(outbox)  # taken, and left unanswered: its clock starts now
        taken = time.monotonic()
        await _next_request(outbox)  # the one after it: the unanswered one timed out
        waited = time.monotonic() - taken
        timeouts = [e for e in runner.log if e["type"] == "timeout"]
        assert [e["seat"] for e in timeouts] == [0]
        assert waited >= 0.4, f"timed out {waited:.3f} s after the request, before its deadline"
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    asyncio.run(body())


def test_a_complete_decision_nobody_settles_is_resolved_by_the_clock() -> None:
    """An answer that completes a point is resolved by whoever delivered it (``settle``);
    if nobody does, the deadline timer resolves it, with no timeout charged."""
    async def body() -> None:
        runner = _runner(100)
        outbox, task, first = await _answer_first_request(runner)
        second = await _next_request(outbox)  # no settle(): the clock moves the match on
        assert second.decision_id != first.decision_id
        assert not [e for e in runner.log if e["type"] == "timeout"]
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    asyncio.run(body())


def test_a_request_nobody_takes_still_times_out_and_the_match_goes_on() -> None:
    """A seat whose connection never takes its request (a stalled stream) is charged a
    timeout and given its default action; the match moves on to the next decision."""
    async def body() -> None:
        runner = _runner(100)
        runner.attach(0)  # connected, but nothing ever reads its outbox
        spectator = runner.feed.watch()
        task = asyncio.create_task(runner.run())
        first = await _watched(spectator)
        # the opening rows come first
        while first is not None and wire.event_type(first.event) != "CardsRevealed":
            first = await _watched(spectator)
        assert first is not None  # the trick was played
        timeouts = [e for e in runner.log if e["type"] == "timeout"]
        assert [(e["seat"], e["strikes"]) for e in timeouts] == [(0, 1)]
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    asyncio.run(body())


def test_a_connection_that_stops_reading_is_dropped_not_fed_forever() -> None:
    """A seat whose connection reads nothing strikes out, and its match plays on with
    defaults at once; once MAX_UNREAD_BYTES wait unread the runner closes that
    connection (dropping them) and the seat is disconnected, and the match ends."""
    async def body() -> None:
        runner = _runner(10, end_threshold=5_000)
        outbox, _ = runner.attach(0)  # connected, but nothing ever reads its outbox
        task = asyncio.create_task(runner.run())
        await runner.done.wait()
        await task
        drops = [e for e in runner.log if e["type"] == "disconnect"]
        assert [(e["seat"], e["reason"]) for e in drops] == \
            [(0, "3 timeouts in a row"), (0, f"stalled: {MAX_UNREAD_BYTES} bytes left unread")]
        last = outbox.get_nowait()
        assert last is not None
        closed = pb.PlayResponse.FromString(codec.play_bytes(last)).closed
        assert closed.reason == pb.CLOSE_REASON_STALLED
        assert outbox.qsize() == 1 and outbox.get_nowait() is None
        assert runner.state.over and runner.seats[0].outbox is None
    asyncio.run(body())


def test_an_answer_that_arrived_while_the_server_was_busy_is_not_a_timeout(
        tmp_path: Path) -> None:
    """An answer that reached the server before the deadline counts, even when the server
    was too busy to read it until after the deadline: the deadline check runs only once
    the answers already received are read. (A real gRPC server; the bot answers from its
    own thread while the server's event loop is kept busy past the deadline.)"""
    store = Store(f"sqlite:///{tmp_path}/clock.db")
    settings = new_state(2, {"deadline_ms": 300, "rounds": 1}).settings
    match_id, tokens = store.create_match("six_nimmt", settings, 7, ["bot", "house"],
                                          {1: "random"})
    server_busy, answered = threading.Event(), threading.Event()

    async def body() -> None:
        hub = MatchHub(store)
        server = grpc.aio.server()
        server.add_generic_rpc_handlers((BotService(hub).handler(),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        loop = asyncio.get_running_loop()

        def busy() -> None:
            """Hold the event loop until the bot has answered and the deadline is over."""
            server_busy.set()
            assert answered.wait(10)
            end = time.monotonic() + 0.45  # busy work, not a wait: past the 300 ms deadline
            while time.monotonic() < end:
                pass

        bot = threading.Thread(target=_answer_first_request_while_busy,
                               args=(f"127.0.0.1:{port}", str(tokens[0]), loop, busy,
                                     server_busy, answered))
        bot.start()
        await asyncio.to_thread(bot.join, 20)
        runner = hub.runners[match_id]
        await asyncio.wait_for(runner.done.wait(), 30)  # the bot has left: defaults at once
        first = next(e for e in runner.log if e["type"] in ("answer", "timeout")
                     and e["seat"] == 0)
        assert first["type"] == "answer" and not first["default"], first
        await hub.shutdown()
        await server.stop(None)

    asyncio.run(body())


def _answer_first_request_while_busy(address: str, token: str,
                                     loop: asyncio.AbstractEventLoop, busy: Any,
                                     server_busy: threading.Event,
                                     answered: threading.Event) -> None:
    """A bot on a plain (threaded) gRPC channel: at its first request it makes the server's
    loop busy, answers at once, and leaves once the answer is accepted."""
    outgoing: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
    outgoing.put(pb.PlayRequest(join=pb.Join(client="clock-test", accept_batches=True)))

    def requests() -> Any:
        while (message := outgoing.get()) is not None:
            yield message

    with grpc.insecure_channel(address) as channel:
        play = channel.stream_stream(wire.PLAY,
                                     request_serializer=pb.PlayRequest.SerializeToString,
                                     response_deserializer=pb.PlayResponse.FromString)
        stream = play(requests(), metadata=(("authorization", f"Bearer {token}"),))
        for response in stream:
            for message in wire.unbatch(response):
                kind = message.WhichOneof("body")
                if kind == "decision" and not answered.is_set():
                    loop.call_soon_threadsafe(busy)
                    assert server_busy.wait(10)
                    request = message.decision
                    outgoing.put(pb.PlayRequest(answer=pb.Answer(
                        decision_id=request.decision_id, action=request.legal[0])))
                    answered.set()
                elif kind in ("accepted", "rejected"):
                    outgoing.put(None)
                    stream.cancel()
                    return


def _play_at_once(address: str, token: str, ended: list[pb.MatchEnded]) -> None:
    """A bot on a plain (threaded) gRPC channel answering every request at once with its
    first legal action, until its match ends."""
    outgoing: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
    outgoing.put(pb.PlayRequest(join=pb.Join(client="clock-test", accept_batches=True)))

    def requests() -> Any:
        while (message := outgoing.get()) is not None:
            yield message

    with grpc.insecure_channel(address) as channel:
        play = channel.stream_stream(wire.PLAY,
                                     request_serializer=pb.PlayRequest.SerializeToString,
                                     response_deserializer=pb.PlayResponse.FromString)
        for response in play(requests(), metadata=(("authorization", f"Bearer {token}"),)):
            for message in wire.unbatch(response):
                kind = message.WhichOneof("body")
                if kind == "decision":
                    outgoing.put(pb.PlayRequest(answer=pb.Answer(
                        decision_id=message.decision.decision_id,
                        action=message.decision.legal[0])))
                elif kind == "match_ended":
                    ended.append(message.match_ended)
                    outgoing.put(None)
                    return


def test_a_server_whose_loop_stalls_past_deadlines_charges_no_timeout(tmp_path: Path) -> None:
    """Four bots answer every request at once while the server's event loop is held busy
    for 2.5 deadlines at a time, over and over, for a whole match: no timeout is charged
    (the seats' clocks stop while the server runs late), the match ends normally, and the
    log says how late the server ran. (A real gRPC server; each bot its own thread. The
    deadline, 400 ms, leaves a bot thread on a machine busy with other work time to be
    scheduled: a bot that really is late would be charged, rightly.)"""
    store = Store(f"sqlite:///{tmp_path}/stall.db")
    settings = new_state(4, {"deadline_ms": 400, "rounds": 1}).settings
    match_id, tokens = store.create_match("six_nimmt", settings, 11,
                                          [f"bot{s}" for s in range(4)], {})
    ended: list[pb.MatchEnded] = []
    stalls = [0]

    async def body() -> None:
        hub = MatchHub(store)
        server = grpc.aio.server()
        server.add_generic_rpc_handlers((BotService(hub).handler(),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        loop = asyncio.get_running_loop()

        def stall() -> None:
            """Busy work, not a wait: the loop runs nothing else for 1 s (2.5 deadlines),
            then again after 10 ms, for as long as the match lasts."""
            end = time.monotonic() + 1.0
            while time.monotonic() < end:
                pass
            stalls[0] += 1
            if not ended:
                loop.call_later(0.01, stall)

        bots = [threading.Thread(target=_play_at_once,
                                 args=(f"127.0.0.1:{port}", str(token), ended))
                for token in tokens]
        loop.call_soon(stall)  # the first stall starts as the bots connect: none can finish first
        for bot in bots:
            bot.start()
        for bot in bots:
            await asyncio.to_thread(bot.join, 120)
        runner = hub.runners[match_id]
        await asyncio.wait_for(runner.done.wait(), 30)
        await hub.shutdown()
        await server.stop(None)
        log = runner.log
        assert [e for e in log if e["type"] == "timeout"] == []
        assert len(ended) == 4 and ended[0].termination == pb.TERMINATION_NORMAL
        answers = [e for e in log if e["type"] == "answer"]
        assert answers and not any(e["default"] for e in answers)
        assert stalls[0] >= 1 and any(e.get("server_late_ms", 0) > 0 for e in answers)

    asyncio.run(body())
