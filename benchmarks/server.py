"""Answered decisions per second and answer-to-next-request latency of the referee server,
beside a raw grpc.aio echo ping-pong measured in the same run.

Run: python benchmarks/server.py [--bots 1,64,512] [--seconds 5] [--clients 2] [--repeats 3]

Each connected bot plays its own 2-seat 6 nimmt! matches (one after another, when one ends)
against an in-process house bot, so every wait it sees is the server's. Bots answer at once
with their first legal card. The echo server answers each message of a bidirectional stream
with the same bytes; its p50 is the floor of the transport, so "server-added p50" = referee
p50 - echo p50.

The clock starts once every seat has joined (its first message came back): "join s" is how
long that took from the clients' start (referee/echo, worst run), the join storm of N bots
connecting at once. Meanwhile the joined seats already play, so the storm's timeouts count.

"timeouts" are those the stored logs charge to the bots while they played, the join storm
included. "client lag ms" is the most a client process's event loop ran late (referee/echo,
worst run): a starved client reads requests late however fast its bots answer, so with a
lag near the deadline (1,000 ms) a timeout may be the client's, not the server's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import queue
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # after installed packages

import grpc  # noqa: E402

from benchmarks.common import cpu_seconds, percentile, start  # noqa: E402
from bullring.contract import wire  # noqa: E402
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb  # noqa: E402
from bullring.referee.six_nimmt import new_state  # noqa: E402
from bullring.server.store import Store, UnknownMatchError  # noqa: E402

ECHO = "/bench.Echo/Ping"
JOIN_LIMIT_S = 300.0
"""The longest the seats may take to join, all of them, before the run fails."""
MATCHES_FOR_ONE_BOT = 8
"""Matches a lone bot is given to play one after another: a match to 10,000 points lasts a
few thousand decisions, fewer than one bot answering at once plays in a run (many bots share
the server, so each plays far fewer and one match each is enough)."""


@dataclass
class Clock:
    """When a client process counts (``warm_at``) and stops (``stop_at``), on its own
    ``perf_counter``: never, until every seat of every client has joined; and how many of
    its seats have joined."""

    warm_at: float = float("inf")
    stop_at: float = float("inf")
    joined: int = 0
    everyone: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when all of this process's seats have joined."""
    seats: int = 0

    def join(self) -> None:
        """One more seat has had its first message back."""
        self.joined += 1
        if self.joined == self.seats:
            self.everyone.set()


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


async def _referee_seat(address: str, tokens: list[str], clock: Clock, lat: list[float]) -> int:
    """Play one bot's matches one after another (the next when one ends), answering every
    decision at once with its first legal action."""
    done = 0
    for number, token in enumerate(tokens):
        played, over = await _referee_match(address, token, clock, lat, first=number == 0)
        done += played
        if over:
            break
    return done


async def _referee_match(address: str, token: str, clock: Clock, lat: list[float],
                         first: bool) -> tuple[int, bool]:
    """Play one seat until its match ends or the clock stops; return the decisions counted
    and whether the run is over. The seat's ``first`` match joins it on the clock."""
    done = 0
    joined = not first
    async with grpc.aio.insecure_channel(address) as channel:
        call = wire.bot_stub(channel)["Play"](metadata=[("authorization", f"Bearer {token}")])
        try:
            await call.write(pb.PlayRequest(join=pb.Join(client="bench", accept_batches=True)))
            sent = 0.0
            while True:
                received = await call.read()
                if received is grpc.aio.EOF:
                    break
                if not joined:
                    joined = True
                    clock.join()
                message = None
                for item in reversed(wire.unbatch(received)):  # a request ends its batch
                    if item.HasField("decision"):
                        message = item
                        break
                if message is None:
                    continue
                now = time.perf_counter()
                if sent and now > clock.warm_at:
                    lat.append(now - sent)
                    done += 1
                if now > clock.stop_at:
                    call.cancel()
                    return done, True
                request = message.decision
                sent = time.perf_counter()
                await call.write(pb.PlayRequest(answer=pb.Answer(
                    decision_id=request.decision_id, action=request.legal[0])))
        except grpc.aio.AioRpcError as exc:
            print(f"seat stream ended early: {exc.code().name} {exc.details()}",
                  file=sys.stderr)
        call.cancel()
    if not joined:  # refused before its first message: it will not join
        clock.join()
    return done, time.perf_counter() > clock.stop_at


async def _echo_seat(address: str, clock: Clock, lat: list[float]) -> int:
    """Ping-pong a message the size of an answer until ``stop_at``."""
    payload = pb.PlayRequest(answer=pb.Answer(decision_id="m:1:0", action=pb.Action(card=5)))
    raw = payload.SerializeToString()
    done = 0
    joined = False
    async with grpc.aio.insecure_channel(address) as channel:
        call: Any = channel.stream_stream(ECHO)()
        while True:
            sent = time.perf_counter()
            await call.write(raw)
            if await call.read() is grpc.aio.EOF:
                break
            if not joined:
                joined = True
                clock.join()
            now = time.perf_counter()
            if now > clock.warm_at:
                lat.append(now - sent)
                done += 1
            if now > clock.stop_at:
                break
        call.cancel()
    return done


