"""The ladder: registered bots wait on a game's queue and the server keeps seating them.

Whenever bots are waiting, the matchmaker forms as many tables as it can (table sizes per
game), taking the least recently seated bots first so none starves; house bots the server
plays itself wait on the queues too. Seating claims each bot in the database
(``Store.seat_ladder_match``), so servers sharing a PostgreSQL database never seat a bot
twice, and those servers take turns at the tables they all can seat
(``bullring.server.store.turns``); the result and the rating updates are stored in one transaction.
With a broker (``bullring serve --broker``), the servers of a fleet share their bots: a
server's queue holds the free bots that the other servers it hears have connected, its
tables mix them with its own, and the seats of bots connected elsewhere are relayed to the
match here (``bullring.server.fleet.relay``), as this server's bots are relayed to matches
elsewhere. The connected bots' streams are kept by ``bullring.server.ladder.sessions``; table
sizes, options and challenge checks are in ``bullring.server.ladder.rules``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import random
from collections.abc import Sequence
from datetime import UTC, datetime

import psycopg

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.contract.messages import Closed, Queued
from bullring.referee.registry import get_game
from bullring.sdk.house import HOUSE_BOTS
from bullring.server.errors import DatabaseUnavailableError
from bullring.server.fleet.relay import Relay, RelayedSeat
from bullring.server.ladder.rules import (
    LadderOptions,
    TableSize,
    house_names,
    make_challenge,
    plan_tables,
    practice_seat_names,
)
from bullring.server.ladder.sessions import NEVER, LadderSession, LadderSessions, Waiter
from bullring.server.match.hub import MatchHub
from bullring.server.match.runner import MatchRunner
from bullring.server.match.setup import fresh_seed
from bullring.server.quotas import MatchCaps
from bullring.server.store import FREED_CHANNEL, HOUSE_PREFIX, Challenge, MatchConfig, Store
from bullring.server.store.base import CHALLENGE, SEATED, TOURNAMENT, Notice
from bullring.server.store.instances import InstanceGuard
from bullring.server.store.models import BotRow
from bullring.server.store.turns import TURN_GRACE_S, LadderTurns, TurnElsewhereError
from bullring.server.tournaments.live import Tournaments

__all__ = ["Ladder", "LadderOptions", "LadderSession",
           "TableSize", "house_names", "make_challenge", "plan_tables"]

log = logging.getLogger("bullring.ladder")

RETRY_S = 0.5
"""How soon the matchmaker looks again after another server seated a bot it wanted."""
STOP_S = 10.0
"""How long stopping waits for a table being seated."""
BOT_CHECK_S = 0.5
"""How often the registry is read for the connected bots: a token rotated or a bot disabled
by another process (``bullring bots``, another server) ends its streams within this."""
LISTEN_RETRY_S = 2.0
"""How soon listening for freed bots is tried again after the connection failed."""
SWEEP_SOON_S = 1.0
"""The least time between two looks for dead servers' matches. A bot that waits here while
the database says it still plays elsewhere asks for a look at once (its server may have
died and the bot come here): it is seated again within about this long, not a whole
``LadderOptions.sweep_s``."""
BY_SERVER = 0.4
"""With a broker: the share of deals that seat the bots of one server at the same tables
(who is seated is settled first, least recently seated first); the others deal at random.
A table of one server's bots is that server's turn, and relays no seat, where a relayed
seat costs the two servers more CPU than a seat on the match's server; the random deals
keep every bot meeting every other, and most tables mixing bots of several servers."""
REGROUP_S = 1.0
"""With a broker: how long the bots of a table that ended wait alone for another table to
end, to be seated with its bots, while other bots play (``Ladder._regrouping``)."""


class Ladder(LadderSessions):
    """The matchmaker and the ladder sessions of one server process."""

    def __init__(self, store: Store, hub: MatchHub, options: LadderOptions,
                 guard: InstanceGuard | None = None, relay: Relay | None = None) -> None:
        super().__init__(hub, options)
        self.store = store
        self.guard = guard
        self.relay = relay
        """The link to the fleet's broker, if this server relays seats (PostgreSQL)."""
        if relay is not None:
            relay.keeper = self
        self.turns = LadderTurns(store, hub.instance)
        """This server's part in the turns of servers sharing a PostgreSQL database."""
        self._resting: set[str] = set()
        self._seatings: dict[str, int] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._random = random.Random()
        self._retry_due = False
        self._last_table: dict[str, float] = {}
        self._published: dict[str, set[str]] = {}
        self._left_since: dict[str, float] = {}
        """Per game: since when this server leaves a table to the server whose turn it is."""
        self._sweep_soon = asyncio.Event()
        """Set when a bot waiting here is held by a match elsewhere: look for dead servers'
        matches without waiting for the next sweep."""
        self._looks: dict[tuple[str, str], asyncio.TimerHandle] = {}
        """The later looks at a game's queue that a hold or a table left to another server
        asked for, by reason and game (``_look_later``): each is cancelled once not needed,
        so it does not wake the matchmaker for nothing."""
        self._regroup: dict[str, tuple[datetime, float]] = {}
        """Per game, with a broker: the seating of the one table whose bots wait alone, and
        since when they wait for another table to end (``_regrouping``)."""
        self._owed: set[str] = set()
        """Bots whose last match here was a challenge they were named in: their next match
        is a rated one if a rated table can seat them (``_seat_challenges``)."""
        self._challenged: dict[tuple[str, str], int] = {}
        """(named bot, challenger): the challenge matches seated here between them; the
        challenger who played a named bot least goes first."""
        self.tournaments = Tournaments(store, self.settings, hub.instance, self.poke,
                                       options.max_tournament_games)
        """The live tournaments this ladder seats between its matches."""
        self._relaying: set[asyncio.Task[None]] = set()
        """Writes of whether this server relays seats now (its link came and went)."""
        self._listening = False
        """True while this server hears every notice on ``FREED_CHANNEL`` (PostgreSQL)."""
        self._changes = 0
        """Counts the notices of challenges and tournaments heard (and the times listening
        began or ended): a read that one came during is not taken as quiet."""
        self._quiet_tournaments: set[str] = set()
        """Games with no live tournament when last read, and none created since (while
        listening): their tournaments are not read again until a tournament is created."""
        self._quiet_challenges: set[str] = set()
        """Games with no accepted challenge waiting when last read, and none accepted since
        (while listening): not read again until a challenge is accepted."""

    async def start(self) -> None:
        """Register the house bots, take part in the turns, start the matchmaker."""
        for name, kind in house_names(self.options.house_bots):
            await asyncio.to_thread(self.store.ensure_house_bot, name, kind)
            row = await asyncio.to_thread(self.store.bot, name)
            self.house[name] = Waiter(name, kind, row.last_seated_at or NEVER)
            self._house_games[name] = tuple(g for g in self.options.games
                                            if get_game(g).id in HOUSE_BOTS[kind].games)
        await asyncio.to_thread(self.turns.register, self.settings,
                                self.relay is not None and self.relay.up)
        self._tasks.append(asyncio.create_task(self._matchmaker(), name="ladder-matchmaker"))
        self._tasks.append(asyncio.create_task(self._check_bots(), name="ladder-bot-check"))
        if self.turns.shared:
            self._tasks.append(asyncio.create_task(self._sweeper(), name="ladder-sweeper"))
            self._tasks.append(asyncio.create_task(self._listen(), name="ladder-listen"))
        self.poke()

    async def stop(self) -> None:
        """Stop forming matches (a table being seated is seated and started, so the hub's
        shutdown aborts it as it does every match), leave the turns and close every ladder
        stream."""
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
        try:
            await asyncio.to_thread(self.turns.forget)
        except DatabaseUnavailableError as exc:  # the sweeper of another server does it
            log.warning("leaving the ladder turns: %s", exc)
        for session in [*self.sessions.values(), *self.practising.values()]:
            self._close(session)

    # -- matchmaking -----------------------------------------------------------------------

    async def _matchmaker(self) -> None:
        while not self._stopping:
            await self._wake.wait()
            self._wake.clear()
            due, self._due = self._due, set()
            # House bots play several games: the game that formed a table longest ago first.
            for game in sorted(due, key=lambda g: self._last_table.get(g, 0.0)):
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
        """Abort the matches of servers that died (PostgreSQL: their lock is gone): every
        ``sweep_s``, and sooner (``SWEEP_SOON_S`` after the last look) when a waiting bot is
        held by a match elsewhere."""
        soon = min(SWEEP_SOON_S, self.options.sweep_s)
        while True:
            await asyncio.sleep(soon)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._sweep_soon.wait(), self.options.sweep_s - soon)
            self._sweep_soon.clear()
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
            try:
                gone = await asyncio.to_thread(self.turns.forget_dead, self.guard.is_alive)
            except DatabaseUnavailableError:
                continue  # looked at again on the next sweep
            if gone:
                log.warning("servers %s are gone: they take no more turns", ", ".join(gone))
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
        """Wake the matchmaker when another server frees bots or seats a table, when a
        challenge is accepted or a tournament created (PostgreSQL LISTEN on
        ``FREED_CHANNEL``), for the games each notice concerns (``_heard``)."""
        url = self.store.listen_url()
        assert url is not None
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {FREED_CHANNEL}")
                    self._listening = True
                    self._forget_quiet()
                    self.poke()  # bots freed while this was not listening
                    async for notify in conn.notifies():
                        self._heard(Notice.parse(notify.payload))
            except psycopg.Error as exc:
                log.warning("listening for freed bots: %s; again in %s s", exc,
                            LISTEN_RETRY_S)
            finally:
                self._listening = False
                self._forget_quiet()
            await asyncio.sleep(LISTEN_RETRY_S)

    def _heard(self, notice: Notice) -> None:
        """Look again at the queues that ``notice`` may change: none for a change this
        server made itself (it looks again by itself), a game whose table another server
        seated only while this one leaves a table of it to another (its turn may have come:
        a seating frees no bot), every game for a challenge, a tournament or a notice not
        understood (they are read again too)."""
        if notice.kind in ("", CHALLENGE, TOURNAMENT):
            self._forget_quiet()
            self.poke()
            return
        if notice.instance == self.hub.instance:
            return
        if not notice.game:
            self.poke()
        elif notice.game in self.settings and (notice.kind != SEATED
                                               or notice.game in self._left_since):
            self.poke(notice.game)

    def _forget_quiet(self) -> None:
        """Read every game's live tournaments and accepted challenges again on its next
        look (they may have changed unheard)."""
        self._changes += 1
        self._quiet_tournaments.clear()
        self._quiet_challenges.clear()

    def _waiting(self, game: str) -> list[Waiter]:
        waiting = [Waiter(s.bot, None, self._last.get(s.bot, NEVER))
                   for s in self.rated_streams(game) if s.bot not in self.seated]
        waiting += [w for w in self.house.values()
                    if game in self._house_games[w.name] and w.name not in self.seated
                    and w.name not in self._resting]
        return waiting

    async def _publish(self, game: str) -> None:
        """Tell the servers sharing the database which bots this one can seat on ``game``'s
        ladder, when that changed: its turn comes only at tables it can seat."""
        present = {s.bot for s in self.rated_streams(game)}
        present.update(n for n in self.house if game in self._house_games[n])
        if self.turns.shared and present != self._published.get(game):
            await asyncio.to_thread(self.turns.publish, game, present)
            self._published[game] = present

    async def _form(self, game: str) -> None:
        """Seat what waits on ``game``'s ladder: live tournaments' games first, then the
        accepted challenges whose named bots owe no rated match, then rated tables, then
        the challenges left waiting for a bot no rated table took."""
        await self._publish(game)
        await self._seat_tournaments(game)
        deferred = await self._seat_challenges(game, defer_owed=True)
        await self._form_rated(game)
        if deferred and not self._stopping:
            await self._seat_challenges(game, defer_owed=False)

    async def _form_rated(self, game: str) -> None:
        """Seat as many rated tables of ``game`` as its waiting bots fill (with a broker,
        the free bots of the other servers it hears too)."""
        size = self.sizes[game]
        if self.relay is not None and self.relay.up:
            waiting = await self._fleet_waiting(game, self.relay)
        else:
            waiting = self._waiting(game)
            if len(waiting) < size.minimum:
                self._stop_leaving(game)  # no table to leave to another server now
                return
            free = await asyncio.to_thread(self.store.free_bots, [w.name for w in waiting])
            waiting = self._waiting(game)
            if any(w.name not in free for w in waiting):
                self._retry()  # seated by another server: look again soon
                self._sweep_soon.set()  # or by one that died: its matches are aborted soon
            waiting = [w for w in waiting if w.name in free]
        fleet = self.relay is not None and self.relay.up
        deal = self._fleet_deal(waiting) if fleet else self._random
        deal.shuffle(waiting)
        # Least recently seated first; among equals, who played least here (not in a fleet,
        # whose servers deal alike); else at random.
        waiting.sort(key=lambda w: (w.last_seated, 0 if fleet else
                                    self._seatings.get(w.name, 0)))
        tables = plan_tables(len(waiting), size)
        if not tables:
            self._stop_leaving(game)
        # Who is seated is settled (least recently seated first); they are dealt to the
        # tables at random, so bots that sat at one table are not kept together.
        dealt = waiting[:sum(tables)]
        deal.shuffle(dealt)
        if fleet and deal.random() < BY_SERVER:
            # The bots of one server to the same tables: a relayed seat costs both servers.
            servers = sorted({self._where(w) for w in dealt})
            deal.shuffle(servers)
            dealt.sort(key=lambda w: servers.index(self._where(w)))
        for count in tables:
            if self._stopping:
                return
            table, dealt = dealt[:count], dealt[count:]
            if not await self._seat(game, table) and not fleet:
                return  # the next table is another server's turn too: it looks itself

    @staticmethod
    def _fleet_deal(waiting: list[Waiter]) -> random.Random:
        """The random order in which the bots ``waiting`` in a fleet are dealt: the same on
        every server that sees the same bots waiting (seeded by their names and when each
        was last seated), so that each server seats the tables the fleet's turns give it
        (a table is the turn of a server one of its bots is connected to) and leaves the
        others to theirs, which deal them alike. Sorts ``waiting`` by name: the order the
        deal's shuffle starts from, the same on every server."""
        waiting.sort(key=lambda w: w.name)
        held = "\n".join(f"{w.name} {w.last_seated.isoformat()}" for w in waiting)
        return random.Random(hashlib.sha256(held.encode()).digest())

    def _where(self, waiter: Waiter) -> str:
        """The server ``waiter`` is connected to (this one's instance id for its own)."""
        return waiter.server or self.hub.instance

    async def _fleet_waiting(self, game: str, relay: Relay) -> list[Waiter]:
        """The bots waiting for ``game``'s tables in the fleet: this server's own that are
        free, and the free bots that the servers it hears have connected (each with the
        server it is connected to), all with when the database says they were last seated
        (other servers seat this server's bots too). None while they are the bots of one
        table that just ended and others play (``_regrouping``)."""
        here = self._waiting(game)
        found = await asyncio.to_thread(self.turns.seatable, game, [w.name for w in here],
                                        relay.heard())
        local = {w.name: w for w in self._waiting(game)}
        waiting = []
        playing = any(s.bot in self.seated for s in self.rated_streams(game)) or \
            any(name in self.seated for name in self.house if game in self._house_games[name])
        for name, (server, seated_at, free) in found.items():
            last = NEVER if seated_at is None else seated_at
            if not free:
                playing = True
            elif name in local:
                waiting.append(Waiter(name, local[name].house, last))
            elif server is not None and name not in self.seated and name not in self.sessions:
                waiting.append(Waiter(name, None, last, server))
        if any(name not in found for name in local):
            self._retry()  # seated by another server: look again soon
            self._sweep_soon.set()  # or by one that died: its matches are aborted soon
        if playing and self._regrouping(game, waiting):
            return []
        return waiting

    def _regrouping(self, game: str, waiting: list[Waiter]) -> bool:
        """True while the bots ``waiting`` are those of one table that ended (one last
        seating, not their first) and other bots play, for up to ``REGROUP_S``: they wait
        for another table to end and are seated with its bots. Else a table that ends
        is seated again as it was, whenever it ends alone, and a fleet's bots would keep
        playing the bots of their own server they were first seated with."""
        seatings = {w.last_seated for w in waiting}
        if len(seatings) != 1 or NEVER in seatings or \
                len(waiting) < self.sizes[game].minimum:
            self._regroup.pop(game, None)
            self._cancel_look("regroup", game)
            return False
        loop = asyncio.get_running_loop()
        seating = seatings.pop()
        held = self._regroup.get(game)
        if held is None or held[0] != seating:
            self._regroup[game] = (seating, loop.time())
            self._look_later("regroup", game, REGROUP_S)
            return True
        return loop.time() - held[1] < REGROUP_S

    async def _seat(self, game: str, table: list[Waiter]) -> bool:
        """Seat ``table``; False when it is another server's turn (``bullring.server.store.turns``),
        which is given ``TURN_GRACE_S`` to take it before this server seats it itself."""
        names = [w.name for w in table]
        seed = fresh_seed()  # not from self._random: published seeds would reveal its state
        settings = self.settings[game]
        tokens = {s.bot: s.token_hash for s in self.sessions.values()
                  if s.bot in names and s.token_hash is not None}
        loop = asyncio.get_running_loop()
        since = self._left_since.get(game)
        defer = since is None or loop.time() - since < TURN_GRACE_S
        try:
            if defer:
                self._held_elsewhere(game, table)
            match_id = await asyncio.to_thread(self.store.seat_ladder_match, game, settings,
                                               seed, names, self.hub.instance, tokens, defer)
        except TurnElsewhereError as exc:
            if since is None:
                self._left_since[game] = loop.time()
                self._look_later("turn", game, TURN_GRACE_S)
            log.debug("%s; leaving it %s", exc, names)
            return False
        self._stop_leaving(game)
        if match_id is None:
            log.info("could not claim %s (seated elsewhere meanwhile); trying again soon",
                     names)
            self._retry()
            return True
        now = datetime.now(UTC)
        for name in names:
            self._last[name] = now
            self._seatings[name] = self._seatings.get(name, 0) + 1
            self._owed.discard(name)
            if name in self.house:
                self.house[name].last_seated = now
        remote = {w.name: w.server for w in table if w.server is not None}
        self._start(MatchConfig(match_id, game, dict(settings), seed, tuple(names),
                                {s: w.house for s, w in enumerate(table) if w.house},
                                "running", rated=True), names, remote)
        log.info("ladder match %s (%s): %s%s", match_id, game, ", ".join(names),
                 "".join(f"; {name} on server {server}" for name, server in remote.items()))
        return True

    def _held_elsewhere(self, game: str, table: list[Waiter]) -> None:
        """TurnElsewhereError if none of ``table``'s bots is connected to this server: the
        table is the turn of a server one of them is connected to, whatever else the
        database says, so this server leaves it without asking
        (``bullring.server.store.turns``)."""
        if all(w.server is not None for w in table):
            raise TurnElsewhereError(str(table[0].server), game)

    def _start(self, config: MatchConfig, bots: Sequence[str],
               remote: dict[str, str] | None = None) -> None:
        """Start a stored match here, attaching the streams of its registered ``bots``
        (relayed from the servers ``remote`` names for the bots connected there)."""
        def attach(runner: MatchRunner) -> None:
            for seat, name in enumerate(config.seat_names):
                if name not in bots:
                    continue  # a practice match's house seat
                self.seated[name] = (runner, seat)
                session = self.connection_for(name, runner)
                server = (remote or {}).get(name)
                if session is None and server is not None and self.relay is not None:
                    self.relay.relay(runner, seat, name, server)
                elif session is not None and name not in self.house:
                    _, connection = runner.attach(seat, session.outbox)
                    session.seat = (runner, seat, connection)

        self._last_table[config.game] = asyncio.get_running_loop().time()
        self.hub.start(config, attach, self._after)

    # -- practice matches and challenges ---------------------------------------------------

    def challenge(self, bot: BotRow, game: str, opponents: Sequence[str],
                  open_limit: int = 0, caps: MatchCaps | None = None) -> Challenge:
        """Check a challenge of ``bot`` at ``game`` against ``opponents`` (``house:KIND`` or
        registered bots, in seat order after it; a table within ``caps``) and store it (a
        blocking call), unless ``bot`` has ``open_limit`` challenges waiting already. It is
        seated, unrated, once accepted and once its registered bots wait on the ladder."""
        house = {name: str(w.house) for name, w in self.house.items()}
        return make_challenge(self.store, bot, game, opponents, tuple(self.settings), house,
                              self.options.challenge_expiry_s, open_limit, caps)

    def answered(self) -> None:
        """A challenge was accepted: seat it as soon as its bots wait (this server pokes;
        others on PostgreSQL are told by the database)."""
        if self.store.sqlite:
            self.poke()

    async def _seat_challenges(self, game: str, defer_owed: bool) -> bool:
        """Seat the accepted challenges of ``game`` whose registered bots all wait here;
        True if one was left for now because a bot it names owes a rated match
        (``defer_owed``).

        The share of challenges (the rule): a bot named in a challenge (not its challenger)
        that played a challenge as its last match here owes a rated match, and is seated in
        no other challenge while a rated table can take it, so challenges take at most half
        of the matches of a bot that also waits for rated play, however many accepted
        challenges name it. Among the ready challenges, those whose challenger played the
        named bots least go first (then the oldest), so one challenger's many challenges
        cannot keep another's waiting."""
        waiting = {s.bot for s in self.connected()
                   if s.game == game and s.bot not in self.seated}
        if not waiting or game in self._quiet_challenges:
            return False
        changes = self._changes
        ready = await asyncio.to_thread(self.store.ready_challenges, game)
        if not ready and self._listening and changes == self._changes:
            self._quiet_challenges.add(game)
        ready.sort(key=lambda c: max((self._challenged.get((b, c.challenger), 0)
                                      for b in c.bots[1:]), default=0))
        deferred = False
        for challenge in ready:
            if self._stopping:
                return deferred
            if not all(b in waiting and b not in self.seated for b in challenge.bots):
                continue
            named = challenge.bots[1:]
            if defer_owed and any(b in self._owed for b in named):
                deferred = True
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
            for name in named:
                self._owed.add(name)
                pair = (name, challenge.challenger)
                self._challenged[pair] = self._challenged.get(pair, 0) + 1
            log.info("practice match %s (%s) of challenge %s: %s", match_id, game,
                     challenge.id, ", ".join(names))
        return deferred

    async def _seat_tournaments(self, game: str) -> None:
        """Seat the next game of each live tournament of ``game`` whose bots wait here."""
        waiting = {s.bot for s in self.connected()
                   if s.game == game and s.bot not in self.seated}
        if game in self._quiet_tournaments:
            return
        loop = asyncio.get_running_loop()
        changes = self._changes
        started, again, live = await asyncio.to_thread(self.tournaments.seat, game, waiting,
                                                       set(self.seated), loop.time())
        if not live and self._listening and changes == self._changes:
            self._quiet_tournaments.add(game)
        for config in started:
            self._start(config, config.seat_names)
        if again is not None:
            loop.call_later(again, self.poke)

    async def _after(self, runner: MatchRunner) -> None:
        """A ladder match is over and stored: its bots wait again (house bots after a rest)."""
        for name in runner.config.seat_names:
            if self.seated.get(name, (None, 0))[0] is runner:
                del self.seated[name]
            for session in self.streams_of(name):
                if session.seat is not None and session.seat[0] is runner:
                    self._free(session, name)
            if name in self.house and self.options.house_rest_s > 0:
                self._resting.add(name)
                asyncio.get_running_loop().call_later(self.options.house_rest_s,
                                                      self._rested, name)
        if self.relay is not None:
            self.relay.match_over(runner.config.match_id)
        await asyncio.to_thread(self.tournaments.ended, runner)
        self.poke()  # which server seats the freed bots is settled by the turns

    # -- seats relayed from matches on other servers (SeatKeeper) ------------------------

    def take_relayed(self, seat: RelayedSeat) -> bool:
        """Another server seated ``seat.bot`` in its match: its rated connection here plays
        the seat, relayed; False if it has none that may (it left, or plays elsewhere)."""
        session = self.sessions.get(seat.bot)
        held = self.seated.get(seat.bot)
        busy = held is not None and not (isinstance(held[0], MatchRunner)
                                         and held[0].ended is not None)
        if session is None or not session.open or session.practice_only or busy or \
                session.game != seat.config.game:
            return False
        self.seated[seat.bot] = (seat, seat.seat)
        session.seat = (seat, seat.seat, seat.take(session.outbox))
        self._last[seat.bot] = datetime.now(UTC)
        log.info("bot %s plays match %s on server %s", seat.bot, seat.match_id, seat.host)
        return True

    def relayed_over(self, seat: RelayedSeat) -> None:
        """``seat``'s match (on another server) ended, its end relayed: the bot waits for
        its next match here, as after a match of this server's."""
        if self.seated.get(seat.bot, (None, 0))[0] is seat:
            del self.seated[seat.bot]
        for session in self.streams_of(seat.bot):
            if session.seat is not None and session.seat[0] is seat:
                self._free(session, seat.bot)
        self.poke()

    def relayed_cut(self, seat: RelayedSeat, closed: Closed | None) -> None:
        """``seat`` ends for the bot's connection here: with ``closed`` (a newer
        connection took it on the match's server), or (the link to that server lost) with
        the connection's end, so the bot connects again and waits for its next table."""
        if self.seated.get(seat.bot, (None, 0))[0] is seat:
            del self.seated[seat.bot]
        for session in self.streams_of(seat.bot):
            if session.seat is None or session.seat[0] is not seat:
                continue
            session.seat = None
            if closed is not None:
                session.open = False
                session.outbox.end(closed)
            else:
                self._close(session)
        self.poke()

    def link_changed(self, up: bool) -> None:
        """The link to the broker came back (or was lost): from now on this server's turn
        comes (or no longer comes) at tables of bots connected to other servers."""
        task = asyncio.get_running_loop().create_task(self._relays(up))
        self._relaying.add(task)
        task.add_done_callback(self._relaying.discard)

    async def _relays(self, up: bool) -> None:
        try:
            await asyncio.to_thread(self.turns.set_relays, up)
        except DatabaseUnavailableError as exc:
            log.warning("telling the other servers this one relays %s: %s",
                        "again" if up else "no more", exc)
        self.poke()

    @staticmethod
    def _free(session: LadderSession, name: str) -> None:
        """``session``'s match is over: it waits for its next one on the same connection,
        or, its matches played, it is closed."""
        session.seat = None
        if session.matches_left:
            session.matches_left -= 1
            if not session.matches_left:  # its MatchEnded is in the outbox already
                session.open = False
                session.outbox.end(Closed(
                    pb.CLOSE_REASON_MATCHES_PLAYED,
                    f"the {session.game} matches this connection asked for have been played"))
        if session.open:
            session.outbox.put_nowait(Queued(session.game, name))

    def _look_later(self, why: str, game: str, delay: float) -> None:
        """Look at ``game``'s queue again in ``delay`` seconds, for ``why`` (a hold or a
        table left to another server, one look each: an earlier one for it is cancelled)."""
        self._cancel_look(why, game)
        self._looks[(why, game)] = asyncio.get_running_loop().call_later(delay, self.poke,
                                                                          game)

    def _cancel_look(self, why: str, game: str) -> None:
        """The later look at ``game``'s queue for ``why`` is not needed (what it waited
        for is over)."""
        look = self._looks.pop((why, game), None)
        if look is not None:
            look.cancel()

    def _stop_leaving(self, game: str) -> None:
        """This server leaves no table of ``game`` to another server now."""
        self._left_since.pop(game, None)
        self._cancel_look("turn", game)

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
