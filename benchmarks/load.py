"""Load: 1,000 connected bots from several client processes play 250 concurrent 4-seat
6 nimmt! matches on one server, deadlines 1,000 ms.

Run: python benchmarks/load.py [--matches 250] [--seats 4] [--deadline-ms 1000]

Every bot answers at once (a random legal action), so any timeout the stored match logs
charge to a bot is the server's fault: the script fails (exit status 1) if there is one.
One client process plays each seat index of every match. The first ``seats - 1`` processes
connect first, so every match waits for its last seat: the server's memory is measured
before anything connects, with those bots connected, and (the peak) while all the matches
run. Printed: timeouts charged, answer-to-next-request latency p50/p99 as the bots see it
(which includes waiting for the match's other seats), memory per connected bot and per
running match, and the server's CPU per answered decision.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # after installed packages

import grpc  # noqa: E402

from benchmarks.common import SERVER_LOG, cpu_seconds, percentile, rss_bytes, start  # noqa: E402
from bullring.contract import wire  # noqa: E402
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb  # noqa: E402
from bullring.referee.six_nimmt import new_state  # noqa: E402
from bullring.server.store import Store  # noqa: E402

MB = 1024 * 1024


async def _bot(address: str, token: str, seed: int, joined: asyncio.Event | None,
               lat: list[float]) -> int:
    """Play one seat to the match's end, answering each request at once; return answers."""
    rng = random.Random(seed)
    answered = 0
    async with grpc.aio.insecure_channel(address) as channel:
        call = wire.bot_stub(channel)["Play"](metadata=[("authorization", f"Bearer {token}")])
        await call.write(pb.PlayRequest(join=pb.Join(client="load", accept_batches=True)))
        sent = 0.0
        while True:
            received = await call.read()
            if received is grpc.aio.EOF:
                raise RuntimeError("the stream ended before MatchEnded")
            for message in wire.unbatch(received):
                body = message.WhichOneof("body")
                if body == "match_started" and joined is not None:
                    joined.set()
                elif body == "match_ended":
                    call.cancel()
                    return answered
                elif body == "decision":
                    now = time.perf_counter()
                    if sent:
                        lat.append(now - sent)
                    request = message.decision
                    sent = time.perf_counter()
                    await call.write(pb.PlayRequest(answer=pb.Answer(
                        decision_id=request.decision_id, action=rng.choice(request.legal))))
                    answered += 1


def _client(address: str, tokens: list[str], seed: int, ready: Any, results: Any) -> None:
    """One client process: play every token's seat; report when all have joined, then the
    answers given and the latencies seen."""

    async def run() -> tuple[int, list[float]]:
        lat: list[float] = []
        joined = [asyncio.Event() for _ in tokens]
        games = [asyncio.create_task(_bot(address, token, seed * 100_000 + i, joined[i], lat))
                 for i, token in enumerate(tokens)]
        await asyncio.gather(*(event.wait() for event in joined))
        ready.put(len(tokens))
        return sum(await asyncio.gather(*games)), lat

    answered, lat = asyncio.run(run())
    results.put((answered, lat))


def _wait_ready(ready: Any, count: int, timeout_s: float) -> None:
    """Wait until ``count`` client processes say all their bots have joined."""
    deadline = time.monotonic() + timeout_s
    for _ in range(count):
        ready.get(timeout=max(0.1, deadline - time.monotonic()))


