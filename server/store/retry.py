"""Riding out a database that is unavailable for a moment.

A locked SQLite file ("database is locked" once the busy timeout has passed) and a
PostgreSQL server that restarts (AdminShutdown, refused connections, "the database system
is starting up") raise SQLAlchemy ``OperationalError`` or a DBAPI error that invalidated its
connection. Each such call is tried again with bounded exponential backoff until its budget
(30 s by default) is spent; every retry is logged at WARNING. Only calls that are safe to run
twice are retried: each Store call is one transaction, and the writes among them are
conditional (a match is recorded only while it is live, a bot is claimed only while it sits
nowhere), so a commit that succeeded but whose answer was lost is not applied twice.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from sqlalchemy.exc import DBAPIError, OperationalError

from bullring.sdk.backoff import Backoff
from bullring.server.errors import DatabaseUnavailableError

log = logging.getLogger("bullring.db")

DEFAULT_BUDGET_S = 30.0
"""How long a store call keeps retrying a database that is unavailable."""

P = ParamSpec("P")
T = TypeVar("T")


def is_transient(exc: BaseException) -> bool:
    """True for failures that a later try may not meet: a locked SQLite file, a lost or
    refused PostgreSQL connection, a serialisation failure or a deadlock."""
    if isinstance(exc, OperationalError):
        return True
    return isinstance(exc, DBAPIError) and bool(exc.connection_invalidated)


def _reason(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


@dataclass(frozen=True, slots=True)
class Retry:
    """Retries transient database failures for up to ``budget_s`` seconds per call."""

    budget_s: float = DEFAULT_BUDGET_S
    first_s: float = 0.1
    """The first pause; each next one doubles, up to ``max_s``."""
    max_s: float = 2.0

    def call(self, what: str, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``work`` (one whole transaction) until it succeeds, fails for good, or the
        database has been unavailable for the budget (DatabaseUnavailableError)."""
        deadline = time.monotonic() + self.budget_s
        backoff = Backoff(self.first_s, self.max_s)
        attempt = 0
        while True:
            try:
                return work(*args, **kwargs)
            except DBAPIError as exc:
                if not is_transient(exc):
                    raise
                attempt += 1
                left = deadline - time.monotonic()
                if left <= 0:
                    log.warning("database unavailable for %s: gave up after %d tries "
                                "(%.0f s budget): %s", what, attempt, self.budget_s,
                                _reason(exc))
                    raise DatabaseUnavailableError(
                        f"the database was unavailable for {self.budget_s:.0f} s "
                        f"({what}): {_reason(exc)}") from exc
                wait = min(backoff.pause(attempt), left)
                log.warning("database unavailable for %s (try %d): %s; retrying in %.1f s",
                            what, attempt, _reason(exc), wait)
                time.sleep(wait)
