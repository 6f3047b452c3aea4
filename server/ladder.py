"""The ladder: registered bots wait on a game's queue and the server keeps seating them.

A bot joins with its token and ``Join(ladder=GAME)``; its stream stays open and carries one
match after another. Whenever bots are waiting, the matchmaker forms as many tables as it
can (table sizes per game), taking the least recently seated bots first so none starves;
house bots the server plays itself wait on the queues too. Seating claims each bot in the
database (``Store.seat_ladder_match``), so servers sharing a PostgreSQL database never seat
a bot twice; the result and the rating updates are stored in one transaction.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import psycopg

from client_sdk.generated.bullring.v2 import referee_pb2 as pb
from client_sdk.house import HOUSE_BOTS
from referee.core import RefereeError
from referee.registry import get_game
from server.db_retry import DatabaseUnavailableError
from server.hub import MatchHub, game_refusal
from server.instances import InstanceGuard
from server.match_runner import MatchRunner
from server.match_setup import fresh_seed
from server.models import BotRow
from server.outbox import Outbox, replaced
from server.store import (
    DEFAULT_CHALLENGE_EXPIRY_S,
    FREED_CHANNEL,
    HOUSE_PREFIX,
    Challenge,
    ChallengeError,
    MatchConfig,
    Store,
)
from server.tournaments import Tournaments

log = logging.getLogger("bullring.ladder")

_NEVER = datetime.min.replace(tzinfo=UTC)
RETRY_S = 0.5
"""How soon the matchmaker looks again after another server seated a bot it wanted."""
STOP_S = 10.0
"""How long stopping waits for a table being seated."""
BOT_CHECK_S = 0.5
"""How often the registry is read for the connected bots: a token rotated or a bot disabled
by another process (``bullring bots``, another server) ends its streams within this."""
FAIR_JITTER_S = 0.05
"""On PostgreSQL, once bots are freed (by this server or another, as the database tells
every server), each server waits a random moment of up to this before it forms tables: so
the server that ran the match has no head start, and every server seats its share."""
LISTEN_RETRY_S = 2.0
"""How soon listening for freed bots is tried again after the connection failed."""


@dataclass(frozen=True, slots=True)
class TableSize:
    """How many seats a ladder table of one game has: from ``minimum`` to ``maximum``."""

    minimum: int
    maximum: int

    @classmethod
    def parse(cls, text: str) -> TableSize:
        """``4-5`` or ``4``."""
        low, _, high = text.partition("-")
        try:
            size = cls(int(low), int(high or low))
        except ValueError:
            raise ValueError(f"a table size is N or MIN-MAX, not {text!r}") from None
        if not 2 <= size.minimum <= size.maximum:
            raise ValueError(f"a table size needs 2 <= MIN <= MAX, not {text!r}")
        return size


DEFAULT_TABLE_SIZES: dict[str, TableSize] = {"six_nimmt": TableSize(4, 5),
                                             "no_thanks": TableSize(4, 4)}
"""Table sizes used unless configured: 6 nimmt! 4-5 seats, No Thanks! 4."""


@dataclass(frozen=True, slots=True)
class LadderOptions:
    """Which ladders a server runs, their table sizes and settings, and its house bots."""

    games: tuple[str, ...] = ("six_nimmt", "no_thanks")
    table_sizes: Mapping[str, TableSize] = field(default_factory=dict)
    settings: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Match settings per game (``deadline_ms``, ``rounds``...)."""
    house_bots: tuple[str, ...] = ()
    """House bot kinds that wait on the ladders (``greedy``, ``random``, ...); a kind given
    twice is two bots."""
    house_rest_s: float = 1.0
    """How long a house bot rests after a match before it can be seated again."""
    sweep_s: float = 5.0
    """How often (PostgreSQL) the server looks for dead servers' matches to abort."""
    challenge_expiry_s: float = DEFAULT_CHALLENGE_EXPIRY_S
    """How long a challenge waits for its opponents' answers before it expires."""


