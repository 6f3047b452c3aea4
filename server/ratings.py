"""Ratings: openskill's Plackett-Luce model over final ranks, and the leaderboard's rows.

A match's ranks come from its final totals (1 = best, ties share a rank); each seat is a
team of one. A new bot version keeps its mean but widens its uncertainty.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

from bullring.errors import OutOfRangeError

MODEL = PlackettLuce()
"""The rating model (openskill defaults: mu 25, sigma 25/3)."""
DEFAULT_MU: float = MODEL.mu
"""The mean a new bot starts with."""
DEFAULT_SIGMA: float = MODEL.sigma
"""The uncertainty a new bot starts with."""
VERSION_WIDENING: float = DEFAULT_SIGMA / 2
"""Added (in quadrature) to sigma when a bot gets a new version, capped at DEFAULT_SIGMA."""


@dataclass(frozen=True, slots=True)
class Skill:
    """A rating: mean and uncertainty."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """The conservative estimate, mu - 3 sigma (what the leaderboard orders by)."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True, slots=True)
class LeaderboardEntry:
    """One row of a game's leaderboard."""

    bot: str
    """The registered bot's name."""
    version: int
    """Its current version."""
    games: int
    """Rated matches it played at this game."""
    mu: float
    """The mean of its rating."""
    sigma: float
    """The uncertainty of its rating (the interval is mu ± 3 sigma)."""
    ordinal: float
    """mu - 3 sigma: the conservative estimate the board is ordered by."""


NEW = Skill(DEFAULT_MU, DEFAULT_SIGMA)
"""The rating of a bot that has not played."""


def rate(skills: Sequence[Skill], ranks: Sequence[int]) -> list[Skill]:
    """The ratings after one match of ``skills`` (one per seat) finishing at ``ranks``."""
    if len(skills) != len(ranks):
        raise OutOfRangeError(f"{len(skills)} ratings but {len(ranks)} ranks")
    teams = [[MODEL.rating(mu=s.mu, sigma=s.sigma)] for s in skills]
    rated = MODEL.rate(teams, ranks=[float(r) for r in ranks])
    return [Skill(team[0].mu, team[0].sigma) for team in rated]


def widen(skill: Skill) -> Skill:
    """The rating a new version of a bot starts with: same mean, wider uncertainty."""
    sigma = min(DEFAULT_SIGMA, math.hypot(skill.sigma, VERSION_WIDENING))
    return Skill(skill.mu, sigma)
