"""Helpers for end-to-end tests: a real server process and real bot processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from bullring.server.store import Store

CLI = [sys.executable, "-m", "bullring.server.cli"]
"""The ``bullring`` command, run with this interpreter."""


@dataclass
class Match:
    """A created match: its id and a token (or None for a house seat) per seat."""

    match_id: str
    tokens: list[str | None]


@dataclass
class ServerProcess:
    """A ``bullring serve`` process on a loopback port of its own."""

    db: str
    extra: list[str] = field(default_factory=list)
    proc: subprocess.Popen[str] | None = None
    address: str = ""
    http: str = ""
    """The HTTP API and web page's base URL, such as ``http://127.0.0.1:8123``."""
    files: int | None = None
    """The open-file limit to run it under (``ulimit -n``), if not the test's own."""
    admin_file: Path | None = None
    """Where it writes its first admin token: its default beside a SQLite database file,
    else ``--admin-token-file`` in a temporary folder of its own (never the working one)."""
    _log: str | None = field(default=None, repr=False)
    """What it logged, once stopped."""
    output: str = ""
    """What it printed to standard output after its first two lines, once stopped (but
    lines a test read itself)."""
    banner: list[str] = field(default_factory=list)
    """Its first two lines of standard output: where it listens, gRPC then HTTP."""
    cwd: Path | None = None
    """The folder it runs in (default: the test's own)."""

    def command(self) -> list[str]:
        """The command that starts it: ``bullring serve`` on free ports, on ``db``, with
        ``extra``; the admin token goes to ``admin_file``."""
        from bullring.server.app import admin_token_path

        extra = self.extra
        if self.admin_file is None:
            self.admin_file = admin_token_path(self.db)
            if not self.admin_file.is_absolute():
                folder = Path(tempfile.mkdtemp(prefix="bullring-admin-"))
                self.admin_file = folder / self.admin_file.name
        if "--admin-token-file" not in extra and self.admin_file != admin_token_path(self.db):
            extra = [*extra, "--admin-token-file", str(self.admin_file)]
        return [*self._limited(), *CLI, "serve", "--port", "0", "--http-port", "0",
                "--db", self.db, *extra]

    def start(self) -> ServerProcess:
        """Start the server and wait for the line that says where it listens."""
        self._log = None
        self.proc = subprocess.Popen(
            self.command(), cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert self.proc.stdout is not None and self.proc.stderr is not None
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            raise RuntimeError(f"server did not start: {line!r} {self.proc.stderr.read()!r}")
        self.address = line.split("listening on ")[1].split()[0]
        self.banner = [line.rstrip("\n")]
        line = self.proc.stdout.readline()
        if "HTTP API on " not in line:
            self.proc.kill()
            raise RuntimeError(f"server HTTP did not start: {line!r}")
        self.http = line.split("HTTP API on ")[1].split()[0].rstrip("/")
        self.banner.append(line.rstrip("\n"))
        return self

    def _limited(self) -> list[str]:
        """The command's prefix that sets its open-file limit, if one is asked for: util-linux's
        ``prlimit``, not a ``preexec_fn``, which would make Python fork (running gRPC's fork
        handlers while this process's gRPC threads are busy: the child once aborted before it
        could exec)."""
        return [] if self.files is None else ["prlimit", f"--nofile={self.files}", "--"]

    def stop(self) -> str:
        """SIGTERM the server, wait for it, return what it logged (again if called again)."""
        assert self.proc is not None
        if self._log is None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
            # stdout is read through its text buffer (readline read ahead into it), which
            # communicate() would skip: in a thread, while communicate() reads the log.
            stdout, self.proc.stdout = self.proc.stdout, None
            rest: list[str] = []
            reader = threading.Thread(target=lambda: rest.append(stdout.read() if stdout
                                                                 else ""), daemon=True)
            reader.start()
            _, self._log = self.proc.communicate(timeout=30)
            reader.join(30)
            self.output = "".join(rest)
        return self._log

    def kill(self) -> None:
        """kill -9 the server."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=30)

    def create_match(self, game: str, seats: int, *args: str) -> Match:
        """Run ``bullring match create`` against this server's database (made first if the
        server has not started yet: only ``bullring serve`` creates a database)."""
        Store(self.db).engine.dispose()
        out = subprocess.run([*CLI, "match", "create", "--game", game, "--seats", str(seats),
                              "--db", self.db, *args], check=True, capture_output=True,
                             text=True).stdout.splitlines()
        match_id = out[0].split()[1]
        tokens = [line.split()[3] if " token " in line else None for line in out[1:]]
        return Match(match_id, tokens)

    def bot(self, token: str | None, bot: str, *args: str) -> subprocess.Popen[str]:
        """Start ``bullring bot`` for one seat as a separate process."""
        assert token is not None
        return subprocess.Popen([*CLI, "bot", "--server", self.address, "--token", token,
                                 *args, bot], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)

    def first_admin_token(self) -> str:
        """The admin token the server wrote at its first start (to ``admin_file``)."""
        assert self.admin_file is not None
        return self.admin_file.read_text(encoding="utf-8").strip()

    def admin_token(self) -> str:
        """A fresh admin token for this server's database (``bullring admin rotate-token``)."""
        out = subprocess.run([*CLI, "admin", "rotate-token", "--db", self.db], check=True,
                             capture_output=True, text=True).stdout
        return out.strip().splitlines()[-1]

    def replay(self, match_id: str) -> str:
        """``bullring replay export MATCH_ID`` output."""
        return subprocess.run([*CLI, "replay", "export", match_id, "--db", self.db],
                              check=True, capture_output=True, text=True).stdout


def finish(procs: list[subprocess.Popen[str]], timeout: float = 120) -> list[tuple[int, str]]:
    """Wait for every process to exit; return (exit code, stdout) of each."""
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        results.append((proc.returncode, out + err))
    return results


def db_url(folder: Path) -> str:
    """A fresh SQLite database URL in ``folder``."""
    return f"sqlite:///{folder / 'bullring.db'}"
