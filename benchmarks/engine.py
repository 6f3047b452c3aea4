"""Full 6 nimmt! games per second through the arena's path, beside a bare list-based loop.

Run: python benchmarks/engine.py [--games N] [--repeats R] [--chunk C] [--worker-games M]
Both are measured in the same run on one core, alternating every ``--chunk`` games over the
same game numbers, so a slow spell of a shared machine falls on both sides of one comparison;
the figure is the ratio of their total CPU times, with the quartiles of the per-chunk ratios
beside it to show the noise (games/s are each side's best chunk).
Then the arena's ``--workers 2`` scaling: games per wall-clock second of ``arena.run`` with
2 worker processes over 1 (4 seats, M games, alternating, best of the repeats; the 2-worker
time includes starting the workers), the CPU each run spends (and of it the arena's own
process, which hands out the games and reads the results), and the machine's load average,
since other work on the 2 cores takes from the second worker.
The referee's hot modules are the mypyc-compiled ones in an installed wheel or after
``scripts/accelerate``, the sources in an editable install (the first line says which).
Times are this thread's CPU time (``time.thread_time``), so games/s is the rate of one core
that is ours; wall-clock time on a machine shared with other work would count their turns.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # after installed packages

import bullring.referee.six_nimmt.engine
from benchmarks.bare_loop import bare_game
from bullring.sdk.arena import ArenaConfig, play_one, resolved, run


def cpu_seconds(play: Callable[[int], object], indexes: range) -> float:
    """This thread's CPU seconds to run ``play(i)`` for each i of ``indexes``."""
    start = time.thread_time()
    for i in indexes:
        play(i)
    return time.thread_time() - start


def main() -> None:
    """Print games/s for the engine and the bare loop at 4 and 5 seats, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=100)
    parser.add_argument("--worker-games", type=int, default=8000)
    args = parser.parse_args()
    print(f"$ python benchmarks/engine.py --games {args.games} --repeats {args.repeats} "
          f"--chunk {args.chunk} --worker-games {args.worker_games}")
    print("games per CPU-second of one thread; referee modules: "
          + ("pure Python" if str(bullring.referee.six_nimmt.engine.__file__).endswith(".py")
             else "mypyc-compiled"))
    print(f"{'seats':>5} {'engine games/s':>15} {'bare loop games/s':>18} {'ratio':>6}  "
          f"chunk ratios' quartiles")
    for seats in (4, 5):
        config = resolved(ArenaConfig("six_nimmt", ("random",) * seats, args.games, seed=seats))
        engine, bare, ratios = [], [], []
        for _ in range(args.repeats):
            for first in range(0, args.games, args.chunk):
                indexes = range(first, min(first + args.chunk, args.games))
                engine.append(cpu_seconds(partial(play_one, config), indexes))
                bare.append(cpu_seconds(partial(bare_game, seats), indexes))
                ratios.append(bare[-1] / engine[-1])
        low, _, high = statistics.quantiles(ratios, n=4)
        print(f"{seats:>5} {args.chunk / min(engine):>15.0f} {args.chunk / min(bare):>18.0f} "
              f"{sum(bare) / sum(engine):>6.2f}  {low:.2f}-{high:.2f} of {len(ratios)}")
    scaling(args.worker_games, args.repeats)


def scaling(games: int, repeats: int) -> None:
    """Print the arena's games per wall-clock second with 1 and 2 workers and their ratio,
    and the CPU each run spent (this process and its workers, and this process alone): with
    two free cores the ratio can reach 2 x (CPU of 1 worker) / (CPU of 2 workers), its
    ceiling."""
    config = ArenaConfig("six_nimmt", ("random",) * 4, games, seed=4)
    best = {1: 0.0, 2: 0.0}
    cpu = {1: float("inf"), 2: float("inf")}
    own = {1: float("inf"), 2: float("inf")}
    loads = []
    for _ in range(repeats):
        for workers in (1, 2):
            loads.append(os.getloadavg()[0])
            start, before = time.monotonic(), os.times()
            run(config, workers)
            after = os.times()
            best[workers] = max(best[workers], games / (time.monotonic() - start))
            mine = after.user + after.system - before.user - before.system
            own[workers] = min(own[workers], mine)
            cpu[workers] = min(cpu[workers], mine + after.children_user
                               + after.children_system - before.children_user
                               - before.children_system)
    print(f"arena --workers, 4 seats, {games} games, best of {repeats}; load average (1 min) "
          f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores")
    print(f"{'workers':>7} {'wall games/s':>13} {'CPU s':>7} {'of it the arena process':>24}")
    for workers, rate_ in best.items():
        print(f"{workers:>7} {rate_:>13.0f} {cpu[workers]:>7.2f} {own[workers]:>24.3f}")
    print(f"scaling: 2 workers = {best[2] / best[1]:.2f} x 1 worker (wall-clock); ceiling on "
          f"two free cores {2 * cpu[1] / cpu[2]:.2f} x (CPU)")


if __name__ == "__main__":
    main()
