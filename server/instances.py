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
import os
import uuid
from typing import IO, Any

from sqlalchemy.engine import Engine, make_url


class DatabaseBusyError(RuntimeError):
    """Another server process already serves this SQLite database."""


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
            self._query("SELECT pg_advisory_lock(%s)", _lock_key(self.id))
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
        """Let the instance go (its lock is released)."""
        if self._connection is not None:
            with contextlib.suppress(Exception):
                self._connection.close()
            self._connection = None
        if self._file is not None:
            self._file.close()
            self._file = None
