"""A starter bot for both games: edit the methods, then
``python3 starter_bot.py --server http://HOST:PORT --token TOKEN --ladder six_nimmt``."""

from bullring_kit import Bot, run
from bullring_messages import DecisionRequest, NoThanksObservation, SixNimmtObservation


class StarterBot(Bot):
    """Plays the lowest card, takes the shortest row, takes a card its pot pays for, and
    says why beside each move."""

    def play_card(self, seen: SixNimmtObservation, d: DecisionRequest) -> int:
        """6 nimmt!: the lowest card of the hand."""
        self.comment("lowest card")
        return min(seen.hand)

    def choose_row(self, seen: SixNimmtObservation, d: DecisionRequest) -> int:
        """6 nimmt!: the row with the fewest cards."""
        self.comment("shortest row")
        return min(range(len(seen.rows)), key=lambda r: len(seen.rows[r].cards))

    def take_or_pass(self, seen: NoThanksObservation, d: DecisionRequest) -> str:
        """No Thanks!: take when out of chips or when the pot pays for a third of the card."""
        if seen.chips == 0:
            self.comment("out of chips")
            return "take"
        take = seen.pot * 3 >= seen.card
        self.comment("the pot pays for it" if take else "too dear for the pot")
        return "take" if take else "pass"


if __name__ == "__main__":
    run(StarterBot())
