"""Shared fixtures: a real referee server on a loopback port."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.compiled import stale_sources
from tests.databases import BACKENDS, database
from tests.ladder_helpers import LadderBot, LadderServer
from tests.serving import ServerProcess, db_url

TIERS = {"unit": False, "property": False, "integration": False, "e2e": True, "starter_kits": True,
         "web": True, "install": True}
"""The folders of tests/, each a marker of the same name; True marks the tier ``slow`` too, so
``pytest -m "not slow"`` runs the unit, property and integration tiers alone."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its tier (its folder), and ``slow`` where the tier is; a test
    outside the tiers counts as slow."""
    for item in items:
        tier = item.path.parent.name
        if tier in TIERS:
            item.add_marker(tier)
        if TIERS.get(tier, True):
            item.add_marker("slow")


def pytest_configure(config: pytest.Config) -> None:
    """Refuse to test compiled modules built from older sources: Python imports a compiled
    module in preference to its source, so the edit would silently not be tested.

    Take Ctrl-C as at a terminal: a suite started in the background of a non-interactive
    shell (``.ci/run &``) inherits SIGINT ignored, and so would every process it starts,
    where a command rightly leaves an ignored SIGINT alone; the tests that press Ctrl-C on a
    ``bullring`` command need it delivered. A handled signal is reset to its default in a
    child process, so the commands the tests start take SIGINT as a user's would."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    stale = stale_sources()
    if stale:
        pytest.exit(f"compiled modules are stale ({', '.join(stale)} edited since): run "
                    "scripts/accelerate again, or scripts/accelerate --clean", returncode=4)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A running ``bullring serve`` on a fresh SQLite database."""
    proc = ServerProcess(db_url(tmp_path), ["--start-timeout", "30"]).start()
    yield proc
    proc.stop()


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database URL, once on SQLite and once on the real PostgreSQL (a new database
    per test, dropped after it; skipped if PostgreSQL is unreachable, failed with CI=true)."""
    with database(request.param, str(tmp_path)) as url:
        yield url


@pytest.fixture
def stop_all() -> Iterator[list[LadderBot | LadderServer]]:
    """Processes to stop when the test ends, whatever happens."""
    procs: list[LadderBot | LadderServer] = []
    yield procs
    for proc in reversed(procs):
        if isinstance(proc, LadderServer):
            if proc.proc is not None and proc.proc.poll() is None:
                proc.stop()
        else:
            proc.stop()
