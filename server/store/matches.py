"""Stored matches: creating them, claiming and recording them, their replays and the match
log."""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, update
from sqlmodel import col, select

from bullring.server.errors import MatchElsewhereError, UnknownMatchError
from bullring.server.store.base import StoreBase, hash_token, new_token, retried, utc
from bullring.server.store.leaderboard import record_ratings
from bullring.server.store.models import BotRow, MatchRow, SeatRow, table_of, utcnow

_BOTS, _MATCHES = table_of(BotRow), table_of(MatchRow)

LIVE = ("created", "running")
"""Statuses of a match that is not over."""


@dataclass(frozen=True, slots=True)
class MatchConfig:
    """What a match runner needs to start a stored match."""

    match_id: str
    game: str
    settings: dict[str, Any]
    seed: int
    seat_names: tuple[str, ...]
    house: dict[int, str]
    status: str
    rated: bool = False
    """Whether its end updates ratings."""
    humans: tuple[int, ...] = ()
    """The seats a person plays."""
    pace_ms: int = 0
    """The least time from one decision point to the next, in milliseconds (a tournament
    played slowly for people to follow); 0: each opens as soon as the last is resolved."""

    def replay_fields(self) -> dict[str, Any]:
        """What its replay says of the match besides the play (``build_replay``'s
        keywords): its id, seat names, whether it is rated and the people's seats."""
        return {"match_id": self.match_id, "seat_names": self.seat_names,
                "rated": self.rated, "humans": self.humans}


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """What anyone may know of a stored match: never its seed or tokens, and a result only
    once it ended."""

    match_id: str
    game: str
    status: str
    seat_names: tuple[str, ...]
    created_at: datetime
    finished_at: datetime | None
    totals: tuple[int, ...] | None
    ranks: tuple[int, ...] | None
    termination: str | None
    seat_bots: tuple[str | None, ...] = ()
    """The registered bot playing each seat (None for a seat that is not one)."""
    rated: bool = False
    """Whether its end updates ratings (a ladder match; not a practice match or challenge)."""
    humans: tuple[int, ...] = ()
    """The seats a person plays."""


