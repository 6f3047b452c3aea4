"""Shared fixtures: a real referee server on a loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serving import ServerProcess, db_url


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A running ``bullring serve`` on a fresh SQLite database."""
    proc = ServerProcess(db_url(tmp_path), ["--start-timeout", "30"]).start()
    yield proc
    proc.stop()
