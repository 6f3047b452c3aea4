"""The rule that picks the best-rated live match for the big screen (``GET /api/tv``)."""

from __future__ import annotations

from datetime import UTC, datetime

from bullring.server.store import MatchSummary
from bullring.server.transports.http.tv import rating


def test_a_live_match_is_rated_by_the_mean_rating_of_its_seats() -> None:
    """The best-rated live match is the one whose seats' mean leaderboard rating is
    highest; a seat that is no rated bot counts as the board's lowest rating."""
    board = {"ann": 10.0, "bob": 4.0, "cy": -2.0}

    def match(*bots: str | None) -> MatchSummary:
        return MatchSummary("m", "six_nimmt", "running", tuple(str(b) for b in bots),
                            datetime.now(UTC), None, None, None, None, seat_bots=bots)

    assert rating(match("ann", "bob"), board) == 7.0
    assert rating(match("ann", None), board) == 4.0  # None counts as cy's -2
    assert rating(match("ann", "eve"), board) == 4.0  # an unrated bot, too
    assert rating(match("bob", "cy"), board) < rating(match("ann", "cy"), board)
    assert rating(match(None, None), {}) == 0.0