LAG_TICK_S = 0.01
"""How often a client process checks how late its event loop runs."""


def _client(args: tuple[str, str, list[list[str]], int, Any, Any]
            ) -> tuple[int, list[float], float, float]:
    """One client process: its seats' round trips, their latencies, its CPU seconds, and
    the most its event loop ran late (a starved client answers late however fast its bots
    are). It says on ``joined`` when all its seats have joined, then takes the parent's
    wall-clock warm and stop times from ``go`` and counts between them."""
    mode, address, tokens, count, joined, go = args

    async def run() -> tuple[int, list[float], float, float]:
        clock = Clock(seats=len(tokens) if mode == "referee" else count)
        lat: list[float] = []
        cpu: list[float] = []
        lag = [0.0]

        async def start_clock() -> None:
            await clock.everyone.wait()
            joined.put(os.getpid())
            warm_wall, stop_wall = await asyncio.to_thread(go.get)
            offset = time.perf_counter() - time.time()  # the parent's wall-clock times, here
            clock.warm_at, clock.stop_at = warm_wall + offset, stop_wall + offset
            for moment in (clock.warm_at, clock.stop_at):
                await asyncio.sleep(max(0.0, moment - time.perf_counter()))
                cpu.append(time.process_time())

        async def sample_lag() -> None:
            while (before := time.perf_counter()) < clock.stop_at:
                await asyncio.sleep(LAG_TICK_S)
                lag[0] = max(lag[0], time.perf_counter() - before - LAG_TICK_S)

        starter = asyncio.create_task(start_clock())
        lagger = asyncio.create_task(sample_lag())
        if mode == "referee":
            jobs = [_referee_seat(address, t, clock, lat) for t in tokens]
        else:
            jobs = [_echo_seat(address, clock, lat) for _ in range(count)]
        done = sum(await asyncio.gather(*jobs))
        await starter
        await lagger
        return done, lat, cpu[1] - cpu[0], lag[0]

    return asyncio.run(run())


@dataclass(frozen=True)
class Figures:
    """One measurement: round trips (answered decisions) per second, latency, and the CPU
    each round trip cost the server and the client processes."""

    per_s: float
    p50_ms: float
    p99_ms: float
    server_cpu_us: float
    client_cpu_us: float
    client_lag_ms: float
    """The most a client process's event loop ran late (from the clients' start)."""
    join_s: float
    """From the clients' start until every seat had joined."""


def measure(mode: str, address: str, tokens: list[list[str]], bots: int, server_pid: int,
            args: argparse.Namespace) -> Figures:
    """Run ``bots`` seats over ``args.clients`` processes; once every seat has joined, count
    from ``args.warmup`` seconds later for ``args.seconds``."""
    k = max(1, min(args.clients, bots))
    shares = [tokens[i::k] for i in range(k)] if tokens else [[] for _ in range(k)]
    counts = [len(range(i, bots, k)) for i in range(k)]
    context = multiprocessing.get_context("spawn")
    cpu: list[float] = []
    with context.Manager() as manager, context.Pool(k) as pool:
        joined, go = manager.Queue(), manager.Queue()
        began = time.time()
        pending = pool.map_async(_client, [(mode, address, shares[i], counts[i], joined, go)
                                           for i in range(k)])
        for _ in range(k):
            try:
                joined.get(timeout=max(0.0, began + JOIN_LIMIT_S - time.time()))
            except queue.Empty:
                raise RuntimeError(f"{bots} {mode} seats had not all joined after "
                                   f"{JOIN_LIMIT_S:.0f} s") from None
        join_s = time.time() - began
        warm_at = time.time() + args.warmup
        stop_at = warm_at + args.seconds
        for _ in range(k):
            go.put((warm_at, stop_at))

        def sample_cpu() -> None:
            for moment in (warm_at, stop_at):
                time.sleep(max(0.0, moment - time.time()))
                cpu.append(cpu_seconds(server_pid))

        sampler = threading.Thread(target=sample_cpu)
        sampler.start()
        results = pending.get()
        sampler.join()
    total = sum(n for n, _, _, _ in results)
    lat = sorted(x for _, xs, _, _ in results for x in xs)
    if not total:
        raise RuntimeError(f"no {mode} round trip was counted")
    return Figures(per_s=total / args.seconds, p50_ms=statistics.median(lat) * 1000,
                   p99_ms=percentile(lat, 0.99) * 1000,
                   server_cpu_us=(cpu[1] - cpu[0]) / total * 1e6,
                   client_cpu_us=sum(c for _, _, c, _ in results) / total * 1e6,
                   client_lag_ms=max(lag for _, _, _, lag in results) * 1000,
                   join_s=join_s)


