"""``bullring serve --workers N``: N processes on one address as one server, each worker
started again if it dies, all stopped together; a SQLite file is refused."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.databases import fresh_postgres
from tests.serving import CLI, ServerProcess

INFO = re.compile(r'bullring_server_info\{instance="([^"]+)",worker="([^"]+)"\} 1\.0')
TRIES = 400
"""Fresh connections made to find every worker behind the shared port: the kernel picks a
worker per connection, so each is missed by all of them with odds of 2**-400."""


@pytest.fixture
def workers() -> Iterator[ServerProcess]:
    """A ``bullring serve --workers 2`` on a fresh PostgreSQL database."""
    with fresh_postgres() as db:
        server = ServerProcess(db, ["--workers", "2", "--house-bots", ""]).start()
        try:
            yield server
        finally:
            server.stop()


def _seen(server: ServerProcess, wanted: int) -> dict[str, str]:
    """The workers' indexes and instance ids that answer the shared HTTP port, over fresh
    connections, until ``wanted`` of them have."""
    seen: dict[str, str] = {}
    for _ in range(TRIES):
        with httpx.Client() as client:  # a new connection each time
            text = client.get(f"{server.http}/metrics").text
        for instance, worker in INFO.findall(text):
            seen[worker] = instance
        if len(seen) >= wanted:
            break
    return seen


def _worker_pids(supervisor: int) -> list[int]:
    """The supervisor's child processes: its workers."""
    children = Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split()
    return [int(pid) for pid in children]


def test_two_workers_serve_one_address_and_one_killed_is_started_again(
        workers: ServerProcess) -> None:
    """Both workers answer on the one HTTP port (each scrape names the worker it reached,
    each with its own instance) and the gRPC port answers health checks. A worker killed
    with -9 is started again under its index (a new instance), while the other keeps the
    address answering; SIGTERM then stops them all."""
    assert workers.proc is not None
    before = _seen(workers, 2)
    assert sorted(before) == ["0", "1"]
    assert len(set(before.values())) == 2
    health = subprocess.run([*CLI, "health", "--server", workers.address],
                            capture_output=True, text=True, timeout=60)
    assert health.returncode == 0, health.stderr
    pids = _worker_pids(workers.proc.pid)
    assert len(pids) == 2
    os.kill(pids[0], signal.SIGKILL)
    after: dict[str, str] = {}
    while not set(after.values()) - set(before.values()):
        after.update(_seen(workers, 2))  # answered throughout, by the worker left
    assert sorted(after) == ["0", "1"]
    assert workers.proc.poll() is None
    log = workers.stop()
    assert "starting it again" in log
    assert workers.proc.returncode == 0


def test_workers_need_a_shared_database(tmp_path: Path) -> None:
    """A SQLite file serves one process: ``--workers 2`` on one is refused, in one line
    naming the option, before anything listens."""
    result = subprocess.run(
        [*CLI, "serve", "--workers", "2", "--port", "0", "--http-port", "0",
         "--db", f"sqlite:///{tmp_path / 'one.db'}"],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "--workers" in result.stderr and "PostgreSQL" in result.stderr
    assert not (tmp_path / "one.db").exists()