class LadderError(Exception):
    """A ladder join that cannot be served; ``code`` is the gRPC status name to answer,
    ``slug`` the HTTP API's error code."""

    def __init__(self, code: str, message: str, slug: str) -> None:
        super().__init__(message)
        self.code = code
        self.slug = slug


def house_names(kinds: Sequence[str]) -> list[tuple[str, str]]:
    """Registered names for house bot kinds: ``greedy,random,random`` gives house-greedy,
    house-random, house-random-2."""
    seen: dict[str, int] = {}
    names = []
    for kind in kinds:
        if kind not in HOUSE_BOTS:
            raise ValueError(f"unknown house bot {kind!r}; known: {', '.join(HOUSE_BOTS)}")
        seen[kind] = seen.get(kind, 0) + 1
        names.append((f"house-{kind}" + (f"-{seen[kind]}" if seen[kind] > 1 else ""), kind))
    return names


def make_challenge(store: Store, bot: BotRow, game: str, opponents: Sequence[str],
                   games: Sequence[str], house: Mapping[str, str],
                   expiry_s: float = DEFAULT_CHALLENGE_EXPIRY_S) -> Challenge:
    """Check and store a challenge of ``bot`` at ``game`` (one of ``games``, the ladders
    run) against ``opponents``; ``house`` maps house bots' registered names to their kinds.
    Unanswered for ``expiry_s`` seconds, it expires."""
    if bot.house is not None:
        raise ChallengeError("PERMISSION_DENIED", f"{bot.name!r} is a house bot")
    if not bot.enabled:
        raise ChallengeError("PERMISSION_DENIED", f"bot {bot.name!r} is disabled")
    try:
        spec = get_game(game)
    except RefereeError as exc:
        raise ChallengeError("INVALID_ARGUMENT", str(exc)) from None
    if spec.id not in games:
        raise ChallengeError("FAILED_PRECONDITION",
                             f"this server runs ladders for {', '.join(games)}, not {spec.id}")
    seats = 1 + len(opponents)
    if not spec.min_seats <= seats <= spec.max_seats:
        raise ChallengeError("INVALID_ARGUMENT", f"{spec.id} seats {spec.min_seats}-"
                             f"{spec.max_seats}: name {spec.min_seats - 1}-"
                             f"{spec.max_seats - 1} opponents, not {len(opponents)}")
    named = []
    for name in opponents:
        if name in house:
            name = HOUSE_PREFIX + house[name]
        if name.startswith(HOUSE_PREFIX):
            kind = name[len(HOUSE_PREFIX):]
            if kind not in HOUSE_BOTS:
                raise ChallengeError("INVALID_ARGUMENT", f"unknown house bot {kind!r}; "
                                     f"known: {', '.join(HOUSE_BOTS)}")
            if spec.id not in HOUSE_BOTS[kind].games:
                raise ChallengeError("INVALID_ARGUMENT",
                                     f"house bot {kind!r} does not play {spec.id}")
        named.append(name)
    challenge = store.create_challenge(spec.id, bot.name, named, expiry_s)
    log.info("challenge %s (%s): %s against %s, %s", challenge.id, spec.id, bot.name,
             ", ".join(named), challenge.status)
    return challenge


def practice_seat_names(specs: Sequence[str]) -> list[str]:
    """Seat names for a challenge's seats: a bot's name, or ``house:KIND`` (``-2``... for a
    kind named again), which no registered bot can be named."""
    seen: dict[str, int] = {}
    names = []
    for spec in specs:
        seen[spec] = seen.get(spec, 0) + 1
        names.append(spec + (f"-{seen[spec]}" if seen[spec] > 1 else ""))
    return names


def plan_tables(waiting: int, size: TableSize) -> list[int]:
    """Table sizes seating as many of ``waiting`` bots as possible, as evenly as possible."""
    if waiting < size.minimum:
        return []
    tables = math.ceil(waiting / size.maximum)
    if tables * size.minimum > waiting:
        tables = waiting // size.minimum
    seated = min(waiting, tables * size.maximum)
    base, extra = divmod(seated, tables)
    return [base + (1 if t < extra else 0) for t in range(tables)]


