"""Soak: the ladder runs for minutes while its bots crash, stall, reconnect and send garbage.

Run: python benchmarks/soak.py --minutes 30 [--db sqlite|postgresql|URL] [--deadline-ms 200]

A real ``bullring serve`` (both ladders, short deadlines, two house bots) on a fresh SQLite
file (or a fresh PostgreSQL database, dropped afterwards) and eight registered bots, each a
``bullring bot --ladder GAME house:NAME`` process. A chaos driver, at random intervals:

- crash: kill -9 a bot process and start it again (it reconnects with the same token);
- stall: SIGSTOP a bot for longer than the deadline, then SIGCONT it;
- version: kill -9 a bot, wait until its match is over, ``new_version`` it, start it again;
- garbage: a raw gRPC client sends random bytes (valid, invalid and no token), joins the
  ladder with a registered "garbage" bot and answers with malformed actions and wrong ids,
  or drops its stream mid-match.

At the end the server gets SIGTERM and the script checks, printing a summary:
1. no lost match: every match row is finished or aborted, and aborted only if it was in
   flight at shutdown; every finished replay verifies; every match a bot saw end is stored
   finished with the same ranks; every finished ladder match is rated once per seat;
2. no server error: no ERROR / Traceback / exception line in the server's log, and no
   UNKNOWN or INTERNAL status answered to the garbage client. One INTERNAL is not the
   server's: grpc.aio's own write losing the status of a call the server refused before
   reading it (grpc/grpc#36066, ``wire.lost_to_own_write``). The same call is then asked
   again with grpc's sync client, and the status the server sends it is what is judged
   (and counted, as "INTERNAL lost to the client's write ..., server sent CODE");
3. ratings recomputed from the stored matches (their ranks through
``bullring.server.ratings`` in
   match order from the initial rating, widened at each new bot version) equal the stored
   ratings within 1e-9.
The exit status is 0 only when every check holds.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # after installed packages


from benchmarks.soak_chaos import Chaos, Garbage  # noqa: E402
from benchmarks.soak_checks import TOLERANCE, check  # noqa: E402
from benchmarks.soak_processes import HOUSE, LAST_S, Bot, Server, utc_now  # noqa: E402
from bullring.server.store import Store  # noqa: E402

PG = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=3"
BOTS: dict[str, tuple[str, str]] = {
    "nimmt-greedy-1": ("six_nimmt", "house:greedy"),
    "nimmt-greedy-2": ("six_nimmt", "house:greedy"),
    "nimmt-random-1": ("six_nimmt", "house:random"),
    "nimmt-random-2": ("six_nimmt", "house:random"),
    "thanks-threshold-1": ("no_thanks", "house:threshold"),
    "thanks-threshold-2": ("no_thanks", "house:threshold"),
    "thanks-never-1": ("no_thanks", "house:never_take"),
    "thanks-random-1": ("no_thanks", "house:random"),
}
"""The registered bots: name -> (ladder, bot spec)."""


@contextmanager
def database(kind: str, folder: Path) -> Iterator[str]:
    """A fresh database URL: a SQLite file in ``folder``, a new PostgreSQL database (dropped
    afterwards), or the URL given."""
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'soak.db'}"
    elif kind == "postgresql":
        import psycopg

        name = f"bullring_soak_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(PG, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
        finally:
            with psycopg.connect(PG, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    else:
        yield kind




# --------------------------------------------------------------------------- main


def main() -> int:
    """Run the soak and print its summary; 0 when every check holds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--db", default="sqlite", help="sqlite, postgresql (a fresh "
                                                      "database, dropped after) or a URL")
    parser.add_argument("--deadline-ms", type=int, default=200)
    parser.add_argument("--chaos-every", type=float, default=4.0, metavar="SECONDS",
                        help="mean seconds between chaos events on the bots (default: 4)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep the logs and the SQLite file in DIR")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    command = "python benchmarks/soak.py " + " ".join(sys.argv[1:])
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bullring-soak-"))
    folder.mkdir(parents=True, exist_ok=True)

    with database(args.db, folder) as url:
        server = Server(url, folder, args.deadline_ms).start()
        store = Store(url)
        bots = [Bot(name, game, spec, store.add_bot(name, owner="soak"), folder)
                for name, (game, spec) in BOTS.items()]
        garbage = Garbage(server.address, [b.token for b in bots],
                          store.add_bot("soak-garbage", owner="soak"), random.Random(rng.random()))
        for bot in bots:
            bot.start(server.address)
        garbage.start()
        chaos = Chaos(bots, server, store, args.deadline_ms, rng)
        began = time.monotonic()
        ends = began + args.minutes * 60
        next_strike = began + rng.expovariate(1 / args.chaos_every)
        next_sample = began
        try:
            while (now := time.monotonic()) < ends:
                if now >= next_sample:
                    server.sample_rss()
                    next_sample = now + 30
                    print(f"[{(now - began) / 60:5.1f} min] {store.count('finished')} finished, "
                          f"chaos {dict(chaos.events)}, garbage {sum(garbage.events.values())},"
                          f" server RSS {server.rss_kb[-1] / 1024:.0f} MiB", flush=True)
                if now >= next_strike:
                    chaos.strike()
                    next_strike = time.monotonic() + rng.expovariate(1 / args.chaos_every)
                chaos.tick(time.monotonic())
                if server.proc is not None and server.proc.poll() is not None:
                    raise RuntimeError(f"the server exited ({server.proc.returncode}); "
                                       f"see {server.log}")
                time.sleep(0.05)
        finally:
            garbage.stop()
            chaos.settle()
            server.sample_rss()
            peak = server.peak_rss_kb() if server.proc and server.proc.poll() is None else 0
            stopped_at = utc_now()
            code = server.stop()
            for bot in bots:
                if bot.proc is not None and bot.proc.poll() is None:
                    bot.proc.send_signal(signal.SIGTERM)
            for bot in bots:
                if bot.proc is not None:
                    try:
                        bot.proc.wait(timeout=15)
                    except subprocess.TimeoutExpired:
                        bot.proc.kill()
                        bot.proc.wait()
        elapsed = (time.monotonic() - began) / 60
        result = check(store, bots, stopped_at, server.log, garbage)
        if code != 0:
            result["problems"].append(f"the server exited with status {code} on SIGTERM")
        exits = [f"{b.name}: {b.exits}" for b in bots if b.exits]
        store.engine.dispose()

    matches = result["matches"]
    print()
    print(f"$ {command}")
    print(f"soak on {args.db}: {elapsed:.1f} minutes, deadline {args.deadline_ms} ms, "
          f"{len(bots)} registered bots + house {HOUSE}; folder {folder}")
    other = sum(v for k, v in matches.items() if k not in ("finished", "aborted"))
    print(f"matches: {matches.get('finished', 0)} finished, {matches.get('aborted', 0)} "
          f"aborted (in flight at shutdown), {other} left in another state")
    print(f"  seen ending by the bots: {result['finished_seen_by_bots']}; finished with a "
          f"registered bot but seen by none (all its bots down at the end): "
          f"{result['finished_with_a_bot_unseen']}")
    print(f"chaos events: {dict(sorted(chaos.events.items()))}; bot processes started "
          f"{sum(b.starts for b in bots)} times; exits on their own: {exits or 'none'}")
    print(f"garbage requests: {sum(garbage.events.values())} "
          f"{dict(sorted(garbage.events.items()))}; "
          f"status codes {dict(sorted(garbage.codes.items()))}")
    print(f"server errors in the log: {result['server_error_lines']}; exit status on "
          f"SIGTERM: {code}")
    print(f"ratings: {result['ratings_compared']} recomputed from the stored matches, max "
          f"|difference| {result['max_rating_gap']:.3g} (tolerance {TOLERANCE:g})")
    rss = server.rss_kb
    grown, window = server.growth_kb(min(LAST_S, elapsed * 60))
    print(f"server memory: peak RSS {peak / 1024:.0f} MiB; RSS first {rss[0] / 1024:.0f} MiB, "
          f"last {rss[-1] / 1024:.0f} MiB ({len(rss)} samples); over the last "
          f"{min(LAST_S, elapsed * 60) / 60:.0f} minutes it grew {grown / 1024:.1f} MiB "
          f"({window} samples)")
    (folder / "summary.json").write_text(json.dumps({
        "command": command, "minutes": round(elapsed, 2), "db": args.db,
        "deadline_ms": args.deadline_ms, "chaos": dict(chaos.events),
        "garbage": dict(garbage.events), "garbage_codes": dict(garbage.codes),
        "peak_rss_kb": peak, "rss_kb": rss, "rss_growth_last_kb": grown, **result}, indent=2))
    if result["problems"]:
        print(f"FAILED: {len(result['problems'])} problems")
        for problem in result["problems"][:40]:
            print(f"  - {problem}")
        return 1
    print("OK: no lost match, no server error, ratings recomputed equal the stored ones")
    return 0


if __name__ == "__main__":
    sys.exit(main())
