"""A starter bot for both games: edit the methods, then
``python3 starter_bot.py --server http://HOST:PORT --token TOKEN --ladder six_nimmt``."""

from bullring_kit import Bot, run
from bullring_messages import DecisionRequest, NoThanksObservation, SixNimmtObservation


class StarterBot(Bot):
    """Plays the lowest card, takes the shortest row, takes a card its pot pays for, and
    says why beside each move."""

    why = ""
    """The comment on the answer just chosen (``comment`` sends it)."""

    def play_card(self, seen: SixNimmtObservation, d: DecisionRequest) -> int:
        """6 nimmt!: the lowest card of the hand."""
        self.why = "lowest card"
        return min(seen.hand)

    def choose_row(self, seen: SixNimmtObservation, d: DecisionRequest) -> int:
        """6 nimmt!: the row with the fewest cards."""
        self.why = "shortest row"
        return min(range(len(seen.rows)), key=lambda r: len(seen.rows[r].cards))

    def take_or_pass(self, seen: NoThanksObservation, d: DecisionRequest) -> str:
        """No Thanks!: take when out of chips or when the pot pays for a third of the card."""
        if seen.chips == 0:
            self.why = "out of chips"
            return "take"
        take = seen.pot * 3 >= seen.card
        self.why = "the pot pays for it" if take else "too dear for the pot"
        return "take" if take else "pass"

    def comment(self) -> str:
        """The reason the method just called gave (a method that gave none, none)."""
        why, self.why = self.why, ""
        return why


if __name__ == "__main__":
    run(StarterBot())
