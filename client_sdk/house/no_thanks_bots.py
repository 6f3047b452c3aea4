"""No Thanks! house bots: ``never_take`` and ``threshold``."""

from __future__ import annotations

from typing import Any

from client_sdk.bot import Bot
from referee.no_thanks import score


class NeverTakeBot(Bot):
    """Passes whenever it has a chip; takes only when it must."""

    name = "never_take"
    games = ("no_thanks",)

    def take_or_pass(self, observation: Any) -> str:
        """Pass unless out of chips."""
        return "pass" if observation.chips > 0 else "take"


def real_cost(card: int, own: tuple[int, ...]) -> int:
    """How much taking ``card`` adds to a score of face-up cards ``own`` (runs count once)."""
    return score((*own, card), 0) - score(own, 0)


class ThresholdBot(Bot):
    """Takes a card when its real cost, given its runs, minus the pot is small."""

    name = "threshold"
    games = ("no_thanks",)
    limit = 10
    """Take when real cost minus pot is at most this many points."""

    def take_or_pass(self, observation: Any) -> str:
        """Take if out of chips or if the card is cheap enough now."""
        own = observation.cards[observation.seat]
        cost = real_cost(observation.card, own) - observation.pot
        return "take" if observation.chips == 0 or cost <= self.limit else "pass"

    def reveal_hidden_card(self, observation: Any) -> str:
        """Reveal the hidden card when it joins a run (it then costs nothing or less)."""
        hidden = observation.hidden_card
        own = observation.cards[observation.seat]
        return "reveal" if hidden is not None and real_cost(hidden, own) <= 0 else "keep"
