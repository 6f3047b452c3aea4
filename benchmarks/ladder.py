"""Completed ladder matches per minute, on SQLite and on PostgreSQL, beside the bare engine
playing the same matches in-process in the same run.

Run: python benchmarks/ladder.py [--seconds 30] [--backends sqlite,postgresql] [--remote 8]

Rows per backend:
- house: ``bullring serve --house-bots greedy,random x7 --house-rest 0`` — eight house bots
  (answering at once, deadline 1000 ms) seated two tables at a time on the 6 nimmt! ladder;
- remote: N registered bots, each its own ``bullring bot --ladder six_nimmt house:random``
  process, answering at once over gRPC.
Every match is a full game to 66 with 4 seats (8 bots, tables of 4-5: two tables of 4).
The baseline is the local arena playing the same 4-seat games back to back in this process.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # after installed packages

from benchmarks.common import start  # noqa: E402
from bullring.sdk import arena  # noqa: E402
from bullring.server.store import Store  # noqa: E402

CLI = [sys.executable, "-m", "bullring.server.cli"]
PG = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=3"
HOUSE = "greedy," + ",".join(["random"] * 7)


def arena_rate(seconds: float) -> float:
    """Matches per minute of the bare engine: 4-seat games to 66, one after another."""
    config = arena.ArenaConfig("six_nimmt", ("greedy", "random", "random", "random"), 50)
    played, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        played += len(arena.run(config, 1, None))
    return played / (time.perf_counter() - began) * 60


def serve(db: str, *extra: str, log: Path) -> tuple[subprocess.Popen[str], str]:
    """Start ``bullring serve`` on a free port; return it and its address."""
    return start([*CLI, "serve", "--port", "0", "--http-port", "-1", "--db", db,
                  "--ladder", "six_nimmt", *extra], log)


def measure(store: Store, seconds: float, warmup: float) -> float:
    """Completed matches per minute over ``seconds``, after ``warmup``."""
    time.sleep(warmup)
    first, began = store.count("finished"), time.perf_counter()
    time.sleep(seconds)
    return (store.count("finished") - first) / (time.perf_counter() - began) * 60


def stop(procs: list[subprocess.Popen[str]]) -> None:
    """SIGTERM, then wait for, every process."""
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.wait(timeout=60)


def run_backend(url: str, seconds: float, remote: int, folder: Path) -> dict[str, float]:
    """The house and remote rows on one database."""
    rates: dict[str, float] = {}
    server, _ = serve(url, "--house-bots", HOUSE, "--house-rest", "0", log=folder / "house.log")
    try:
        rates["house"] = measure(Store(url), seconds, warmup=3)
    finally:
        stop([server])
    if remote:
        store = Store(url)
        server, address = serve(url, log=folder / "remote.log")
        bots: list[subprocess.Popen[str]] = []
        try:
            for i in range(remote):
                token = store.add_bot(f"remote-{uuid.uuid4().hex[:6]}-{i}")
                bots.append(subprocess.Popen(
                    [*CLI, "bot", "--server", address, "--token", token, "--ladder",
                     "six_nimmt", "house:random"], cwd=ROOT, text=True,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            rates["remote"] = measure(store, seconds, warmup=8)
        finally:
            stop([*bots, server])
    return rates


def postgres_url() -> tuple[str, str]:
    """A fresh PostgreSQL database (its URL and name)."""
    import psycopg

    name = f"bullring_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}", name


def drop_postgres(name: str) -> None:
    """Drop the benchmark's database."""
    import psycopg

    with psycopg.connect(PG, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="measuring window per row")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--remote", type=int, default=8, help="remote bot processes (0: none)")
    args = parser.parse_args()
    command = " ".join(["python", "benchmarks/ladder.py", *sys.argv[1:]])
    baseline = arena_rate(min(args.seconds, 10.0))
    print(f"# {command}")
    print(f"# load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"baseline: bare engine in-process, 4-seat games to 66: {baseline:,.0f} matches/min")
    for backend in args.backends.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            if backend == "sqlite":
                rates = run_backend(f"sqlite:///{folder / 'ladder.db'}", args.seconds,
                                    args.remote, folder)
            else:
                url, name = postgres_url()
                try:
                    rates = run_backend(url, args.seconds, args.remote, folder)
                finally:
                    drop_postgres(name)
        for row, rate in rates.items():
            print(f"{backend:<10} {row:<7} {rate:>8,.0f} matches/min  "
                  f"({rate / baseline:.3f} x the bare engine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
