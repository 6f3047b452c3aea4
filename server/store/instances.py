"""Which server processes on a database are alive, so a dead one's matches can be aborted.

Each server process is an *instance* with a random id, written on the matches it runs.
On PostgreSQL an instance holds a session advisory lock keyed by its id for its whole life;
the database drops the lock when the process dies (kill -9 included), so another server can
tell a dead instance by taking its lock. A SQLite file serves one server process: the
instance holds an exclusive lock on a file beside the database, so any other instance named
in the database is dead.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import uuid
from typing import IO, Any

from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import DBAPIError

from bullring.server.errors import DatabaseBusyError, DatabaseUnavailableError

log = logging.getLogger("bullring.instances")


def _lock_key(instance: str) -> int:
    return int.from_bytes(hashlib.sha256(instance.encode()).digest()[:8], "big", signed=True)


class InstanceGuard:
    """This process's instance id, held alive on the database until ``close``."""

    def __init__(self, engine: Engine) -> None:
        self.id = uuid.uuid4().hex[:16]
        """This instance's id."""
        self._engine = engine
        self._file: IO[str] | None = None
        self._connection: Any = None
        if engine.dialect.name == "postgresql":
            self._connection = engine.raw_connection()
            self._connection.autocommit = True
            self._run("SELECT pg_advisory_lock(%s)", _lock_key(self.id))
        else:
            self._lock_sqlite_file(engine)

    def _lock_sqlite_file(self, engine: Engine) -> None:
        database = make_url(str(engine.url)).database
        if not database or database == ":memory:":
            return
        path = f"{os.path.abspath(database)}.server-lock"
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the process life
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise DatabaseBusyError(
                f"another bullring server already serves {database}; a SQLite database serves "
                f"one server process (use PostgreSQL to run several)") from None
        self._file = handle

    def _query(self, sql: str, *args: Any) -> Any:
        """Run ``sql`` on the lock's connection; if that connection was lost (a PostgreSQL
        restart drops it, and the lock with it), connect again, take the lock again, retry."""
        try:
            return self._run(sql, *args)
        except Exception as exc:  # the driver's own error type
            if not self._lost():
                raise
            log.warning("the connection holding this server's instance lock was lost (%s); "
                        "connecting again", str(exc).strip().splitlines()[0] if str(exc)
                        else type(exc).__name__)
        self._reconnect()
        return self._run(sql, *args)

    def _lost(self) -> bool:
        raw = getattr(self._connection, "driver_connection", None)
        return raw is None or bool(getattr(raw, "closed", False) or getattr(raw, "broken", False))

    def _reconnect(self) -> None:
        with contextlib.suppress(Exception):
            self._connection.invalidate()
        try:
            self._connection = self._engine.raw_connection()
            self._connection.autocommit = True
            self._run("SELECT pg_advisory_lock(%s)", _lock_key(self.id))
        except DBAPIError as exc:
            raise DatabaseUnavailableError(f"cannot take this server's instance lock again: "
                                           f"{str(exc.orig).strip().splitlines()[0]}") from exc
        log.warning("this server's instance lock is held again")

    def check(self) -> None:
        """Make sure the instance lock is still held (PostgreSQL): after a restart of the
        database, connect again and take it again. DatabaseUnavailableError while it is
        down."""
        if self._connection is not None:
            self._query("SELECT 1")

    def _run(self, sql: str, *args: Any) -> Any:
        cursor = self._connection.cursor()
        try:
            cursor.execute(sql, args)
            return cursor.fetchone()[0]
        finally:
            cursor.close()

    def is_alive(self, instance: str) -> bool:
        """True when the instance ``instance`` still runs (on PostgreSQL: holds its lock)."""
        if instance == self.id:
            return True
        if self._connection is None:
            return False  # SQLite: this process holds the database's only server lock
        if self._query("SELECT pg_try_advisory_lock(%s)", _lock_key(instance)):
            self._query("SELECT pg_advisory_unlock(%s)", _lock_key(instance))
            return False
        return True

    def close(self) -> None:
        """Let the instance go: its connection is closed, not returned to the pool, so the
        lock goes with it (and a connection a database restart killed is not reset)."""
        if self._connection is not None:
            with contextlib.suppress(Exception):
                self._connection.invalidate()
            self._connection = None
        if self._file is not None:
            self._file.close()
            self._file = None
