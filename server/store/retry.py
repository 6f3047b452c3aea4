"""Riding out a database that is unavailable for a moment.

A locked SQLite file ("database is locked" once the busy timeout has passed) and a
PostgreSQL server that restarts (AdminShutdown, refused connections, "the database system
is starting up") raise SQLAlchemy ``OperationalError`` or a DBAPI error that invalidated its
connection. Each such call is tried again with bounded exponential backoff until its budget
(30 s by default) is spent; every retry is logged at WARNING. Only calls that are safe to run
twice are retried: each Store call is one transaction, and the writes among them are
conditional (a match is recorded only while it is live, a bot is claimed only while it sits
nowhere), so a commit that succeeded but whose answer was lost is not applied twice.

A ``RetryObserver`` is told how long each try took, of each retry and of each call given up
(the server's metrics count them; ``bullring.server.metrics``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, Protocol, TypeVar

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


class RetryObserver(Protocol):
    """What is told of the store calls a ``Retry`` runs; ``what`` names the call (a Store
    method's name, such as ``finish_match``: a bounded set)."""

    def tried(self, what: str, seconds: float) -> None:
        """One try of ``what`` (one transaction) ended, whatever its outcome, after
        ``seconds``."""

    def retrying(self, what: str) -> None:
        """A try of ``what`` met an unavailable database; it is tried again."""

    def gave_up(self, what: str) -> None:
        """``what`` met an unavailable database for its whole budget; its caller is told
        (``DatabaseUnavailableError``)."""


@dataclass(frozen=True, slots=True)
class Retry:
    """Retries transient database failures for up to ``budget_s`` seconds per call."""

    budget_s: float = DEFAULT_BUDGET_S
    first_s: float = 0.1
    """The first pause; each next one doubles, up to ``max_s``."""
    max_s: float = 2.0
    observer: RetryObserver | None = None
    """Told of every try, retry and call given up (None: nobody)."""

    def call(self, what: str, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``work`` (one whole transaction) until it succeeds, fails for good, or the
        database has been unavailable for the budget (DatabaseUnavailableError)."""
        deadline = time.monotonic() + self.budget_s
        backoff = Backoff(self.first_s, self.max_s)
        attempt = 0
        while True:
            try:
                return self._try(what, work, *args, **kwargs)
            except DBAPIError as exc:
                if not is_transient(exc):
                    raise
                attempt += 1
                left = deadline - time.monotonic()
                if left <= 0:
                    if self.observer is not None:
                        self.observer.gave_up(what)
                    log.warning("database unavailable for %s: gave up after %d tries "
                                "(%.0f s budget): %s", what, attempt, self.budget_s,
                                _reason(exc))
                    raise DatabaseUnavailableError(
                        f"the database was unavailable for {self.budget_s:.0f} s "
                        f"({what}): {_reason(exc)}") from exc
                wait = min(backoff.pause(attempt), left)
                log.warning("database unavailable for %s (try %d): %s; retrying in %.1f s",
                            what, attempt, _reason(exc), wait)
                if self.observer is not None:
                    self.observer.retrying(what)
                time.sleep(wait)

    def _try(self, what: str, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """One try of ``work``, timed for the observer."""
        observer = self.observer
        if observer is None:
            return work(*args, **kwargs)
        start = time.monotonic()
        try:
            return work(*args, **kwargs)
        finally:
            observer.tried(what, time.monotonic() - start)
