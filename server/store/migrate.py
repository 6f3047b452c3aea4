"""Schema migrations: bring a database to the newest alembic revision.

The revisions live in ``server/store/migrations/versions``. ``upgrade`` runs on every Store
opening; on PostgreSQL it holds an advisory lock meanwhile, so servers starting together
upgrade once.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.engine import Engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
"""The alembic script folder."""
_UPGRADE_LOCK = 0x6275_6C6C_7269_6E67  # "bullring": the advisory lock key while upgrading


def alembic_config(engine: Engine) -> Config:
    """An alembic configuration for ``engine`` (no alembic.ini needed)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False)
                           .replace("%", "%%"))
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Migrate the database behind ``engine`` to ``revision``."""
    config = alembic_config(engine)
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _UPGRADE_LOCK})
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
