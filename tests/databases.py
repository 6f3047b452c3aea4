"""Databases for persistence tests: a SQLite file, or a fresh database on the real
PostgreSQL server at 127.0.0.1:5432 (trust auth, user postgres), dropped afterwards."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

PG_DSN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=3"
"""Where the test PostgreSQL server is (its maintenance database)."""
BACKENDS = ("sqlite", "postgresql")
"""The database backends every persistence test runs on."""


def _unreachable(reason: str) -> None:
    message = f"PostgreSQL at 127.0.0.1:5432 is unreachable: {reason}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true: PostgreSQL is required)")
    pytest.skip(message)


@contextmanager
def fresh_postgres() -> Iterator[str]:
    """A new, uniquely named PostgreSQL database's URL; dropped (forcibly) afterwards."""
    import psycopg

    name = f"bullring_test_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(PG_DSN, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        _unreachable(str(exc).strip())
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_DSN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def database(backend: str, folder: str) -> Iterator[str]:
    """A fresh database URL on ``backend``: a SQLite file in ``folder`` or PostgreSQL."""
    if backend == "sqlite":
        yield f"sqlite:///{folder}/bullring.db"
    else:
        with fresh_postgres() as url:
            yield url
