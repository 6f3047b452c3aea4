"""Stored ratings: their update at the end of a rated match, the leaderboard and the history
of rating changes."""

from __future__ import annotations

from sqlmodel import Session, col, select

from bullring.server import ratings
from bullring.server.ratings import LeaderboardEntry, Skill
from bullring.server.store.base import StoreBase, retried
from bullring.server.store.models import (
    BotRow,
    MatchRow,
    RatingChangeRow,
    RatingRow,
    SeatRow,
    utcnow,
)


def record_ratings(session: Session, match: MatchRow, ranks: list[int]) -> None:
    """Update the ratings of a finished rated match's bots (in ``session``, the match's
    recording transaction) and store each change; nothing unless every seat is a distinct
    registered bot."""
    seats = session.exec(select(SeatRow).where(SeatRow.match_id == match.id)
                         .order_by(col(SeatRow.seat))).all()
    bots = [s.bot for s in seats]
    if None in bots or len(set(bots)) != len(bots):
        return  # not a match between distinct registered bots: nothing to rate
    names = [str(b) for b in bots]
    rows = {r.bot: r for r in session.exec(
        select(RatingRow).where(RatingRow.game == match.game, col(RatingRow.bot).in_(names))
        .order_by(col(RatingRow.bot)).with_for_update()).all()}
    for name in names:
        if name not in rows:
            rows[name] = RatingRow(bot=name, game=match.game, mu=ratings.NEW.mu,
                                   sigma=ratings.NEW.sigma)
    before = [Skill(rows[n].mu, rows[n].sigma) for n in names]
    after = ratings.rate(before, ranks)
    now = utcnow()
    for seat, name in enumerate(names):
        row = rows[name]
        session.add(RatingChangeRow(
            match_id=match.id, bot=name, game=match.game,
            version=seats[seat].bot_version or 1, rank=ranks[seat],
            mu_before=before[seat].mu, sigma_before=before[seat].sigma,
            mu_after=after[seat].mu, sigma_after=after[seat].sigma, recorded_at=now))
        row.mu, row.sigma = after[seat].mu, after[seat].sigma
        row.games += 1
        row.updated_at = now
        session.add(row)


class RatingRecords(StoreBase):
    """The store's ratings, as the leaderboard and the rating history show them."""

    @retried
    def leaderboard(self, game: str) -> list[LeaderboardEntry]:
        """The game's rated, enabled bots, best conservative estimate (mu - 3 sigma) first."""
        with self._session() as session:
            rows = session.exec(select(RatingRow, BotRow).join(
                BotRow, col(BotRow.name) == col(RatingRow.bot)).where(
                RatingRow.game == game, col(BotRow.enabled).is_(True))).all()
        entries = [LeaderboardEntry(bot=r.bot, version=b.version, games=r.games, mu=r.mu,
                                    sigma=r.sigma, ordinal=r.mu - 3 * r.sigma)
                   for r, b in rows]
        return sorted(entries, key=lambda e: (-e.ordinal, e.bot))

    @retried
    def rating_changes(self, *, match_id: str | None = None, bot: str | None = None,
                       last: int | None = None) -> list[RatingChangeRow]:
        """Stored rating updates in the order they were recorded (only the ``last`` ones,
        if given)."""
        query = select(RatingChangeRow)
        if match_id is not None:
            query = query.where(RatingChangeRow.match_id == match_id)
        if bot is not None:
            query = query.where(RatingChangeRow.bot == bot)
        if last is not None:
            query = query.order_by(col(RatingChangeRow.recorded_at).desc(),
                                   col(RatingChangeRow.match_id).desc()).limit(last)
            with self._session() as session:
                return list(reversed(session.exec(query).all()))
        with self._session() as session:
            return list(session.exec(query.order_by(col(RatingChangeRow.recorded_at),
                                                    col(RatingChangeRow.match_id))).all())
