"""A bot that explains every move with ``Bot.comment``, in words holding markup (a page that
shows them must show the text, never make elements of it)."""

from __future__ import annotations

from typing import Any

from bullring.sdk.bot import Bot


def play_comment(card: int) -> str:
    """What ``Commenting`` says when it plays ``card``."""
    return f"<b>lowest</b> card {card} & nothing to lose <img src=x>"


ROW_COMMENT = "row 0, <i>whatever</i> it costs"
"""What ``Commenting`` says when it chooses a row."""


class Commenting(Bot):
    """Plays its lowest card and takes row 0 (6 nimmt!), saying so each time."""

    games = ("six_nimmt",)

    def play_card(self, observation: Any) -> int:
        """The lowest card of the hand."""
        card = min(observation.hand)
        self.comment(play_comment(card))
        return card  # type: ignore[no-any-return]

    def choose_row(self, observation: Any) -> int:
        """Row 0."""
        self.comment(ROW_COMMENT)
        return 0
