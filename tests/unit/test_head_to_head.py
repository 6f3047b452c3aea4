"""A bot's head-to-head record (``GET /api/bots/{name}``): a better place than the opponent
is a win, an equal one a draw, a worse one a loss; seats no registered bot plays, and
matches without the bot or without a result, count for nobody."""

from __future__ import annotations

from datetime import UTC, datetime

from bullring.server.store import MatchSummary
from bullring.server.transports.http.browse import head_to_head

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def summary(game: str, bots: tuple[str | None, ...], ranks: tuple[int, ...] | None
            ) -> MatchSummary:
    """A finished match of ``bots`` (by seat) with ``ranks``."""
    names = tuple(b or f"seat{s}" for s, b in enumerate(bots))
    return MatchSummary("m", game, "finished", names, NOW, NOW, ranks and (0,) * len(ranks),
                        ranks, "normal", bots)


def test_wins_draws_and_losses_per_opponent_and_game() -> None:
    """Each match counts once against each registered opponent at its own game."""
    matches = [
        summary("six_nimmt", ("a", "b", "c"), (1, 2, 2)),
        summary("six_nimmt", ("b", "a", None), (1, 1, 3)),
        summary("six_nimmt", ("c", "a"), (1, 2)),
        summary("no_thanks", ("a", "b"), (2, 1)),
        summary("six_nimmt", ("b", "c"), (1, 2)),      # without "a"
        summary("six_nimmt", ("a", "b"), None),        # no result
    ]
    rows = [(r.game, r.opponent, r.matches, r.wins, r.draws, r.losses)
            for r in head_to_head("a", matches)]
    assert rows == [("no_thanks", "b", 1, 0, 0, 1),
                    ("six_nimmt", "b", 2, 1, 1, 0),
                    ("six_nimmt", "c", 2, 1, 0, 1)]
