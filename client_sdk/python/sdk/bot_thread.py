"""The thread a bot runs in: every call into the bot, in order, one at a time, away from
the event loop that keeps the connection."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any


class BotThread:
    """One daemon thread that runs every call into the bot, in order, one at a time.

    A bot that overruns its deadline keeps running here while the runner moves on, but it is
    never called twice at once, and being a daemon it cannot keep the process alive.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[
            tuple[Callable[[], Any], asyncio.Future[Any], asyncio.AbstractEventLoop] | None
        ] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="bullring-bot", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[[], Any]) -> asyncio.Future[Any]:
        """Queue ``fn``; the future is its result. Cancelling it skips ``fn`` if not begun."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._jobs.put((fn, future, loop))
        return future

    def close(self) -> None:
        """Let the thread end after the calls already queued."""
        self._jobs.put(None)

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, future, loop = job
            if future.cancelled():
                continue
            try:
                outcome: tuple[bool, Any] = (True, fn())
            except BaseException as e:
                outcome = (False, e)
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(_settle, future, outcome)


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
