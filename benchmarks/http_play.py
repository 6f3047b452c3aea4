"""One bot seat played over each of the server's three ways to play, side by side in one run:
the gRPC Play stream, HTTP long-poll, and HTTP Server-Sent Events with POSTed answers.

Run: python benchmarks/http_play.py [--seconds 5] [--repeats 3] [--warmup 1.5]

The seat plays 2-seat 6 nimmt! matches (one after another, when one ends) against an
in-process house bot (``random``) and answers each decision at once with its first legal
action, so every wait it sees is the server's and the transport's. "p50"/"p99" are the time
from the seat sending its answer to it having the next decision in hand.

Each repeat measures the three transports one after another, each on a fresh ``bullring
serve`` (a seat that leaves plays on with defaults and would load the next measurement). The
HTTP clients are Python's ``http.client`` on kept-alive connections: the long-poll bot polls
and answers on one connection; the SSE bot reads its stream on one and answers on another.
The gRPC client is raw ``grpc.aio``. Each row shows the best of the repeats, and the range
over them; "x gRPC" is that transport's best decisions/s over gRPC's best (the range is of
the ratios repeat by repeat). "server cpu us" and "client cpu us" are the CPU the server
process and the bot (this process) spent per decision in the best repeat, which moves less
with other work on the machine than the times do. The machine's load (``uptime``) is
printed before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # after installed packages

import grpc  # noqa: E402

from benchmarks.common import cpu_seconds, percentile, start  # noqa: E402
from bullring.contract import wire  # noqa: E402
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb  # noqa: E402
from bullring.referee.six_nimmt import new_state  # noqa: E402
from bullring.server.store import Store  # noqa: E402

TRANSPORTS = ("grpc", "poll", "sse")
"""The ways to play, in the order each repeat measures them."""
MATCHES = 8
"""Matches the seat is given to play one after another: a match to 10,000 points lasts a few
thousand decisions, fewer than the seat plays in a measurement over gRPC."""
POLL_WAIT_MS = 10_000
"""How long a long-poll may wait for a message."""


@dataclass
class Window:
    """The decisions a measurement counts: those in hand between ``warm_at`` and ``stop_at``
    (``perf_counter``), set once the seat has its first message."""

    warmup: float
    seconds: float
    warm_at: float = float("inf")
    stop_at: float = float("inf")

    def begin(self) -> None:
        """Start the clock, if it has not started."""
        if self.warm_at == float("inf"):
            self.warm_at = time.perf_counter() + self.warmup
            self.stop_at = self.warm_at + self.seconds


class Seat:
    """What one seat's measurement records: the answer-to-next-decision latencies, and the
    CPU seconds the server and this process spent from the first decision counted to the
    first after the window (server, client)."""

    def __init__(self, window: Window, server_pid: int) -> None:
        self.window = window
        self.server_pid = server_pid
        self.lat: list[float] = []
        self.sent = 0.0
        self.cpu: list[tuple[float, float]] = []

    def decided(self) -> bool:
        """A decision is in hand now: record its latency if counted; whether the run is over."""
        now = time.perf_counter()
        if now > self.window.warm_at and not self.cpu:
            self.cpu.append((cpu_seconds(self.server_pid), time.process_time()))
        if self.sent and now > self.window.warm_at and now <= self.window.stop_at:
            self.lat.append(now - self.sent)
        if now > self.window.stop_at:
            self.cpu.append((cpu_seconds(self.server_pid), time.process_time()))
            return True
        return False

    def answering(self) -> None:
        """The seat is about to send its answer."""
        self.sent = time.perf_counter()


async def _grpc_seat(address: str, tokens: list[str], seat: Seat) -> None:
    """Play the matches of ``tokens`` one after another over the gRPC Play stream."""
    for token in tokens:
        async with grpc.aio.insecure_channel(address) as channel:
            call = wire.bot_stub(channel)["Play"](
                metadata=[("authorization", f"Bearer {token}")])
            await call.write(pb.PlayRequest(join=pb.Join(client="bench", accept_batches=True)))
            seat.sent = 0.0
            while True:
                received = await call.read()
                if received is grpc.aio.EOF:
                    break
                seat.window.begin()
                request = next((item.decision for item in reversed(wire.unbatch(received))
                                if item.HasField("decision")), None)
                if request is None:
                    continue
                if seat.decided():
                    call.cancel()
                    return
                seat.answering()
                await call.write(pb.PlayRequest(answer=pb.Answer(
                    decision_id=request.decision_id, action=request.legal[0])))
            call.cancel()


class Http:
    """A kept-alive HTTP/1.1 connection with a seat's token."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self.connection = http.client.HTTPConnection(host, port, timeout=30)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """One JSON request on the connection; its decoded answer."""
        data = None if body is None else json.dumps(body).encode()
        self.connection.request(method, path, body=data, headers=self.headers)
        response = self.connection.getresponse()
        raw = response.read()
        if response.status != 200:
            raise RuntimeError(f"{method} {path}: {response.status} {raw[:200]!r}")
        return json.loads(raw)

    def answer(self, decision: dict[str, Any]) -> None:
        """Answer ``decision`` with its first legal action; the verdict must be accepted."""
        verdict = self.call("POST", "/api/play/answer",
                            {"decision_id": decision["decision_id"],
                             "action": decision["legal"][0]})
        if "accepted" not in verdict:
            raise RuntimeError(f"answer not accepted: {verdict}")


