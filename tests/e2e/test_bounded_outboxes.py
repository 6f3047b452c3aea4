"""Every message a connection is sent goes through one bounded outbox: a bot stream that
answers and never reads, a spectator that never reads and a long-poll that never
acknowledges are each cut off at ``MAX_UNREAD`` with a reason, never buffered without bound
(on real servers)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import grpc
import httpx

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.match.outbox import MAX_UNREAD
from tests.seat_client import SeatClient
from tests.serving import ServerProcess


def test_a_stream_that_answers_and_never_reads_is_cut_off_not_buffered(
        server: ServerProcess) -> None:
    """A Play stream that keeps sending answers and never reads its verdicts: the verdicts
    go through the seat's one bounded outbox, so once it holds its limit the connection is
    dropped as stalled (the seat plays on by default and the match ends), and the server
    stops reading what the client sends."""
    match = server.create_match("six_nimmt", 2, "--house", "1=random", "--setting",
                                "rounds=3", "--deadline-ms", "200")

    async def flood() -> int:
        async with grpc.aio.insecure_channel(server.address) as channel:
            call: Any = wire.bot_stub(channel)["Play"](
                metadata=[("authorization", f"Bearer {match.tokens[0]}")])
            await call.write(pb.PlayRequest(join=pb.Join(client="flood")))
            assert (await call.read()).WhichOneof("body") == "match_started"  # then no more
            bogus = pb.PlayRequest(answer=pb.Answer(decision_id="nope" * 1000,
                                                    action=pb.Action(card=1)))
            sent = 0

            async def send() -> None:
                nonlocal sent
                while True:
                    await call.write(bogus)
                    sent += 1

            sender = asyncio.create_task(send())
            async with grpc.aio.insecure_channel(server.address) as watcher:
                watch = watcher.unary_stream(wire.WATCH,
                                             request_serializer=pb.WatchRequest.SerializeToString,
                                             response_deserializer=pb.WatchResponse.FromString)
                async for item in watch(pb.WatchRequest(match_id=match.match_id)):
                    if item.WhichOneof("body") == "match_ended":
                        break
            sender.cancel()
            call.cancel()
            return sent
    sent = asyncio.run(flood())
    replay = json.loads(server.replay(match.match_id))
    reasons = [e.get("reason") for e in replay["events"]
               if e["type"] == "disconnect" and e["seat"] == 0]
    rejects = sum(e["type"] == "reject" for e in replay["events"])
    assert any(str(r).startswith("stalled: ") for r in reasons), (reasons, sent, rejects)
    rejects = sum(e["type"] == "reject" for e in replay["events"])
    assert rejects < sent and rejects < 20_000, (rejects, sent)
    log = server.stop()
    assert "Traceback" not in log and "ExecuteBatchError" not in log, log[-3000:]


def test_a_spectator_that_never_reads_is_cut_off_not_buffered(server: ServerProcess) -> None:
    """A Watch stream that never reads while its match publishes thousands of events: the
    spectator's messages go through one bounded outbox, as a seat's do, so once it falls
    MAX_UNREAD messages behind it is ended (RESOURCE_EXHAUSTED, saying why) and holds no
    more; a spectator that reads gets every event to the end, and the log holds no error."""
    match = server.create_match("six_nimmt", 2, "--house", "1=random", "--setting",
                                "rounds=150")
    watch_options = [("grpc.http2.bdp_probe", 0)]  # the client's window stays small

    def watch(channel: grpc.aio.Channel) -> Any:
        stub = channel.unary_stream(wire.WATCH,
                                    request_serializer=pb.WatchRequest.SerializeToString,
                                    response_deserializer=pb.WatchResponse.FromString)
        return stub(pb.WatchRequest(match_id=match.match_id))

    async def play() -> tuple[int, int, grpc.StatusCode, str]:
        async with grpc.aio.insecure_channel(server.address) as channel, \
                grpc.aio.insecure_channel(server.address, options=watch_options) as idle:
            seat = SeatClient(channel, str(match.tokens[0]))
            seat.join()
            await seat.next("match_started")
            stuck = watch(idle)
            await stuck.initial_metadata()  # the stream is open; it is never read meanwhile

            async def answer() -> None:
                with contextlib.suppress(EOFError):
                    while True:
                        request = await seat.next("decision")
                        seat.answer(request.decision_id, request.legal[0])
            player = asyncio.create_task(answer())
            everything = [item async for item in watch(channel)]
            await player
            assert everything[-1].WhichOneof("body") == "match_ended"
            got = 0
            try:
                async for _ in stuck:
                    got += 1
            except grpc.aio.AioRpcError as exc:
                return len(everything), got, exc.code(), str(exc.details())
            return len(everything), got, grpc.StatusCode.OK, ""
    total, got, code, details = asyncio.run(play())
    assert total > 3 * MAX_UNREAD, total  # enough to fill the transport and the outbox
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "behind" in details, (code, details)
    assert got < total - MAX_UNREAD, (got, total)
    log = server.stop()
    assert "Traceback" not in log and "ExecuteBatchError" not in log, log[-3000:]


def test_a_long_poll_that_never_acknowledges_is_cut_off_not_buffered(
        server: ServerProcess) -> None:
    """A long-poll connection whose polls keep the lease but never acknowledge (``after``
    stays 0) while its seat is sent message after message: its log is bounded as a stream's
    outbox is, so at MAX_UNREAD unacknowledged messages the connection ends with a Closed
    message saying why, instead of the log growing for the whole match."""
    match = server.create_match("six_nimmt", 2, "--house", "1=random", "--setting",
                                "rounds=100", "--deadline-ms", "10")
    headers = {"Authorization": f"Bearer {match.tokens[0]}"}
    with httpx.Client(base_url=server.http, headers=headers, timeout=60) as client:
        polled = client.get("/api/play/poll", params={"wait_ms": 0}).json()
        while not polled["closed"]:
            polled = client.get("/api/play/poll", params={"after": 0, "wait_ms": 5000}).json()
    last = polled["messages"][-1]
    assert "closed" in last and "unacknowledged" in last["closed"]["message"], last
    assert len(polled["messages"]) <= MAX_UNREAD + 1
    assert "match_ended" not in {k for m in polled["messages"] for k in m}
    log = server.stop()
    assert "Traceback" not in log, log[-3000:]
