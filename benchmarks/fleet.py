"""One ladder on every core and on every server: ladder matches per minute of remote bots
against ``bullring serve`` and ``bullring serve --workers 2``, and the time a decision adds
when its seat's bot is connected to another server of the fleet than its match's.

Run: python benchmarks/fleet.py [--bots 8] [--seconds 15] [--warmup 5] [--repeats 2]
         [--latency-seconds 8] [--no-broker]
(needs PostgreSQL on 127.0.0.1:5432 and NATS on 127.0.0.1:4222, as the fleet tests do;
BENCH_DEBUG=1 says on standard error what it does as it goes)

Every set-up runs on a fresh PostgreSQL database with the 6 nimmt! ladder on short matches
(``rounds=1``: one round of ten tricks, about 45 decisions at 4 seats, deadline 1,000 ms).
Its remote bots are registered bots, each a process of its own running this file's light
client (``--bot``): one gRPC Play stream on the ladder, answering each decision at once with
its first legal action, nothing decoded beyond the protobuf. A light client leaves more of
the two cores to the servers than ``bullring bot`` would (its SDK builds the typed
observation for the policy); a process per bot keeps each bot off the others' event loops.

Part 1, throughput: ``--bots`` bots against (a) ``bullring serve``, one process, and (b)
``bullring serve --workers 2 --broker nats://127.0.0.1:4222``: two workers on one address,
which with the broker run one ladder (the kernel gives each bot's connection to a worker; a
table mixing both workers' bots runs on one and relays the seats of the other's bots).
With ``--no-broker`` (b) runs without it: each worker seats only the bots the kernel gave
it, the ladder split in two (a worker given fewer bots than a table idles). The set-ups
alternate ``--repeats`` times, (a) first; each run waits for its first finished match, then
``--warmup`` seconds, then counts the ladder matches finished in the database over
``--seconds``. Columns:
- matches/min: finished in the window, per minute;
- play ms: the median match's time from its seating to its result (the database's times);
- wait ms: the median time a bot waited between the result of one match and its seating in
  the next (storing the result, waking the matchmaker, seating the table);
- server / bots / pg ms: CPU per match (user + system, /proc) over the window of the server
  processes (the supervisor and its workers), of the bot processes, and of the PostgreSQL
  backends serving the database that lived through the window. The server figure holds
  neither the bots' nor PostgreSQL's; the NATS server's CPU is counted nowhere (it serves
  whatever else runs on the machine too);
- aborted: matches aborted in the window (none expected: every bot answers at once);
- load: the 1-minute load average at the window's end.
The ratio is (b)/(a) of each repeat's pair: their median and range. On this 2-core machine
the bots and PostgreSQL share the cores with the servers: the ladder's pace is bounded by
what a match costs all of them together, and a second worker gains only what the others
leave of the second core. The ceiling line says how far: every core of the machine spent
at (a)'s CPU per match (server, bots and PostgreSQL) against (a)'s pace, the most any
number of workers could gain were they to add no CPU per match and nothing else to run.

Part 2, relayed latency: two ``bullring serve --broker`` processes on one database; the
first runs three house bots (``random``, no rest between matches), which only it can seat,
the second none. One remote bot plays them, connected in alternating phases to the first
server (direct) or to the second (relayed: its seat is relayed through NATS to the match on
the first), ``--repeats`` phases of each, ``--latency-seconds`` each after 2 s of play. The
bot times each decision from its answer's writing to the arrival of its next request in the
same match: the match's server taking the answer, playing the house bots' decisions at once
in-process and sending the next request, plus the way there and back. With the other seats
answered in-process nobody else is waited for, so relayed minus direct is what the relay
adds: a broker round trip and the bot's server passing the messages on. Both phases run the
same client code on the same machine. The match log's own clock of an answer (its ``ms``)
would not compare the two alike: for a seat on a stream of the match's server it starts once
the request's write to the bot has completed, for a relayed seat when the relay takes the
request to publish it, so the relayed seat's time would hold a write the direct one's does
not. "CPU ms/match" is each server's CPU over the phases of a set-up per match the bot
played: the match's server plays every match (the house bots' decisions, storing the
result, seating the next table), and the other runs none, so its figure in the direct
phases is what the matches of a peer cost a server of the fleet (each wakes it), and the
rise in the relayed phases is what relaying costs. Beside them, the NATS round trip alone
(``benchmarks/broker.py``'s: a request's size out and an answer's back between two
processes), measured in the same run.

The command line and ``/proc/loadavg`` (at the start and at the end) are printed with the
figures; the servers log to /tmp/bullring-bench-server.log.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import multiprocessing
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # after installed packages

from benchmarks.common import SERVER_LOG, cpu_seconds, percentile  # noqa: E402
from benchmarks.ladder import PG, drop_postgres, postgres_url  # noqa: E402
from bullring.server.store import Store  # noqa: E402

CLI = [sys.executable, "-m", "bullring.server.cli"]
BROKER = "nats://127.0.0.1:4222"
GAME = "six_nimmt"
LADDER = ["--ladder", GAME, "--ladder-setting", f"{GAME}:rounds=1",
          "--ladder-setting", f"{GAME}:deadline_ms=1000"]
"""Short 6 nimmt! ladder matches, as the fleet tests play them."""
START_S = 120.0
"""The longest a set-up may take to finish its first match."""
TABLE = 4
"""Seats at part 2's tables: the remote bot and three house bots."""
LATENCY_WARMUP_S = 2.0
"""Seconds of each part 2 phase before its decisions are timed."""
BROKER_ROUNDS = 3000
"""Round trips of part 2's broker floor (the first tenth left out as warm-up)."""