def _timeouts_while_playing(events: list[dict[str, Any]]) -> int:
    """Timeouts charged to the bot (seat 0) before its last answer: after that it stopped
    answering on purpose (the run was over), so later ones are not the server's fault."""
    answered = [i for i, e in enumerate(events)
                if e["type"] == "answer" and e["seat"] == 0 and not e["default"]]
    last = answered[-1] if answered else -1
    return sum(e["type"] == "timeout" and e["seat"] == 0 for e in events[:last])


def referee_run(store: Store, db: str, bots: int, args: argparse.Namespace
                ) -> tuple[Figures, int]:
    """Measure the referee on a fresh server (matches whose bots have left play on at full
    speed, with defaults at once, and would load the next run); return the figures and the
    timeouts the stored logs charge to the bots while they played (each answered at once, so
    any is the server's fault)."""
    cli = [sys.executable, "-m", "bullring.server.cli"]
    referee, address = start([*cli, "serve", "--port", "0", "--http-port", "-1", "--db", db])
    try:
        settings = new_state(2, {"end_threshold": 10_000}).settings
        per_bot = max(1, MATCHES_FOR_ONE_BOT // bots)
        matches = [store.create_match("six_nimmt", settings, i, ["bench", "random"],
                                      {1: "random"}) for i in range(bots * per_bot)]
        tokens = [[str(seat_tokens[0]) for _, seat_tokens in matches[b::bots]]
                  for b in range(bots)]
        figures = measure("referee", address, tokens, bots, referee.pid, args)
    finally:
        referee.terminate()  # graceful: every live match is stored as aborted, with its log
        referee.wait(timeout=120)
    timeouts = 0
    for match_id, _ in matches:
        with contextlib.suppress(UnknownMatchError):  # a match nobody joined has no log
            events = store.replay(match_id)["events"]
            timeouts += _timeouts_while_playing(events)
            if os.environ.get("BENCH_DEBUG"):
                for i, e in enumerate(events):
                    if e["type"] == "timeout":
                        print(match_id, events[max(0, i - 3):i + 3], file=sys.stderr)
                        break
    return figures, timeouts


def main() -> None:
    """Print the table of figures for each bot count."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bots", default="1,64,512")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=1.5)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3,
                        help="referee/echo pairs per row, alternating; the row shows the pair "
                             "with the median ratio, and the range of the ratios")
    parser.add_argument("--echo-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        asyncio.run(echo_server())
        return
    counts = [int(x) for x in args.bots.split(",")]
    print(f"$ python benchmarks/server.py --bots {args.bots} --seconds {args.seconds:g} "
          f"--clients {args.clients} --repeats {args.repeats}")
    with tempfile.TemporaryDirectory() as folder:
        db = f"sqlite:///{folder}/bench.db"
        store = Store(db)
        echo, echo_address = start([sys.executable, __file__, "--echo-server"])
        try:
            print(f"{'bots':>5} {'referee/s':>10} {'echo/s':>8} {'ratio':>5} {'(range)':>9} "
                  f"{'ref p50':>8} {'ref p99':>8} {'echo p50':>8} {'echo p99':>8} "
                  f"{'added p50':>9} {'timeouts':>8} {'server cpu us':>13} "
                  f"{'client cpu us':>13} {'client lag ms':>13} {'join s':>11}")
            for bots in counts:
                pairs: list[tuple[float, Figures, Figures]] = []
                timeouts = 0
                for _ in range(args.repeats):
                    ref, charged = referee_run(store, db, bots, args)
                    ech = measure("echo", echo_address, [], bots, echo.pid, args)
                    timeouts += charged
                    pairs.append((ref.per_s / ech.per_s, ref, ech))
                pairs.sort(key=lambda pair: pair[0])
                ratio, ref, ech = pairs[len(pairs) // 2]
                spread = f"{pairs[0][0]:.2f}-{pairs[-1][0]:.2f}"
                cpu = f"{ref.server_cpu_us:.0f}/{ech.server_cpu_us:.0f}"
                client = f"{ref.client_cpu_us:.0f}/{ech.client_cpu_us:.0f}"
                lag = f"{max(p[1].client_lag_ms for p in pairs):.0f}/" \
                      f"{max(p[2].client_lag_ms for p in pairs):.0f}"
                join = f"{max(p[1].join_s for p in pairs):.1f}/" \
                       f"{max(p[2].join_s for p in pairs):.1f}"
                print(f"{bots:>5} {ref.per_s:>10.0f} {ech.per_s:>8.0f} {ratio:>5.2f} {spread:>9} "
                      f"{ref.p50_ms:>8.3f} {ref.p99_ms:>8.3f} {ech.p50_ms:>8.3f} "
                      f"{ech.p99_ms:>8.3f} {ref.p50_ms - ech.p50_ms:>9.3f} {timeouts:>8} "
                      f"{cpu:>13} {client:>13} {lag:>13} {join:>11}", flush=True)
        finally:
            if echo.poll() is None:
                echo.terminate()
                echo.wait(timeout=60)


if __name__ == "__main__":
    main()
