"""``random``: a uniformly random legal action for every decision, row choices included."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bullring.referee.core import Action, Decision
from bullring.referee.seeding import SeededPicks
from bullring.sdk.bot import Bot


class RandomBot(Bot):
    """Answers every decision with a legal action drawn uniformly from its seed's stream
    (``bullring.referee.seeding.SeededPicks``: SHAKE-256 of the seed, cheap to start, which an arena
    game does four times; ``self.rng`` is left for subclasses)."""

    name = "random"
    decision_only = True

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self._picks = SeededPicks(seed, "random")

    def decide(self, observation: Any) -> Action:
        """Return a uniformly random legal action."""
        return self._picks.pick(observation.decision)

    @property
    def decide_on(self) -> Callable[[Decision], Action]:
        """Return a uniformly random legal action of a decision: the stream's own ``pick``,
        so the arena calls it directly (compiled, no frame of this class's in between)."""
        return self._picks.pick
