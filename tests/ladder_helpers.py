"""Helpers for ladder end-to-end tests: a server whose log is read as it comes, and
``bullring bot --ladder`` processes whose output is followed line by line."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from tests.serving import CLI, ServerProcess

if TYPE_CHECKING:
    from bullring.server.store import Store

ENDED = re.compile(r"^match (\w+) ended: totals \[[^\]]*\] ranks \[[^\]]*\] \((\w+)\)")
YOU = re.compile(r"; you \(seat (\d+)\): total (-?\d+), rank (\d+)$")
"""The end of a match's line that marks the bot's own seat, its total and its rank."""
STARTED = re.compile(r"match (\w+) started: ")


ACTIVITY = threading.Condition()
"""Notified whenever any followed process writes a line."""


def wait_until(ready: Callable[[], bool], timeout: float, what: str) -> None:
    """Block until ``ready()`` holds, checking it whenever a followed process writes."""
    deadline = time.monotonic() + timeout
    with ACTIVITY:
        while not ready():
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            ACTIVITY.wait(left)


class Lines:
    """The lines a stream has produced so far, with a way to wait for one that matters."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: list[str] = []
        self._changed = ACTIVITY
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self.lines.append("")  # EOF
            self._changed.notify_all()

    def wait(self, ready: Callable[[list[str]], bool], timeout: float, what: str) -> None:
        """Block until ``ready(lines)`` holds (checked on every new line)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not ready(self.lines):
                left = deadline - time.monotonic()
                if left <= 0 or (self.lines and self.lines[-1] == ""):
                    if ready(self.lines):
                        return
                    raise AssertionError(f"timed out waiting for {what}; last lines: "
                                         f"{''.join(self.lines[-15:])}")
                self._changed.wait(left)

    def finish(self, timeout: float = 10) -> None:
        """Wait until the stream's end has been read (its process exited): ``text`` then
        holds every line, not only those read so far."""
        self._thread.join(timeout)

    def text(self) -> str:
        """Everything so far."""
        with self._changed:
            return "".join(self.lines)


@dataclass
class LadderServer(ServerProcess):
    """``bullring serve`` whose stderr is drained as it comes (a ladder logs a lot)."""

    log: Lines | None = None
    _store: Store | None = None

    def start(self) -> LadderServer:
        """Start, wait until it listens, then follow its log."""
        super().start()
        assert self.proc is not None and self.proc.stderr is not None
        self.log = Lines(self.proc.stderr)
        return self

    def stop(self) -> str:
        """SIGTERM it, wait, return its log."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)
        if self.log is None:
            return ""
        self.log.finish()
        return self.log.text()

    def add_bot(self, name: str) -> str:
        """Register a bot in this server's database (as ``bullring bots add`` does, without
        a process per bot); return its token."""
        from bullring.server.store import Store

        if self._store is None:
            self._store = Store(self.db)
        return self._store.add_bot(name, owner="tests")


@dataclass
class LadderBot:
    """One ``bullring bot --ladder`` process, its results followed line by line."""

    name: str
    proc: subprocess.Popen[str]
    out: Lines
    err: Lines
    ended: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def start(cls, name: str, address: str, token: str, game: str, spec: str,
              *args: str) -> LadderBot:
        """Start the process, with ``-v``: its log says when each match starts
        (``started``), which a run without it keeps to itself."""
        proc = subprocess.Popen([*CLI, "bot", "--server", address, "--token", token,
                                 "--ladder", game, "--give-up-after", "60", "-v", *args, spec],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert proc.stdout is not None and proc.stderr is not None
        return cls(name, proc, Lines(proc.stdout), Lines(proc.stderr))

    def matches(self) -> list[tuple[str, str]]:
        """(match id, termination) of every match it saw end."""
        return [(m.group(1), m.group(2)) for line in list(self.out.lines)
                if (m := ENDED.match(line))]

    def line_of(self, match_id: str) -> str:
        """The one line it printed at ``match_id``'s end."""
        [line] = [line for line in list(self.out.lines)
                  if (m := ENDED.match(line)) and m.group(1) == match_id]
        return line.rstrip("\n")

    def started(self) -> list[str]:
        """Ids of every match it was seated in."""
        return [m.group(1) for line in list(self.err.lines) if (m := STARTED.search(line))]

    def stop(self) -> None:
        """SIGTERM (or kill) the process."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def all_match_ids(bots: list[LadderBot]) -> set[str]:
    """Every match id any of ``bots`` saw end."""
    return {match_id for bot in bots for match_id, _ in bot.matches()}


def wait_for_matches(bots: list[LadderBot], count: int, timeout: float,
                     exclude: frozenset[str] = frozenset()) -> None:
    """Block until ``bots`` together saw ``count`` matches (not in ``exclude``) end."""
    wait_until(lambda: len(all_match_ids(bots) - exclude) >= count, timeout,
               f"{count} matches to end")