def _poll_seat(host: str, port: int, tokens: list[str], seat: Seat) -> None:
    """Play the matches of ``tokens`` one after another by long-poll, answering on the same
    kept-alive connection."""
    for token in tokens:
        bot = Http(host, port, token)
        after: int | None = None
        seat.sent = 0.0
        closed = False
        while not closed:
            query = f"wait_ms={POLL_WAIT_MS}" + ("" if after is None else f"&after={after}")
            result = bot.call("GET", f"/api/play/poll?{query}")
            seat.window.begin()
            decision = None
            for message in result["messages"]:
                after = message["seq"]
                decision = message.get("decision", decision)
            closed = result["closed"]
            if decision is None or closed:
                continue
            if seat.decided():
                bot.connection.close()
                return
            seat.answering()
            bot.answer(decision)
        bot.connection.close()


def _sse_events(response: http.client.HTTPResponse) -> Iterator[tuple[str, str]]:
    """Each (event name, data) of a Server-Sent Events stream, until it ends."""
    name, data = "", ""
    while line := response.readline():
        text = line.decode().rstrip("\r\n")
        if text.startswith("event:"):
            name = text[6:].strip()
        elif text.startswith("data:"):
            data = text[5:].strip()
        elif not text and name:
            yield name, data
            name, data = "", ""


def _sse_seat(host: str, port: int, tokens: list[str], seat: Seat) -> None:
    """Play the matches of ``tokens`` one after another reading the event stream, answering
    by POST on a second kept-alive connection."""
    for token in tokens:
        stream = http.client.HTTPConnection(host, port, timeout=30)
        stream.request("GET", "/api/play/stream", headers={"Authorization": f"Bearer {token}"})
        response = stream.getresponse()
        if response.status != 200:
            raise RuntimeError(f"stream: {response.status} {response.read()[:200]!r}")
        answers = Http(host, port, token)
        seat.sent = 0.0
        try:
            for name, data in _sse_events(response):
                seat.window.begin()
                if name in ("match_ended", "closed"):
                    break
                if name != "decision":
                    continue
                if seat.decided():
                    return
                seat.answering()
                answers.answer(json.loads(data)["decision"])
        finally:
            answers.connection.close()
            stream.close()


@dataclass(frozen=True)
class Figures:
    """One measurement of one transport."""

    per_s: float
    p50_ms: float
    p99_ms: float
    server_cpu_us: float
    """The server process's CPU per decision."""
    client_cpu_us: float
    """The bot's (this process's) CPU per decision."""


