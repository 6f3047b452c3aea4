"""Every connection to a bot is bounded in bytes and in time, never in messages: a Play
stream that answers and never reads, one whose client stops reading, an event stream that
is not read, a spectator that never reads and a long-poll that never acknowledges are each
ended with a reason (``Closed``, STALLED, for a bot's), within seconds, never buffered
without bound (on real servers)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import select
import socket
import time
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.match.outbox import MAX_UNREAD_BYTES
from tests.seat_client import SeatClient
from tests.serving import Match, ServerProcess, db_url

SMALL_WINDOW = [("grpc.http2.bdp_probe", 0)]
"""Channel options that keep a client's HTTP/2 window at its first 64 KiB."""

BOGUS = pb.PlayRequest(answer=pb.Answer(decision_id="nope" * 1000, action=pb.Action(card=1)))
"""An answer to no decision: each is rejected with a verdict of 4 KB (its id echoed)."""


def _stall_reasons(server: ServerProcess, match: Match, seat: int = 0) -> list[str]:
    """Why ``seat`` was disconnected, as its match's stored replay says."""
    replay = json.loads(server.replay(match.match_id))
    return [str(e.get("reason")) for e in replay["events"]
            if e["type"] == "disconnect" and e["seat"] == seat]


async def _match_ended(server: ServerProcess, match: Match, within_s: float) -> None:
    """Watch ``match`` until it ends (an AssertionError after ``within_s``)."""
    async def watch() -> None:
        while True:  # a watcher cut off for falling behind a fast match watches again
            async with grpc.aio.insecure_channel(server.address) as channel:
                try:
                    async for item in wire.watch_stub(channel)(pb.WatchRequest(
                            match_id=match.match_id)):
                        if item.WhichOneof("body") == "match_ended":
                            return
                except grpc.aio.AioRpcError as exc:
                    if exc.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                        raise
    try:
        await asyncio.wait_for(watch(), within_s)
    except TimeoutError:
        raise AssertionError(f"match {match.match_id} did not end within {within_s} s: its "
                             f"stalled seat was never let go") from None


async def _read_to_the_end(call: Any) -> tuple[list[pb.PlayResponse], grpc.StatusCode, str]:
    """Every message left on a Play call, then its status and details."""
    messages: list[pb.PlayResponse] = []
    with contextlib.suppress(grpc.aio.AioRpcError):
        while (response := await call.read()) is not grpc.aio.EOF:
            messages.extend(wire.unbatch(response))
    return messages, await call.code(), str(await call.details())


def test_a_stream_that_answers_and_never_reads_is_ended_as_stalled_by_bytes(
        tmp_path: Any) -> None:
    """A Play stream that keeps sending answers and never reads its verdicts: once its
    client's transport holds what it takes (5 MB, gRPC's window grows that far) and the
    seat's outbox MAX_UNREAD_BYTES more, the stream is ended as stalled, counted in bytes
    (the stall timeout is a minute here): the seat is let go at once, so its match, which
    waits a minute for it, ends by defaults; the server reads the client no more, and the
    call ends (RESOURCE_EXHAUSTED; a client still writing sees INTERNAL, as docs/protocol.md
    says of gRPC Python)."""
    server = ServerProcess(db_url(tmp_path), ["--stall-timeout", "60"]).start()
    try:
        match = server.create_match("six_nimmt", 2, "--house", "1=random", "--setting",
                                    "rounds=1", "--deadline-ms", "60000")

        async def flood() -> tuple[grpc.StatusCode, int]:
            async with grpc.aio.insecure_channel(server.address) as channel:
                call: Any = wire.bot_stub(channel)["Play"](
                    metadata=[("authorization", f"Bearer {match.tokens[0]}")])
                await call.write(pb.PlayRequest(join=pb.Join(client="flood")))
                assert (await call.read()).WhichOneof("body") == "match_started"
                sent = 0

                async def send() -> None:
                    nonlocal sent
                    with contextlib.suppress(grpc.aio.AioRpcError):
                        while True:  # blocks once the server reads no more
                            await call.write(BOGUS)
                            sent += 1

                sender = asyncio.create_task(send())
                await _match_ended(server, match, 60)
                _, code, _ = await _read_to_the_end(call)
                await sender
                return code, sent
        code, sent = asyncio.run(flood())
        assert code in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INTERNAL), code
        assert _stall_reasons(server, match) == [f"stalled: {MAX_UNREAD_BYTES} bytes left "
                                                 f"unread"]
        # the server read the flood until its verdicts left MAX_UNREAD_BYTES unread (how
        # much more the transport took in first depends on the machine's load)
        assert sent * len(BOGUS.SerializeToString()) > MAX_UNREAD_BYTES, sent
    finally:
        log = server.stop()
    assert "Traceback" not in log and "ExecuteBatchError" not in log, log[-3000:]


