"""Ctrl-C ends ``bullring bot --ladder`` while it waits on the ladder, whichever of its
threads the signal lands on: a real ``bullring serve`` and a real runner process."""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ladder_helpers import LadderBot, LadderServer
from tests.serving import db_url

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="picks a thread through /proc and tgkill")


def _other_threads(pid: int) -> list[int]:
    """The ids of ``pid``'s threads that Python started (they share the main thread's
    name: the bot's thread, gRPC's poller), but the main thread: long-lived ones."""
    tasks = Path(f"/proc/{pid}/task")
    name = (tasks / str(pid) / "comm").read_text()
    found = []
    for tid in sorted(int(t.name) for t in tasks.iterdir() if t.name != str(pid)):
        try:
            if (tasks / str(tid) / "comm").read_text() == name:
                found.append(tid)
        except OSError:  # it ended meanwhile
            continue
    return found


def _interrupt_another_thread(pid: int) -> int:
    """Send SIGINT to one of ``pid``'s threads other than the main one, as the kernel may
    when it delivers a Ctrl-C to a process; return that thread's id."""
    libc = ctypes.CDLL(None, use_errno=True)
    for tid in _other_threads(pid):
        if libc.tgkill(pid, tid, signal.SIGINT) == 0:
            return tid
        if ctypes.get_errno() != errno.ESRCH:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    raise AssertionError(f"process {pid} has no thread but its main one")


@pytest.mark.parametrize("taker", ["main thread", "another thread"])
def test_ctrl_c_ends_a_runner_waiting_on_the_ladder(
        taker: str, tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """A bot alone on a ladder with no house bots waits, and the server sends it nothing
    more: its runner's event loop sleeps. A SIGINT sent to the process (which its main
    thread takes while it sleeps), or one that another of its threads takes (the kernel
    gives a process's signal to any thread that does not block it), wakes the loop: the
    runner says ``interrupted`` and exits 130."""
    server = LadderServer(db_url(tmp_path)).start()
    stop_all.append(server)
    bot = LadderBot.start("alone", server.address, server.add_bot("alone"), "six_nimmt",
                          "house:random")
    stop_all.append(bot)
    bot.err.wait(lambda lines: any("waiting on the six_nimmt ladder as alone" in line
                                   for line in lines), 60, "the runner to wait on the ladder")
    if taker == "main thread":
        bot.proc.send_signal(signal.SIGINT)
    else:
        taker = f"thread {_interrupt_another_thread(bot.proc.pid)}"
    try:
        code = bot.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"SIGINT taken by the {taker} did not end the runner in 30 s; "
                             f"its stderr ends:\n{bot.err.text()[-2000:]}") from None
    assert code == 130, bot.err.text()[-2000:]
    bot.err.wait(lambda lines: bool(lines) and lines[-1] == "", 10, "the end of stderr")
    assert "bullring bot: interrupted\n" in bot.err.lines, bot.err.text()[-2000:]
