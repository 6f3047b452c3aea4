"""Full 6 nimmt! games per second through the arena's path, beside a bare list-based loop.

Run: python benchmarks/engine.py [--games N] [--repeats R]
Both are measured in the same run, alternating, on one core; the ratio is the figure.
The referee's hot modules are the mypyc-compiled ones in an installed wheel or after
``scripts/accelerate``, the sources in an editable install (the first line says which).
Times are this thread's CPU time (``time.thread_time``), so games/s is the rate of one core
that is ours; wall-clock time on a machine shared with other work would count their turns.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import referee.six_nimmt
from benchmarks.bare_loop import bare_game
from client_sdk.arena import ArenaConfig, play_one


def rate(play: object, games: int) -> float:
    """Games per CPU-second of ``play(i)`` for i in range(games)."""
    assert callable(play)
    start = time.thread_time()
    for i in range(games):
        play(i)
    return games / (time.thread_time() - start)


def main() -> None:
    """Print games/s for the engine and the bare loop at 4 and 5 seats, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"$ python benchmarks/engine.py --games {args.games} --repeats {args.repeats}")
    print("games per CPU-second of one thread, best of the repeats; referee modules: "
          + ("pure Python" if str(referee.six_nimmt.__file__).endswith(".py")
             else "mypyc-compiled"))
    print(f"{'seats':>5} {'engine games/s':>15} {'bare loop games/s':>18} {'ratio':>6}")
    for seats in (4, 5):
        config = ArenaConfig("six_nimmt", ("random",) * seats, args.games, seed=seats)
        best_engine = best_bare = 0.0
        for _ in range(args.repeats):
            best_engine = max(best_engine, rate(lambda i, c=config: play_one(c, i), args.games))
            best_bare = max(best_bare, rate(lambda i, s=seats: bare_game(s, i), args.games))
        print(f"{seats:>5} {best_engine:>15.0f} {best_bare:>18.0f} "
              f"{best_engine / best_bare:>6.2f}")


if __name__ == "__main__":
    main()
