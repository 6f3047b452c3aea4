"""Stored ratings: their update at the end of a rated match, the leaderboard and the history
of rating changes."""

from __future__ import annotations

from sqlalchemy import bindparam, insert, update
from sqlmodel import Session, col, select

from bullring.server import ratings
from bullring.server.ratings import LeaderboardEntry, Skill
from bullring.server.store.base import StoreBase, retried
from bullring.server.store.models import (
    BotRow,
    RatingChangeRow,
    RatingRow,
    SeatRow,
    table_of,
    utcnow,
)

_SEATS, _RATINGS, _CHANGES = table_of(SeatRow), table_of(RatingRow), table_of(RatingChangeRow)
_RATED = update(_RATINGS).where(_RATINGS.c.bot == bindparam("name")).values(
    mu=bindparam("mu"), sigma=bindparam("sigma"), games=_RATINGS.c.games + 1)
"""A bot's new rating, one more game rated (executed for every rated bot of a match)."""


def record_ratings(session: Session, match_id: str, game: str, ranks: list[int]) -> None:
    """Update the ratings of a finished rated match's bots (in ``session``, the match's
    recording transaction) and store each change; nothing unless every seat is a distinct
    registered bot. Core statements (``table_of``): it runs at every rated match."""
    conn = session.connection()
    seats = conn.execute(select(_SEATS.c.bot, _SEATS.c.bot_version)
                         .where(_SEATS.c.match_id == match_id)
                         .order_by(_SEATS.c.seat)).all()
    bots = [bot for bot, _ in seats]
    if None in bots or len(set(bots)) != len(bots):
        return  # not a match between distinct registered bots: nothing to rate
    names = [str(b) for b in bots]
    rows = {bot: (mu, sigma) for bot, mu, sigma in conn.execute(
        select(_RATINGS.c.bot, _RATINGS.c.mu, _RATINGS.c.sigma)
        .where(_RATINGS.c.game == game, _RATINGS.c.bot.in_(names))
        .order_by(_RATINGS.c.bot).with_for_update())}
    before = [Skill(*rows.get(n, (ratings.NEW.mu, ratings.NEW.sigma))) for n in names]
    after = ratings.rate(before, ranks)
    now = utcnow()
    conn.execute(insert(_CHANGES), [RatingChangeRow(
        match_id=match_id, bot=name, game=game, version=seats[seat][1] or 1,
        rank=ranks[seat], mu_before=before[seat].mu, sigma_before=before[seat].sigma,
        mu_after=after[seat].mu, sigma_after=after[seat].sigma, recorded_at=now).model_dump()
        for seat, name in enumerate(names)])
    new = [RatingRow(bot=name, game=game, mu=after[seat].mu, sigma=after[seat].sigma,
                     games=1, updated_at=now).model_dump()
           for seat, name in enumerate(names) if name not in rows]
    if new:
        conn.execute(insert(_RATINGS), new)
    rated = [{"name": name, "mu": after[seat].mu, "sigma": after[seat].sigma}
             for seat, name in enumerate(names) if name in rows]
    if rated:
        conn.execute(_RATED.values(updated_at=now).where(_RATINGS.c.game == game), rated)


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
