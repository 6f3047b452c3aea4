"""Stored live tournaments: their rows, and seating one of their games as a ladder table is."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import update
from sqlmodel import col, select

from bullring.server.errors import BotError, UnknownBotNameError
from bullring.server.store.base import TOURNAMENT, Notice, StoreBase, notify, retried
from bullring.server.store.models import BotRow, MatchRow, SeatRow, TournamentRow, utcnow


class TournamentRecords(StoreBase):
    """The store's live tournaments."""

    @retried
    def create_tournament(self, row: TournamentRow) -> TournamentRow:
        """Store a new live tournament (its entrants are registered, enabled bots)."""
        with self._session() as session:
            for name in json.loads(row.entrants_json):
                bot = session.get(BotRow, name)
                if bot is None or bot.house is not None:
                    raise UnknownBotNameError(f"no registered bot named {name!r}")
                if not bot.enabled:
                    raise BotError(f"bot {name!r} is disabled")
            if session.get(TournamentRow, row.id) is None:
                session.add(row)
                notify(session, Notice(TOURNAMENT, row.game))
                session.commit()
                session.refresh(row)
        return row

    @retried
    def tournament(self, tournament_id: str) -> TournamentRow | None:
        """The stored tournament ``tournament_id``, or None."""
        with self._session() as session:
            return session.get(TournamentRow, tournament_id)

    @retried
    def tournaments(self, status: str | None = None, limit: int = 100) -> list[TournamentRow]:
        """The newest tournaments (only those of ``status`` when given), newest first."""
        query = select(TournamentRow).order_by(col(TournamentRow.created_at).desc(),
                                               col(TournamentRow.id)).limit(limit)
        if status is not None:
            query = query.where(TournamentRow.status == status)
        with self._session() as session:
            return list(session.exec(query).all())

    @retried
    def change_tournament(self, tournament_id: str,
                          change: Callable[[TournamentRow], bool]) -> TournamentRow | None:
        """Lock tournament ``tournament_id``, let ``change`` edit it and write it if
        ``change`` says so; the row (None if there is none)."""
        with self._session() as session:
            row = session.exec(select(TournamentRow).where(TournamentRow.id == tournament_id)
                               .with_for_update()).first()
            if row is None:
                return None
            if change(row):
                session.add(row)
                session.commit()
                session.refresh(row)
        return row

    @retried
    def tournament_game_of(self, match_id: str) -> tuple[str, int] | None:
        """The (tournament id, game index) match ``match_id`` plays, or None."""
        with self._session() as session:
            row = session.get(MatchRow, match_id)
        if row is None or row.tournament_id is None or row.tournament_game is None:
            return None
        return row.tournament_id, row.tournament_game

    def seat_tournament_game(self, tournament_id: str, index: int, game: str,
                             settings: Mapping[str, Any], seed: int,
                             seat_names: Sequence[str], instance: str,
                             change: Callable[[TournamentRow, str], None]) -> str | None:
        """Create the running, unrated match of game ``index`` of a tournament on
        ``instance``, claiming its bots as a ladder table does, and let ``change`` mark the
        game started in the locked tournament row, in one transaction; None (nothing
        written) if the game is no longer pending or a bot sits in another match."""
        return self.retry.call("seat_tournament_game", self._seat_tournament_game,
                               uuid.uuid4().hex[:12], tournament_id, index, game, settings,
                               seed, seat_names, instance, change)

    def _seat_tournament_game(self, match_id: str, tournament_id: str, index: int, game: str,
                              settings: Mapping[str, Any], seed: int,
                              seat_names: Sequence[str], instance: str,
                              change: Callable[[TournamentRow, str], None]) -> str | None:
        with self._session() as session:
            if session.get(MatchRow, match_id) is not None:
                return match_id  # an earlier try committed it
            row = session.exec(select(TournamentRow).where(TournamentRow.id == tournament_id)
                               .with_for_update()).first()
            if row is None or row.status != "running" or \
                    json.loads(row.schedule_json)[index]["status"] != "pending":
                session.rollback()
                return None  # another server seated it, or it was cancelled
            for name in sorted(seat_names):  # the ladder's lock order
                claimed = session.execute(
                    update(BotRow).where(col(BotRow.name) == name,
                                         col(BotRow.current_match).is_(None))
                    .values(current_match=match_id)
                ).rowcount  # type: ignore[attr-defined]
                if claimed != 1:
                    session.rollback()
                    return None
            session.add(MatchRow(id=match_id, game=game,
                                 settings_json=json.dumps(dict(settings)), seed=seed,
                                 seat_count=len(seat_names), status="running", ladder=True,
                                 rated=False, instance=instance, created_at=utcnow(),
                                 tournament_id=tournament_id, tournament_game=index))
            session.flush()
            versions = {b.name: b.version for b in session.exec(select(BotRow).where(
                col(BotRow.name).in_(list(seat_names)))).all()}
            for seat, name in enumerate(seat_names):
                session.add(SeatRow(match_id=match_id, seat=seat, name=name, house=None,
                                    bot=name, bot_version=versions[name]))
            change(row, match_id)
            session.add(row)
            session.commit()
        return match_id
