"""Persistence: matches and seats, the bot registry, ratings, the admin token, replays.

sqlmodel on a SQLite file by default; PostgreSQL (``postgresql+psycopg://...``) with ``--db``.
The schema is migrated to the newest alembic revision when a Store opens the database.
Every call is synchronous and short; the server runs them in a worker thread.

Writes that must not happen twice are conditional updates checked by their row count (a
bot is seated only if it sits nowhere; a match is recorded only if it is still running),
so two servers on one PostgreSQL database never seat a bot twice or record a match twice.
On SQLite every transaction begins IMMEDIATE, which serialises writers the same way.

The calls the running server makes are retried while the database is unavailable for a
moment (server/db_retry.py); being single conditional transactions, a retry never applies a
write twice. Calls that are not safe to repeat (registering a bot, new tokens) are not retried.
"""

from __future__ import annotations

import functools
import hashlib
import json
import secrets
import unicodedata
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlalchemy import event, func, or_, text, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, create_engine, select

from client_sdk.cli import bot_name_problem
from server import ratings
from server.db_retry import DEFAULT_BUDGET_S, Retry
from server.migrate import upgrade
from server.models import (
    AdminTokenRow,
    BotRow,
    ChallengeRow,
    MatchRow,
    RatingChangeRow,
    RatingRow,
    SeatRow,
    TournamentRow,
    utcnow,
)
from server.options import DEFAULT_DB
from server.ratings import LeaderboardEntry, Skill

LIVE = ("created", "running")
"""Statuses of a match that is not over."""

SQLITE_BUSY_S = 2.0
"""How long one SQLite transaction waits for a lock before it fails (and is retried)."""

P = ParamSpec("P")
T = TypeVar("T")


