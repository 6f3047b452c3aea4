"""The words the web page and the commands share for the same numbers: a leaderboard's
rating and skill interval, a tournament's score per round. The page writes them in sentence
case, the commands' tables in lower case; both tests read them from here."""

from __future__ import annotations

LEADERBOARD_WORDS = ("Version", "Games", "Rating", "Skill interval (μ ± 3σ)")
"""The leaderboard's columns after the place and the bot, on the page and in ``bullring
leaderboard``."""

STANDINGS_WORDS = ("Games", "Win share", "Score per round", "vs field", "Mean rank")
"""A tournament's standings columns after the bot, on the page and in ``bullring
tournament``."""

RETIRED_WORDS = ("ordinal", "penalty/round", "score/round", " .. ")
"""Words the commands once printed for these numbers, which the page never says."""


def interval(mu: float, sigma: float) -> str:
    """The skill interval as the page and the commands write it: ``43.15 ± 11.70``."""
    return f"{mu:.2f} ± {3 * sigma:.2f}"
