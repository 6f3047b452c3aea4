"""The options the server's commands share: where the ladder is (``--db`` or ``--server``),
the admin token, and how database and store errors become one line and an exit status.

Imported before every ``bullring`` command runs: nothing heavy at the top (the database
layer loads only when a command opens the database).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from bullring import commandline as cli
from bullring.server.store.base import DEFAULT_DB

if TYPE_CHECKING:
    from bullring.server.store import Store


CLI_DB_RETRY_S = 3.0
"""How long a command retries a database that is unavailable (the server: ``--db-retry``)."""


def add_db(parser: argparse.ArgumentParser, *, creates: bool = False,
           group: argparse._MutuallyExclusiveGroup | None = None) -> None:
    """Add ``--db``. Only ``bullring serve`` (``creates``) makes a SQLite file that is not
    there; every other command refuses it, naming the path, so a command run in the wrong
    folder never starts a new, empty ladder beside the real one."""
    where = group or parser
    where.add_argument("--db", type=cli.DatabaseUrl(existing=not creates), default=None,
                       metavar="URL",
                       help=f"database URL (default: {DEFAULT_DB}"
                            f"{'' if creates else ', which must exist: only serve makes one'})")
    parser.set_defaults(creates_db=creates)


def add_ladder_location(parser: argparse.ArgumentParser, *, admin: bool) -> None:
    """Add ``--db URL`` (which must exist) or ``--server HOST:PORT`` (one of them), and
    ``--admin-token`` when the command changes the ladder."""
    where = parser.add_mutually_exclusive_group()
    add_db(parser, group=where)
    where.add_argument("--server", type=cli.ServerAddress(), metavar="HOST:PORT",
                       help="ask this server over gRPC instead of opening the database")
    if admin:
        parser.add_argument("--admin-token", type=cli.Token(), metavar="TOKEN",
                            help="with --server: the admin token (default: "
                                 "$BULLRING_ADMIN_TOKEN)")


def db_url(args: argparse.Namespace) -> str:
    """The ``--db`` URL given, else the default (checked as the option would be)."""
    if args.db is not None:
        return str(args.db)
    creates = getattr(args, "creates_db", False)
    try:
        return str(cli.DatabaseUrl(existing=not creates)(DEFAULT_DB))
    except argparse.ArgumentTypeError as exc:
        raise cli.UsageError(f"--db: {exc}") from None


def open_store(args: argparse.Namespace) -> Store:
    """The store of ``--db`` (or the default file); a ``DatabaseError`` when it cannot be
    opened."""
    from bullring.server.store import Store

    return Store(db_url(args), CLI_DB_RETRY_S)


def admin_token(args: argparse.Namespace) -> str:
    """``--admin-token`` or ``$BULLRING_ADMIN_TOKEN``; a ``UsageError`` when neither is set."""
    token = getattr(args, "admin_token", None) or os.environ.get("BULLRING_ADMIN_TOKEN")
    if not token:
        raise cli.UsageError("--admin-token: --server needs the admin token (--admin-token or "
                             "$BULLRING_ADMIN_TOKEN)")
    return str(token)


def classify(exc: BaseException) -> cli.CommandError | None:
    """The database's own errors as a one-line ``DatabaseError`` (None for any other error:
    the project's errors carry their exit status, anything else is a bug, shown with its
    traceback)."""
    if "sqlalchemy" in sys.modules:
        from sqlalchemy.exc import SQLAlchemyError

        if isinstance(exc, SQLAlchemyError):
            return cli.DatabaseError(database_problem(exc))
    return None


def database_problem(exc: BaseException) -> str:
    """One line saying why the database failed, without SQLAlchemy's SQL and links."""
    inner = getattr(exc, "orig", None) or exc.__cause__ or exc
    text = str(inner).strip().splitlines()
    first = text[0] if text else type(inner).__name__
    return f"the database failed: {first}"


class MatchCapArg(cli.ArgType):
    """``NAME=MAX``: the cap on one setting of a match made without the admin token
    (``bullring.server.quotas.MatchCaps.names``: seats, the clock's settings and each
    installed game's own capped settings)."""

    good = "rounds=20"
    bad = ("rounds", "rounds=0", "rounds=x", "colour=3")

    def __call__(self, text: str) -> tuple[str, int]:
        from bullring.server.quotas import MatchCaps

        name, sep, value = text.partition("=")
        if not sep:
            self.fail(f"must be NAME=MAX, not {text!r}")
        if name not in MatchCaps.names():
            self.fail(f"no cap on {name!r}; caps: {', '.join(MatchCaps.names())}")
        return name, cli.positive()(value)


class BrokerUrl(cli.ArgType):
    """``nats://HOST:PORT`` (or ``tls://``): the broker of a fleet of servers
    (``bullring serve --broker``)."""

    good = "nats://127.0.0.1:4222"
    bad = ("redis://127.0.0.1:6379", "nats://", "127.0.0.1:4222", "nats://host:port")

    def __call__(self, text: str) -> str:
        try:
            parts = urlsplit(text)
            port = parts.port
        except ValueError:
            port, parts = None, urlsplit("")
        if parts.scheme not in ("nats", "tls") or not parts.hostname or \
                (port is None and parts.netloc.endswith(":")):
            self.fail(f"must be a NATS server's URL such as nats://127.0.0.1:4222, "
                      f"not {text!r}")
        return text
