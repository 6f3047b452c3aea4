"""Bounded exponential backoff: the pauses between tries of something that may come back
(a connection to the server, a database), shared by the bot runner and the server's store."""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Backoff:
    """Pauses that start at ``first_s``, grow by ``factor`` each failure up to ``max_s``, and
    are each scaled by a random factor in ``[1 - jitter, 1]`` (so that many clients cut off
    together do not all come back at the same instant)."""

    first_s: float
    max_s: float
    factor: float = 2.0
    jitter: float = 0.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def pause(self, failures: int) -> float:
        """The pause after ``failures`` failures in a row (1 for the first)."""
        base = min(self.max_s, self.first_s * self.factor ** max(0, failures - 1))
        return base * self.rng.uniform(1.0 - self.jitter, 1.0) if self.jitter else base
