"""The database under a store: its engine and sessions, the retry of safe calls while the
database is unavailable, and the stored form of tokens."""

from __future__ import annotations

import functools
import hashlib
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Concatenate, NamedTuple, ParamSpec, TypeVar

from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlmodel import Session, create_engine

from bullring.server.store.migrate import upgrade
from bullring.server.store.retry import DEFAULT_BUDGET_S, Retry, RetryObserver

DEFAULT_DB = "sqlite:///bullring.db"
"""The embedded default: a SQLite file in the working folder."""

SQLITE_BUSY_S = 2.0
"""How long one SQLite transaction waits for a lock before it fails (and is retried)."""

FREED_CHANNEL = "bullring_bots_freed"
"""The PostgreSQL channel a server NOTIFYs when a match ends and frees its bots, when it
seats a ladder table, when the bots it can seat change (``LadderTurns.publish``), when a
challenge is accepted and when a live tournament is created: every server LISTENs and looks
at its queues at once, instead of finding out by polling. Each notice names what changed
(``Notice``), so a server looks again only where the change can matter to it."""

FREED = "freed"
"""A notice's kind: a match ended (or was aborted) and freed its bots."""
SEATED = "seated"
"""A notice's kind: a server seated a ladder table (its turn is taken)."""
PRESENCE = "presence"
"""A notice's kind: the bots a server can seat changed."""
CHALLENGE = "challenge"
"""A notice's kind: a challenge was accepted and waits to be seated."""
TOURNAMENT = "tournament"
"""A notice's kind: a live tournament was created."""
KINDS = frozenset({FREED, SEATED, PRESENCE, CHALLENGE, TOURNAMENT})
"""Every kind of notice a server understands."""


class Notice(NamedTuple):
    """What one notice on ``FREED_CHANNEL`` says changed: its ``kind`` (``FREED``,
    ``SEATED``, ``PRESENCE``, ``CHALLENGE``, ``TOURNAMENT``), the ladder game it concerns
    ("": any) and the server instance that sent it and looks again by itself ("": none
    does). A notice without a payload, or one not understood, is ``Notice("", "", "")``:
    anything may have changed."""

    kind: str
    game: str = ""
    instance: str = ""

    @property
    def payload(self) -> str:
        """The notice as sent: its fields separated by spaces."""
        return f"{self.kind} {self.game} {self.instance}"

    @classmethod
    def parse(cls, payload: str) -> Notice:
        """The notice that ``payload`` carries (anything may have changed when it is not
        understood)."""
        fields = payload.split(" ")
        if len(fields) != 3 or fields[0] not in KINDS:
            return cls("")
        return cls(*fields)


def notify(session: Session, notice: Notice) -> None:
    """Send ``notice`` on ``FREED_CHANNEL`` to every server listening on this PostgreSQL
    database when the transaction of ``session`` commits; nothing on SQLite (one server)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_notify(:channel, :payload)"),
                        {"channel": FREED_CHANNEL, "payload": notice.payload})

P = ParamSpec("P")
T = TypeVar("T")
S = TypeVar("S", bound="StoreBase")


def retried(method: Callable[Concatenate[S, P], T]) -> Callable[Concatenate[S, P], T]:
    """Run a store call again while the database is unavailable, within the store's budget
    (only for calls that are one transaction and safe to repeat)."""
    def call(store: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return store.retry.call(method.__name__, method, store, *args, **kwargs)
    functools.update_wrapper(call, method)
    return call


def hash_token(token: str) -> str:
    """The stored form of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_token(prefix: str) -> str:
    """A fresh random token."""
    return f"{prefix}_{secrets.token_urlsafe(24)}"


def utc(moment: datetime) -> datetime:
    """``moment`` in UTC (a time without a zone is taken as UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


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


class StoreBase:
    """What every part of the store shares: one database URL, its engine (the schema is
    upgraded to head on opening), sessions, and ``retry_s``, how long a call keeps retrying
    while the database is unavailable (``observer`` is told of every try: the server's
    metrics)."""

    def __init__(self, url: str = DEFAULT_DB, retry_s: float = DEFAULT_BUDGET_S,
                 observer: RetryObserver | None = None) -> None:
        self.url = url
        self.sqlite = url.startswith("sqlite")
        self.retry = Retry(retry_s, observer=observer)
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

    def _announce_free(self, session: Session, game: str = "", instance: str = "") -> None:
        """Tell every server listening on this PostgreSQL database (``FREED_CHANNEL``) that
        bots of ``game`` ("": of any) became free, when this transaction commits; the server
        ``instance`` that freed them, if named, looks again by itself. Nothing on SQLite
        (``notify``)."""
        notify(session, Notice(FREED, game, instance))

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
