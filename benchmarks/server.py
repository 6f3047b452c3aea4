"""Answered decisions per second and answer-to-next-request latency of the referee server,
beside a raw grpc.aio echo ping-pong measured in the same run.

Run: python benchmarks/server.py [--bots 1,64,512] [--seconds 5] [--clients 2]

Each connected bot plays its own 2-seat 6 nimmt! match against an in-process house bot, so
every wait it sees is the server's. Bots answer at once with their first legal card. The echo
server answers each message of a bidirectional stream with the same bytes; its p50 is the
floor of the transport, so "server-added p50" = referee p50 - echo p50.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from client_sdk import wire  # noqa: E402
from client_sdk.generated.bullring.v1 import referee_pb2 as pb  # noqa: E402
from referee.six_nimmt import new_state  # noqa: E402
from server.store import Store  # noqa: E402

ECHO = "/bench.Echo/Ping"


async def echo_server() -> None:
    """Serve ECHO on a free loopback port; print the port; run until killed."""
    async def ping(requests: AsyncIterator[bytes], _context: Any) -> AsyncIterator[bytes]:
        async for raw in requests:
            yield raw

    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "bench.Echo", {"Ping": grpc.stream_stream_rpc_method_handler(ping)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


async def _referee_seat(address: str, token: str, stop_at: float, warm_at: float,
                        lat: list[float]) -> int:
    outgoing: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()
    outgoing.put_nowait(pb.PlayRequest(join=pb.Join(client="bench")))

    async def requests() -> AsyncIterator[pb.PlayRequest]:
        while (m := await outgoing.get()) is not None:
            yield m

    counter = [0]
    async with grpc.aio.insecure_channel(address) as channel:
        call = wire.bot_stub(channel)["Play"](requests(),
                                              metadata=[("authorization", f"Bearer {token}")])
        try:
            await _answer_loop(call, outgoing, stop_at, warm_at, lat, counter)
        except grpc.aio.AioRpcError as exc:
            print(f"seat stream ended early: {exc.code().name} {exc.details()}",
                  file=sys.stderr)
        outgoing.put_nowait(None)
        call.cancel()
    return counter[0]


async def _answer_loop(call: Any, outgoing: asyncio.Queue[pb.PlayRequest | None],
                       stop_at: float, warm_at: float, lat: list[float],
                       counter: list[int]) -> None:
    """Answer every decision at once with the first legal action until ``stop_at``."""
    sent = 0.0
    async for message in call:
        if message.WhichOneof("body") != "decision":
            continue
        now = time.perf_counter()
        if sent and now > warm_at:
            lat.append(now - sent)
            counter[0] += 1
        if now > stop_at:
            break
        request = message.decision
        sent = time.perf_counter()
        outgoing.put_nowait(pb.PlayRequest(answer=pb.Answer(
            decision_id=request.decision_id, action=request.legal[0])))


async def _echo_seat(address: str, stop_at: float, warm_at: float, lat: list[float]) -> int:
    payload = pb.PlayRequest(answer=pb.Answer(decision_id="m:1:0", action=pb.Action(card=5)))
    raw = payload.SerializeToString()
    outgoing: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def requests() -> AsyncIterator[bytes]:
        while (m := await outgoing.get()) is not None:
            yield m

    done = 0
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(ECHO)(requests())
        outgoing.put_nowait(raw)
        sent = time.perf_counter()
        async for _ in call:
            now = time.perf_counter()
            if now > warm_at:
                lat.append(now - sent)
                done += 1
            if now > stop_at:
                break
            sent = time.perf_counter()
            outgoing.put_nowait(raw)
        outgoing.put_nowait(None)
        call.cancel()
    return done


def _client(args: tuple[str, str, list[str], int, float, float]) -> tuple[int, list[float]]:
    mode, address, tokens, count, seconds, warmup = args

    async def run() -> tuple[int, list[float]]:
        start = time.perf_counter()
        warm_at, stop_at = start + warmup, start + warmup + seconds
        lat: list[float] = []
        if mode == "referee":
            jobs = [_referee_seat(address, t, stop_at, warm_at, lat) for t in tokens]
        else:
            jobs = [_echo_seat(address, stop_at, warm_at, lat) for _ in range(count)]
        return sum(await asyncio.gather(*jobs)), lat

    return asyncio.run(run())


def _start(cmd: list[str]) -> tuple[subprocess.Popen[str], str]:
    log = open(Path(tempfile.gettempdir()) / "bullring-bench-server.log", "a")  # noqa: SIM115
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True,
                            cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, line.split("listening on ")[1].split()[0]


def measure(mode: str, address: str, tokens: list[str], bots: int, clients: int,
            seconds: float, warmup: float) -> tuple[float, float, float]:
    """Run ``bots`` seats over ``clients`` processes; return (per second, p50 ms, p99 ms)."""
    k = max(1, min(clients, bots))
    shares = [tokens[i::k] for i in range(k)] if tokens else [[] for _ in range(k)]
    counts = [len(range(i, bots, k)) for i in range(k)]
    jobs = [(mode, address, shares[i], counts[i], seconds, warmup) for i in range(k)]
    with multiprocessing.get_context("spawn").Pool(k) as pool:
        results = pool.map(_client, jobs)
    total = sum(n for n, _ in results)
    lat = sorted(x for _, xs in results for x in xs)
    p50 = statistics.median(lat) * 1000 if lat else float("nan")
    p99 = lat[int(len(lat) * 0.99)] * 1000 if lat else float("nan")
    return total / seconds, p50, p99


def main() -> None:
    """Print the table of figures for each bot count."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bots", default="1,64,512")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=1.5)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--echo-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        asyncio.run(echo_server())
        return
    counts = [int(x) for x in args.bots.split(",")]
    print(f"$ python benchmarks/server.py --bots {args.bots} --seconds {args.seconds} "
          f"--clients {args.clients}")
    with tempfile.TemporaryDirectory() as folder:
        db = f"sqlite:///{folder}/bench.db"
        cli = [sys.executable, "-m", "server.cli"]
        store = Store(db)
        echo, echo_address = _start([sys.executable, __file__, "--echo-server"])
        referee: subprocess.Popen[str] | None = None
        try:
            print(f"{'bots':>5} {'referee dec/s':>14} {'echo rt/s':>10} {'ratio':>6} "
                  f"{'ref p50 ms':>10} {'ref p99 ms':>10} {'echo p50':>9} {'echo p99':>9} "
                  f"{'added p50':>10}")
            for bots in counts:
                # A fresh server per row: matches whose bots have left play on at full speed
                # (defaults at once), which would load the next row.
                referee, ref_address = _start([*cli, "serve", "--port", "0", "--http-port", "-1",
                                                 "--db", db])
                settings = new_state(2, {"end_threshold": 10_000}).settings
                tokens = [str(store.create_match("six_nimmt", settings, i, ["bench", "random"],
                                                 {1: "random"})[1][0]) for i in range(bots)]
                ref = measure("referee", ref_address, tokens, bots, args.clients, args.seconds,
                              args.warmup)
                ech = measure("echo", echo_address, [], bots, args.clients, args.seconds,
                              args.warmup)
                print(f"{bots:>5} {ref[0]:>14.0f} {ech[0]:>10.0f} {ref[0] / ech[0]:>6.2f} "
                      f"{ref[1]:>10.3f} {ref[2]:>10.3f} {ech[1]:>9.3f} {ech[2]:>9.3f} "
                      f"{ref[1] - ech[1]:>10.3f}", flush=True)
                referee.terminate()
                referee.wait(timeout=60)
        finally:
            for proc in (echo, referee):
                if proc is not None and proc.poll() is None:
                    proc.terminate()
                    proc.wait(timeout=60)


if __name__ == "__main__":
    main()
