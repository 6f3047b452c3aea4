"""A tournament's standings: per bot, win share, mean score per round and "vs field" (its score
minus its table-mates' mean), each with a 95% interval taken over units that share luck (a
game in round-robin, a deal with all its rotations in duplicate).

The in-process tournament (``bullring.sdk.tournament``) and the server's live tournaments
(``bullring.server.tournaments.live``) both aggregate their games here, and print them with
``standings_lines``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the arena (and multiprocessing) only where games are played
    from bullring.sdk.arena import GameOutcome

Z95 = 1.96
"""The normal quantile of a two-sided 95% interval."""


@dataclass(frozen=True, slots=True)
class TableGame:
    """One played game of a tournament and where it sits in the schedule."""

    table: int
    deal: int
    """The luck-sharing unit within the table: the game itself in round-robin."""
    rotation: int
    outcome: GameOutcome


@dataclass(frozen=True, slots=True)
class Standing:
    """One entrant's results over a tournament."""

    bot: str
    """The entrant's label: its spec, with ``#2``, ``#3``… when entered more than once."""
    games: int
    units: int
    """Games (round-robin) or deals (duplicate) the intervals are taken over."""
    win_share: float
    """Wins over games, a tie for first split between the tied seats."""
    win_share_ci95: float
    mean_score: float
    """Mean score (6 nimmt!: penalty) per round; lower is better."""
    mean_score_ci95: float
    vs_field: float
    """Mean per unit of its score per round minus the mean of its table-mates'."""
    vs_field_ci95: float
    mean_rank: float

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> Standing:
        """A standing from its JSON form (a null interval: none, one unit)."""
        def ci(name: str) -> float:
            value = row[name]
            return math.inf if value is None else float(value)

        return cls(str(row["bot"]), int(row["games"]), int(row["units"]),
                   float(row["win_share"]), ci("win_share_ci95"), float(row["mean_score"]),
                   ci("mean_score_ci95"), float(row["vs_field"]), ci("vs_field_ci95"),
                   float(row["mean_rank"]))


def per_round(outcome: GameOutcome, seat: int) -> float:
    """``seat``'s mean score per round in ``outcome``."""
    rounds = outcome.round_scores
    return sum(r[seat] for r in rounds) / len(rounds)


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """The mean of ``values`` and the half-width of its 95% (normal) interval."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, math.inf
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, Z95 * math.sqrt(var / n)


def standings(played: Sequence[TableGame]) -> list[Standing]:
    """Aggregate ``played`` per bot, best "vs field" first (then win share, then name).

    Intervals are taken over units (table, deal): a bot's win share and score per round are
    first averaged over its games of a unit, so the rotations of a duplicate deal, which
    share their luck, count as one observation.
    """
    units: dict[tuple[int, int], dict[str, list[tuple[float, float]]]] = {}
    ranks: dict[str, list[int]] = {}
    for g in played:
        winners = g.outcome.ranks.count(1)
        unit = units.setdefault((g.table, g.deal), {})
        for seat, bot in enumerate(g.outcome.bots):
            rank = g.outcome.ranks[seat]
            win = 1 / winners if rank == 1 else 0.0
            unit.setdefault(bot, []).append((per_round(g.outcome, seat), win))
            ranks.setdefault(bot, []).append(rank)
    scores: dict[str, list[float]] = {}
    wins: dict[str, list[float]] = {}
    diffs: dict[str, list[float]] = {}
    for unit in units.values():
        means = {bot: (sum(s for s, _ in v) / len(v), sum(w for _, w in v) / len(v))
                 for bot, v in unit.items()}
        total = sum(score for score, _ in means.values())
        for bot, (score, win) in means.items():
            scores.setdefault(bot, []).append(score)
            wins.setdefault(bot, []).append(win)
            diffs.setdefault(bot, []).append(score - (total - score) / (len(means) - 1))
    table = []
    for bot, bot_ranks in ranks.items():
        win, win_ci = mean_ci(wins[bot])
        score, score_ci = mean_ci(scores[bot])
        diff, diff_ci = mean_ci(diffs[bot])
        table.append(Standing(bot, len(bot_ranks), len(scores[bot]), win, win_ci, score,
                              score_ci, diff, diff_ci, sum(bot_ranks) / len(bot_ranks)))
    return sorted(table, key=lambda s: (s.vs_field, -s.win_share, s.bot))


def _width(ci: float, spec: str) -> str:
    return format(ci, spec) if math.isfinite(ci) else "n/a"


SCORE_LABEL = "score per round"
"""What the standings call a bot's mean score per round (6 nimmt!'s penalty points, No
Thanks!'s score; lower is better in both), in the words of the web page's "Score per
round"."""


def standings_lines(table: Sequence[Standing], game: str) -> list[str]:
    """``table`` as an aligned text table: a header, a rule, one line per bot."""
    score = SCORE_LABEL
    width = max([3, *(len(s.bot) for s in table)]) + 2
    header = (f"{'bot':<{width}}{'games':>7}{'win share':>16}{score + ' ±':>20}"
              f"{'vs field ±':>20}{'mean rank':>11}")
    lines = [header, "-" * len(header)]
    for s in table:
        win = f"{s.win_share:.1%} ± {_width(s.win_share_ci95, '.1%')}"
        mean = f"{s.mean_score:.2f} ± {_width(s.mean_score_ci95, '.2f')}"
        diff = f"{s.vs_field:+.2f} ± {_width(s.vs_field_ci95, '.2f')}"
        lines.append(f"{s.bot:<{width}}{s.games:>7}{win:>16}{mean:>20}{diff:>20}"
                     f"{s.mean_rank:>11.2f}")
    return lines


