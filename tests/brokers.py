"""The NATS server on 127.0.0.1:4222 that links the servers of fleet tests (``bullring serve
--broker``), as PostgreSQL on 127.0.0.1:5432 holds their database (``tests/databases.py``);
and a private NATS server for a test that kills and restarts its broker (the shared one is
never restarted: other tests and CI use it)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from bullring.server.workers import free_port
from tests.ladder_helpers import Lines

BROKER = "nats://127.0.0.1:4222"
"""The broker's URL."""
READY = "Server is ready"
"""What nats-server logs once it accepts connections."""
LINKED = re.compile(r"linked to the broker at \S+ as server (\S+)")
"""What a server logs once linked to its broker, with its instance id."""


def require_broker() -> str:
    """The broker's URL; the test is skipped when nothing listens there (failed under
    ``CI=true``, whose run starts the broker)."""
    try:
        socket.create_connection(("127.0.0.1", 4222), timeout=3).close()
    except OSError as exc:
        message = f"the NATS broker at 127.0.0.1:4222 is unreachable: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message} (CI=true: the broker is required)")
        pytest.skip(message)
    return BROKER


@dataclass
class PrivateBroker:
    """A ``nats-server`` of this test's own on a loopback port, which it may kill and start
    again on the same port."""

    program: str
    port: int
    proc: subprocess.Popen[str] | None = None
    log: Lines | None = None

    @property
    def url(self) -> str:
        """The broker's URL."""
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start it and wait until it accepts connections (its log says so)."""
        self.proc = subprocess.Popen([self.program, "-a", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        assert self.proc.stderr is not None
        self.log = Lines(self.proc.stderr)
        self.log.wait(lambda lines: any(READY in line for line in lines), 30,
                      f"nats-server to accept connections on port {self.port}")

    def kill(self) -> None:
        """kill -9 it and wait until it is gone."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=30)


@contextmanager
def private_broker() -> Iterator[PrivateBroker]:
    """A private NATS server on a free loopback port, started; killed afterwards. Skipped
    where ``nats-server`` is missing (failed under ``CI=true``)."""
    program = shutil.which("nats-server") or shutil.which("nats-server", path="/usr/sbin")
    if program is None:
        message = "nats-server is not installed (apt-get install nats-server)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; CI=true: the broker restart test must run")
        pytest.skip(message)
    broker = PrivateBroker(program, free_port("127.0.0.1"))
    broker.start()
    try:
        yield broker
    finally:
        if broker.proc is not None and broker.proc.poll() is None:
            broker.kill()
