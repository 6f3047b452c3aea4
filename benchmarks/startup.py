"""How long the command line takes to answer ``--help``, beside a bare ``python -c pass``.

Run: python benchmarks/startup.py [--repeats R]
Each command runs R times, alternating with the bare interpreter; the figure is the best
wall-clock time of each (the least disturbed by other work on the machine), and the CPU time
(user + system) of that run. The console scripts are the ones this environment installed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

COMMANDS = (["bullring", "--help"], ["bullring", "bot", "--help"], ["bullring-arena", "--help"])
"""The commands a new user types first (issue: each under 0.25 s)."""


def run_once(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv`` (its output discarded)."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: the command itself, output to /dev/null
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.execvp(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    """Print the best wall and CPU time of each command beside ``python -c pass``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    print(f"$ python benchmarks/startup.py --repeats {args.repeats}")
    bin_dir = os.path.dirname(sys.executable)
    bare = [sys.executable, "-c", "pass"]
    print(f"{'command':<28} {'best wall s':>11} {'its CPU s':>9} "
          f"{'python -c pass: wall s':>22} {'CPU s':>6}")
    for command in COMMANDS:
        path = shutil.which(command[0], path=bin_dir) or shutil.which(command[0])
        if path is None:
            raise SystemExit(f"{command[0]} is not installed here")
        argv = [path, *command[1:]]
        best = min(run_once(argv) for _ in range(args.repeats))
        base = min(run_once(bare) for _ in range(args.repeats))
        print(f"{' '.join(command):<28} {best[0]:>11.3f} {best[1]:>9.3f} "
              f"{base[0]:>22.3f} {base[1]:>6.3f}")


if __name__ == "__main__":
    main()