def test_a_play_stream_whose_client_stops_reading_is_ended_after_the_stall_timeout(
        tmp_path: Any) -> None:
    """A bot joins, reads its first message, is sent more than its 64 KiB window takes
    (verdicts of 40 answers), then reads nothing: once one write has waited
    ``--stall-timeout`` (1 s here) the stream is ended as stalled, though far fewer than
    MAX_UNREAD_BYTES wait; the seat is let go at once (its match, which waits a minute for
    it, ends by defaults) and the client, reading again, gets ``Closed`` (STALLED, saying
    the write waited 1 s) and RESOURCE_EXHAUSTED."""
    server = ServerProcess(db_url(tmp_path), ["--stall-timeout", "1"]).start()
    try:
        match = server.create_match("six_nimmt", 2, "--house", "1=random", "--setting",
                                    "rounds=1", "--deadline-ms", "60000")

        async def stop_reading() -> tuple[list[pb.PlayResponse], grpc.StatusCode, str]:
            async with grpc.aio.insecure_channel(server.address,
                                                 options=SMALL_WINDOW) as channel:
                call: Any = wire.bot_stub(channel)["Play"](
                    metadata=[("authorization", f"Bearer {match.tokens[0]}")])
                await call.write(pb.PlayRequest(join=pb.Join(client="sleepy")))
                assert (await call.read()).WhichOneof("body") == "match_started"
                for _ in range(40):
                    await call.write(BOGUS)
                await _match_ended(server, match, 30)
                return await _read_to_the_end(call)
        messages, code, details = asyncio.run(stop_reading())
        closed = messages[-1]
        assert closed.WhichOneof("body") == "closed", (len(messages), code, details)
        assert closed.closed.reason == pb.CLOSE_REASON_STALLED
        assert "a write waited 1 s for the client to read" in closed.closed.message
        assert (code, details) == (grpc.StatusCode.RESOURCE_EXHAUSTED, closed.closed.message)
        assert _stall_reasons(server, match) == ["stalled: a write waited 1 s for the client "
                                                 "to read"]
    finally:
        log = server.stop()
    assert "Traceback" not in log, log[-3000:]


def _open_event_stream(server: ServerProcess, token: str) -> socket.socket:
    """A seat's event stream on a plain socket with a small receive buffer; its response
    head read, nothing more."""
    host, port = server.http.removeprefix("http://").rsplit(":", 1)
    conn = socket.socket()
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    conn.settimeout(30)
    conn.connect((host, int(port)))
    conn.sendall(f"GET /api/play/stream HTTP/1.1\r\nHost: test\r\n"
                 f"Authorization: Bearer {token}\r\n\r\n".encode())
    assert conn.recv(2048).startswith(b"HTTP/1.1 200 OK")
    return conn


def _read_response(conn: socket.socket) -> bytes:
    """What is left of a chunked response, up to its last chunk."""
    data = b""
    while not data.endswith(b"\r\n0\r\n\r\n"):
        chunk = conn.recv(65536)
        assert chunk, data[-500:]
        data += chunk
    return data


@pytest.mark.skipif(bool(os.environ.get("BULLRING_EXPECT_COMPILED")),
                    reason="timed for the sources: the compiled server may play its match "
                           "to the end before the silent client's socket fills, so no write "
                           "ever waits the stall timeout")
def test_an_event_stream_whose_client_stops_reading_is_ended_then_hung_up(
        tmp_path: Any) -> None:
    """A seat's event stream (``GET /api/play/stream``) whose client reads nothing while its
    match plays on by defaults (the seat struck out): it is ended as stalled while the match
    runs, its seat let go, and a client that reads again gets the messages sent, then event
    ``closed`` (STALLED). A client that still reads nothing one stall timeout later has its
    connection reset: the server keeps nothing of it."""
    server = ServerProcess(db_url(tmp_path), ["--stall-timeout", "3"]).start()
    admin = server.admin_token()
    try:
        def fast_match() -> Match:
            return server.create_match("six_nimmt", 2, "--house", "1=random", "--setting",
                                       "rounds=1000", "--deadline-ms", "50")

        reader = fast_match()
        conn = _open_event_stream(server, str(reader.tokens[0]))
        _wait_for_stalled_streams(server, admin, 1)  # then read at once, within 3 s
        tail = _read_response(conn)[-600:].decode()
        conn.close()
        assert "event: closed\r\n" in tail or "event: closed\n" in tail, tail
        assert '"reason": "CLOSE_REASON_STALLED"' in tail, tail
        asyncio.run(_match_ended(server, reader, 120))
        reasons = _stall_reasons(server, reader)
        assert reasons[-1].startswith("stalled: "), reasons

        silent = fast_match()
        conn = _open_event_stream(server, str(silent.tokens[0]))
        _wait_for_stalled_streams(server, admin, 2)
        hung_up = select.poll()
        hung_up.register(conn, select.POLLERR | select.POLLHUP)  # still read nothing
        assert hung_up.poll(30_000), "the server kept the silent stream open"
        error = conn.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        conn.close()
        assert error == errno.ECONNRESET, error
        asyncio.run(_match_ended(server, silent, 120))
        assert _stall_reasons(server, silent)[-1].startswith("stalled: ")
    finally:
        log = server.stop()
    assert "Traceback" not in log, log[-3000:]


