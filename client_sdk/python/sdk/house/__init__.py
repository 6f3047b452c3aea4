"""House bots: they play through the very same observations a remote bot receives."""

from __future__ import annotations

from bullring.sdk.bot import Bot
from bullring.sdk.errors import UnknownBotError
from bullring.sdk.house.greedy import GreedyBot
from bullring.sdk.house.no_thanks_bots import NeverTakeBot, ThresholdBot
from bullring.sdk.house.random_bot import RandomBot

HOUSE_BOTS: dict[str, type[Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "never_take": NeverTakeBot,
    "threshold": ThresholdBot,
}
"""Every house bot by name."""


def house_bot(name: str, game: str, seed: int = 0) -> Bot:
    """Return a new house bot ``name`` for ``game``, seeded with ``seed``."""
    cls = HOUSE_BOTS.get(name)
    if cls is None:
        raise UnknownBotError(f"unknown house bot {name!r}; known: {', '.join(HOUSE_BOTS)}")
    if game not in cls.games:
        raise UnknownBotError(f"house bot {name!r} plays {', '.join(cls.games)}, not {game!r}")
    return cls(seed)
