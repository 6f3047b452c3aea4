"""The example policy of docs/envs.md: how long it trains, and how it does in the arena.

Run: python benchmarks/policy.py [--games N]
It trains the weights with the example's defaults (into a temporary file: the repository's
copy is left alone), prints the wall-clock and CPU seconds of the training and the load of
the machine, then plays N two-seat arena games of the trained policy against ``random`` and
prints the arena's own table.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # after installed packages

from bullring.sdk import arena
from bullring.sdk.examples import linear_policy
from bullring.sdk.standings import SCORE_LABEL


def main() -> None:
    """Train, time it, and play the arena games."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=1000)
    args = parser.parse_args()
    print(f"$ python benchmarks/policy.py --games {args.games}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "policy.json"
        wall, cpu = time.monotonic(), time.process_time()
        weights = linear_policy.train(log=lambda line: None)
        wall, cpu = time.monotonic() - wall, time.process_time() - cpu
        linear_policy.save(weights, out, wall, 0)
        print(f"training: {wall:.1f} s wall-clock, {cpu:.1f} s CPU (one process)")
        os.environ["BULLRING_POLICY"] = str(out)
        spec = "bullring.sdk.examples.linear_policy:LinearPolicy"
        config = arena.ArenaConfig("six_nimmt", (spec, "random"), args.games, seed=1)
        table = arena.standings(arena.run(config))
    print(f"arena, {args.games} games at 2 seats, seed 1:")
    print(arena.format_table(table, f"{SCORE_LABEL} ± 95%"))


if __name__ == "__main__":
    main()