def _wait_for_stalled_streams(server: ServerProcess, admin: str, count: int) -> None:
    """Wait (at most 120 s) until ``/metrics`` counts ``count`` HTTP event streams ended as
    stalled."""
    name = 'bullring_streams_stalled_total{transport="http_stream"}'
    deadline = time.monotonic() + 120
    with httpx.Client(base_url=server.http, timeout=30,
                      headers={"Authorization": f"Bearer {admin}"}) as client:
        while time.monotonic() < deadline:
            lines = client.get("/metrics").text.splitlines()
            stalled = [float(line.split()[-1]) for line in lines if line.startswith(name)]
            if stalled and stalled[0] >= count:
                return
            time.sleep(0.05)  # a poll's pause: the counter has no push
    raise AssertionError(f"fewer than {count} event streams stalled within 120 s")


def test_a_spectator_that_never_reads_is_cut_off_not_buffered(server: ServerProcess) -> None:
    """A Watch stream that never reads while its match publishes thousands of events: the
    spectator's messages go through one bounded outbox, as a seat's do, so once it falls
    MAX_UNREAD_BYTES behind it is ended (RESOURCE_EXHAUSTED, saying why) and holds no
    more; a spectator that reads gets every event to the end, and the log holds no error."""
    match = server.create_match("six_nimmt", 2, "--house", "1=random", "--setting",
                                "rounds=700")

    def watch(channel: grpc.aio.Channel) -> Any:
        return wire.watch_stub(channel)(pb.WatchRequest(match_id=match.match_id))

    async def play() -> tuple[int, int, grpc.StatusCode, str]:
        async with grpc.aio.insecure_channel(server.address) as channel, \
                grpc.aio.insecure_channel(server.address, options=SMALL_WINDOW) as idle:
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
                async for item in stuck:
                    got += item.ByteSize()
            except grpc.aio.AioRpcError as exc:
                return sum(m.ByteSize() for m in everything), got, exc.code(), \
                    str(exc.details())
            return sum(m.ByteSize() for m in everything), got, grpc.StatusCode.OK, ""
    total, got, code, details = asyncio.run(play())
    assert total > MAX_UNREAD_BYTES + (128 << 10), total  # fills the window and the outbox
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "behind" in details, (code, details)
    assert got < total - MAX_UNREAD_BYTES, (got, total)
    log = server.stop()
    assert "Traceback" not in log and "ExecuteBatchError" not in log, log[-3000:]


def test_a_long_poll_that_never_acknowledges_is_cut_off_not_buffered(
        server: ServerProcess) -> None:
    """A long-poll connection whose polls keep the lease but never acknowledge (``after``
    stays 0) while its seat is sent message after message: its unacknowledged messages are
    bounded in bytes as a stream's outbox is, so past MAX_UNREAD_BYTES the connection ends
    with a Closed message (STALLED) saying why, instead of the log growing for the whole
    match."""
    match = server.create_match("six_nimmt", 2, "--house", "1=random", "--setting",
                                "rounds=300", "--deadline-ms", "10")
    headers = {"Authorization": f"Bearer {match.tokens[0]}"}
    with httpx.Client(base_url=server.http, headers=headers, timeout=60) as client:
        polled = client.get("/api/play/poll", params={"wait_ms": 0}).json()
        while not polled["closed"]:
            polled = client.get("/api/play/poll", params={"after": 0, "wait_ms": 5000}).json()
    last = polled["messages"][-1]
    assert last.get("closed", {}).get("reason") == "CLOSE_REASON_STALLED", last
    assert "unacknowledged" in last["closed"]["message"]
    assert "match_ended" not in {k for m in polled["messages"] for k in m}
    held = sum(json_format.ParseDict({k: v for k, v in m.items() if k != "seq"},
                                     pb.PlayResponse()).ByteSize()
               for m in polled["messages"][:-1])
    assert MAX_UNREAD_BYTES * 0.9 < held <= MAX_UNREAD_BYTES, held
    log = server.stop()
    assert "Traceback" not in log, log[-3000:]