def _retried(method: Callable[Concatenate[Store, P], T]) -> Callable[Concatenate[Store, P], T]:
    """Run a store call again while the database is unavailable, within the store's budget
    (only for calls that are one transaction and safe to repeat)."""
    def call(store: Store, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return store.retry.call(method.__name__, method, store, *args, **kwargs)
    functools.update_wrapper(call, method)
    return call


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


class ChallengeError(ValueError):
    """A challenge request that cannot be done; ``code`` is the gRPC status name to answer."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


HOUSE_PREFIX = "house:"
DEFAULT_CHALLENGE_EXPIRY_S = 3600.0
"""How long a challenge waits for its answers before it expires (``serve
--challenge-expiry``)."""
"""How a challenge names a house bot opponent: ``house:greedy``."""


@dataclass(frozen=True, slots=True)
class Challenge:
    """A stored challenge, as its challenger and opponents see it."""

    id: str
    game: str
    challenger: str
    opponents: tuple[str, ...]
    """In seat order after the challenger: ``house:KIND`` or a registered bot's name."""
    answers: dict[str, str]
    """Each registered opponent's answer: pending, accepted or declined."""
    status: str
    """pending, accepted, declined, cancelled, expired or started."""
    message: str
    match_id: str | None
    created_at: datetime

    @property
    def bots(self) -> tuple[str, ...]:
        """The registered bots it seats: the challenger, then its registered opponents."""
        return (self.challenger,
                *(o for o in self.opponents if not o.startswith(HOUSE_PREFIX)))

    @classmethod
    def of(cls, row: ChallengeRow) -> Challenge:
        """The challenge a stored row holds; a pending one past its expiry is expired."""
        status, message = row.status, row.message
        if _expired(row):
            status, message = "expired", _expiry_message(row)
        return cls(row.id, row.game, row.challenger, tuple(json.loads(row.opponents_json)),
                   dict(json.loads(row.answers_json)), status, message, row.match_id,
                   row.created_at)


def _expired(row: ChallengeRow) -> bool:
    """Whether ``row`` is a pending challenge past its expiry."""
    return row.status == "pending" and row.expires_at is not None \
        and _utc(row.expires_at) <= datetime.now(UTC)


def _expiry_message(row: ChallengeRow) -> str:
    waited = (_utc(row.expires_at or row.created_at) - _utc(row.created_at)).total_seconds()
    unanswered = [b for b, a in json.loads(row.answers_json).items() if a == "pending"]
    return (f"expired: {', '.join(unanswered)} did not answer within {waited:g} s")


class UnknownMatchError(LookupError):
    """No match is stored under the id asked for."""


class MatchElsewhereError(RuntimeError):
    """The match is being played by another server process on the same database."""


class BotError(ValueError):
    """A bot registry request that cannot be done (unknown name, taken name, bad name)."""


class UnknownBotNameError(BotError):
    """No bot is registered under the name asked for."""


class BotNameTakenError(BotError):
    """A bot is already registered under the name asked for."""


def hash_token(token: str) -> str:
    """The stored form of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_token(prefix: str) -> str:
    """A fresh random token."""
    return f"{prefix}_{secrets.token_urlsafe(24)}"


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # SQLAlchemy's "begin" listener starts each one
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_S * 1000)}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def _postgres_error(context: Any) -> None:
    """Count a PostgreSQL shutdown (57P01 AdminShutdown, 57P02, 57P03 "starting up") or a
    connection failure (08...) as a disconnect, so SQLAlchemy drops the connection instead of
    returning it to the pool (psycopg marks such a connection broken only later)."""
    state = getattr(context.original_exception, "sqlstate", None) or ""
    if state.startswith(("57P", "08")):
        context.is_disconnect = True


MAX_OWNER = 200
"""The longest owner text a bot may be registered with (on every path: CLI, gRPC, HTTP)."""


def _check_name(name: str) -> str:
    problem = bot_name_problem(name)
    if problem:
        raise BotError(problem)
    return name


def _check_owner(owner: str) -> str:
    if len(owner) > MAX_OWNER or any(unicodedata.category(c) == "Cc" for c in owner):
        raise BotError(f"bad owner: at most {MAX_OWNER} characters and no control characters "
                       f"(got {len(owner)} characters)")
    return owner


FREED_CHANNEL = "bullring_bots_freed"
"""The PostgreSQL channel a server NOTIFYs when a match ends and frees its bots: every
server LISTENs and looks for tables at once, instead of finding out by polling."""


class Store:
    """The store on one database URL; the schema is upgraded to head on opening.

    ``retry_s`` is how long a call keeps retrying while the database is unavailable."""

    def __init__(self, url: str = DEFAULT_DB, retry_s: float = DEFAULT_BUDGET_S) -> None:
        self.url = url
        self.sqlite = url.startswith("sqlite")
        self.retry = Retry(retry_s)
        args: dict[str, Any] = {"check_same_thread": False, "timeout": SQLITE_BUSY_S} \
            if self.sqlite else {}
        # pre-ping: a pooled connection that a PostgreSQL restart closed is replaced, not used.
        self.engine: Engine = create_engine(url, connect_args=args,
                                            pool_pre_ping=not self.sqlite)
        if self.sqlite:
            event.listen(self.engine, "connect", _sqlite_connect)
            event.listen(self.engine, "begin", _sqlite_begin)
        else:
            event.listen(self.engine, "handle_error", _postgres_error)
        upgrade(self.engine)

    def _announce_free(self, session: Session) -> None:
        """Tell every server listening on this PostgreSQL database (``FREED_CHANNEL``) that
        bots became free, when this transaction commits; nothing on SQLite (one server)."""
        if not self.sqlite:
            session.execute(text(f"NOTIFY {FREED_CHANNEL}"))

    def listen_url(self) -> str | None:
        """The libpq connection string of this PostgreSQL database (for LISTEN), or None."""
        if self.sqlite:
            return None
        return self.engine.url.set(drivername="postgresql").render_as_string(
            hide_password=False)

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with Session(self.engine, expire_on_commit=False) as session:
            yield session

    # -- matches ---------------------------------------------------------------------------

    def create_match(self, game: str, settings: Mapping[str, Any], seed: int,
                     seat_names: Sequence[str], house: Mapping[int, str]
                     ) -> tuple[str, list[str | None]]:
        """Store a new match; return its id and one token per seat (None for house seats)."""
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
                                    house=house.get(seat),
                                    token_hash=None if token is None else hash_token(token)))
            session.commit()
        return match_id, tokens

    @_retried
    def seat_for_token(self, token: str) -> tuple[str, int] | None:
        """The (match id, seat) a seat token plays, or None."""
        with self._session() as session:
            row = session.exec(select(SeatRow).where(SeatRow.token_hash == hash_token(token))
                               ).first()
            return None if row is None else (row.match_id, row.seat)

    @_retried
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
                               match.rated)

    @_retried
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

    @_retried
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

    @_retried
    def finish_match(self, match_id: str, replay: dict[str, Any]) -> bool:
        """Record the end of a match and, for a finished rated match, its rating updates,
        in one transaction; free its bots. False (and nothing written) when the match was
        already recorded or aborted: a match is never recorded twice."""
        status = "finished" if replay["termination"] == "normal" else "aborted"
        with self._session() as session:
            recorded = session.execute(
                update(MatchRow).where(col(MatchRow.id) == match_id,
                                       col(MatchRow.status).in_(LIVE))
                .values(status=status, finished_at=utcnow(),
                        replay_json=json.dumps(replay, separators=(",", ":")))
            ).rowcount  # type: ignore[attr-defined]
            if not recorded:
                if session.get(MatchRow, match_id) is None:
                    raise UnknownMatchError(f"no match {match_id!r}")
                session.rollback()
                return False
            match = session.get(MatchRow, match_id)
            assert match is not None
            if match.rated and status == "finished":
                self._rate(session, match, [int(r) for r in replay["ranks"]])
            session.execute(update(BotRow).where(col(BotRow.current_match) == match_id)
                            .values(current_match=None))
            self._announce_free(session)
            session.commit()
        return True

    def _rate(self, session: Session, match: MatchRow, ranks: list[int]) -> None:
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

    @_retried
    def replay(self, match_id: str) -> dict[str, Any]:
        """The stored replay of a finished match."""
        with self._session() as session:
            match = session.get(MatchRow, match_id)
            if match is None:
                raise UnknownMatchError(f"no match {match_id!r}")
            if match.replay_json is None:
                raise UnknownMatchError(f"match {match_id!r} is {match.status}; no replay")
            result: dict[str, Any] = json.loads(match.replay_json)
            return result

    @_retried
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

    @_retried
    def seats(self, match_ids: Sequence[str]) -> dict[str, list[SeatRow]]:
        """The seats of each match asked for, in seat order."""
        found: dict[str, list[SeatRow]] = {m: [] for m in match_ids}
        with self._session() as session:
            for row in session.exec(select(SeatRow).where(col(SeatRow.match_id).in_(match_ids))
                                    .order_by(col(SeatRow.match_id), col(SeatRow.seat))):
                found[row.match_id].append(row)
        return found

    @_retried
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
            query = query.where(col(MatchRow.created_at) >= _utc(since))
        if until is not None:
            query = query.where(col(MatchRow.created_at) < _utc(until))
        with self._session() as session:
            total = session.exec(select(func.count()).select_from(query.subquery())).one()
            rows = session.exec(query.order_by(col(MatchRow.created_at).desc(), col(MatchRow.id))
                                .offset(offset).limit(limit)).all()
        seats = self.seats([row.id for row in rows])
        return [_summary(row, seats[row.id]) for row in rows], int(total)

    # -- the ladder ------------------------------------------------------------------------

    def seat_ladder_match(self, game: str, settings: Mapping[str, Any], seed: int,
                          bots: Sequence[str], instance: str,
                          token_hashes: Mapping[str, str] | None = None) -> str | None:
        """Create a running ladder match of ``bots`` (in seat order) on ``instance``.

        Each bot is claimed with a conditional update (enabled, seated nowhere, and still
        holding the token hash given in ``token_hashes``, for bots that connected with one);
        if any claim fails nothing is written and None is returned. Retried with the same
        match id, so a try whose commit went through but whose answer was lost is recognised.
        """
        return self.retry.call("seat_ladder_match", self._seat_ladder_match,
                               uuid.uuid4().hex[:12], game, settings, seed, bots, instance,
                               dict(token_hashes or {}))

    def _seat_ladder_match(self, match_id: str, game: str, settings: Mapping[str, Any],
                           seed: int, bots: Sequence[str], instance: str,
                           token_hashes: Mapping[str, str]) -> str | None:
        with self._session() as session:
            if session.get(MatchRow, match_id) is not None:
                return match_id  # an earlier try committed it
            for name in sorted(bots):  # one lock order for every server: no deadlocks
                claim = update(BotRow).where(col(BotRow.name) == name,
                                             col(BotRow.current_match).is_(None),
                                             col(BotRow.enabled).is_(True))
                if name in token_hashes:  # a token rotated meanwhile: not seated
                    claim = claim.where(col(BotRow.token_hash) == token_hashes[name])
                claimed = session.execute(
                    claim.values(current_match=match_id)
                ).rowcount  # type: ignore[attr-defined]
                if claimed != 1:
                    session.rollback()
                    return None
            # Taken once every claim holds its row: later than the end of the bots' last
            # matches, so a bot's matches never overlap in stored time either.
            now = utcnow()
            session.add(MatchRow(id=match_id, game=game, settings_json=json.dumps(dict(settings)),
                                 seed=seed, seat_count=len(bots), status="running", ladder=True,
                                 rated=True, instance=instance, created_at=now))
            session.flush()
            session.execute(update(BotRow).where(col(BotRow.name).in_(list(bots)))
                            .values(last_seated_at=now))
            rows = {b.name: b for b in session.exec(select(BotRow).where(
                col(BotRow.name).in_(list(bots)))).all()}
            for seat, name in enumerate(bots):
                row = rows[name]
                session.add(SeatRow(match_id=match_id, seat=seat, name=name, house=row.house,
                                    bot=name, bot_version=row.version))
            session.commit()
        return match_id

    @_retried
    def free_bots(self, names: Sequence[str]) -> set[str]:
        """Those of ``names`` that are enabled and seated in no match."""
        with self._session() as session:
            return set(session.exec(select(BotRow.name).where(
                col(BotRow.name).in_(list(names)), col(BotRow.current_match).is_(None),
                col(BotRow.enabled).is_(True))).all())

    @_retried
    def abort_orphans(self, instance: str, alive: Callable[[str], bool]) -> list[str]:
        """Abort the running matches of server instances that are gone (not ``instance``,
        and ``alive`` says no); free their bots. They are not rated. Returns their ids."""
        with self._session() as session:
            others = session.exec(select(MatchRow.instance).where(
                MatchRow.status == "running", col(MatchRow.instance).is_not(None),
                MatchRow.instance != instance).distinct()).all()
        return self._abort_running([i for i in others if i is not None and not alive(i)])

    @_retried
    def abort_running(self, instances: Sequence[str]) -> list[str]:
        """Abort every running match of ``instances`` (unrated) and free their bots; return
        their ids. A server stopping calls it for itself, for matches it seated but did not
        get to run."""
        return self._abort_running(instances)

    def _abort_running(self, instances: Sequence[str]) -> list[str]:
        aborted: list[str] = []
        if not instances:
            return aborted
        dead = list(instances)
        with self._session() as session:
            ids = list(session.exec(select(MatchRow.id).where(
                MatchRow.status == "running", col(MatchRow.instance).in_(dead))).all())
            if ids:
                session.execute(update(MatchRow).where(col(MatchRow.id).in_(ids),
                                                       col(MatchRow.status) == "running")
                                .values(status="aborted", finished_at=utcnow()))
                session.execute(update(BotRow).where(col(BotRow.current_match).in_(ids))
                                .values(current_match=None))
                self._announce_free(session)
                aborted = ids
            session.commit()
        return aborted

    @_retried
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

    @_retried
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

    # -- challenges ------------------------------------------------------------------------

    def create_challenge(self, game: str, challenger: str, opponents: Sequence[str],
                         expiry_s: float = DEFAULT_CHALLENGE_EXPIRY_S) -> Challenge:
        """Store a challenge of ``challenger`` (a connecting bot) against ``opponents``
        (``house:KIND`` or registered bots' names, already checked to play ``game``). A
        registered house bot's name stands for its kind; a bot that auto-accepts accepts
        now, and with no one left to ask the challenge is accepted. Unanswered for
        ``expiry_s`` seconds, it expires."""
        with self._session() as session:
            names = {o for o in opponents if not o.startswith(HOUSE_PREFIX)} | {challenger}
            rows = {b.name: b for b in session.exec(select(BotRow).where(
                col(BotRow.name).in_(sorted(names)))).all()}
            seats: list[str] = []
            answers: dict[str, str] = {}
            for name in opponents:
                row = rows.get(name)
                if name.startswith(HOUSE_PREFIX) or (row is not None and row.house):
                    seats.append(name if row is None else HOUSE_PREFIX + str(row.house))
                    continue
                if row is None:
                    raise ChallengeError("NOT_FOUND", f"no bot named {name!r} is registered")
                if name == challenger or name in answers:
                    raise ChallengeError("INVALID_ARGUMENT",
                                         f"{name!r} is named twice (a bot takes one seat)")
                if not row.enabled:
                    raise ChallengeError("FAILED_PRECONDITION", f"bot {name!r} is disabled")
                seats.append(name)
                answers[name] = "accepted" if row.auto_accept else "pending"
            status = "accepted" if all(a == "accepted" for a in answers.values()) else "pending"
            now = utcnow()
            made = ChallengeRow(id=uuid.uuid4().hex[:12], game=game, challenger=challenger,
                                opponents_json=json.dumps(seats),
                                answers_json=json.dumps(answers), status=status,
                                created_at=now, updated_at=now,
                                expires_at=now + timedelta(seconds=expiry_s))
            session.add(made)
            if status == "accepted":
                self._announce_free(session)
            session.commit()
        return Challenge.of(made)

    @_retried
    def challenge(self, challenge_id: str) -> Challenge:
        """The stored challenge ``challenge_id``."""
        with self._session() as session:
            row = session.get(ChallengeRow, challenge_id)
        if row is None:
            raise ChallengeError("NOT_FOUND", f"no challenge {challenge_id!r}")
        return Challenge.of(row)

    @_retried
    def challenges(self, bot: str, limit: int = 100) -> list[Challenge]:
        """The newest challenges ``bot`` made or is named in, newest first."""
        query = select(ChallengeRow).order_by(col(ChallengeRow.created_at).desc(),
                                              col(ChallengeRow.id))
        found: list[Challenge] = []
        with self._session() as session:
            for row in session.exec(query.limit(20 * limit)):
                challenge = Challenge.of(row)
                if bot in challenge.bots:
                    found.append(challenge)
                    if len(found) == limit:
                        break
        return found

    @_retried
    def answer_challenge(self, challenge_id: str, bot: str, accept: bool,
                         reason: str = "") -> Challenge:
        """``bot`` accepts or declines a pending challenge naming it; its challenger may
        withdraw it (``accept`` False) until it starts. The first decline ends it."""
        if len(reason) > MAX_OWNER or any(unicodedata.category(c) == "Cc" for c in reason):
            raise ChallengeError("INVALID_ARGUMENT", f"a reason has at most {MAX_OWNER} "
                                                     f"characters and no control characters")
        with self._session() as session:
            row = session.exec(select(ChallengeRow).where(ChallengeRow.id == challenge_id)
                               .with_for_update()).first()
            if row is None:
                raise ChallengeError("NOT_FOUND", f"no challenge {challenge_id!r}")
            answers = dict(json.loads(row.answers_json))
            because = f": {reason}" if reason else ""
            if _expired(row):
                row.status, row.message = "expired", _expiry_message(row)
                row.updated_at = utcnow()
                session.add(row)
                session.commit()
                raise ChallengeError("FAILED_PRECONDITION",
                                     f"challenge {challenge_id} is {row.message}")
            if bot == row.challenger and not accept and row.status in ("pending", "accepted"):
                row.status, row.message = "cancelled", f"cancelled by {bot}{because}"
            elif bot not in answers:
                raise ChallengeError("PERMISSION_DENIED",
                                     f"challenge {challenge_id} does not name {bot!r}")
            elif row.status != "pending" or answers[bot] != "pending":
                raise ChallengeError("FAILED_PRECONDITION",
                                     f"challenge {challenge_id} is {row.status}; {bot} "
                                     f"answered {answers[bot]}")
            elif not accept:
                answers[bot] = "declined"
                row.status, row.message = "declined", f"declined by {bot}{because}"
            else:
                answers[bot] = "accepted"
                if all(a == "accepted" for a in answers.values()):
                    row.status = "accepted"
                    self._announce_free(session)
            row.answers_json = json.dumps(answers)
            row.updated_at = utcnow()
            session.add(row)
            session.commit()
        return Challenge.of(row)

    @_retried
    def set_auto_accept(self, name: str, auto_accept: bool) -> None:
        """Whether ``name`` accepts every challenge naming it without being asked."""
        with self._session() as session:
            row = self._locked_bot(session, name)
            row.auto_accept = auto_accept
            session.add(row)
            session.commit()

    @_retried
    def ready_challenges(self, game: str) -> list[Challenge]:
        """The accepted challenges of ``game`` not yet seated, oldest first."""
        with self._session() as session:
            return [Challenge.of(r) for r in session.exec(
                select(ChallengeRow).where(ChallengeRow.game == game,
                                           ChallengeRow.status == "accepted")
                .order_by(col(ChallengeRow.created_at), col(ChallengeRow.id))).all()]

    def seat_challenge(self, challenge: Challenge, settings: Mapping[str, Any], seed: int,
                       seat_names: Sequence[str], instance: str) -> str | None:
        """Create the running, unrated match of an accepted challenge on ``instance``:
        the challenger, then its opponents, in ``seat_names``. Its registered bots are
        claimed as a ladder table's are; None (nothing written) if any claim fails or the
        challenge is no longer accepted."""
        return self.retry.call("seat_challenge", self._seat_challenge, uuid.uuid4().hex[:12],
                               challenge, settings, seed, seat_names, instance)

    def _seat_challenge(self, match_id: str, challenge: Challenge, settings: Mapping[str, Any],
                        seed: int, seat_names: Sequence[str], instance: str) -> str | None:
        with self._session() as session:
            if session.get(MatchRow, match_id) is not None:
                return match_id  # an earlier try committed it
            started = session.execute(
                update(ChallengeRow).where(col(ChallengeRow.id) == challenge.id,
                                           col(ChallengeRow.status) == "accepted")
                .values(status="started", match_id=match_id, updated_at=utcnow())
            ).rowcount  # type: ignore[attr-defined]
            if started != 1:
                session.rollback()
                return None
            for name in sorted(challenge.bots):  # the ladder's lock order
                claimed = session.execute(
                    update(BotRow).where(col(BotRow.name) == name,
                                         col(BotRow.current_match).is_(None),
                                         col(BotRow.enabled).is_(True))
                    .values(current_match=match_id)
                ).rowcount  # type: ignore[attr-defined]
                if claimed != 1:
                    session.rollback()
                    return None
            session.add(MatchRow(id=match_id, game=challenge.game,
                                 settings_json=json.dumps(dict(settings)), seed=seed,
                                 seat_count=len(seat_names), status="running", ladder=True,
                                 rated=False, instance=instance, created_at=utcnow()))
            session.flush()
            versions = {b.name: b.version for b in session.exec(select(BotRow).where(
                col(BotRow.name).in_(list(challenge.bots)))).all()}
            for seat, spec in enumerate((challenge.challenger, *challenge.opponents)):
                house = spec[len(HOUSE_PREFIX):] if spec.startswith(HOUSE_PREFIX) else None
                session.add(SeatRow(match_id=match_id, seat=seat, name=seat_names[seat],
                                    house=house, bot=None if house else spec,
                                    bot_version=None if house else versions[spec]))
            session.commit()
        return match_id

    # -- the bot registry ------------------------------------------------------------------

    def add_bot(self, name: str, owner: str = "") -> str:
        """Register a bot; return its token (only the hash is stored, so print it now)."""
        _check_name(name)
        _check_owner(owner)
        token = new_token("bot")
        with self._session() as session:
            if session.get(BotRow, name) is not None:
                raise BotNameTakenError(f"a bot named {name!r} is already registered")
            session.add(BotRow(name=name, owner=owner, token_hash=hash_token(token)))
            session.commit()
        return token

    @_retried
    def ensure_house_bot(self, name: str, house: str) -> None:
        """Register the house bot ``name`` (played by the server as ``house``) if missing."""
        _check_name(name)
        with self._session() as session:
            row = session.get(BotRow, name)
            if row is None:
                session.add(BotRow(name=name, owner="house", house=house))
            elif row.house != house:
                raise BotError(f"{name!r} is registered, but not as house bot {house!r}")
            session.commit()

    @_retried
    def bot(self, name: str) -> BotRow:
        """The registered bot ``name``."""
        with self._session() as session:
            row = session.get(BotRow, name)
        if row is None:
            raise UnknownBotNameError(f"no bot named {name!r} is registered")
        return row

    @_retried
    def bots(self) -> list[BotRow]:
        """Every registered bot, by name."""
        with self._session() as session:
            return list(session.exec(select(BotRow).order_by(col(BotRow.name))).all())

    @_retried
    def bot_states(self, names: Sequence[str]) -> dict[str, tuple[str | None, bool]]:
        """The token hash and whether it is enabled, of each of ``names`` that is registered."""
        with self._session() as session:
            rows = session.exec(select(BotRow.name, BotRow.token_hash, BotRow.enabled).where(
                col(BotRow.name).in_(list(names)))).all()
        return {name: (token_hash, enabled) for name, token_hash, enabled in rows}

    @_retried
    def bot_for_token(self, token: str) -> BotRow | None:
        """The registered bot whose token this is, or None."""
        with self._session() as session:
            return session.exec(select(BotRow).where(BotRow.token_hash == hash_token(token))
                                ).first()

    def new_version(self, name: str) -> int:
        """Start a new version of ``name``: its ratings keep their mean, widen their
        uncertainty. Returns the new version number."""
        with self._session() as session:
            row = self._locked_bot(session, name)
            row.version += 1
            session.add(row)
            for rating in session.exec(select(RatingRow).where(RatingRow.bot == name)
                                       .with_for_update()).all():
                wider = ratings.widen(Skill(rating.mu, rating.sigma))
                rating.sigma = wider.sigma
                session.add(rating)
            session.commit()
            return row.version

    @_retried
    def set_enabled(self, name: str, enabled: bool) -> None:
        """Enable or disable a bot; a disabled bot is not seated and leaves the leaderboard."""
        with self._session() as session:
            row = self._locked_bot(session, name)
            row.enabled = enabled
            session.add(row)
            session.commit()

    def rotate_token(self, name: str) -> str:
        """Give ``name`` a new token (the old one stops working); return it."""
        token = new_token("bot")
        with self._session() as session:
            row = self._locked_bot(session, name)
            if row.house is not None:
                raise BotError(f"{name!r} is a house bot; it has no token")
            row.token_hash = hash_token(token)
            session.add(row)
            session.commit()
        return token

    @staticmethod
    def _locked_bot(session: Session, name: str) -> BotRow:
        row = session.exec(select(BotRow).where(BotRow.name == name).with_for_update()).first()
        if row is None:
            raise UnknownBotNameError(f"no bot named {name!r} is registered")
        return row

    # -- the admin token -------------------------------------------------------------------

    def ensure_admin_token(self) -> str | None:
        """Create the admin token if there is none; return it then (only once), else None."""
        token = new_token("admin")
        with self._session() as session:
            if session.get(AdminTokenRow, 1) is not None:
                return None
            session.add(AdminTokenRow(id=1, token_hash=hash_token(token)))
            session.commit()
        return token

    def rotate_admin_token(self) -> str:
        """Replace the admin token; return the new one."""
        token = new_token("admin")
        with self._session() as session:
            row = session.get(AdminTokenRow, 1) or AdminTokenRow(id=1, token_hash="")
            row.token_hash = hash_token(token)
            row.created_at = utcnow()
            session.add(row)
            session.commit()
        return token

    @_retried
    def is_admin_token(self, token: str) -> bool:
        """True when ``token`` is the admin token."""
        with self._session() as session:
            row = session.get(AdminTokenRow, 1)
        return row is not None and secrets.compare_digest(row.token_hash, hash_token(token))

    @_retried
    def count(self, status: str | None = None) -> int:
        """How many matches are stored (with ``status``, if given)."""
        query = select(func.count()).select_from(MatchRow)
        if status is not None:
            query = query.where(MatchRow.status == status)
        with self._session() as session:
            return int(session.exec(query).one())


    # -- live tournaments ------------------------------------------------------------------

    @_retried
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
                session.commit()
                session.refresh(row)
        return row

    @_retried
    def tournament(self, tournament_id: str) -> TournamentRow | None:
        """The stored tournament ``tournament_id``, or None."""
        with self._session() as session:
            return session.get(TournamentRow, tournament_id)

    @_retried
    def tournaments(self, status: str | None = None, limit: int = 100) -> list[TournamentRow]:
        """The newest tournaments (only those of ``status`` when given), newest first."""
        query = select(TournamentRow).order_by(col(TournamentRow.created_at).desc(),
                                               col(TournamentRow.id)).limit(limit)
        if status is not None:
            query = query.where(TournamentRow.status == status)
        with self._session() as session:
            return list(session.exec(query).all())

    @_retried
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

    @_retried
    def tournament_game_of(self, match_id: str) -> tuple[str, int] | None:
        """The (tournament id, game index) match ``match_id`` plays, or None."""
        with self._session() as session:
            row = session.get(MatchRow, match_id)
        if row is None or row.tournament_id is None or row.tournament_game is None:
            return None
        return row.tournament_id, row.tournament_game

    @_retried
    def match_states(self, match_ids: Sequence[str]
                     ) -> dict[str, tuple[str, str | None, datetime | None]]:
        """Each of ``match_ids``'s status, instance and end (UTC)."""
        with self._session() as session:
            rows = session.exec(select(MatchRow.id, MatchRow.status, MatchRow.instance,
                                       MatchRow.finished_at)
                                .where(col(MatchRow.id).in_(list(match_ids)))).all()
        return {i: (status, instance, None if end is None else _utc(end))
                for i, status, instance, end in rows}

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


__all__ = [
    "DEFAULT_DB",
    "BotError",
    "BotNameTakenError",
    "BotRow",
    "Challenge",
    "ChallengeError",
    "LeaderboardEntry",
    "MatchConfig",
    "MatchElsewhereError",
    "MatchRow",
    "RatingChangeRow",
    "RatingRow",
    "SeatRow",
    "Store",
    "UnknownBotNameError",
    "UnknownMatchError",
    "hash_token",
]


def _utc(moment: datetime) -> datetime:
    """``moment`` in UTC (a time without a zone is taken as UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _summary(row: MatchRow, seats: Sequence[SeatRow]) -> MatchSummary:
    totals = ranks = termination = None
    if row.replay_json is not None and row.status in ("finished", "aborted"):
        replay = json.loads(row.replay_json)
        totals, ranks = tuple(replay["totals"]), tuple(replay["ranks"])
        termination = str(replay["termination"])
    return MatchSummary(row.id, row.game, row.status, tuple(s.name for s in seats),
                        row.created_at, row.finished_at, totals, ranks, termination,
                        tuple(s.bot for s in seats), row.rated)