@dataclass(eq=False)
class LadderSession:
    """One connected bot on a game's ladder: its stream's outbox and where it sits now."""

    bot: str
    game: str
    token_hash: str | None = None
    """The hash of the token it joined with: once the bot's token is another, it ends."""
    outbox: Outbox = field(default_factory=Outbox)
    seat: tuple[MatchRunner, int, int] | None = None
    """(runner, seat, connection) while it plays a match."""
    open: bool = True
    matches_left: int = 0
    """Matches this stream still plays before it is closed (Join.matches); 0: no limit."""


@dataclass(eq=False)
class _Waiter:
    name: str
    house: str | None
    last_seated: datetime


class Ladder:
    """The matchmaker and the ladder sessions of one server process."""

    def __init__(self, store: Store, hub: MatchHub, options: LadderOptions,
                 guard: InstanceGuard | None = None) -> None:
        self.store = store
        self.hub = hub
        self.guard = guard
        self.options = options
        self.sizes = {g: options.table_sizes.get(g, DEFAULT_TABLE_SIZES.get(g, TableSize(4, 4)))
                      for g in options.games}
        self.settings: dict[str, dict[str, Any]] = {}
        for game in options.games:
            spec = get_game(game)
            size = self.sizes[game]
            if size.minimum < spec.min_seats or size.maximum > spec.max_seats:
                raise ValueError(f"{game} tables seat {spec.min_seats}-{spec.max_seats}, "
                                 f"not {size.minimum}-{size.maximum}")
            state = spec.new_state(size.minimum, dict(options.settings.get(game, {})), 0)
            self.settings[game] = dict(state.settings)
        self.sessions: dict[str, LadderSession] = {}
        """The connected bots, by name."""
        self.seated: dict[str, tuple[MatchRunner, int]] = {}
        """Bots playing a match on this server, by name (kept while they reconnect)."""
        self.house: dict[str, _Waiter] = {}
        self._house_games: dict[str, tuple[str, ...]] = {}
        self._resting: set[str] = set()
        self._last: dict[str, datetime] = {}
        self._seatings: dict[str, int] = {}
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._random = random.Random()
        self._retry_due = False
        self._last_table: dict[str, float] = {}
        self._stopping = False
        self.tournaments = Tournaments(store, self.settings, hub.instance, self.poke)
        """The live tournaments this ladder seats between its matches."""

    async def start(self) -> None:
        """Register the house bots and start the matchmaker."""
        for name, kind in house_names(self.options.house_bots):
            await asyncio.to_thread(self.store.ensure_house_bot, name, kind)
            row = await asyncio.to_thread(self.store.bot, name)
            self.house[name] = _Waiter(name, kind, row.last_seated_at or _NEVER)
            self._house_games[name] = tuple(g for g in self.options.games
                                            if get_game(g).id in HOUSE_BOTS[kind].games)
        self._tasks.append(asyncio.create_task(self._matchmaker(), name="ladder-matchmaker"))
        self._tasks.append(asyncio.create_task(self._check_bots(), name="ladder-bot-check"))
        if self.store.engine.dialect.name == "postgresql":
            self._tasks.append(asyncio.create_task(self._sweeper(), name="ladder-sweeper"))
            self._tasks.append(asyncio.create_task(self._listen(), name="ladder-listen"))
        self.poke()

    async def stop(self) -> None:
        """Stop forming matches (a table being seated is seated and started, so the hub's
        shutdown aborts it as it does every match) and close every ladder stream."""
        self._stopping = True
        self.poke()
        matchmaker = self._tasks[0] if self._tasks else None
        others = self._tasks[1:]
        for task in others:
            task.cancel()
        if matchmaker is not None:
            try:
                await asyncio.wait_for(matchmaker, STOP_S)
            except TimeoutError:
                log.warning("the matchmaker did not stop within %s s", STOP_S)
        await asyncio.gather(*others, return_exceptions=True)
        for session in list(self.sessions.values()):
            self._close(session)

    def poke(self) -> None:
        """Ask the matchmaker to look at the queues again."""
        self._wake.set()

    # -- sessions --------------------------------------------------------------------------

    def join(self, bot: BotRow, game: str, matches: int = 0, games: Sequence[str] = (),
             via: str = "") -> LadderSession:
        """Connect ``bot`` to ``game``'s ladder (taking back the seat it holds in a live
        match here); its older stream, if any, ends with Closed(REPLACED) naming ``via``
        (this connection's transport and peer). Refused (UNAVAILABLE) once stopping, and
        before anything changes if the bot's ``games`` (empty: any) leave ``game`` out.
        With ``matches`` > 0 the stream plays that many matches (the one it takes back
        counts) and is closed after the last one ends, never seated again."""
        game_id = self.check(bot, game, games)
        old = self.sessions.get(bot.name)
        session = LadderSession(bot.name, game_id, bot.token_hash, matches_left=max(0, matches))
        self.sessions[bot.name] = session
        if old is not None:
            old.open = False
            old.outbox.end(replaced(via))
            log.info("bot %s: its older connection was replaced (%s)", bot.name, via)
        self._last.setdefault(bot.name, bot.last_seated_at or _NEVER)
        seated = self.seated.get(bot.name)
        if seated is not None:
            runner, seat = seated
            _, connection = runner.attach(seat, session.outbox)
            session.seat = (runner, seat, connection)
            log.info("bot %s is back in match %s", bot.name, runner.config.match_id)
        else:
            log.info("bot %s joined the %s ladder", bot.name, game_id)
            notice = self.shortfall(game_id)
            if notice:
                log.warning("%s", notice)
            session.outbox.put_message(pb.PlayResponse(
                ladder_queued=pb.LadderQueued(game=game_id, bot=bot.name, notice=notice)))
            self.poke()
        return session

    def check(self, bot: BotRow, game: str, games: Sequence[str] = ()) -> str:
        """The id of ``game`` if ``bot`` (playing ``games``; empty: any) may join its ladder
        here; else LadderError saying why."""
        if self._stopping:  # its stream would only be cut off when the grace period ends
            raise LadderError("UNAVAILABLE", "the server is shutting down; connect again soon",
                              "shutting_down")
        if not game:
            raise LadderError("INVALID_ARGUMENT", "a bot token plays the ladder: send Join with "
                                                  "ladder set to a game, such as 'six_nimmt'",
                              "ladder_required")
        if not bot.enabled:
            raise LadderError("PERMISSION_DENIED", f"bot {bot.name!r} is disabled", "bot_disabled")
        if bot.house is not None:
            raise LadderError("PERMISSION_DENIED", f"{bot.name!r} is a house bot", "house_bot")
        try:
            game_id = get_game(game).id
        except RefereeError as exc:
            raise LadderError("INVALID_ARGUMENT", str(exc), "unknown_game") from None
        if game_id not in self.settings:
            raise LadderError("FAILED_PRECONDITION", f"this server runs ladders for "
                                                     f"{', '.join(self.settings)}, not {game_id}",
                              "no_such_ladder")
        refusal = game_refusal(game_id, games, f"bot {bot.name!r} was not queued on the "
                                               f"{game_id} ladder")
        if refusal is not None:
            raise LadderError("FAILED_PRECONDITION", refusal, "game_mismatch")
        return game_id

    def players(self, game: str) -> tuple[int, int]:
        """Who may sit at ``game``'s tables: (house bots that play it, registered bots
        connected to its ladder), resting or playing ones included."""
        house = sum(game in self._house_games.get(name, ()) for name in self.house)
        connected = sum(s.game == game and s.open for s in self.sessions.values())
        return house, connected

    def shortfall(self, game: str) -> str:
        """Why ``game``'s ladder cannot fill a table now, or "" when it can."""
        house, connected = self.players(game)
        need = self.sizes[game].minimum
        if house + connected >= need:
            return ""
        return (f"the {game} ladder cannot fill a table: it needs {need} bots and has "
                f"{house + connected} ({house} house bots, {connected} connected); bots wait "
                f"until {need - house - connected} more join")

    def house_report(self) -> str:
        """Which ladders the house bots fill on their own, and which need bots to join."""
        parts = []
        for game, size in self.sizes.items():
            house, _ = self.players(game)
            if house >= size.minimum:
                parts.append(f"{game}: house bots fill its tables ({house} of "
                             f"{size.minimum} needed)")
            else:
                parts.append(f"{game}: needs {size.minimum - house} more bots to join "
                             f"({house} house bots of {size.minimum} needed)")
        return "; ".join(parts)

    def leave(self, session: LadderSession) -> None:
        """The stream of ``session`` ended: it no longer waits; a seat it holds goes on
        without it until it reconnects."""
        session.open = False
        if self.sessions.get(session.bot) is session:
            del self.sessions[session.bot]
        if session.seat is not None:
            runner, seat, connection = session.seat
            runner.detach(seat, connection, session.outbox.why_ended("stream closed"))
            session.seat = None

    def target(self, bot: str) -> tuple[MatchRunner, int] | None:
        """Where ``bot``'s answers go now: its live match and seat here, if any."""
        return self.seated.get(bot)

    def revoke(self, name: str, reason: pb.CloseReason) -> None:
        """Bot ``name``'s token was rotated (TOKEN_REVOKED) or it was disabled
        (BOT_DISABLED): end its stream at once with that reason (its seat in a live match
        goes on with default actions) and forget its cached token."""
        if reason == pb.CLOSE_REASON_TOKEN_REVOKED:
            message = f"the token of bot {name!r} was rotated; it plays no more"
        else:
            message = f"bot {name!r} was disabled; it is seated no more"
        self.hub.forget_bot(name, message if reason == pb.CLOSE_REASON_TOKEN_REVOKED else None)
        session = self.sessions.get(name)
        if session is None:
            return
        session.outbox.end(pb.Closed(reason=reason, message=message))
        self.leave(session)
        log.info("bot %s: its stream was ended: %s", name, message)

    def _close(self, session: LadderSession) -> None:
        session.open = False
        session.outbox.put_nowait(None)

    # -- matchmaking -----------------------------------------------------------------------

    async def _matchmaker(self) -> None:
        while not self._stopping:
            await self._wake.wait()
            self._wake.clear()
            # House bots play several games: the game that formed a table longest ago first.
            for game in sorted(self.settings, key=lambda g: self._last_table.get(g, 0.0)):
                try:
                    await self._form(game)
                except asyncio.CancelledError:
                    raise
                except DatabaseUnavailableError:
                    log.warning("forming %s tables: the database is unavailable; trying "
                                "again soon", game)
                    self._retry()
                except Exception:
                    log.exception("forming %s tables failed; trying again on the next change",
                                  game)

    async def _sweeper(self) -> None:
        """Abort the matches of servers that died (PostgreSQL: their lock is gone)."""
        while True:
            await asyncio.sleep(self.options.sweep_s)
            if self.guard is None:
                continue
            try:
                await asyncio.to_thread(self.guard.check)
                aborted = await asyncio.to_thread(self.store.abort_orphans, self.hub.instance,
                                                  self.guard.is_alive)
            except DatabaseUnavailableError as exc:
                log.warning("looking for dead servers' matches: %s; trying again in %s s",
                            exc, self.options.sweep_s)
                continue
            if aborted:
                log.warning("aborted %d matches of a server that is gone", len(aborted))
                self.poke()

    async def _check_bots(self) -> None:
        """End the streams of connected bots whose token was rotated, or who were disabled,
        by anyone (this server's admin calls end them at once themselves)."""
        while True:
            await asyncio.sleep(BOT_CHECK_S)
            names = [s.bot for s in self.sessions.values() if s.open]
            if not names:
                continue
            try:
                found = await asyncio.to_thread(self.store.bot_states, names)
            except DatabaseUnavailableError:
                continue  # looked at again on the next check
            for name in names:
                session = self.sessions.get(name)
                if session is None or not session.open:
                    continue
                token_hash, enabled = found.get(name, (None, False))
                if token_hash != session.token_hash:
                    self.revoke(name, pb.CLOSE_REASON_TOKEN_REVOKED)
                elif not enabled:
                    self.revoke(name, pb.CLOSE_REASON_BOT_DISABLED)

    async def _listen(self) -> None:
        """Wake the matchmaker whenever any server frees bots (PostgreSQL LISTEN on the
        store's ``FREED_CHANNEL``), after a random moment (``FAIR_JITTER_S``)."""
        url = self.store.listen_url()
        assert url is not None
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {FREED_CHANNEL}")
                    self._fair_poke()  # bots freed while this was not listening
                    async for _ in conn.notifies():
                        self._fair_poke()
            except psycopg.Error as exc:
                log.warning("listening for freed bots: %s; again in %s s", exc,
                            LISTEN_RETRY_S)
                await asyncio.sleep(LISTEN_RETRY_S)

    def _fair_poke(self) -> None:
        """Poke the matchmaker after a random moment of up to ``FAIR_JITTER_S``."""
        asyncio.get_running_loop().call_later(self._random.uniform(0, FAIR_JITTER_S),
                                              self.poke)

    def _waiting(self, game: str) -> list[_Waiter]:
        waiting = [_Waiter(s.bot, None, self._last.get(s.bot, _NEVER))
                   for s in self.sessions.values()
                   if s.game == game and s.open and s.bot not in self.seated]
        waiting += [w for w in self.house.values()
                    if game in self._house_games[w.name] and w.name not in self.seated
                    and w.name not in self._resting]
        return waiting

    async def _form(self, game: str) -> None:
        await self._seat_tournaments(game)
        await self._seat_challenges(game)
        size = self.sizes[game]
        waiting = self._waiting(game)
        if len(waiting) < size.minimum:
            return
        free = await asyncio.to_thread(self.store.free_bots, [w.name for w in waiting])
        waiting = self._waiting(game)
        if any(w.name not in free for w in waiting):
            self._retry()  # seated by another server: look again soon
        waiting = [w for w in waiting if w.name in free]
        self._random.shuffle(waiting)
        # Least recently seated first; among equals, who played least here; else at random.
        waiting.sort(key=lambda w: (w.last_seated, self._seatings.get(w.name, 0)))
        for count in plan_tables(len(waiting), size):
            if self._stopping:
                return
            table, waiting = waiting[:count], waiting[count:]
            self._random.shuffle(table)
            await self._seat(game, table)

    async def _seat(self, game: str, table: list[_Waiter]) -> None:
        names = [w.name for w in table]
        seed = fresh_seed()  # not from self._random: published seeds would reveal its state
        settings = self.settings[game]
        tokens = {s.bot: s.token_hash for s in self.sessions.values()
                  if s.bot in names and s.token_hash is not None}
        match_id = await asyncio.to_thread(self.store.seat_ladder_match, game, settings, seed,
                                           names, self.hub.instance, tokens)
        if match_id is None:
            log.info("could not claim %s (seated elsewhere meanwhile); trying again soon",
                     names)
            self._retry()
            return
        now = datetime.now(UTC)
        for name in names:
            self._last[name] = now
            self._seatings[name] = self._seatings.get(name, 0) + 1
            if name in self.house:
                self.house[name].last_seated = now
        self._start(MatchConfig(match_id, game, dict(settings), seed, tuple(names),
                                {s: w.house for s, w in enumerate(table) if w.house},
                                "running", rated=True), names)
        log.info("ladder match %s (%s): %s", match_id, game, ", ".join(names))

    def _start(self, config: MatchConfig, bots: Sequence[str]) -> None:
        """Start a stored match here, attaching the streams of its registered ``bots``."""
        def attach(runner: MatchRunner) -> None:
            for seat, name in enumerate(config.seat_names):
                if name not in bots:
                    continue  # a practice match's house seat
                self.seated[name] = (runner, seat)
                session = self.sessions.get(name)
                if session is not None and session.open and name not in self.house:
                    _, connection = runner.attach(seat, session.outbox)
                    session.seat = (runner, seat, connection)

        self._last_table[config.game] = asyncio.get_running_loop().time()
        self.hub.start(config, attach, self._after)

    # -- practice matches and challenges ---------------------------------------------------

    def challenge(self, bot: BotRow, game: str, opponents: Sequence[str]) -> Challenge:
        """Check a challenge of ``bot`` at ``game`` against ``opponents`` (``house:KIND`` or
        registered bots, in seat order after it) and store it (a blocking call). It is
        seated, unrated, once accepted and once its registered bots wait on the ladder."""
        house = {name: str(w.house) for name, w in self.house.items()}
        return make_challenge(self.store, bot, game, opponents, tuple(self.settings), house,
                              self.options.challenge_expiry_s)

    def answered(self) -> None:
        """A challenge was accepted: seat it as soon as its bots wait (this server pokes;
        others on PostgreSQL are told by the database)."""
        if self.store.sqlite:
            self.poke()

    async def _seat_challenges(self, game: str) -> None:
        """Seat the accepted challenges of ``game`` whose registered bots all wait here."""
        waiting = {s.bot for s in self.sessions.values()
                   if s.game == game and s.open and s.bot not in self.seated}
        if not waiting:
            return
        for challenge in await asyncio.to_thread(self.store.ready_challenges, game):
            if self._stopping:
                return
            if not all(b in waiting and b not in self.seated for b in challenge.bots):
                continue
            seed = fresh_seed()
            settings = self.settings[game]
            specs = (challenge.challenger, *challenge.opponents)
            names = practice_seat_names(specs)
            match_id = await asyncio.to_thread(self.store.seat_challenge, challenge, settings,
                                               seed, names, self.hub.instance)
            if match_id is None:
                continue  # seated by another server, or a bot plays elsewhere: freed later
            house = {seat: spec[len(HOUSE_PREFIX):] for seat, spec in enumerate(specs)
                     if spec.startswith(HOUSE_PREFIX)}
            self._start(MatchConfig(match_id, game, dict(settings), seed, tuple(names), house,
                                    "running", rated=False), challenge.bots)
            log.info("practice match %s (%s) of challenge %s: %s", match_id, game,
                     challenge.id, ", ".join(names))

    async def _seat_tournaments(self, game: str) -> None:
        """Seat the next game of each live tournament of ``game`` whose bots wait here."""
        waiting = {s.bot for s in self.sessions.values()
                   if s.game == game and s.open and s.bot not in self.seated}
        loop = asyncio.get_running_loop()
        started, again = await asyncio.to_thread(self.tournaments.seat, game, waiting,
                                                 set(self.seated), loop.time())
        for config in started:
            self._start(config, config.seat_names)
        if again is not None:
            loop.call_later(again, self.poke)

    async def _after(self, runner: MatchRunner) -> None:
        """A ladder match is over and stored: its bots wait again (house bots after a rest)."""
        for name in runner.config.seat_names:
            if self.seated.get(name, (None, 0))[0] is runner:
                del self.seated[name]
            session = self.sessions.get(name)
            if session is not None and session.seat is not None and session.seat[0] is runner:
                session.seat = None
                if session.matches_left:
                    session.matches_left -= 1
                    if not session.matches_left:  # its MatchEnded is in the outbox already
                        session.open = False
                        session.outbox.end(pb.Closed(
                            reason=pb.CLOSE_REASON_MATCHES_PLAYED,
                            message=f"the {session.game} matches this connection asked for "
                                    f"have been played"))
                if session.open:  # it waits for its next match on the same connection
                    session.outbox.put_message(pb.PlayResponse(
                        ladder_queued=pb.LadderQueued(game=session.game, bot=name)))
            if name in self.house and self.options.house_rest_s > 0:
                self._resting.add(name)
                asyncio.get_running_loop().call_later(self.options.house_rest_s,
                                                      self._rested, name)
        await asyncio.to_thread(self.tournaments.ended, runner)
        if self.store.sqlite:
            self.poke()
        else:
            self._fair_poke()  # as every other server does, told by the database

    def _retry(self) -> None:
        if not self._retry_due:
            self._retry_due = True
            asyncio.get_running_loop().call_later(RETRY_S, self._retried)

    def _retried(self) -> None:
        self._retry_due = False
        self.poke()

    def _rested(self, name: str) -> None:
        self._resting.discard(name)
        self.poke()
