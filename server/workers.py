"""One server on every core: ``bullring serve --workers N`` runs N processes of the server on
one address, as one server.

One ``bullring serve`` is one Python process, which uses one core. With ``--workers N`` the
command becomes a supervisor: it picks the ports (a free one for port 0), then starts N
worker processes of ``bullring serve`` with the same options, each listening on the same
gRPC and HTTP ports (``SO_REUSEPORT``: the kernel spreads the connections over them). The
workers are servers of one fleet (docs/operations.md): they share the database, which must
be PostgreSQL; with ``--broker`` they run one ladder, without it each seats the bots
connected to it. A worker that dies is started again; a worker that cannot start (a
database away, a bad option) ends the whole command with its status. SIGTERM or Ctrl-C
stops every worker (each finishes as ``bullring serve`` does) and then the supervisor.
"""

from __future__ import annotations

import logging
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from types import FrameType

log = logging.getLogger("bullring.workers")

QUICK_EXIT_S = 10.0
"""A worker that exits with an error status sooner than this after its start failed to
start (a database away, a bad option): the supervisor stops rather than start it again and
again. One killed by a signal is started again whenever it dies."""
RESTART_PAUSE_S = 1.0
"""The pause before a worker that died after running a while is started again."""
STOP_GRACE_S = 15.0
"""How long the workers have to finish after being told to stop, before they are killed."""


def free_port(host: str) -> int:
    """A port free on ``host`` now, for every worker to share."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def worker_command(argv: Sequence[str], index: int, port: int, http_port: int | None
                   ) -> list[str]:
    """The command line of worker ``index``: the supervisor's own ``bullring serve``
    arguments, then (options given last win) one worker, the shared ports and its index."""
    http = ["--http-port", str(-1 if http_port is None else http_port)]
    return [sys.executable, "-m", "bullring.server.cli", *argv, "--workers", "1",
            "--port", str(port), *http, "--worker", str(index)]


class Supervisor:
    """Starts the workers, starts again one that dies, stops them all on a signal."""

    def __init__(self, argv: Sequence[str], workers: int, host: str, port: int,
                 http_port: int | None) -> None:
        self.argv = list(argv)
        self.workers = workers
        self.port = port or free_port(host)
        self.http_port = None if http_port is None else (http_port or free_port(host))
        self.processes: dict[int, tuple[subprocess.Popen[bytes], float]] = {}
        """Each worker's process and when (monotonic seconds) it was started."""
        self.stopping = False

    def _start(self, index: int) -> None:
        command = worker_command(self.argv, index, self.port, self.http_port)
        self.processes[index] = (subprocess.Popen(command), time.monotonic())

    def _stop(self, signum: int, _frame: FrameType | None) -> None:
        self.stopping = True
        for process, _ in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)

    def run(self) -> int:
        """Run the workers until told to stop (0) or one fails to start (its status)."""
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        http = "off" if self.http_port is None else str(self.http_port)
        log.info("starting %d workers on gRPC port %d, HTTP port %s", self.workers,
                 self.port, http)
        for index in range(self.workers):
            self._start(index)
        status = 0
        while self.processes:
            for index, (process, started) in list(self.processes.items()):
                code = process.poll()
                if code is None:
                    continue
                del self.processes[index]
                if self.stopping:
                    continue
                if code > 0 and time.monotonic() - started < QUICK_EXIT_S:
                    log.error("worker %d ended at its start (status %d): stopping all",
                              index, code)
                    status = code or 1
                    self._stop(signal.SIGTERM, None)
                    continue
                log.warning("worker %d ended (status %d); starting it again", index, code)
                time.sleep(RESTART_PAUSE_S)
                self._start(index)
            if self.stopping:
                self._reap()
                break
            time.sleep(0.2)
        return status

    def _reap(self) -> None:
        """Wait for the workers told to stop; kill those that outlast ``STOP_GRACE_S``."""
        deadline = time.monotonic() + STOP_GRACE_S
        for process, _ in self.processes.values():
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes.clear()


__all__ = ["Supervisor", "free_port", "worker_command"]
