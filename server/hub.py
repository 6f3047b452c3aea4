"""The hub: which matches are live in this process, and the tokens that reach their seats."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from server.match_runner import MatchRunner
from server.store import Store

log = logging.getLogger("bullring.hub")


class MatchOverError(LookupError):
    """The match a token names has already ended."""


class MatchHub:
    """Starts a runner for a stored match when its first bot joins, and stores its end."""

    def __init__(self, store: Store, start_timeout_s: float = 60.0) -> None:
        self.store = store
        self.start_timeout_s = start_timeout_s
        self.runners: dict[str, MatchRunner] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self._tokens: dict[str, tuple[str, int] | None] = {}
        self._lock = asyncio.Lock()

    async def seat_for_token(self, token: str) -> tuple[str, int] | None:
        """The (match id, seat) ``token`` plays, or None for an unknown token."""
        if token not in self._tokens:
            found = await asyncio.to_thread(self.store.seat_for_token, token)
            if found is None:
                return None  # not cached: a token may be created later by another process
            self._tokens[token] = found
        return self._tokens[token]

    async def runner(self, match_id: str) -> MatchRunner:
        """The live runner of ``match_id``, started on first use."""
        async with self._lock:
            runner = self.runners.get(match_id)
            if runner is not None:
                return runner
            config = await asyncio.to_thread(self.store.match_config, match_id)
            if config.status in ("finished", "aborted"):
                raise MatchOverError(f"match {match_id} is {config.status}")
            runner = MatchRunner(config, self._stored, self.start_timeout_s)
            self.runners[match_id] = runner
            await asyncio.to_thread(self.store.set_status, match_id, "running")
            self.tasks[match_id] = asyncio.create_task(runner.run(), name=f"match-{match_id}")
            return runner

    async def _stored(self, replay: dict[str, Any]) -> None:
        await asyncio.to_thread(self.store.finish_match, replay["match_id"], replay)
        log.info("match %s %s: totals %s", replay["match_id"], replay["termination"],
                 replay["totals"])

    async def abort(self, match_id: str) -> bool:
        """Abort ``match_id`` if it runs here (it is stored as aborted); False if it does not."""
        task = self.tasks.get(match_id)
        if task is None or task.done():
            return False
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return True

    async def shutdown(self) -> None:
        """Abort every match still running; each is stored as aborted."""
        running = [t for t in self.tasks.values() if not t.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