def main() -> int:
    """Run the load, print the figures; exit status 1 if any timeout was charged."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=250)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--deadline-ms", type=int, default=1000)
    parser.add_argument("--end-threshold", type=int, default=66,
                        help="6 nimmt!'s end_threshold: how long each match lasts")
    args = parser.parse_args()
    bots = args.matches * args.seats
    print(f"$ python benchmarks/load.py --matches {args.matches} --seats {args.seats} "
          f"--deadline-ms {args.deadline_ms} --end-threshold {args.end_threshold}")
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as folder:
        db = f"sqlite:///{folder}/load.db"
        store = Store(db)
        settings = new_state(args.seats, {"end_threshold": args.end_threshold,
                                          "deadline_ms": args.deadline_ms}).settings
        names = [f"bot{seat}" for seat in range(args.seats)]
        matches = [store.create_match("six_nimmt", settings, i, names, {})
                   for i in range(args.matches)]
        # Every bot connects from this machine's one address: no per-address cap.
        server, address = start([sys.executable, "-m", "bullring.server.cli", "serve", "--port",
                                 "0", "--http-port", "-1", "--db", db,
                                 "--max-calls-per-address", "0"])
        try:
            time.sleep(1.0)  # let start-up allocations settle
            rss_start = rss_bytes(server.pid)
            ready, results = context.Queue(), context.Queue()
            processes = [context.Process(target=_client, args=(
                address, [str(tokens[seat]) for _, tokens in matches], seat, ready, results))
                for seat in range(args.seats)]
            began = time.monotonic()
            for process in processes[:-1]:
                process.start()
            _wait_ready(ready, len(processes) - 1, 300)
            time.sleep(1.0)
            waiting = args.matches * (args.seats - 1)
            rss_waiting = rss_bytes(server.pid)
            connect_s = time.monotonic() - began
            peak = [rss_waiting]
            done = threading.Event()

            def watch_memory() -> None:
                while not done.wait(0.2):
                    peak[0] = max(peak[0], rss_bytes(server.pid))

            watcher = threading.Thread(target=watch_memory)
            watcher.start()
            cpu_before = cpu_seconds(server.pid)
            play_began = time.monotonic()
            processes[-1].start()
            _wait_ready(ready, 1, 300)
            outcomes = [results.get(timeout=3600) for _ in processes]
            play_s = time.monotonic() - play_began
            cpu_used = cpu_seconds(server.pid) - cpu_before
            done.set()
            watcher.join()
            for process in processes:
                process.join(timeout=60)
        finally:
            server.terminate()
            server.wait(timeout=120)
        charged, disconnects, normal = 0, 0, 0
        clocked: list[float] = []
        for match_id, _ in matches:  # a bot hears MatchEnded only once its match is stored
            replay = store.replay(match_id)
            normal += replay["termination"] == "normal"
            for event in replay["events"]:
                charged += event["type"] == "timeout"
                disconnects += event["type"] == "disconnect"
                if event["type"] == "answer" and "ms" in event:
                    clocked.append(event["ms"])
        clocked.sort()
    answered = sum(n for n, _ in outcomes)
    lat = sorted(x for _, xs in outcomes for x in xs)
    per_bot = (rss_waiting - rss_start) / waiting
    per_match = (peak[0] - rss_waiting - args.matches * per_bot) / args.matches
    print(f"bots connected: {bots} from {len(processes)} client processes "
          f"(the first {waiting} in {connect_s:.1f} s)")
    print(f"matches: {args.matches} concurrent, {normal} ended normally, in {play_s:.1f} s; "
          f"{answered} answers, {answered / play_s:.0f}/s; server CPU "
          f"{cpu_used / answered * 1e6:.0f} µs per answer")
    print(f"timeouts charged: {charged} (must be 0); disconnects: {disconnects}")
    print(f"answer-to-next-request latency: p50 {percentile(lat, 0.5) * 1000:.1f} ms, "
          f"p99 {percentile(lat, 0.99) * 1000:.1f} ms, max {lat[-1] * 1000:.1f} ms "
          f"(includes waiting for the other seats' answers)")
    print(f"answer time as the server clocks it (request sent -> answer taken; the deadline is "
          f"{args.deadline_ms} ms): p50 {percentile(clocked, 0.5):.1f} ms, p99 "
          f"{percentile(clocked, 0.99):.1f} ms, max {clocked[-1]:.1f} ms")
    print(f"server RSS: {rss_start / MB:.1f} MB at start, {rss_waiting / MB:.1f} MB with "
          f"{waiting} bots connected, {peak[0] / MB:.1f} MB peak with {args.matches} "
          f"matches running")
    print(f"memory: {per_bot / 1024:.1f} KB per connected bot, {per_match / 1024:.1f} KB per "
          f"running match (beyond its bots)")
    print(f"server log: {SERVER_LOG}")
    ok = charged == 0 and normal == args.matches
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

