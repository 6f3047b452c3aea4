"""What an attacker or a careless operator can do to a running server, each on a real
``bullring serve``: a second server on a taken port, guessable deals, huge, unread or
trickled requests, idle connections by the thousand, many connections or calls from one
address, refused event streams, look-alike names, and replays recorded elsewhere
(connections that never read: ``test_bounded_outboxes.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.registry import get_game
from bullring.referee.replay import build_replay
from bullring.server.store import Store
from tests.seat_client import SeatClient
from tests.serving import CLI, ServerProcess, db_url, finish


def _rss_kb(pid: int) -> int:
    """A process's resident memory now (VmRSS, KiB)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _port(address: str) -> str:
    return address.rsplit(":", 1)[1]


def test_a_second_server_on_a_taken_grpc_port_refuses_to_start(server: ServerProcess,
                                                                tmp_path: Path) -> None:
    """gRPC binds with SO_REUSEPORT unless told not to, so a second server on a port in use
    used to print "listening" and take half the connections. It now exits 2 naming the
    address and the reason, before serving anything."""
    (tmp_path / "other").mkdir()
    result = subprocess.run([*CLI, "serve", "--port", _port(server.address), "--http-port", "0",
                             "--db", db_url(tmp_path / "other")], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2, result.stdout
    assert "listening" not in result.stdout
    assert f"cannot listen on {server.address}" in result.stderr
    assert "in use" in result.stderr


def _first_hand(server: ServerProcess, token: str) -> list[int]:
    """Seat 0's hand in its first decision request (the seat is then left)."""
    async def read() -> list[int]:
        async with grpc.aio.insecure_channel(server.address) as channel:
            seat = SeatClient(channel, token)
            seat.join()
            request = await seat.next("decision")
            seat.close()
            seat.call.cancel()
            return sorted(a.card for a in request.legal)
    return asyncio.run(read())


def test_matches_created_without_a_seed_deal_from_fresh_secret_seeds(
        server: ServerProcess) -> None:
    """Two matches created without --seed (CLI) or "seed" (HTTP) deal different hands; each
    stored seed is a fresh random one, and the replay shows it once the match is over."""
    one = server.create_match("six_nimmt", 2, "--house", "1=random", "--setting", "rounds=1")
    two = server.create_match("six_nimmt", 2, "--house", "1=random", "--setting", "rounds=1")
    admin = server.admin_token()
    created = httpx.post(f"{server.http}/api/admin/matches", json={
        "game": "six_nimmt", "seats": 2, "house": {"1": "random"}}, headers={
        "Authorization": f"Bearer {admin}"}).json()
    three = created["seats"][0]["token"]
    hands = [_first_hand(server, str(t)) for t in (one.tokens[0], two.tokens[0], three)]
    assert len({tuple(h) for h in hands}) == 3, hands
    store = Store(server.db)
    seeds = [store.match_config(m).seed for m in (one.match_id, two.match_id,
                                                   created["match_id"])]
    assert len(set(seeds)) == 3 and 0 not in seeds
    bot = server.bot(one.tokens[0], "house:random")
    assert finish([bot])[0][0] == 0
    assert json.loads(server.replay(one.match_id))["seed"] == seeds[0]


def _raw_http(base: str, request: bytes) -> bytes:
    """Send ``request`` on a fresh connection; return everything the server answers."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        conn.sendall(request)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_huge_or_unauthenticated_bodies_are_refused_before_they_are_read(
        server: ServerProcess) -> None:
    """A 100 MB body announced to an admin route is refused (413) on its head alone, with
    the body never sent; a body streamed without a length is cut off (413) at the limit and
    the server's memory does not take it in; a bad body without a token is 401, not 422."""
    assert server.proc is not None
    refused = _raw_http(server.http, b"POST /api/admin/bots HTTP/1.1\r\nHost: x\r\n"
                        b"Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n")
    assert refused.startswith(b"HTTP/1.1 413"), refused[:200]
    assert b'"payload_too_large"' in refused
    admin = server.admin_token()
    before = _rss_kb(server.proc.pid)

    def chunks() -> Any:
        for _ in range(40):  # 40 MB, no Content-Length
            yield b"x" * (1 << 20)

    cut = httpx.post(f"{server.http}/api/admin/bots", content=chunks(),
                     headers={"Authorization": f"Bearer {admin}"}, timeout=60)
    assert cut.status_code == 413 and cut.json()["error"]["code"] == "payload_too_large"
    assert _rss_kb(server.proc.pid) - before < 20 * 1024
    bad = httpx.post(f"{server.http}/api/admin/bots", content=b"{not json")
    assert bad.status_code == 401, bad.text
    wrong = httpx.post(f"{server.http}/api/admin/bots", content=b"{not json",
                       headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 403, wrong.text
    fine = httpx.post(f"{server.http}/api/admin/bots", json={"name": "ok-bot"},
                      headers={"Authorization": f"Bearer {admin}"})
    assert fine.status_code == 201, fine.text


def test_streams_without_join_are_bounded_per_connection_and_time_out(
        tmp_path: Path) -> None:
    """3,000 Play streams opened on one connection, none sending Join: at most
    ``--max-streams`` are open at once (the rest are refused), each is ended for want of a
    Join within the header timeout, and the server's memory is back near where it was."""
    server = ServerProcess(db_url(tmp_path), ["--max-streams", "100",
                                              "--header-timeout", "0.4"]).start()
    try:
        match = server.create_match("six_nimmt", 2, "--house", "1=random")
        assert server.proc is not None
        before = _rss_kb(server.proc.pid)

        async def open_many() -> dict[str, int]:
            codes: dict[str, int] = {}
            async with grpc.aio.insecure_channel(server.address) as channel:
                play = wire.bot_stub(channel)["Play"]
                calls = [play(metadata=[("authorization", f"Bearer {match.tokens[0]}")])
                         for _ in range(3000)]
                for call in calls:
                    code = (await call.code()).name
                    codes[code] = codes.get(code, 0) + 1
            return codes
        codes = asyncio.run(open_many())
        assert set(codes) <= {"DEADLINE_EXCEEDED", "UNAVAILABLE"}, codes
        assert codes.get("DEADLINE_EXCEEDED", 0) >= 100, codes
        assert _rss_kb(server.proc.pid) - before < 30 * 1024
    finally:
        log = server.stop()
    assert "Traceback" not in log, log[-3000:]


def test_idle_connections_by_the_thousand_under_ulimit_1024_lock_nobody_out(
        tmp_path: Path) -> None:
    """Under ``ulimit -n 1024``, 1,000 idle connections to each port: the server accepts
    no more than its share of descriptors, closes the silent ones after the header
    timeout, and a new bot still plays its match; the log stays small (no traceback per
    refused accept)."""
    log_path = tmp_path / "server.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(  # prlimit: see ServerProcess._limited
            ["prlimit", "--nofile=1024", "--", *CLI, "serve", "--port", "0", "--http-port", "0",
             "--db", db_url(tmp_path), "--header-timeout", "2"], stdout=subprocess.PIPE,
            stderr=log, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    held: list[socket.socket] = []
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().split("listening on ")[1].split()[0]
        http = proc.stdout.readline().split("HTTP API on ")[1].split()[0].rstrip("/")
        http_port = int(http.rsplit(":", 1)[1])
        grpc_port = int(_port(address))
        for port in (grpc_port, http_port):
            for _ in range(1000):
                held.append(socket.create_connection(("127.0.0.1", port)))
        helper = ServerProcess(db_url(tmp_path))
        helper.address = address
        match = helper.create_match("six_nimmt", 2, "--house", "1=random", "--setting",
                                    "rounds=1")
        bot = helper.bot(match.tokens[0], "house:random")
        (code, out), = finish([bot], timeout=180)
        assert code == 0, out[-2000:]
        assert "termination" in out or "normal" in out, out[-2000:]
    finally:
        for conn in held:
            conn.close()
        proc.terminate()
        proc.wait(timeout=30)
    size = log_path.stat().st_size
    assert size < 1_000_000, size
    assert "Too many open files" not in log_path.read_text()


def test_bot_names_are_normal_and_of_one_script_and_owners_are_capped(
        server: ServerProcess) -> None:
    """A name spelled with look-alike letters of another script ("goodbot" with Cyrillic
    o's) or in a compatibility form (full-width) is refused, over HTTP and over gRPC alike
    (names are plain ASCII letters, digits, '-', '_' and '.'); so is a 60 KB owner over
    gRPC, as over HTTP."""
    admin = server.admin_token()
    headers = {"Authorization": f"Bearer {admin}"}
    for name in ("g\u043e\u043edbot", "\uff47\uff4f\uff4f\uff44"):
        refused = httpx.post(f"{server.http}/api/admin/bots", json={"name": name},
                             headers=headers)  # the schema's pattern refuses it: 422
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["code"] == "invalid_request", refused.text
    assert httpx.post(f"{server.http}/api/admin/bots", json={"name": "good-bot"},
                      headers=headers).status_code == 201

    async def register(name: str, owner: str) -> grpc.StatusCode:
        async with grpc.aio.insecure_channel(server.address) as channel:
            call = channel.unary_unary(f"/{wire.ADMIN_SERVICE}/RegisterBot",
                                       request_serializer=pb.RegisterBotRequest.SerializeToString,
                                       response_deserializer=pb.RegisterBotResponse.FromString)
            try:
                await call(pb.RegisterBotRequest(name=name, owner=owner),
                           metadata=[("authorization", f"Bearer {admin}")])
            except grpc.aio.AioRpcError as exc:
                return exc.code()
            return grpc.StatusCode.OK
    assert asyncio.run(register("wide-owner", "x" * 60_000)) == \
        grpc.StatusCode.INVALID_ARGUMENT
    assert asyncio.run(register("g\u043e\u043edbot", "")) == grpc.StatusCode.INVALID_ARGUMENT
    assert asyncio.run(register("plain-owner", "team 7")) == grpc.StatusCode.OK


def test_watch_of_an_unknown_huge_id_does_not_echo_it(server: ServerProcess) -> None:
    """Watch with a 60 KB match id is NOT_FOUND with a short message, not the id again."""
    async def watch() -> grpc.aio.AioRpcError:
        async with grpc.aio.insecure_channel(server.address) as channel:
            call = channel.unary_stream(wire.WATCH,
                                        request_serializer=pb.WatchRequest.SerializeToString,
                                        response_deserializer=pb.WatchResponse.FromString)
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                async for _ in call(pb.WatchRequest(match_id="m" * 60_000)):
                    pass
            return raised.value
    error = asyncio.run(watch())
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert len(error.details() or "") < 200, len(error.details() or "")


def test_closing_live_feeds_logs_nothing(server: ServerProcess) -> None:
    """Thirty spectators open the SSE feed of a match in full play, read its first event and
    hang up while events still flow: the server logs no error for it (uvicorn logged
    "Exception in ASGI application" with a traceback for most of them)."""
    match = server.create_match("six_nimmt", 2, "--house", "1=random", "--setting",
                                "end_threshold=5000")

    async def spectate_while_playing() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            seat = SeatClient(channel, str(match.tokens[0]))
            seat.join()

            live = asyncio.Event()

            async def play() -> None:
                with contextlib.suppress(EOFError, grpc.aio.AioRpcError):
                    while True:
                        request = await seat.next("decision")
                        live.set()  # the match is live: its feed streams events
                        seat.answer(request.decision_id, request.legal[0])
            player = asyncio.create_task(play())
            await live.wait()
            await asyncio.to_thread(_open_and_hang_up, 30)
            player.cancel()
            await asyncio.gather(player, return_exceptions=True)
            seat.close()
            seat.call.cancel()

    def _open_and_hang_up(times: int) -> None:
        for _ in range(times):
            with httpx.stream("GET", f"{server.http}/api/matches/{match.match_id}/feed",
                              timeout=30) as feed:
                assert feed.status_code == 200
                for line in feed.iter_lines():
                    if line.startswith("data:"):
                        break
    asyncio.run(spectate_while_playing())
    log = server.stop()
    assert "unhandled error" not in log and "Traceback" not in log, log[-3000:]


def test_a_replay_recorded_elsewhere_is_verified_from_its_rounds(tmp_path: Path) -> None:
    """A peer's 6 nimmt! game in ``bullring.replay/1`` with an empty match log and a seed
    that does not deal its hands: ``bullring replay verify`` checks it from its rounds
    alone and says so; a tampered play in it is a mismatch naming the trick."""
    state = get_game("six_nimmt").new_state(4, {}, 99)
    while not state.over:
        state.apply({s: d.legal[-1] for s, d in state.pending.items()})
    peer = build_replay(state, match_id="peer-1", seat_names=["a", "b", "c", "d"], events=[])
    peer["seed"] = 0
    good = tmp_path / "peer-1.json"
    good.write_text(json.dumps(peer))
    result = subprocess.run([*CLI, "replay", "verify", str(good)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout
    assert "verified from its rounds alone" in result.stdout
    peer["rounds"][0]["tricks"][3]["plays"][1] = 200
    bad = tmp_path / "peer-2.json"
    bad.write_text(json.dumps(peer))
    result = subprocess.run([*CLI, "replay", "verify", str(bad)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1
    assert "rounds[0].tricks[3].plays" in result.stdout, result.stdout




def _answer_of(conn: socket.socket) -> bytes:
    """Everything the server sends on ``conn`` until it closes it."""
    chunks = []
    while chunk := conn.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _http_address(server: ServerProcess) -> tuple[str, int]:
    host, port = server.http.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def test_a_request_body_that_never_comes_is_answered_408_and_closed(tmp_path: Path) -> None:
    """A request head announcing a body that never comes, or stops halfway, holds its
    connection no longer than ``--body-timeout``: the server answers 408 (``body_timeout``)
    and closes it (the connection was held for ever: a head with ``Content-Length: 10`` and
    no body was open after 150 s). A body that comes whole is served as before."""
    server = ServerProcess(db_url(tmp_path), ["--body-timeout", "1"]).start()
    try:
        head = (b"POST /api/play/answer HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer some\r\n"
                b"Content-Type: application/json\r\nContent-Length: 10\r\n\r\n")
        for sent in (head, head + b'{"deci'):
            with socket.create_connection(_http_address(server), timeout=30) as conn:
                conn.sendall(sent)
                answer = _answer_of(conn)  # read to the end: the server closed it
            assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
            body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
            assert body["error"]["code"] == "body_timeout"
            assert "within 1 s" in body["error"]["message"]
        whole = httpx.post(f"{server.http}/api/play/answer", headers={
            "Authorization": "Bearer some"}, json={"decision_id": "d", "action": {"card": 1}})
        assert whole.status_code == 401, whole.text
    finally:
        log = server.stop()
    assert "Traceback" not in log, log[-3000:]


def test_http_connections_past_the_per_address_cap_are_refused_others_served(
        tmp_path: Path) -> None:
    """One client address holds at most ``--max-connections-per-address`` HTTP connections:
    one more is answered 429 (``too_many_connections``, with Retry-After) and closed, while
    another address (127.0.0.2) is served, and so is the first once it closes one (448 slow
    connections of one client locked every other client out)."""
    server = ServerProcess(db_url(tmp_path), ["--max-connections-per-address", "4",
                                              "--header-timeout", "60"]).start()
    held: list[socket.socket] = []
    request = b"GET /api/games HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    try:
        held = [socket.create_connection(_http_address(server)) for _ in range(4)]

        def ask(source: str) -> bytes:
            with socket.socket() as conn:
                conn.settimeout(30)
                conn.bind((source, 0))
                conn.connect(_http_address(server))
                conn.sendall(request)
                return _answer_of(conn)

        refused = ask("127.0.0.1")
        assert refused.startswith(b"HTTP/1.1 429 "), refused[:200]
        assert b"\r\nretry-after: 5\r\n" in refused.lower()
        assert json.loads(refused.split(b"\r\n\r\n", 1)[1])["error"]["code"] == \
            "too_many_connections"
        assert ask("127.0.0.2").startswith(b"HTTP/1.1 200 ")
        held.pop().close()
        deadline = time.monotonic() + 30
        while not (answer := ask("127.0.0.1")).startswith(b"HTTP/1.1 200 "):
            assert time.monotonic() < deadline, answer[:200]  # the server saw it close
    finally:
        for conn in held:
            conn.close()
        log = server.stop()
    assert "Traceback" not in log, log[-3000:]


class Relay:
    """A TCP relay on a free loopback port whose connections reach ``target`` from the
    address ``source`` (so a gRPC client, which cannot choose its own, comes from there)."""

    def __init__(self, source: str, target: tuple[str, int]) -> None:
        self.source, self.target = source, target
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        """Start relaying; return the relay's own address (HOST:PORT)."""
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return f"127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def close(self) -> None:
        """Stop relaying and end every relayed connection."""
        assert self.server is not None
        self.server.close()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _relay(self, client_r: asyncio.StreamReader,
                     client_w: asyncio.StreamWriter) -> None:
        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError):
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            writer.close()

        server_r, server_w = await asyncio.open_connection(*self.target,
                                                           local_addr=(self.source, 0))
        for task in (asyncio.create_task(pipe(client_r, server_w)),
                     asyncio.create_task(pipe(server_r, client_w))):
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)


def test_grpc_calls_past_the_per_address_cap_are_refused_others_served(
        tmp_path: Path) -> None:
    """One client address holds at most ``--max-calls-per-address`` concurrent gRPC calls,
    over all its connections: one more ends at once with RESOURCE_EXHAUSTED saying so,
    while a call from another address (127.0.0.2, through a relay) is served, and so is the
    first address's once one of its calls ends."""
    server = ServerProcess(db_url(tmp_path), ["--max-calls-per-address", "3"]).start()
    store = Store(server.db)
    tokens = [store.add_bot(f"bot{i}", owner="tests") for i in range(4)]

    async def join(channel: grpc.aio.Channel, token: str) -> Any:
        call = wire.bot_stub(channel)["Play"](metadata=[("authorization", f"Bearer {token}")])
        with contextlib.suppress(grpc.aio.AioRpcError):  # a refused call ends at once
            await call.write(pb.PlayRequest(join=pb.Join(ladder="six_nimmt")))
        return call

    async def calls() -> None:
        relay = Relay("127.0.0.2", (server.address.rsplit(":", 1)[0],
                                    int(server.address.rsplit(":", 1)[1])))
        relayed = await relay.start()
        async with grpc.aio.insecure_channel(server.address) as one, \
                grpc.aio.insecure_channel(server.address) as two, \
                grpc.aio.insecure_channel(relayed) as other:
            held = [await join(channel, token)
                    for channel, token in zip((one, one, two), tokens[:3], strict=True)]
            for call in held:  # each is counted: the server has answered it
                assert (await call.read()).WhichOneof("body") == "ladder_queued"
            refused = await join(two, tokens[3])
            assert await refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "--max-calls-per-address" in str(await refused.details())
            elsewhere = await join(other, tokens[3])
            assert (await elsewhere.read()).WhichOneof("body") == "ladder_queued"
            elsewhere.cancel()
            held.pop().cancel()
            deadline = time.monotonic() + 30
            while True:
                try:
                    await wire.ladder_stub(one)["GetLeaderboard"](
                        pb.GetLeaderboardRequest(game="six_nimmt"))
                    break
                except grpc.aio.AioRpcError as exc:
                    assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    assert time.monotonic() < deadline  # the server saw the call end
            for call in held:
                call.cancel()
        await relay.close()
    try:
        asyncio.run(calls())
    finally:
        log = server.stop()
    assert "Traceback" not in log, log[-3000:]


def test_an_oversized_body_gets_its_413_read_by_ordinary_clients(server: ServerProcess
                                                                  ) -> None:
    """An 8 MB body posted by an ordinary client (httpx, urllib), which sends it all before
    it reads: the server answers 413 on the head and reads the rest of the body away
    (bounded) before it closes, so each of 20 clients reads its 413 instead of a broken
    pipe (0 of 20 did when the connection was closed at once)."""
    admin = server.admin_token()
    body = b"x" * (8 << 20)
    statuses = []
    for _ in range(20):
        answer = httpx.post(f"{server.http}/api/admin/bots", content=body, timeout=60,
                            headers={"Authorization": f"Bearer {admin}",
                                     "Content-Type": "application/json"})
        statuses.append((answer.status_code, answer.json()["error"]["code"]))
    assert statuses == [(413, "payload_too_large")] * 20
    request = urllib.request.Request(f"{server.http}/api/admin/bots", data=body,
                                     headers={"Authorization": f"Bearer {admin}",
                                              "Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 413
    assert json.loads(refused.value.read())["error"]["code"] == "payload_too_large"
    log = server.stop()
    assert "Traceback" not in log, log[-3000:]


def test_play_stream_refusals_come_before_the_stream_with_the_error_table(
        tmp_path: Path) -> None:
    """``GET /api/play/stream`` runs every check before it answers: an unknown game, a
    ladder this server does not run, a bot token without a ladder (the server's one ladder,
    of another game than the bot plays), a seat token with one,
    a game mismatch and a match already over (aborted) are each refused with the error
    table's status and JSON error (the stream answered 200 and then dropped the connection,
    logging ASGI tracebacks); the server's log holds no traceback."""
    server = ServerProcess(db_url(tmp_path), ["--ladder", "six_nimmt"]).start()
    try:
        bot = subprocess.run([*CLI, "bots", "add", "streamer", "--db", server.db], check=True,
                             capture_output=True, text=True).stdout.split()[-1]
        over = server.create_match("six_nimmt", 2, "--house", "1=random")
        aborted = httpx.post(f"{server.http}/api/admin/matches/{over.match_id}/abort",
                             headers={"Authorization": f"Bearer {server.admin_token()}"})
        assert aborted.status_code == 200, aborted.text
        live = server.create_match("six_nimmt", 2, "--house", "1=random")
        cases = [(bot, {"ladder": "chess"}, 404, "unknown_game"),
                 (bot, {"ladder": "no_thanks"}, 409, "no_such_ladder"),
                 (bot, {"ladder": "six_nimmt", "games": "no_thanks"}, 409, "game_mismatch"),
                 (bot, {"games": "no_thanks"}, 409, "game_mismatch"),  # its one ladder
                 (live.tokens[0], {"ladder": "six_nimmt"}, 400, "ladder_needs_bot_token"),
                 (live.tokens[0], {"games": "no_thanks"}, 409, "game_mismatch"),
                 (over.tokens[0], {}, 409, "match_over"),
                 ("seat_unknown", {}, 401, "unauthorized")]
        with httpx.Client(base_url=server.http, timeout=30) as client:
            for token, query, status, code in cases:
                with client.stream("GET", "/api/play/stream", params=query,
                                   headers={"Authorization": f"Bearer {token}"}) as answer:
                    answer.read()
                    assert (answer.status_code, answer.headers["content-type"]) == \
                        (status, "application/json"), (query, answer.text)
                    assert answer.json()["error"]["code"] == code, (query, answer.text)
    finally:
        log = server.stop()
    assert "Traceback" not in log and "Exception in ASGI" not in log, log[-3000:]


@pytest.mark.parametrize("ladders", [["six_nimmt"], ["six_nimmt", "no_thanks"]])
def test_a_bot_token_without_a_ladder_is_the_same_over_grpc_and_http(
        tmp_path: Path, ladders: list[str]) -> None:
    """A registered bot that names no ladder joins the server's ladder when it runs one, over
    gRPC Join as over HTTP; on a server that runs several it is refused ladder_required
    (INVALID_ARGUMENT, 400) over both, naming them."""
    server = ServerProcess(db_url(tmp_path), ["--ladder", ",".join(ladders)]).start()
    try:
        token = subprocess.run([*CLI, "bots", "add", "nameless", "--db", server.db],
                               check=True, capture_output=True, text=True).stdout.split()[-1]

        async def grpc_join() -> tuple[grpc.StatusCode, str]:
            async with grpc.aio.insecure_channel(server.address) as channel:
                seat = SeatClient(channel, token)
                seat.send(pb.PlayRequest(join=pb.Join(client="test")))
                try:
                    queued = await seat.next("ladder_queued")
                except grpc.aio.AioRpcError as exc:
                    return exc.code(), exc.details() or ""
                finally:
                    seat.close()
                return grpc.StatusCode.OK, queued.game

        code, said = asyncio.run(grpc_join())
        with httpx.Client(base_url=server.http, timeout=30) as client:
            polled = client.get("/api/play/poll", params={"wait_ms": 0},
                                headers={"Authorization": f"Bearer {token}"})
        if len(ladders) == 1:
            assert (code, said) == (grpc.StatusCode.OK, "six_nimmt")
            assert polled.status_code == 200, polled.text
            assert polled.json()["messages"][0]["ladder_queued"]["game"] == "six_nimmt"
        else:
            assert code == grpc.StatusCode.INVALID_ARGUMENT and "six_nimmt, no_thanks" in said
            assert polled.status_code == 400, polled.text
            assert polled.json()["error"]["code"] == "ladder_required"
            assert "six_nimmt, no_thanks" in polled.json()["error"]["message"]
    finally:
        server.stop()
