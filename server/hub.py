"""The hub: which matches are live in this process, and the tokens that reach their seats."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from server.match_runner import MatchRunner
from server.models import BotRow
from server.store import MatchConfig, Store

log = logging.getLogger("bullring.hub")

BOT_TOKEN_CACHE_S = 5.0
"""How long a bot token's lookup is reused (a rotated or disabled bot is refused within this)."""


class MatchOverError(LookupError):
    """The match a token names has already ended."""


class MatchHub:
    """Starts a runner for a stored match when its first bot joins, and stores its end."""

    def __init__(self, store: Store, start_timeout_s: float = 60.0,
                 instance: str = "local") -> None:
        self.store = store
        self.start_timeout_s = start_timeout_s
        self.instance = instance
        """This server process's instance id, written on the matches it runs."""
        self.runners: dict[str, MatchRunner] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self._tokens: dict[str, tuple[str, int] | None] = {}
        self._bots: dict[str, tuple[float, BotRow]] = {}
        self._lock = asyncio.Lock()

    async def seat_for_token(self, token: str) -> tuple[str, int] | None:
        """The (match id, seat) ``token`` plays, or None for an unknown token."""
        if token not in self._tokens:
            found = await asyncio.to_thread(self.store.seat_for_token, token)
            if found is None:
                return None  # not cached: a token may be created later by another process
            self._tokens[token] = found
        return self._tokens[token]

    async def bot_for_token(self, token: str, fresh: bool = False) -> BotRow | None:
        """The registered bot ``token`` belongs to, or None; looked up again after a few
        seconds, or now when ``fresh``."""
        cached = self._bots.get(token)
        if not fresh and cached is not None and \
                time.monotonic() - cached[0] < BOT_TOKEN_CACHE_S:
            return cached[1]
        found = await asyncio.to_thread(self.store.bot_for_token, token)
        if found is None:
            self._bots.pop(token, None)
            return None
        self._bots[token] = (time.monotonic(), found)
        return found

    async def identify(self, token: str) -> tuple[str, int] | BotRow | None:
        """What ``token`` names: a seat (match id, seat), a registered bot, or nothing."""
        if token.startswith("bot_"):
            return await self.bot_for_token(token)
        return await self.seat_for_token(token)

    async def runner(self, match_id: str) -> MatchRunner:
        """The live runner of ``match_id``, started on first use."""
        async with self._lock:
            runner = self.runners.get(match_id)
            if runner is not None:
                return runner
            config = await asyncio.to_thread(self.store.match_config, match_id)
            if config.status in ("finished", "aborted"):
                raise MatchOverError(f"match {match_id} is {config.status}")
            await asyncio.to_thread(self.store.claim_match, match_id, self.instance)
            runner = MatchRunner(config, self._stored, self.start_timeout_s)
            self.runners[match_id] = runner
            self.tasks[match_id] = asyncio.create_task(runner.run(), name=f"match-{match_id}")
            return runner

    def start(self, config: MatchConfig, attach: Callable[[MatchRunner], None],
              after: Callable[[MatchRunner], Awaitable[None]]) -> MatchRunner:
        """Run a match already stored as running here (a ladder match): ``attach`` connects
        its seats before it starts; ``after`` runs once its end is stored."""
        runner = MatchRunner(config, self._stored, start_timeout_s=0.0)
        self.runners[config.match_id] = runner
        attach(runner)

        async def run() -> None:
            try:
                await runner.run()
            finally:
                self.runners.pop(config.match_id, None)
                self.tasks.pop(config.match_id, None)
                await after(runner)

        self.tasks[config.match_id] = asyncio.create_task(run(), name=f"match-{config.match_id}")
        return runner

    async def _stored(self, replay: dict[str, Any]) -> None:
        recorded = await asyncio.to_thread(self.store.finish_match, replay["match_id"], replay)
        log.info("match %s %s: totals %s%s", replay["match_id"], replay["termination"],
                 replay["totals"], "" if recorded else " (already recorded; not again)")

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
        running = [t for t in list(self.tasks.values()) if not t.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