class MatchRecords(StoreBase):
    """The store's matches: created, claimed by a server, recorded at their end."""

    def create_match(self, game: str, settings: Mapping[str, Any], seed: int,
                     seat_names: Sequence[str], house: Mapping[int, str],
                     humans: Collection[int] = ()) -> tuple[str, list[str | None]]:
        """Store a new match; return its id and one token per seat (None for house seats).
        A person plays each of ``humans``."""
        match_id = uuid.uuid4().hex[:12]
        tokens: list[str | None] = []
        with self._session() as session:
            session.add(MatchRow(id=match_id, game=game, settings_json=json.dumps(dict(settings)),
                                 seed=seed, seat_count=len(seat_names)))
            session.flush()
            for seat, name in enumerate(seat_names):
                token = None if seat in house else new_token("br")
                tokens.append(token)
                session.add(SeatRow(match_id=match_id, seat=seat, name=name,
                                    house=house.get(seat), human=seat in humans,
                                    token_hash=None if token is None else hash_token(token)))
            session.commit()
        return match_id, tokens

    @retried
    def seat_for_token(self, token: str) -> tuple[str, int] | None:
        """The (match id, seat) a seat token plays, or None."""
        with self._session() as session:
            row = session.exec(select(SeatRow).where(SeatRow.token_hash == hash_token(token))
                               ).first()
            return None if row is None else (row.match_id, row.seat)

    @retried
    def match_config(self, match_id: str) -> MatchConfig:
        """Everything needed to run ``match_id``."""
        with self._session() as session:
            match = session.get(MatchRow, match_id)
            if match is None:
                raise UnknownMatchError(f"no match {match_id!r}")
            seats = session.exec(select(SeatRow).where(SeatRow.match_id == match_id)
                                 .order_by(col(SeatRow.seat))).all()
            return MatchConfig(match.id, match.game, json.loads(match.settings_json), match.seed,
                               tuple(s.name for s in seats),
                               {s.seat: s.house for s in seats if s.house}, match.status,
                               match.rated, tuple(s.seat for s in seats if s.human))

    @retried
    def claim_match(self, match_id: str, instance: str) -> None:
        """Mark a created match running on ``instance``, unless another server runs it.

        Raises MatchElsewhereError when another instance holds it, and UnknownMatchError
        when it does not exist or is already over.
        """
        with self._session() as session:
            claimed = session.execute(
                update(MatchRow).where(col(MatchRow.id) == match_id,
                                       col(MatchRow.status) == "created")
                .values(status="running", instance=instance)).rowcount  # type: ignore[attr-defined]
            match = session.get(MatchRow, match_id)
            session.commit()
        if claimed:
            return
        if match is None:
            raise UnknownMatchError(f"no match {match_id!r}")
        if match.status == "running" and match.instance != instance:
            raise MatchElsewhereError(f"match {match_id} is being played on another server")
        if match.status != "running":
            raise UnknownMatchError(f"match {match_id} is {match.status}")

    @retried
    def set_status(self, match_id: str, status: str) -> None:
        """Mark a match running or aborted."""
        with self._session() as session:
            match = session.get(MatchRow, match_id)
            if match is None:
                raise UnknownMatchError(f"no match {match_id!r}")
            match.status = status
            if status in ("finished", "aborted"):
                match.finished_at = utcnow()
            session.add(match)
            session.commit()

    @retried
    def finish_match(self, match_id: str, replay: dict[str, Any]) -> bool:
        """Record the end of a match and, for a finished rated match, its rating updates,
        in one transaction; free its bots. False (and nothing written) when the match was
        already recorded or aborted: a match is never recorded twice."""
        status = "finished" if replay["termination"] == "normal" else "aborted"
        with self._session() as session:  # Core statements (``table_of``)
            conn = session.connection()
            end = (update(_MATCHES)
                   .where(_MATCHES.c.id == match_id, _MATCHES.c.status.in_(LIVE))
                   .values(status=status, finished_at=utcnow(),
                           replay_json=json.dumps(replay, separators=(",", ":"))))
            found = select(_MATCHES.c.game, _MATCHES.c.instance, _MATCHES.c.rated).where(
                _MATCHES.c.id == match_id)
            if conn.dialect.update_returning:  # one round trip (not SQLite before 3.35)
                match = conn.execute(end.returning(*found.selected_columns)).first()
                recorded = match is not None
            else:
                recorded = conn.execute(end).rowcount == 1
                match = None
            if match is None:
                match = conn.execute(found).first()
            if match is None:
                raise UnknownMatchError(f"no match {match_id!r}")
            if not recorded:
                session.rollback()
                return False
            game, instance, rated = match
            if rated and status == "finished":
                record_ratings(session, match_id, game, [int(r) for r in replay["ranks"]])
            conn.execute(update(_BOTS).where(_BOTS.c.current_match == match_id)
                         .values(current_match=None))
            self._announce_free(session, game, instance or "")
            session.commit()
        return True

    def replay(self, match_id: str) -> dict[str, Any]:
        """The stored replay of a finished match."""
        result: dict[str, Any] = json.loads(self.replay_text(match_id))
        return result

    @retried
    def replay_text(self, match_id: str) -> str:
        """The stored replay of a finished match, as the JSON text it is stored as."""
        with self._session() as session:
            found = session.execute(select(MatchRow.status, MatchRow.replay_json)
                                    .where(col(MatchRow.id) == match_id)).first()
        if found is None:
            raise UnknownMatchError(f"no match {match_id!r}")
        status, text = found
        if text is None:
            raise UnknownMatchError(f"match {match_id!r} is {status}; no replay")
        return str(text)

    @retried
    def matches(self, *, bot: str | None = None, since: datetime | None = None,
                until: datetime | None = None, game: str | None = None,
                status: str | None = None, limit: int | None = None) -> list[MatchRow]:
        """The match log, newest first: optionally only matches ``bot`` sat in, created at or
        after ``since`` and before ``until``, of one game or status."""
        query = select(MatchRow)
        if bot is not None:
            query = query.where(col(MatchRow.id).in_(
                select(SeatRow.match_id).where(SeatRow.bot == bot)))
        if since is not None:
            query = query.where(col(MatchRow.created_at) >= since)
        if until is not None:
            query = query.where(col(MatchRow.created_at) < until)
        if game is not None:
            query = query.where(MatchRow.game == game)
        if status is not None:
            query = query.where(MatchRow.status == status)
        query = query.order_by(col(MatchRow.created_at).desc(), col(MatchRow.id))
        if limit is not None:
            query = query.limit(limit)
        with self._session() as session:
            return list(session.exec(query).all())

    @retried
    def seats(self, match_ids: Sequence[str]) -> dict[str, list[SeatRow]]:
        """The seats of each match asked for, in seat order."""
        found: dict[str, list[SeatRow]] = {m: [] for m in match_ids}
        with self._session() as session:
            for row in session.exec(select(SeatRow).where(col(SeatRow.match_id).in_(match_ids))
                                    .order_by(col(SeatRow.match_id), col(SeatRow.seat))):
                found[row.match_id].append(row)
        return found

    @retried
    def match_page(self, *, match_id: str | None = None, game: str | None = None,
                   status: str | None = None, bot: str | None = None,
                   since: datetime | None = None, until: datetime | None = None,
                   limit: int = 50, offset: int = 0) -> tuple[list[MatchSummary], int]:
        """One page of matches, newest first, and how many pass the filters in all.

        ``bot`` keeps matches with a seat played by that registered bot or named so;
        ``since``/``until`` bound the creation time (inclusive/exclusive).
        """
        query = select(MatchRow)
        if match_id is not None:
            query = query.where(MatchRow.id == match_id)
        if game is not None:
            query = query.where(MatchRow.game == game)
        if status is not None:
            query = query.where(MatchRow.status == status)
        if bot is not None:
            query = query.where(col(MatchRow.id).in_(select(SeatRow.match_id).where(
                or_(col(SeatRow.bot) == bot, col(SeatRow.name) == bot))))
        if since is not None:
            query = query.where(col(MatchRow.created_at) >= utc(since))
        if until is not None:
            query = query.where(col(MatchRow.created_at) < utc(until))
        with self._session() as session:
            total = session.exec(select(func.count()).select_from(query.subquery())).one()
            rows = session.exec(query.order_by(col(MatchRow.created_at).desc(), col(MatchRow.id))
                                .offset(offset).limit(limit)).all()
        seats = self.seats([row.id for row in rows])
        return [_summary(row, seats[row.id]) for row in rows], int(total)

    @retried
    def count(self, status: str | None = None) -> int:
        """How many matches are stored (with ``status``, if given)."""
        query = select(func.count()).select_from(MatchRow)
        if status is not None:
            query = query.where(MatchRow.status == status)
        with self._session() as session:
            return int(session.exec(query).one())

    @retried
    def match_states(self, match_ids: Sequence[str]
                     ) -> dict[str, tuple[str, str | None, datetime | None]]:
        """Each of ``match_ids``'s status, instance and end (UTC)."""
        with self._session() as session:
            rows = session.exec(select(MatchRow.id, MatchRow.status, MatchRow.instance,
                                       MatchRow.finished_at)
                                .where(col(MatchRow.id).in_(list(match_ids)))).all()
        return {i: (status, instance, None if end is None else utc(end))
                for i, status, instance, end in rows}


def _summary(row: MatchRow, seats: Sequence[SeatRow]) -> MatchSummary:
    totals = ranks = termination = None
    if row.replay_json is not None and row.status in ("finished", "aborted"):
        replay = json.loads(row.replay_json)
        totals, ranks = tuple(replay["totals"]), tuple(replay["ranks"])
        termination = str(replay["termination"])
    return MatchSummary(row.id, row.game, row.status, tuple(s.name for s in seats),
                        row.created_at, row.finished_at, totals, ranks, termination,
                        tuple(s.bot for s in seats), row.rated,
                        tuple(s.seat for s in seats if s.human))
