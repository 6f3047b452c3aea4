"""What one ladder match costs each part of a fleet, measured on real processes: the
servers' CPU, the database's transactions, rows, WAL and growth, and the bytes on the wire
per decision. The figures docs/operations.md multiplies out to 100 servers and 100,000 bots.

Run: python benchmarks/match_costs.py [--bots 8] [--servers 1] [--seconds 30] [--warmup 8]
         [--setting KEY=VALUE]...

``--servers N`` ``bullring serve`` processes share one fresh PostgreSQL database (a 6 nimmt!
ladder, full games to 66 at 4 seats, the default settings, or as ``--setting`` says, such
as ``rounds=1``: a run of short matches beside one of long ones tells the cost of a match
from the cost of its decisions); ``--bots`` registered bots, each
a ``bullring bot --ladder six_nimmt house:random`` process answering at once, are dealt out
over the servers, each connected to exactly one. Every bot connects through a byte-counting
TCP relay in this process, so "wire bytes" are what the bots' gRPC connections carried
(HTTP/2 framing, headers and pings included) both ways.

After ``--warmup`` seconds, figures are taken over ``--seconds`` and divided by the matches
finished meanwhile:
- servers' CPU: user + system of the server processes (/proc);
- store calls: each server's ``bullring_db_transaction_seconds_count`` by call (its
  /metrics), summed over the servers: the transactions the servers make, per kind;
- database: PostgreSQL's own counts for the database (``pg_stat_database``: commits, rows
  inserted, updated, deleted), the WAL written (``pg_current_wal_lsn``, the whole cluster:
  keep it otherwise idle) and the database's growth on disk;
- PostgreSQL CPU: user + system of the backends serving this database that lived through
  the window (the pooled connections; a backend that came or went meanwhile is left out);
- decisions: ``bullring_decisions_requested_total``, so the wire's bytes per decision.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # after installed packages

from benchmarks.common import SERVER_LOG, cpu_seconds  # noqa: E402
from benchmarks.ladder import drop_postgres, postgres_url  # noqa: E402
from bullring.server.store import Store  # noqa: E402

CLI = [sys.executable, "-m", "bullring.server.cli"]
METRIC = re.compile(r"^(\w+)(?:\{([^}]*)\})? ([0-9.eE+-]+)$")


class Relay:
    """TCP relays on loopback, one per server, each counting the bytes it carries each way;
    run on an event loop of their own in a thread of this process."""

    def __init__(self) -> None:
        self.up = 0
        """Bytes from the bots to the servers."""
        self.down = 0
        """Bytes from the servers to the bots."""
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def to(self, target: str) -> str:
        """A relay to the server at ``target``; its own address."""
        return asyncio.run_coroutine_threadsafe(self._listen(target), self.loop).result(30)

    async def _listen(self, target: str) -> str:
        host, port = target.rsplit(":", 1)

        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       up: bool) -> None:
            try:
                while data := await reader.read(65536):
                    if up:
                        self.up += len(data)
                    else:
                        self.down += len(data)
                    writer.write(data)
                    await writer.drain()
            except ConnectionError:
                pass
            finally:
                writer.close()

        async def relay(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
            server_r, server_w = await asyncio.open_connection(host, int(port))
            await asyncio.gather(pipe(client_r, server_w, True), pipe(server_r, client_w, False))

        server = await asyncio.start_server(relay, "127.0.0.1", 0)
        return f"127.0.0.1:{server.sockets[0].getsockname()[1]}"


@dataclass
class Server:
    """A ``bullring serve`` process: its gRPC address and its HTTP base URL."""

    proc: subprocess.Popen[str]
    address: str
    http: str

    def metrics(self) -> dict[str, float]:
        """Its /metrics, each series by ``name`` or ``name{labels}``."""
        text = urllib.request.urlopen(f"{self.http}/metrics", timeout=30).read().decode()
        found: dict[str, float] = {}
        for line in text.splitlines():
            match = METRIC.match(line)
            if match:
                name, labels, value = match.groups()
                found[f"{name}{{{labels}}}" if labels else name] = float(value)
        return found


def serve(url: str, log: Path, settings: list[str]) -> Server:
    """Start ``bullring serve`` on free ports with the ladder ``settings`` (KEY=VALUE);
    wait until it listens."""
    extra = [a for kv in settings for a in ("--ladder-setting", f"six_nimmt:{kv}")]
    with log.open("a") as stream:
        proc = subprocess.Popen([*CLI, "serve", "--port", "0", "--http-port", "0", "--db", url,
                                 "--ladder", "six_nimmt", *extra, "--admin-token-file",
                                 f"/tmp/bullring-bench-admin-{uuid.uuid4().hex[:8]}"],
                                stdout=subprocess.PIPE, stderr=stream, text=True, cwd=ROOT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    address = proc.stdout.readline().split("listening on ")[1].split()[0]
    http = proc.stdout.readline().split("HTTP API on ")[1].split()[0].rstrip("/")
    return Server(proc, address, http)


@dataclass
class Snapshot:
    """Every count the figures are differences of."""

    at: float
    finished: int
    decisions: float
    calls: dict[str, float]
    server_cpu: float
    bot_cpu: float
    db: dict[str, int]
    wal: int
    size: int
    backends: dict[int, float]
    up: int
    down: int


def _sum(metrics: list[dict[str, float]], name: str) -> float:
    return sum(v for m in metrics for k, v in m.items() if k.split("{")[0] == name)


def snapshot(store: Store, database: str, servers: list[Server],
             bots: list[subprocess.Popen[str]], relay: Relay) -> Snapshot:
    """The counts now."""
    import psycopg

    from benchmarks.ladder import PG

    metrics = [s.metrics() for s in servers]
    calls: dict[str, float] = defaultdict(float)
    for m in metrics:
        for key, value in m.items():
            if key.startswith("bullring_db_transaction_seconds_count{"):
                calls[re.search(r'call="([^"]+)"', key).group(1)] += value  # type: ignore[union-attr]
    with psycopg.connect(PG, autocommit=True) as admin:
        row = admin.execute("SELECT xact_commit, tup_inserted, tup_updated, tup_deleted "
                            "FROM pg_stat_database WHERE datname = %s", (database,)).fetchone()
        admin.execute("SELECT pg_stat_clear_snapshot()")
        wal = admin.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn").fetchone()
        size = admin.execute("SELECT pg_database_size(%s)", (database,)).fetchone()
        pids = [r[0] for r in admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> "
            "pg_backend_pid()", (database,)).fetchall()]
    assert row is not None and wal is not None and size is not None
    backends = {}
    for pid in pids:
        try:
            backends[pid] = cpu_seconds(pid)
        except (FileNotFoundError, ProcessLookupError):
            continue
    return Snapshot(time.monotonic(), store.count("finished"),
                    _sum(metrics, "bullring_decisions_requested_total"), dict(calls),
                    sum(cpu_seconds(s.proc.pid) for s in servers),
                    sum(cpu_seconds(b.pid) for b in bots),
                    dict(zip(("commits", "inserted", "updated", "deleted"), row, strict=True)),
                    int(wal[0]), int(size[0]), backends, relay.up, relay.down)


def main() -> int:
    """Measure and print the costs per match."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--servers", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=8.0)
    parser.add_argument("--setting", action="append", default=[], metavar="KEY=VALUE",
                        help="a 6 nimmt! ladder setting (rounds=1: short matches)")
    args = parser.parse_args()
    print(f"# python benchmarks/match_costs.py {' '.join(sys.argv[1:])}".rstrip())
    print(f"# load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    url, database = postgres_url()
    relay = Relay()
    servers: list[Server] = []
    bots: list[subprocess.Popen[str]] = []
    try:
        servers = [serve(url, SERVER_LOG, args.setting) for _ in range(args.servers)]
        store = Store(url)
        relays = [relay.to(s.address) for s in servers]
        for i in range(args.bots):
            token = store.add_bot(f"cost-{i}")
            bots.append(subprocess.Popen(
                [*CLI, "bot", "--server", relays[i % len(relays)], "--token", token,
                 "--ladder", "six_nimmt", "house:random"], cwd=ROOT, text=True,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(args.warmup)
        first = snapshot(store, database, servers, bots, relay)
        time.sleep(args.seconds)
        last = snapshot(store, database, servers, bots, relay)
    finally:
        for proc in [*bots, *(s.proc for s in servers)]:
            proc.terminate()
        for proc in [*bots, *(s.proc for s in servers)]:
            proc.wait(timeout=60)
        drop_postgres(database)
    matches = last.finished - first.finished
    decisions = last.decisions - first.decisions
    if not matches or not decisions:
        print("no match finished in the window: run longer")
        return 1
    window = last.at - first.at
    lived = set(first.backends) & set(last.backends)
    pg_cpu = sum(last.backends[p] - first.backends[p] for p in lived)
    print(f"{args.servers} server(s), {args.bots} bots: {matches} matches in {window:.1f} s "
          f"({matches / window * 60:,.0f}/min), {decisions / matches:,.1f} decisions per match")
    server_cpu, bot_cpu = last.server_cpu - first.server_cpu, last.bot_cpu - first.bot_cpu
    calls = sum(last.calls.values()) - sum(first.calls.values())
    rows = [
        ("servers' CPU per match", f"{server_cpu / matches * 1000:.1f} ms"),
        ("servers' CPU per decision", f"{server_cpu / decisions * 1e6:.0f} us"),
        ("bots' CPU per decision", f"{bot_cpu / decisions * 1e6:.0f} us"),
        (f"PostgreSQL CPU per match ({len(lived)} backends)", f"{pg_cpu / matches * 1000:.1f} ms"),
        ("store calls per match", f"{calls / matches:.1f}"),
    ]
    for call in sorted(last.calls):
        count = (last.calls[call] - first.calls.get(call, 0.0)) / matches
        if count:
            rows.append((f"  {call}", f"{count:.2f}"))
    for key in ("commits", "inserted", "updated", "deleted"):
        rows.append((f"PostgreSQL {key} per match",
                     f"{(last.db[key] - first.db[key]) / matches:.1f}"))
    rows += [
        ("WAL per match", f"{(last.wal - first.wal) / matches / 1024:.1f} KiB"),
        ("database growth per match", f"{(last.size - first.size) / matches / 1024:.1f} KiB"),
        ("wire bytes per decision, bot to server", f"{(last.up - first.up) / decisions:.0f} B"),
        ("wire bytes per decision, server to bot", f"{(last.down - first.down) / decisions:.0f} B"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value:>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
