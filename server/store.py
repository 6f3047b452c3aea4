"""Persistence: matches, their seats (tokens stored only as hashes) and their replays.

sqlmodel on a SQLite file by default; any SQLAlchemy URL (PostgreSQL) with ``--db``.
Every call is synchronous and short; the server runs them in a worker thread.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import event, func
from sqlalchemy.engine import Engine
from sqlmodel import Field, Session, SQLModel, col, create_engine, select

DEFAULT_DB = "sqlite:///bullring.db"
"""The embedded default: a SQLite file in the working folder."""


class MatchRow(SQLModel, table=True):
    """One match: its game, settings, seed, status and (once over) its replay."""

    __tablename__ = "match"
    id: str = Field(primary_key=True)
    game: str
    settings_json: str
    seed: int
    seat_count: int
    status: str = Field(default="created", index=True)
    """created | running | finished | aborted"""
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    finished_at: datetime | None = None
    replay_json: str | None = None


class SeatRow(SQLModel, table=True):
    """One seat of a match: its name, a house bot or the hash of its token."""

    __tablename__ = "seat"
    match_id: str = Field(primary_key=True, foreign_key="match.id")
    seat: int = Field(primary_key=True)
    name: str
    house: str | None = None
    token_hash: str | None = Field(default=None, index=True, unique=True)


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


@dataclass(frozen=True, slots=True)
class LeaderboardEntry:
    """One bot version's rating on a game's ladder (best first by ``ordinal``).

    TODO(ladder): the contract the `ladder` branch fills; its definition replaces this one.
    """

    bot: str
    version: int
    games: int
    mu: float
    sigma: float
    ordinal: float


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


class UnknownMatchError(LookupError):
    """No match is stored under the id asked for."""


def hash_token(token: str) -> str:
    """The stored form of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


