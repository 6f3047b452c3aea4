"""Duplicate vs independent deals: how wide is the 95% interval of greedy - random at 6 nimmt!?

(``--game``, ``--bot`` and ``--against`` pick another pair: ``--game no_thanks --bot
threshold``.)

For each table size it plays ``--repeats`` tournaments of ``--games`` games per format
(same bots, same game count, seeds ``1000 + r``) with ``greedy`` and ``k - 1`` ``random``
entrants, and prints for the difference "greedy's mean penalty per round - random's":

- ``unpaired``: independent deals (round-robin), the two bots' means taken as independent
  samples: half-width = 1.96 · sqrt(se_greedy² + se_random²);
- ``paired/game``: independent deals, greedy minus its table-mates within each game;
- ``duplicate``: the tournament's own figure, greedy minus its table-mates per deal, each
  deal played in every rotation;
- ``true``: 1.96 x the standard deviation of the estimate over the repeats — the width an
  honest interval should have, whatever formula reports it;

and the controls ``greedy`` vs ``greedy`` (identical bots), where duplicate removes all luck,
and ``greedy`` vs ``ShortestRow`` (tests/bots/greedy_variants.py: the same cards, another row
choice), a close pair, where it removes most.
``hand r`` is the correlation, over every hand of the duplicate runs, between greedy's score
holding a hand and the other bots' scores holding the same hand: how much of a score the
hand explains, which is all that duplicate can take away.

    python benchmarks/duplicate.py --games 200 --repeats 20 --seats 2 3 4
    python benchmarks/duplicate.py --game no_thanks --bot threshold --seats 3 4
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bullring.sdk import tournament
from bullring.sdk.standings import TableGame, mean_ci, per_round, standings
from bullring.sdk.tournament import TournamentConfig

CLOSE_RELATIVE = Path(__file__).resolve().parent.parent / "tests" / "bots" / "greedy_variants.py"
"""Where ``ShortestRow`` lives: greedy's cards, another row choice."""


def unpaired(played: Sequence[TableGame], a: str, b: str) -> tuple[float, float]:
    """Mean of entrant ``a`` minus mean of the other entrants named ``b`` (``b#2``… pooled)
    per round, and the half-width of its interval if the two samples were independent."""
    sample_a: list[float] = []
    sample_b: list[float] = []
    for g in played:
        for seat, bot in enumerate(g.outcome.bots):
            if bot == a:
                sample_a.append(per_round(g.outcome, seat))
            elif bot.split("#")[0] == b:
                sample_b.append(per_round(g.outcome, seat))
    (mean_a, ci_a), (mean_b, ci_b) = mean_ci(sample_a), mean_ci(sample_b)
    return mean_a - mean_b, math.hypot(ci_a, ci_b)


def paired(played: Sequence[TableGame], bot: str) -> float:
    """The tournament's "vs field" half-width for ``bot``."""
    return next(s.vs_field_ci95 for s in standings(played) if s.bot == bot)


def same_hand(played: Sequence[TableGame], bot: str) -> list[tuple[float, float]]:
    """Per (table, deal, seat) of a duplicate run: ``bot``'s score per round holding that
    seat's hand, and the mean of the other bots' holding the same hand."""
    held: dict[tuple[int, int, int], list[tuple[str, float]]] = {}
    for g in played:
        for seat, name in enumerate(g.outcome.bots):
            held.setdefault((g.table, g.deal, seat), []).append(
                (name, per_round(g.outcome, seat)))
    pairs = []
    for hand in held.values():
        own = [x for name, x in hand if name == bot]
        rest = [x for name, x in hand if name != bot]
        if own and rest:
            pairs.append((own[0], statistics.mean(rest)))
    return pairs


def measure(game: str, bots: tuple[str, ...], games: int, repeats: int,
            workers: int) -> dict[str, float]:
    """Mean reported half-widths and the true spread of the estimate, per format."""
    figures: dict[str, list[float]] = {"unpaired": [], "paired/game": [], "duplicate": []}
    estimates: dict[str, list[float]] = {"round-robin": [], "duplicate": []}
    hands: list[tuple[float, float]] = []
    for fmt in ("round-robin", "duplicate"):
        for r in range(repeats):
            played = tournament.run(TournamentConfig(game, fmt, bots, games,
                                                     seed=1000 + r), workers)
            diff, width = unpaired(played, bots[0], bots[1].split("#")[0])
            estimates[fmt].append(diff)
            if fmt == "round-robin":
                figures["unpaired"].append(width)
                figures["paired/game"].append(paired(played, bots[0]))
            else:
                figures["duplicate"].append(paired(played, bots[0]))
                hands += same_hand(played, bots[0])
    out = {name: statistics.mean(v) for name, v in figures.items()}
    own, rest = zip(*hands, strict=True)
    out["hand r"] = statistics.correlation(own, rest) if len(set(rest)) > 1 else 1.0
    for fmt, values in estimates.items():
        out[f"true {fmt}"] = 1.96 * statistics.stdev(values)
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games per tournament")
    parser.add_argument("--repeats", type=int, default=20, help="tournaments per format")
    parser.add_argument("--seats", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--game", default="six_nimmt")
    parser.add_argument("--bot", default="greedy", help="the bot compared with --against")
    parser.add_argument("--against", default="random")
    args = parser.parse_args(argv)
    print(f"$ python benchmarks/{' '.join(['duplicate.py', *sys.argv[1:]])}")
    print(f"95% half-widths of the first bot's score per round minus the others' "
          f"({args.game}), {args.games} games per "
          f"tournament, mean over {args.repeats} tournaments per format\n")
    head = (f"{'table':<28}{'unpaired':>9}{'paired/game':>12}{'duplicate':>10}"
            f"{'dup/unpaired':>13}{'true indep':>11}{'true dup':>9}{'true dup/indep':>15}"
            f"{'hand r':>8}")
    print(head)
    print("-" * len(head))
    started = time.perf_counter()
    rows = [(args.bot, *[args.against] * (k - 1)) for k in args.seats]
    rows.append((args.bot,) * max(2, min(args.seats)))
    if args.game == "six_nimmt" and args.bot == "greedy":
        rows.append(("greedy", f"{CLOSE_RELATIVE}:ShortestRow"))
    for bots in rows:
        m = measure(args.game, bots, args.games, args.repeats, args.workers)
        label = " + ".join(f"{bots.count(b)}x{b.rpartition(':')[2]}"
                           for b in dict.fromkeys(bots))
        print(f"{label:<28}{m['unpaired']:>9.3f}{m['paired/game']:>12.3f}"
              f"{m['duplicate']:>10.3f}{m['duplicate'] / m['unpaired']:>13.2f}"
              f"{m['true round-robin']:>11.3f}{m['true duplicate']:>9.3f}"
              f"{m['true duplicate'] / max(m['true round-robin'], 1e-12):>15.2f}"
              f"{m['hand r']:>8.2f}", flush=True)
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