def note(what: str) -> None:
    """Say on standard error what the benchmark does now, with BENCH_DEBUG set."""
    if os.environ.get("BENCH_DEBUG"):
        print(f"{time.strftime('%H:%M:%S')} {what}", file=sys.stderr, flush=True)


# -- the bots --------------------------------------------------------------------------------

async def _play(address: str, token: str) -> None:
    """Play the ladder on one Play stream, answering each decision at once with its first
    legal action; connect again whenever the stream ends, until killed."""
    import grpc

    from bullring.contract import wire
    from bullring.contract.generated.bullring.v2 import referee_pb2 as pb

    join = pb.PlayRequest(join=pb.Join(client="fleet-bench", accept_batches=True, ladder=GAME))
    while True:
        async with grpc.aio.insecure_channel(address, options=wire.channel_options()) as channel:
            call = wire.bot_stub(channel)["Play"](metadata=[("authorization",
                                                             f"Bearer {token}")])
            try:
                await call.write(join)
                while (received := await call.read()) is not grpc.aio.EOF:
                    for item in wire.unbatch(received):
                        if item.HasField("decision"):
                            request = item.decision
                            await call.write(pb.PlayRequest(answer=pb.Answer(
                                decision_id=request.decision_id, action=request.legal[0])))
            except grpc.aio.AioRpcError:
                pass
        await asyncio.sleep(0.2)


