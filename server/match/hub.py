"""The hub: which matches are live in this process, and the tokens that reach their seats."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from bullring.contract import codec
from bullring.contract.messages import Ended, Event, Watched
from bullring.referee.core import RefereeError
from bullring.referee.registry import get_game
from bullring.referee.replay import ReplayError, public_events
from bullring.server.errors import DatabaseUnavailableError, GameMismatchError, MatchOverError
from bullring.server.match.archive import DEFAULT_CACHE_BYTES, Archive
from bullring.server.match.runner import MatchRunner
from bullring.server.match.tally import MatchTally
from bullring.server.store import MatchConfig, Store, UnknownMatchError
from bullring.server.store.models import BotRow

log = logging.getLogger("bullring.hub")

FINISHED_LINGER_S = 10.0
"""How long a seat-token match's runner stays after the match ended: a seat that reconnects
meanwhile still gets the end from it. Then it is dropped (a ladder's runner at once); the
store answers for the match from then on (its replay, its public events)."""

BOT_TOKEN_CACHE_S = 5.0
"""How long a bot token's lookup is reused. A bot whose token is rotated or who is disabled
is forgotten at once (``forget_bot``): by this server's admin calls, and by the ladder's
check of its connected bots for changes made elsewhere."""

REVOKED_KEPT_S = 60.0
"""How long a rotated token is remembered, so that its next call is told why it is refused."""


def game_refusal(game: str, games: Sequence[str], what: str) -> str | None:
    """Why a bot that plays ``games`` may not take ``what`` (a seat or a ladder place) of
    ``game``, naming both games; None if it may (an empty ``games`` plays any game)."""
    if not games or game in {_game_id(g) for g in games}:
        return None
    return f"this bot plays {', '.join(games)}, not {game}: {what}"


def _game_id(name: str) -> str:
    try:
        return get_game(name).id
    except RefereeError:
        return name


class MatchHub:
    """Starts a runner for a stored match when its first bot joins, and stores its end."""

    def __init__(self, store: Store, start_timeout_s: float = 60.0,
                 instance: str = "local", linger_s: float = FINISHED_LINGER_S,
                 cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.store = store
        self.archive = Archive(cache_bytes)
        """The encoded feeds and replays of ended matches, built once and shared."""
        self.linger_s = linger_s
        """How long a finished seat-token match's runner is kept (FINISHED_LINGER_S)."""
        self.start_timeout_s = start_timeout_s
        self.instance = instance
        """This server process's instance id, written on the matches it runs."""
        self.runners: dict[str, MatchRunner] = {}
        """The runners of the matches live here (and of those ended in the last linger)."""
        self.tasks: dict[str, asyncio.Task[None]] = {}
        """The task of each match still running here."""
        self._tokens: dict[str, tuple[str, int] | None] = {}
        self._bots: dict[str, tuple[float, BotRow]] = {}
        self._revoked: dict[str, tuple[float, str]] = {}
        """Recently rotated tokens seen here, with what their callers are told."""
        self._starting: dict[str, asyncio.Future[MatchRunner]] = {}
        """The matches whose runner is being started, by id: the seats that join meanwhile
        wait for that one start. Starts of different matches go on side by side (one lock
        for all of them held across their database calls made a join storm queue every
        match behind every earlier one: tens of seconds at 512 joining bots)."""
        self.unstored: dict[str, asyncio.Task[None]] = {}
        """Matches over whose end waits for the database to come back, by id."""
        self.tally = MatchTally()
        """What the matches run here have done (the server's metrics read it)."""

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

    def forget_bot(self, name: str, revoked: str | None = None) -> None:
        """Drop the cached lookups of bot ``name``'s tokens, so its next call reads the
        registry again; with ``revoked`` (its token was rotated) the tokens seen here are
        remembered for a while with that message (``refusal``)."""
        now = time.monotonic()
        for token in [t for t, (_, row) in self._bots.items() if row.name == name]:
            del self._bots[token]
            if revoked is not None:
                self._revoked[token] = (now, revoked)
        for token in [t for t, (at, _) in self._revoked.items() if now - at > REVOKED_KEPT_S]:
            del self._revoked[token]

    def refusal(self, token: str) -> str:
        """What a caller with an unknown ``token`` is told: why, if it was rotated lately."""
        revoked = self._revoked.get(token)
        return "unknown token" if revoked is None else revoked[1]

    async def game_of(self, match_id: str) -> str:
        """The game of ``match_id``, without starting its runner (UnknownMatchError)."""
        runner = self.runners.get(match_id)
        if runner is not None:
            return runner.config.game
        config = await asyncio.to_thread(self.store.match_config, match_id)
        return config.game

    async def identify(self, token: str) -> tuple[str, int] | BotRow | None:
        """What ``token`` names: a seat (match id, seat), a registered bot, or nothing."""
        if token.startswith("bot_"):
            return await self.bot_for_token(token)
        return await self.seat_for_token(token)

    async def runner(self, match_id: str) -> MatchRunner:
        """The live runner of ``match_id``, started on first use (once, however many seats
        join while it starts)."""
        runner = self.runners.get(match_id)
        if runner is not None:
            return runner
        starting = self._starting.get(match_id)
        if starting is None:
            starting = self._starting[match_id] = asyncio.ensure_future(self._start(match_id))
            starting.add_done_callback(lambda _: self._starting.pop(match_id, None))
        # Shielded: a seat whose call is cancelled does not cancel the start the others
        # wait for (the match is claimed once its start has begun).
        return await asyncio.shield(starting)

    async def _start(self, match_id: str) -> MatchRunner:
        """Read ``match_id``'s configuration, claim it for this server and start its
        runner."""
        config = await asyncio.to_thread(self.store.match_config, match_id)
        if config.status in ("finished", "aborted"):
            raise MatchOverError(f"match {match_id} is {config.status}")
        await asyncio.to_thread(self.store.claim_match, match_id, self.instance)
        runner = MatchRunner(config, self._stored, self.start_timeout_s, self.tally)
        self.runners[match_id] = runner
        self.tasks[match_id] = asyncio.create_task(self._run(runner), name=f"match-{match_id}")
        return runner

    async def seat_runner(self, match_id: str, seat: int, games: Sequence[str] = ()
                          ) -> MatchRunner:
        """The live runner of seat ``seat`` of ``match_id``, started on first use; refused
        (GameMismatchError) before it starts if the bot's ``games`` (empty: any) leave its
        game out."""
        if games:
            refusal = game_refusal(await self.game_of(match_id), games,
                                   f"seat {seat} of match {match_id} stays free")
            if refusal is not None:
                raise GameMismatchError(refusal)
        return await self.runner(match_id)

    async def _run(self, runner: MatchRunner) -> None:
        """Run a seat-token match; once it is over, drop its runner after ``linger_s``."""
        match_id = runner.config.match_id
        try:
            await runner.run()
        finally:
            self.tasks.pop(match_id, None)
            if self.linger_s > 0:
                asyncio.get_running_loop().call_later(self.linger_s, self._drop, match_id,
                                                      runner)
            else:
                self._drop(match_id, runner)

    def _drop(self, match_id: str, runner: MatchRunner) -> None:
        """Forget a finished match: its runner and its seats' cached tokens."""
        if self.runners.get(match_id) is runner:
            del self.runners[match_id]
        for token in [t for t, seat in self._tokens.items()
                      if seat is not None and seat[0] == match_id]:
            del self._tokens[token]

    async def ended(self, match_id: str) -> list[Watched] | None:
        """What a spectator of a match that ended (and is no longer live here) is sent: its
        public events from the stored replay, then its end; None if no replay is stored.
        Built once per match and shared by every reader
        (``archive``)."""
        if not 0 < len(match_id) <= 64 or "\x00" in match_id:
            return None  # no such id is stored (and PostgreSQL refuses NUL in a string)
        return await self.archive.get(("watch", match_id),
                                      lambda: asyncio.to_thread(self._watched, match_id))

    def _watched(self, match_id: str) -> list[Watched] | None:
        """The public messages of an ended match, re-played from its replay and encoded for
        gRPC once (a blocking call)."""
        try:
            replay = self.store.replay(match_id)
            events = public_events(replay)
        except (UnknownMatchError, ReplayError):
            return None
        messages: list[Watched] = [Event(e) for e in events]
        messages.append(Ended(tuple(replay["totals"]), tuple(replay["ranks"]),
                              replay["termination"]))
        for message in messages:
            codec.watch_bytes(message)  # here, in the worker thread, once for every reader
        return messages

    async def replay_json(self, match_id: str) -> bytes:
        """The stored replay of an ended match as its JSON text in UTF-8, read once per
        match and shared by every reader (UnknownMatchError without one)."""
        def read() -> bytes:
            return self.store.replay_text(match_id).encode()

        found = await self.archive.get(("replay", match_id), lambda: asyncio.to_thread(read))
        assert found is not None  # the store raises rather than answer None
        return found

    def start(self, config: MatchConfig, attach: Callable[[MatchRunner], None],
              after: Callable[[MatchRunner], Awaitable[None]]) -> MatchRunner:
        """Run a match already stored as running here (a ladder match): ``attach`` connects
        its seats before it starts; ``after`` runs once its end is stored."""
        runner = MatchRunner(config, self._stored, start_timeout_s=0.0, tally=self.tally)
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
        try:
            recorded = await asyncio.to_thread(self.store.finish_match, replay["match_id"],
                                               replay)
        except DatabaseUnavailableError:
            match_id = replay["match_id"]
            log.warning("match %s %s: not stored yet, the database is unavailable; it is "
                        "stored when the database is back (if this server stops first, it is "
                        "aborted at the next start)", match_id, replay["termination"])
            self.unstored[match_id] = asyncio.create_task(self._store_later(replay),
                                                          name=f"store-{match_id}")
            return
        log.info("match %s %s: totals %s%s", replay["match_id"], replay["termination"],
                 replay["totals"], "" if recorded else " (already recorded; not again)")

    async def _store_later(self, replay: dict[str, Any]) -> None:
        """Keep trying to store a match's end until the database is back (each try retries
        for the store's budget and logs its retries)."""
        match_id = replay["match_id"]
        try:
            while True:
                try:
                    recorded = await asyncio.to_thread(self.store.finish_match, match_id,
                                                       replay)
                except DatabaseUnavailableError:
                    await asyncio.sleep(self.store.retry.max_s)  # a pause even with no budget
                    continue
                log.info("match %s %s: stored now that the database is back%s", match_id,
                         replay["termination"],
                         "" if recorded else " (already recorded or aborted; not again)")
                return
        finally:
            self.unstored.pop(match_id, None)

    async def abort(self, match_id: str) -> bool:
        """Abort ``match_id`` if it runs here (it is stored as aborted); False if it does not."""
        task = self.tasks.get(match_id)
        if task is None or task.done():
            return False
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return True

    async def shutdown(self) -> None:
        """Abort every match still running; each is stored as aborted. A match whose end
        could not be stored yet stays running in the database: the next start aborts it."""
        running = [t for t in [*self.tasks.values(), *self.unstored.values()] if not t.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
