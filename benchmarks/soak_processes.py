"""The soak's processes (benchmarks/soak.py): the server under test, whose memory it
samples, and the registered bots' processes, which it kills, stalls and starts again."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # after installed packages



CLI = [sys.executable, "-m", "bullring.server.cli"]
HOUSE = "random,greedy"
"""House bots the server plays, so tables still form while a bot is down."""
ENDED = re.compile(r"^match (\w+) ended: totals \[[^\]]*\] ranks \[([^\]]*)\] \((\w+)\)")


def utc_now() -> datetime:
    """Now, UTC (as the store stamps its rows)."""
    return datetime.now(UTC)



LAST_S = 20 * 60
"""The window the memory figure covers: how much the server's RSS grew over the soak's last
20 minutes (past its warm-up)."""


@dataclass
class Server:
    """``bullring serve`` with its log in a file; its stdout drained to another."""

    db: str
    folder: Path
    deadline_ms: int
    proc: subprocess.Popen[str] | None = None
    address: str = ""
    rss_kb: list[int] = field(default_factory=list)
    rss_at: list[float] = field(default_factory=list)
    """When each RSS sample was taken (monotonic seconds)."""

    @property
    def log(self) -> Path:
        """The server's stderr."""
        return self.folder / "server.log"

    def start(self) -> Server:
        """Start it and wait for the line saying where it listens."""
        settings = []
        for game in ("six_nimmt", "no_thanks"):
            settings += ["--ladder-setting", f"{game}:deadline_ms={self.deadline_ms}"]
        settings += ["--ladder-setting", "six_nimmt:rounds=1"]
        self.proc = subprocess.Popen(
            [*CLI, "serve", "--port", "0", "--db", self.db, "--ladder", "six_nimmt,no_thanks",
             *settings, "--house-bots", HOUSE, "--house-rest", "0.2", "--http-port", "-1"],
            stdout=subprocess.PIPE, stderr=self.log.open("w"), text=True, cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            raise RuntimeError(f"the server did not start: {line!r}; see {self.log}")
        self.address = line.split("listening on ")[1].split()[0]
        drain(self.proc.stdout, self.folder / "server.out")
        return self

    def sample_rss(self) -> None:
        """Remember the server's resident memory now."""
        assert self.proc is not None
        self.rss_kb.append(proc_status(self.proc.pid, "VmRSS"))
        self.rss_at.append(time.monotonic())

    def growth_kb(self, last_s: float) -> tuple[int, int]:
        """How much the RSS grew over the last ``last_s`` seconds of samples (last sample
        less the first one inside that window), and how many samples that window holds."""
        start = self.rss_at[-1] - last_s
        window = [kb for kb, at in zip(self.rss_kb, self.rss_at, strict=True) if at >= start]
        return window[-1] - window[0], len(window)

    def peak_rss_kb(self) -> int:
        """The server's peak resident memory so far (VmHWM)."""
        assert self.proc is not None
        return proc_status(self.proc.pid, "VmHWM")

    def stop(self) -> int:
        """SIGTERM it and wait; its exit status."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)


def proc_status(pid: int, key: str) -> int:
    """A kB figure from /proc/PID/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def drain(stream: IO[str], path: Path) -> None:
    """Copy ``stream`` into ``path`` in a thread, so the pipe never fills."""
    def copy() -> None:
        with path.open("a") as out:
            for line in stream:
                out.write(line)
                out.flush()
    threading.Thread(target=copy, daemon=True).start()


@dataclass
class Bot:
    """One registered bot and its current ``bullring bot --ladder`` process."""

    name: str
    game: str
    spec: str
    token: str
    folder: Path
    proc: subprocess.Popen[bytes] | None = None
    stopped: bool = False
    starts: int = 0
    exits: list[int] = field(default_factory=list)
    """Exit codes of processes that ended on their own (not killed by the driver)."""

    def start(self, address: str) -> None:
        """Start (again): output appends to the bot's files."""
        self.starts += 1
        out = (self.folder / f"{self.name}.out").open("ab")
        err = (self.folder / f"{self.name}.err").open("ab")
        self.proc = subprocess.Popen(
            [*CLI, "bot", "--server", address, "--token", self.token, "--ladder", self.game,
             "--give-up-after", "300", "--seed", str(self.starts), self.spec],
            stdout=out, stderr=err, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        out.close()
        err.close()

    def check(self, address: str) -> None:
        """Restart the process if it ended on its own, remembering its exit code."""
        if self.proc is not None and not self.stopped and self.proc.poll() is not None:
            self.exits.append(self.proc.returncode)
            self.start(address)

    def kill(self) -> None:
        """kill -9 and reap."""
        assert self.proc is not None
        if self.stopped:
            self.cont()
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        """SIGSTOP."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)
        self.stopped = True

    def cont(self) -> None:
        """SIGCONT."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)
        self.stopped = False

    def seen(self) -> dict[str, tuple[list[int], str]]:
        """Every match this bot's processes saw end: id -> (ranks, termination)."""
        seen = {}
        text = (self.folder / f"{self.name}.out").read_text(errors="replace")
        for line in text.splitlines():
            m = ENDED.match(line)
            if m:
                ranks = [int(r) for r in m.group(2).split(",") if r.strip()]
                seen[m.group(1)] = (ranks, m.group(3))
        return seen


