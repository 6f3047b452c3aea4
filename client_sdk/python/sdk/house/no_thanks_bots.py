"""No Thanks! house bots: ``never_take`` and ``threshold``."""

from __future__ import annotations

from typing import Any

from bullring.referee.no_thanks import score
from bullring.sdk.bot import Bot


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
    """Takes a card when the chips on it pay for what it really costs, given its runs; the
    fewer chips it has left, the more of the cost it accepts.

    The rule: take when ``real cost - pot <= limit - chips * chip_weight`` (or when out of
    chips). With 11 chips it waits until the pot exceeds the cost by 2; with 4 it accepts a
    card 2 points dearer than its pot. A chip kept is a pass it can still afford, so while
    chips are plentiful passing is cheap and the pot grows; when they run low, a forced take
    of a high card is the danger.
    """

    name = "threshold"
    games = ("no_thanks",)
    limit = 4
    """Points of net cost (real cost minus pot) accepted with no chips left in hand."""
    chip_weight = 0.5
    """How much each chip in hand lowers ``limit``."""

    def take_or_pass(self, observation: Any) -> str:
        """Take if out of chips or if the pot pays for enough of the card."""
        own = observation.cards[observation.seat]
        cost = real_cost(observation.card, own) - observation.pot
        allowed = self.limit - self.chip_weight * observation.chips
        return "take" if observation.chips == 0 or cost <= allowed else "pass"

    def reveal_hidden_card(self, observation: Any) -> str:
        """Reveal the hidden card when it joins a run (it then costs nothing or less)."""
        hidden = observation.hidden_card
        own = observation.cards[observation.seat]
        return "reveal" if hidden is not None and real_cost(hidden, own) <= 0 else "keep"