def start_bots(store: Store, address: str, count: int) -> list[subprocess.Popen[bytes]]:
    """Register ``count`` bots and start a light client for each on ``address``."""
    procs = []
    for i in range(count):
        token = store.add_bot(f"bench-{i}")
        procs.append(subprocess.Popen([sys.executable, __file__, "--bot", address, token],
                                      cwd=ROOT, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
    return procs


# -- the servers -----------------------------------------------------------------------------

@dataclass
class Server:
    """A ``bullring serve`` command (one process, or a supervisor and its workers)."""

    proc: subprocess.Popen[str]
    address: str
    log: Path

    @classmethod
    def start(cls, url: str, extra: list[str], log: Path, folder: Path, workers: int = 1
              ) -> Server:
        """Start it on a free port and wait until all its ``workers`` listen; its standard
        output is then drained in a thread, its log appended to ``log``."""
        cmd = [*CLI, "serve", "--port", "0", "--http-port", "-1", "--db", url, *LADDER,
               "--admin-token-file", str(folder / f"admin-{time.monotonic_ns()}"), *extra]
        if workers > 1:
            cmd += ["--workers", str(workers)]
        with log.open("a") as stream:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stream, text=True,
                                    cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert proc.stdout is not None
        address, listening = "", 0
        while listening < workers:
            line = proc.stdout.readline()
            if not line:
                proc.kill()
                raise RuntimeError(f"{cmd!r} did not start; see {log}")
            if "listening on " in line:  # two workers' lines may share one line of the pipe
                listening += line.count("listening on ")
                address = line.split("listening on ")[1].split()[0]
        threading.Thread(target=proc.stdout.read, daemon=True).start()
        return cls(proc, address, log)

    def pids(self) -> list[int]:
        """The process and its children (the workers of ``--workers``)."""
        pid = self.proc.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return [pid, *(int(child) for child in children)]


def stop(procs: list[subprocess.Popen[bytes]] | list[subprocess.Popen[str]]) -> None:
    """SIGTERM, then wait for, every process (killed if it lingers)."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def database() -> Iterator[str]:
    """A fresh PostgreSQL database's URL, dropped afterwards."""
    url, name = postgres_url()
    try:
        yield url
    finally:
        drop_postgres(name)


def backends(url: str) -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL backend serving ``url``'s database."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(PG, autocommit=True) as admin:
        pids = [row[0] for row in admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> "
            "pg_backend_pid()", (name,)).fetchall()]
    found = {}
    for pid in pids:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            found[pid] = cpu_seconds(pid)
    return found


def wait_for_first_match(store: Store, procs: list[subprocess.Popen[str]]) -> None:
    """Block until a match has finished (the set-up plays), or fail."""
    deadline = time.monotonic() + START_S
    while store.count("finished") == 0:
        if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
            raise RuntimeError(f"no match finished within {START_S:.0f} s; see {SERVER_LOG}")
        time.sleep(0.2)


# -- part 1 ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    """One throughput run of a set-up."""

    per_min: float
    server_ms: float
    """Server processes' CPU per match (ms)."""
    bots_ms: float
    postgres_ms: float
    play_ms: float
    """The median match's time from its seating to its result (ms)."""
    between_ms: float
    """The median time a bot waited between the result of one match and its next seating."""
    load: float
    aborted: int
    """Matches aborted in the window (none expected: every bot answers at once)."""


def cycle(store: Store, since: datetime) -> tuple[float, float]:
    """The median match's play time and a bot's median wait between two matches (ms), over
    the matches seated since ``since`` and finished, from the times the database holds."""
    played: list[float] = []
    spans: dict[str, list[tuple[datetime, datetime]]] = defaultdict(list)
    matches = store.matches(status="finished", since=since)
    seats = store.seats([m.id for m in matches])
    for match in matches:
        if match.finished_at is None:
            continue
        played.append((match.finished_at - match.created_at).total_seconds() * 1000)
        for row in seats[match.id]:
            spans[str(row.bot)].append((match.created_at, match.finished_at))
    waits = [(after[0] - before[1]).total_seconds() * 1000
             for held in spans.values() for before, after in itertools.pairwise(sorted(held))]
    nan = float("nan")
    return statistics.median(played) if played else nan, statistics.median(waits) if waits \
        else nan


def throughput(workers: int, broker: bool, args: argparse.Namespace, folder: Path) -> Run:
    """One run of a set-up on a fresh database: ``workers`` processes (with the broker if
    ``broker`` and more than one)."""
    extra = ["--broker", BROKER] if broker and workers > 1 else []
    with database() as url:
        server = Server.start(url, extra, SERVER_LOG, folder, workers)
        bots: list[subprocess.Popen[bytes]] = []
        try:
            store = Store(url)
            note(f"{workers} worker(s) listen")
            bots = start_bots(store, server.address, args.bots)
            wait_for_first_match(store, [server.proc])
            note("a first match finished")
            time.sleep(args.warmup)
            pids = server.pids()
            if len(pids) != workers + (workers > 1):
                raise RuntimeError(f"expected {workers} workers, found {pids[1:]}")
            finished, aborted = store.count("finished"), store.count("aborted")
            server_cpu = sum(cpu_seconds(p) for p in pids)
            bots_cpu = sum(cpu_seconds(b.pid) for b in bots)
            pg = backends(url)
            since = datetime.now(UTC)
            began = time.monotonic()
            time.sleep(args.seconds)
            took = time.monotonic() - began
            matches = store.count("finished") - finished
            aborted = store.count("aborted") - aborted
            server_cpu = sum(cpu_seconds(p) for p in pids) - server_cpu
            bots_cpu = sum(cpu_seconds(b.pid) for b in bots) - bots_cpu
            pg_after = backends(url)
            pg_cpu = sum(pg_after[p] - pg[p] for p in set(pg) & set(pg_after))
            load = os.getloadavg()[0]
            play_ms, between_ms = cycle(store, since)
            store.engine.dispose()
        finally:
            note("stopping")
            stop(bots)
            stop([server.proc])
            note("stopped")
    if not matches:
        raise RuntimeError(f"no match finished in the window; see {SERVER_LOG}")
    return Run(matches / took * 60, server_cpu / matches * 1000, bots_cpu / matches * 1000,
               pg_cpu / matches * 1000, play_ms, between_ms, load, aborted)


# -- part 2 ----------------------------------------------------------------------------------

async def _timed(address: str, token: str, warmup: float, seconds: float
                 ) -> tuple[list[float], int]:
    """Play the ladder as ``_play`` does on one stream and time, from each answer's writing
    to the arrival of the next decision request of the same match, the decisions of the
    ``seconds`` after the first ``warmup`` seconds of play; then finish the match in
    progress and leave before another seats the bot. Return the times and how many
    matches the bot played to their end."""
    import grpc

    from bullring.contract import wire
    from bullring.contract.generated.bullring.v2 import referee_pb2 as pb

    times: list[float] = []
    ended = 0
    join = pb.PlayRequest(join=pb.Join(client="fleet-bench", accept_batches=True, ladder=GAME))
    async with grpc.aio.insecure_channel(address, options=wire.channel_options()) as channel:
        call = wire.bot_stub(channel)["Play"](metadata=[("authorization", f"Bearer {token}")])
        await call.write(join)
        began = stop_at = float("inf")
        answered = 0.0  # when the last answer went, within the match in progress
        while (received := await call.read()) is not grpc.aio.EOF:
            now = time.perf_counter()
            for item in wire.unbatch(received):
                body = item.WhichOneof("body")
                if body == "decision":
                    if answered and began <= now < stop_at:
                        times.append(now - answered)
                    if began == float("inf"):
                        began, stop_at = now + warmup, now + warmup + seconds
                    request = item.decision
                    answer = pb.PlayRequest(answer=pb.Answer(decision_id=request.decision_id,
                                                             action=request.legal[0]))
                    answered = time.perf_counter()
                    await call.write(answer)
                elif body == "match_ended":
                    answered = 0.0
                    ended += 1
                    if now >= stop_at:
                        call.cancel()
                        return times, ended
    raise RuntimeError(f"the ladder stream at {address} ended before the window did")


def _timed_process(address: str, token: str, warmup: float, seconds: float
                   ) -> tuple[list[float], int]:
    """``_timed`` in a process of its own (a pool's worker), given ``START_S`` more than its
    window to be seated and to finish."""
    return asyncio.run(asyncio.wait_for(_timed(address, token, warmup, seconds),
                                        warmup + seconds + START_S))


@dataclass(frozen=True)
class Latency:
    """Part 2's times from an answer to the next request (seconds, sorted), with the bot
    connected to the match's server (direct) and to the other server (relayed)."""

    direct: list[float]
    relayed: list[float]
    cpu_ms: tuple[tuple[float, float], tuple[float, float]]
    """The CPU per match (ms) of the match's server and of the other, direct and relayed."""
    loads: list[float]
    """The 1-minute load average at each phase's end."""


def relayed_latency(args: argparse.Namespace, folder: Path) -> Latency:
    """Two servers linked by the broker, only the first running house bots: one remote bot
    plays with three of them, connected to the first (direct) or to the second (relayed),
    in alternating phases."""
    house = ["--house-bots", ",".join(["random"] * (TABLE - 1)), "--house-rest", "0"]
    direct: list[float] = []
    relayed: list[float] = []
    cpu = [[0.0, 0.0], [0.0, 0.0]]
    matches = [0, 0]
    loads: list[float] = []
    context = multiprocessing.get_context("spawn")
    with database() as url, context.Pool(1, maxtasksperchild=1) as pool:
        servers: list[Server] = []
        try:
            servers.append(Server.start(url, ["--broker", BROKER, *house], SERVER_LOG, folder))
            servers.append(Server.start(url, ["--broker", BROKER], SERVER_LOG, folder))
            store = Store(url)
            tokens = [store.add_bot("direct"), store.add_bot("relayed")]
            store.engine.dispose()
            for _ in range(args.repeats or 1):
                for kind, (server, token, found) in enumerate(zip(
                        servers, tokens, (direct, relayed), strict=True)):
                    note(f"timing a bot on {server.address}")
                    before = [cpu_seconds(s.proc.pid) for s in servers]
                    times, count = pool.apply(_timed_process, (
                        server.address, token, LATENCY_WARMUP_S, args.latency_seconds))
                    for number, was in enumerate(before):
                        cpu[kind][number] += cpu_seconds(servers[number].proc.pid) - was
                    matches[kind] += count
                    found += times
                    loads.append(os.getloadavg()[0])
        finally:
            stop([s.proc for s in servers])
    if not direct or not relayed:
        raise RuntimeError(f"no {'direct' if not direct else 'relayed'} decision was timed")
    per_match = [(cpu[k][0] / matches[k] * 1000, cpu[k][1] / matches[k] * 1000)
                 for k in (0, 1)]
    return Latency(sorted(direct), sorted(relayed), (per_match[0], per_match[1]), loads)


# -- the table -------------------------------------------------------------------------------

def loadavg() -> str:
    """``/proc/loadavg``, as it reads."""
    return Path("/proc/loadavg").read_text().strip()


def _row(name: str, run: str, per_min: float, runs: list[Run], aborted: str, load: str) -> str:
    """One line of part 1's table: ``runs``' medians beside ``per_min``."""
    median = statistics.median
    return (f"{name:<22} {run:>3} {per_min:>11,.0f} "
            f"{median(r.play_ms for r in runs):>7.0f} {median(r.between_ms for r in runs):>7.0f} "
            f"{median(r.server_ms for r in runs):>9.1f} {median(r.bots_ms for r in runs):>7.1f} "
            f"{median(r.postgres_ms for r in runs):>6.1f} {aborted:>7} {load:>5}")


def part1(args: argparse.Namespace, folder: Path) -> None:
    """Alternate the set-ups; print each run, the medians and the ratio."""
    workers_name = "--workers 2" + ("" if args.no_broker else " --broker")
    print(f"\npart 1: ladder matches/min, {args.bots} remote bots, 6 nimmt! rounds=1, "
          f"PostgreSQL, {args.seconds:g} s windows")
    print(f"{'set-up':<22} {'run':>3} {'matches/min':>11} {'play ms':>7} {'wait ms':>7} "
          f"{'server ms':>9} {'bots ms':>7} {'pg ms':>6} {'aborted':>7} {'load':>5}")
    runs: dict[int, list[Run]] = {1: [], 2: []}
    for repeat in range(1, args.repeats + 1):
        for workers in (1, 2):
            run = throughput(workers, not args.no_broker, args, folder)
            runs[workers].append(run)
            name = "one process" if workers == 1 else workers_name
            print(_row(name, str(repeat), run.per_min, [run], str(run.aborted),
                       f"{run.load:.2f}"), flush=True)
    for workers in (1, 2):
        name = "one process" if workers == 1 else workers_name
        done = runs[workers]
        print(_row(name, "med", statistics.median(r.per_min for r in done), done,
                   str(sum(r.aborted for r in done)), ""))
    ratios = sorted(b.per_min / a.per_min for a, b in zip(runs[1], runs[2], strict=True))
    ratio = statistics.median(ratios)
    print(f"{workers_name} against one process: {ratio:.2f} x (runs {ratios[0]:.2f}-"
          f"{ratios[-1]:.2f}); goal >= 1.7 x: {'met' if ratio >= 1.7 else 'missed'}")
    one = runs[1]
    cost = statistics.median(r.server_ms + r.bots_ms + r.postgres_ms for r in one)
    cores = os.cpu_count() or 1
    ceiling = cores * 60_000 / cost / statistics.median(r.per_min for r in one)
    print(f"ceiling: {cores} whole cores at one process's CPU per match ({cost:.1f} ms: "
          f"server, bots and PostgreSQL) would play {ceiling:.2f} x its matches/min")


def part2(args: argparse.Namespace, folder: Path) -> None:
    """Measure the relayed latency; print it beside the broker's own round trip."""
    from benchmarks.broker import measure

    floor = sorted(measure("nats", BROKER_ROUNDS)[BROKER_ROUNDS // 10:])
    lat = relayed_latency(args, folder)
    print(f"\npart 2: a remote bot's answer to its next request, at a table with "
          f"{TABLE - 1} house bots of the match's server; 2 servers --broker, "
          f"{args.repeats or 1} x {args.latency_seconds:g} s per set-up, alternating; "
          f"load {min(lat.loads):.2f}-{max(lat.loads):.2f}")
    print(f"{'bot connected to':<34} {'decisions':>9} {'p50 ms':>7} {'p99 ms':>7}   "
          f"CPU ms/match: {'match server':>12} {'other':>6}")
    rows = (("the match's server (direct)", lat.direct, lat.cpu_ms[0]),
            ("the other server (relayed)", lat.relayed, lat.cpu_ms[1]))
    for name, times, (match_cpu, other_cpu) in rows:
        print(f"{name:<34} {len(times):>9} {statistics.median(times) * 1000:>7.3f} "
              f"{percentile(times, 0.99) * 1000:>7.3f}   {'':>13} {match_cpu:>12.1f} "
              f"{other_cpu:>6.1f}")
    added50 = (statistics.median(lat.relayed) - statistics.median(lat.direct)) * 1000
    added99 = (percentile(lat.relayed, 0.99) - percentile(lat.direct, 0.99)) * 1000
    print(f"{'added by the relay':<34} {'':>9} {added50:>7.3f} {added99:>7.3f}   "
          f"{'':>13} {lat.cpu_ms[1][0] - lat.cpu_ms[0][0]:>12.1f} "
          f"{lat.cpu_ms[1][1] - lat.cpu_ms[0][1]:>6.1f}")
    print(f"goal < 1 ms p50 added: {'met' if added50 < 1 else 'missed'}")
    print(f"{'NATS round trip alone (broker.py)':<34} {len(floor):>9} "
          f"{statistics.median(floor) * 1000:>7.3f} {percentile(floor, 0.99) * 1000:>7.3f}")


def main() -> int:
    """Run both parts and print their tables."""
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--bots", type=int, default=8, help="remote bot processes")
    parser.add_argument("--seconds", type=float, default=15.0,
                        help="part 1's counting window per run")
    parser.add_argument("--warmup", type=float, default=5.0,
                        help="seconds after the first finished match before counting")
    parser.add_argument("--repeats", type=int, default=2,
                        help="part 1's runs of each set-up, alternating (0: skip part 1)")
    parser.add_argument("--latency-seconds", type=float, default=8.0,
                        help="part 2's window per phase, --repeats phases of each set-up "
                             "(0: skip part 2)")
    parser.add_argument("--no-broker", action="store_true",
                        help="part 1's --workers 2 without the broker (the ladder split)")
    parser.add_argument("--bot", nargs=2, metavar=("ADDRESS", "TOKEN"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bot:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_play(*args.bot))
        return 0
    print(f"$ python benchmarks/fleet.py {' '.join(sys.argv[1:])}".rstrip())
    print(f"/proc/loadavg at start: {loadavg()} ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as tmp:
        if args.repeats > 0:
            part1(args, Path(tmp))
        if args.latency_seconds > 0:
            part2(args, Path(tmp))
    print(f"\n/proc/loadavg at end: {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