def measure(transport: str, store: Store, db: str, args: argparse.Namespace) -> Figures:
    """Play one seat over ``transport`` on a fresh server for ``args.seconds`` after
    ``args.warmup``."""
    settings = new_state(2, {"end_threshold": 10_000}).settings
    matches = [store.create_match("six_nimmt", settings, i, ["bench", "random"], {1: "random"})
               for i in range(MATCHES)]
    tokens = [str(seat_tokens[0]) for _, seat_tokens in matches]
    cli = [sys.executable, "-m", "bullring.server.cli"]
    server, address = start([*cli, "serve", "--port", "0", "--http-port", "0", "--db", db])
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if "HTTP API on http://" not in line:
            raise RuntimeError(f"no HTTP port announced: {line!r}")
        host, port = line.split("http://")[1].split("/")[0].rsplit(":", 1)
        seat = Seat(Window(args.warmup, args.seconds), server.pid)
        plays: dict[str, Callable[[], None]] = {
            "grpc": lambda: asyncio.run(_grpc_seat(address, tokens, seat)),
            "poll": lambda: _poll_seat(host, int(port), tokens, seat),
            "sse": lambda: _sse_seat(host, int(port), tokens, seat),
        }
        plays[transport]()
    finally:
        server.terminate()  # graceful: every live match is stored as aborted
        server.wait(timeout=120)
    if not seat.lat or len(seat.cpu) != 2:
        raise RuntimeError(f"no {transport} decision was counted")
    lat = sorted(seat.lat)
    return Figures(per_s=len(lat) / args.seconds, p50_ms=statistics.median(lat) * 1000,
                   p99_ms=percentile(lat, 0.99) * 1000,
                   server_cpu_us=(seat.cpu[1][0] - seat.cpu[0][0]) / len(lat) * 1e6,
                   client_cpu_us=(seat.cpu[1][1] - seat.cpu[0][1]) / len(lat) * 1e6)


def _load() -> str:
    """The machine's ``uptime`` line."""
    return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()


def _span(values: list[float], digits: int) -> str:
    """``low-high`` of ``values``."""
    return f"{min(values):.{digits}f}-{max(values):.{digits}f}"


def main() -> None:
    """Print the table: one row per transport."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=1.5)
    parser.add_argument("--repeats", type=int, default=3,
                        help="rounds of the three transports, one after another")
    args = parser.parse_args()
    print(f"$ python benchmarks/http_play.py --seconds {args.seconds:g} "
          f"--repeats {args.repeats} --warmup {args.warmup:g}")
    print(f"load before: {_load()}", flush=True)
    runs: dict[str, list[Figures]] = {name: [] for name in TRANSPORTS}
    with tempfile.TemporaryDirectory() as folder:
        db = f"sqlite:///{folder}/bench.db"
        store = Store(db)
        for _ in range(args.repeats):
            for name in TRANSPORTS:
                runs[name].append(measure(name, store, db, args))
    print(f"load after:  {_load()}")
    grpc_best = max(f.per_s for f in runs["grpc"])
    print(f"{'transport':<10} {'decisions/s':>11} {'(range)':>11} {'p50 ms':>7} "
          f"{'(range)':>13} {'p99 ms':>7} {'(range)':>13} {'x gRPC':>6} {'(range)':>11} "
          f"{'server cpu us':>13} {'client cpu us':>13}")
    for name in TRANSPORTS:
        figures = runs[name]
        best = max(figures, key=lambda f: f.per_s)
        ratios = [f.per_s / g.per_s for f, g in zip(figures, runs["grpc"], strict=True)]
        print(f"{name:<10} {best.per_s:>11.0f} {_span([f.per_s for f in figures], 0):>11} "
              f"{best.p50_ms:>7.3f} {_span([f.p50_ms for f in figures], 3):>13} "
              f"{best.p99_ms:>7.3f} {_span([f.p99_ms for f in figures], 3):>13} "
              f"{best.per_s / grpc_best:>6.3f} {_span(ratios, 3):>11} "
              f"{best.server_cpu_us:>13.0f} {best.client_cpu_us:>13.0f}", flush=True)


if __name__ == "__main__":
    main()