class Store:
    """The match store on one database URL."""

    def __init__(self, url: str = DEFAULT_DB) -> None:
        self.url = url
        sqlite = url.startswith("sqlite")
        args: dict[str, Any] = {"check_same_thread": False} if sqlite else {}
        self.engine: Engine = create_engine(url, connect_args=args)
        if sqlite:
            event.listen(self.engine, "connect", _sqlite_pragmas)
        SQLModel.metadata.create_all(self.engine)

    def create_match(self, game: str, settings: Mapping[str, Any], seed: int,
                     seat_names: Sequence[str], house: Mapping[int, str]
                     ) -> tuple[str, list[str | None]]:
        """Store a new match; return its id and one token per seat (None for house seats)."""
        match_id = uuid.uuid4().hex[:12]
        tokens: list[str | None] = []
        with Session(self.engine) as session:
            session.add(MatchRow(id=match_id, game=game, settings_json=json.dumps(dict(settings)),
                                 seed=seed, seat_count=len(seat_names)))
            session.flush()
            for seat, name in enumerate(seat_names):
                token = None if seat in house else f"br_{secrets.token_urlsafe(24)}"
                tokens.append(token)
                session.add(SeatRow(match_id=match_id, seat=seat, name=name,
                                    house=house.get(seat),
                                    token_hash=None if token is None else hash_token(token)))
            session.commit()
        return match_id, tokens

    def seat_for_token(self, token: str) -> tuple[str, int] | None:
        """The (match id, seat) a token plays, or None."""
        with Session(self.engine) as session:
            row = session.exec(select(SeatRow).where(SeatRow.token_hash == hash_token(token))
                               ).first()
            return None if row is None else (row.match_id, row.seat)

    def match_config(self, match_id: str) -> MatchConfig:
        """Everything needed to run ``match_id``."""
        with Session(self.engine) as session:
            match = session.get(MatchRow, match_id)
            if match is None:
                raise UnknownMatchError(f"no match {match_id!r}")
            seats = session.exec(select(SeatRow).where(SeatRow.match_id == match_id)
                                 .order_by(SeatRow.seat)).all()  # type: ignore[arg-type]
            return MatchConfig(match.id, match.game, json.loads(match.settings_json), match.seed,
                               tuple(s.name for s in seats),
                               {s.seat: s.house for s in seats if s.house}, match.status)

    def set_status(self, match_id: str, status: str) -> None:
        """Mark a match running or aborted."""
        with Session(self.engine) as session:
            match = session.get(MatchRow, match_id)
            if match is None:
                raise UnknownMatchError(f"no match {match_id!r}")
            match.status = status
            if status in ("finished", "aborted"):
                match.finished_at = datetime.now(UTC)
            session.add(match)
            session.commit()

    def finish_match(self, match_id: str, replay: dict[str, Any]) -> None:
        """Store the replay of a match that ended (normally or aborted), in one transaction."""
        with Session(self.engine) as session:
            match = session.get(MatchRow, match_id)
            if match is None:
                raise UnknownMatchError(f"no match {match_id!r}")
            match.status = "finished" if replay["termination"] == "normal" else "aborted"
            match.finished_at = datetime.now(UTC)
            match.replay_json = json.dumps(replay, separators=(",", ":"))
            session.add(match)
            session.commit()

    def replay(self, match_id: str) -> dict[str, Any]:
        """The stored replay of a finished match."""
        with Session(self.engine) as session:
            match = session.get(MatchRow, match_id)
            if match is None:
                raise UnknownMatchError(f"no match {match_id!r}")
            if match.replay_json is None:
                raise UnknownMatchError(f"match {match_id!r} is {match.status}; no replay yet")
            result: dict[str, Any] = json.loads(match.replay_json)
            return result

    def matches(self) -> list[MatchRow]:
        """Every match, newest first."""
        with Session(self.engine) as session:
            return list(session.exec(select(MatchRow).order_by(
                MatchRow.created_at.desc())).all())  # type: ignore[attr-defined]

    def match_page(self, *, match_id: str | None = None, game: str | None = None,
                   status: str | None = None,
                   bot: str | None = None, since: datetime | None = None,
                   until: datetime | None = None, limit: int = 50, offset: int = 0
                   ) -> tuple[list[MatchSummary], int]:
        """One page of matches, newest first, and how many match the filters in all.

        ``bot`` keeps matches with a seat of that name; ``since``/``until`` bound the
        creation time (inclusive/exclusive).
        """
        query = select(MatchRow)
        if match_id is not None:
            query = query.where(MatchRow.id == match_id)
        if game is not None:
            query = query.where(MatchRow.game == game)
        if status is not None:
            query = query.where(MatchRow.status == status)
        if bot is not None:
            query = query.where(col(MatchRow.id).in_(
                select(SeatRow.match_id).where(SeatRow.name == bot)))
        if since is not None:
            query = query.where(MatchRow.created_at >= _utc(since))
        if until is not None:
            query = query.where(MatchRow.created_at < _utc(until))
        with Session(self.engine) as session:
            total = session.exec(select(func.count()).select_from(query.subquery())).one()
            rows = session.exec(query.order_by(col(MatchRow.created_at).desc(), col(MatchRow.id))
                                .offset(offset).limit(limit)).all()
            names: dict[str, list[str]] = {row.id: [] for row in rows}
            for seat in session.exec(select(SeatRow).where(col(SeatRow.match_id).in_(list(names)))
                                     .order_by(col(SeatRow.match_id), col(SeatRow.seat))).all():
                names[seat.match_id].append(seat.name)
            return [_summary(row, names[row.id]) for row in rows], int(total)

    def leaderboard(self, game: str) -> list[LeaderboardEntry]:
        """The rated bots of ``game``'s ladder, best first.

        TODO(ladder): a placeholder (no rated bots yet) until the `ladder` branch merges with
        the bot registry and the openskill ratings; its method replaces this one.
        """
        del game
        return []


def _utc(moment: datetime) -> datetime:
    """``moment`` in UTC (a time without a zone is taken as UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _summary(row: MatchRow, seat_names: Sequence[str]) -> MatchSummary:
    totals = ranks = termination = None
    if row.replay_json is not None and row.status in ("finished", "aborted"):
        replay = json.loads(row.replay_json)
        totals, ranks = tuple(replay["totals"]), tuple(replay["ranks"])
        termination = str(replay["termination"])
    return MatchSummary(row.id, row.game, row.status, tuple(seat_names), row.created_at,
                        row.finished_at, totals, ranks, termination)
