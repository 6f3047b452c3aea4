"""A private PostgreSQL cluster for tests that stop and restart their database: the shared
server on 127.0.0.1:5432 is never restarted (other tests and CI use it)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest


def _bin_dir() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class PrivatePostgres:
    """A PostgreSQL cluster of this test's own: its folder, port and ``pg_ctl``."""

    bin_dir: str
    folder: str
    port: int

    @property
    def url(self) -> str:
        """The SQLAlchemy URL of its ``postgres`` database."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _as_postgres(self, *command: str) -> subprocess.CompletedProcess[str]:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        return subprocess.run([*prefix, *command], capture_output=True, text=True, check=True,
                              timeout=60)

    def pg_ctl(self, *args: str) -> None:
        """Run ``pg_ctl`` on this cluster (``start``, ``stop -m fast``...), waiting for it."""
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._as_postgres(f"{self.bin_dir}/pg_ctl", "-D", f"{self.folder}/data", "-o", options,
                          "-l", f"{self.folder}/postgres.log", "-w", *args)

    def start(self) -> None:
        """Start it and wait until it accepts connections."""
        self.pg_ctl("start")

    def stop(self) -> None:
        """Stop it (fast: open sessions are ended) and wait until it is down."""
        self.pg_ctl("stop", "-m", "fast")


@contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    """A fresh cluster (initdb, trust auth) on a free loopback port, started; stopped and
    deleted afterwards. Skipped where PostgreSQL's programs are missing (failed with CI=true)."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        message = "PostgreSQL's initdb is not installed (apt-get install postgresql)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; CI=true: the database restart test must run")
        pytest.skip(message)
    folder = tempfile.mkdtemp(prefix="bullring-pg-")
    os.chmod(folder, 0o755)
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    cluster = PrivatePostgres(bin_dir, folder, _free_port())
    try:
        cluster._as_postgres(f"{bin_dir}/initdb", "-D", f"{folder}/data", "-A", "trust",
                             "-U", "postgres", "--no-sync")
        cluster.start()
        yield cluster
    finally:
        subprocess.run(["runuser", "-u", "postgres", "--"] * (os.geteuid() == 0) +
                       [f"{bin_dir}/pg_ctl", "-D", f"{folder}/data", "stop", "-m",
                        "immediate", "-w"], capture_output=True, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)
