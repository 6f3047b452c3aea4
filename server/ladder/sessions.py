"""The bots connected to a server's ladders: their sessions, joins and leaves.

A bot joins with its token and ``Join(ladder=GAME)``; its stream stays open and carries one
match after another. ``LadderSessions`` keeps those streams, which bot plays where on this
server, and the house bots; the matchmaker (``bullring.server.ladder.seating.Ladder``) builds on it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.contract.messages import Closed, Queued
from bullring.errors import ConfigurationError
from bullring.referee.registry import get_game
from bullring.server.errors import (
    BotDisabledError,
    GameMismatchError,
    HouseBotError,
    LadderRequiredError,
    NoSuchLadderError,
    ShuttingDownError,
)
from bullring.server.fleet.relay import SeatHost
from bullring.server.ladder.rules import LadderOptions, default_table_size
from bullring.server.match.hub import MatchHub, game_refusal
from bullring.server.match.outbox import Outbox, replaced
from bullring.server.store.models import BotRow

log = logging.getLogger("bullring.ladder")

NEVER = datetime.min.replace(tzinfo=UTC)
"""The last seating of a bot never seated."""


@dataclass(eq=False)
class LadderSession:
    """One connected bot on a game's ladder: its stream's outbox and where it sits now."""

    bot: str
    game: str
    token_hash: str | None = None
    """The hash of the token it joined with: once the bot's token is another, it ends."""
    outbox: Outbox = field(default_factory=Outbox)
    seat: tuple[SeatHost, int, int] | None = None
    """(runner, seat, connection) while it plays a match (its runner here, or the seat
    relayed from the server that runs it)."""
    open: bool = True
    matches_left: int = 0
    """Matches this stream still plays before it is closed (Join.matches); 0: no limit."""
    practice_only: bool = False
    """Never seated at a rated table (Join.practice_only): it waits for the bot's practice
    matches and challenges (and its games of a live tournament, which are unrated)."""


@dataclass(eq=False)
class Waiter:
    """A bot the matchmaker may seat: its name, its house bot kind (None for a bot that
    connects), when it was last seated and, for a bot connected to another server of the
    fleet, that server."""

    name: str
    house: str | None
    last_seated: datetime
    server: str | None = None
    """The server it is connected to, when that is another one (its seat is relayed)."""


class LadderSessions:
    """The ladder streams of one server process, by bot, and where each bot sits here."""

    def __init__(self, hub: MatchHub, options: LadderOptions) -> None:
        self.hub = hub
        self.options = options
        self.sizes = {g: options.table_sizes.get(g) or default_table_size(g)
                      for g in options.games}
        self.settings: dict[str, dict[str, Any]] = {}
        for game in options.games:
            spec = get_game(game)
            size = self.sizes[game]
            if size.minimum < spec.min_seats or size.maximum > spec.max_seats:
                raise ConfigurationError(f"{game} tables seat {spec.min_seats}-{spec.max_seats}, "
                                 f"not {size.minimum}-{size.maximum}")
            state = spec.new_state(size.minimum, dict(options.settings.get(game, {})), 0)
            self.settings[game] = dict(state.settings)
        self.sessions: dict[str, LadderSession] = {}
        """The connected bots, by name: each one's newest connection, but a practice-only
        one that joined beside an open connection to the rated ladder (``practising``)."""
        self.practising: dict[str, LadderSession] = {}
        """Practice-only connections of bots also connected for rated play, by name: a
        practice run beside a running bot waits for its practice match there, without
        ending the bot's rated connection (the bot plays one match at a time)."""
        self.seated: dict[str, tuple[SeatHost, int]] = {}
        """Bots playing a match on this server, or connected here and playing one relayed
        from another server, by name (kept while they reconnect)."""
        self.house: dict[str, Waiter] = {}
        self._house_games: dict[str, tuple[str, ...]] = {}
        self._last: dict[str, datetime] = {}
        self._wake = asyncio.Event()
        self._due: set[str] = set()
        """The games whose queues the matchmaker looks at when it wakes next."""
        self._stopping = False

    def poke(self, game: str | None = None) -> None:
        """Ask the matchmaker to look at the queues again: every game's, or ``game``'s."""
        if game is None:
            self._due.update(self.settings)
        else:
            self._due.add(game)
        self._wake.set()

    # -- sessions --------------------------------------------------------------------------

    def join(self, bot: BotRow, game: str, matches: int = 0, games: Sequence[str] = (),
             via: str = "", practice_only: bool = False) -> LadderSession:
        """Connect ``bot`` to ``game``'s ladder (taking back the seat it holds in a live
        match here, if that match is of this connection's kind); its older stream of the
        same kind, if any, ends with Closed(REPLACED) naming ``via`` (this connection's
        transport and peer). A practice-only stream beside an open rated one is kept beside
        it (``practising``), and so is an open practice-only stream when a rated one joins:
        neither ends the other. Refused (UNAVAILABLE) once stopping, and before anything
        changes if the bot's ``games`` (empty: any) leave ``game`` out; no ``game`` is the
        server's one ladder, if it runs one. With ``matches`` > 0
        the stream plays that many matches (the one it takes back counts) and is closed
        after the last one ends, never seated again. With ``practice_only`` it is never
        seated at a rated table."""
        game_id = self.check(bot, game, games)
        session = LadderSession(bot.name, game_id, bot.token_hash, matches_left=max(0, matches),
                                practice_only=practice_only)
        current = self.sessions.get(bot.name)
        beside = current is not None and current.open and current.practice_only != practice_only
        if beside and practice_only:
            assert current is not None
            old = self.practising.get(bot.name)
            self.practising[bot.name] = session
        else:
            if beside:  # a rated stream joins beside a practice run: the run goes on
                assert current is not None
                self._replace(self.practising.pop(bot.name, None), via)
                self.practising[bot.name] = current
                old = None
            else:
                old = current
            self.sessions[bot.name] = session
        self._replace(old, via)
        self._last.setdefault(bot.name, bot.last_seated_at or NEVER)
        seated = self.seated.get(bot.name)
        if seated is not None and self._plays(session, seated[0]):
            runner, seat = seated
            for other in self.streams_of(bot.name):
                if other is not session and other.open and \
                        other.seat is not None and other.seat[0] is runner:
                    # The bot's other stream plays it: it lets go of the seat, not its stream.
                    runner.detach(seat, other.seat[2], f"moved to a newer connection ({via})")
                    other.seat = None
            _, connection = runner.attach(seat, session.outbox)
            session.seat = (runner, seat, connection)
            log.info("bot %s is back in match %s", bot.name, runner.config.match_id)
        else:
            log.info("bot %s joined the %s ladder%s", bot.name, game_id,
                     (" for its practice matches only" if practice_only else "") +
                     (" beside its rated connection" if beside and practice_only else ""))
            notice = "" if practice_only else self.shortfall(game_id)
            if notice:
                log.warning("%s", notice)
            session.outbox.put_nowait(Queued(game_id, bot.name, notice))
            self.poke()
        return session

    def _replace(self, old: LadderSession | None, via: str) -> None:
        """End ``old`` (if open) as replaced by the connection ``via``."""
        if old is None:
            return
        old.open = False
        old.outbox.end(replaced(via))
        log.info("bot %s: its older connection was replaced (%s)", old.bot, via)

    def connection_for(self, name: str, runner: SeatHost) -> LadderSession | None:
        """The open stream of bot ``name`` that plays ``runner``'s match: a practice run's
        for an unrated match, if the bot has one beside its rated stream; else its stream."""
        practising = self.practising.get(name)
        if practising is not None and practising.open and self._plays(practising, runner):
            return practising
        session = self.sessions.get(name)
        if session is not None and session.open and self._plays(session, runner):
            return session
        return None

    def _plays(self, session: LadderSession, runner: SeatHost) -> bool:
        """Whether ``session`` may play ``runner``'s match: a practice-only stream no rated
        one; a rated stream no unrated one while the bot's practice run is open beside it."""
        if runner.config.rated:
            return not session.practice_only
        if session.practice_only:
            return True
        practising = self.practising.get(session.bot)
        return practising is None or not practising.open

    def streams_of(self, name: str) -> list[LadderSession]:
        """Bot ``name``'s streams here, open or not yet forgotten: its stream, and its
        practice run beside it."""
        return [s for s in (self.sessions.get(name), self.practising.get(name))
                if s is not None]

    def connected(self) -> list[LadderSession]:
        """Every open stream, practice runs beside rated streams included."""
        return [s for s in (*self.sessions.values(), *self.practising.values()) if s.open]

    def check(self, bot: BotRow, game: str, games: Sequence[str] = ()) -> str:
        """The id of ``game`` (none: the server's one ladder) if ``bot`` (playing ``games``;
        empty: any) may join its ladder here; else a refusal (server/errors.py) saying why."""
        if self._stopping:  # its stream would only be cut off when the grace period ends
            raise ShuttingDownError("the server is shutting down; connect again soon")
        if not game and len(self.settings) == 1:
            game = next(iter(self.settings))  # the one ladder this server runs
        if not game:
            raise LadderRequiredError(f"a bot token plays a ladder, and this server runs "
                                      f"{', '.join(self.settings)}: name one (Join.ladder, or "
                                      f"ladder= over HTTP), such as '{next(iter(self.settings))}'")
        if not bot.enabled:
            raise BotDisabledError(f"bot {bot.name!r} is disabled")
        if bot.house is not None:
            raise HouseBotError(f"{bot.name!r} is a house bot")
        game_id = get_game(game).id
        if game_id not in self.settings:
            raise NoSuchLadderError(f"this server runs ladders for {', '.join(self.settings)}, "
                                    f"not {game_id}")
        refusal = game_refusal(game_id, games, f"bot {bot.name!r} was not queued on the "
                                               f"{game_id} ladder")
        if refusal is not None:
            raise GameMismatchError(refusal)
        return game_id

    def players(self, game: str) -> tuple[int, int]:
        """Who may sit at ``game``'s rated tables: (house bots that play it, registered
        bots connected to its ladder but for practice only), resting or playing ones
        included."""
        house = sum(game in self._house_games.get(name, ()) for name in self.house)
        connected = len(self.rated_streams(game))
        return house, connected

    def rated_streams(self, game: str) -> list[LadderSession]:
        """The open streams on ``game``'s ladder that rated tables may seat: all but the
        practice-only ones."""
        return [s for s in self.sessions.values()
                if s.game == game and s.open and not s.practice_only]

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

    def leave(self, session: LadderSession, why: str = "stream closed") -> None:
        """The stream of ``session`` ended (``why``, for the log): it no longer waits; a
        seat it holds goes on without it until it reconnects."""
        why = session.outbox.why_ended(why)
        if session.open:  # not if the server ended it (replaced, matches played, stopping)
            log.info("bot %s left the %s ladder: %s%s", session.bot, session.game, why,
                     "; its seat plays on until it is back" if session.seat else "")
        session.open = False
        if self.sessions.get(session.bot) is session:
            del self.sessions[session.bot]
            practising = self.practising.pop(session.bot, None)
            if practising is not None and practising.open:
                self.sessions[session.bot] = practising  # the practice run goes on alone
        elif self.practising.get(session.bot) is session:
            del self.practising[session.bot]
        if session.seat is not None:
            runner, seat, connection = session.seat
            runner.detach(seat, connection, why)
            session.seat = None
        self.poke()  # the matchmaker tells the other servers it can seat this bot no more

    def target(self, bot: str) -> tuple[SeatHost, int] | None:
        """Where ``bot``'s answers go now: its live match and seat, if any (a match here,
        or one another server runs whose seat is relayed here)."""
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
        for session in reversed(self.streams_of(name)):  # the practice run first
            session.outbox.end(Closed(reason, message))
            self.leave(session, message)

    def _close(self, session: LadderSession) -> None:
        session.open = False
        session.outbox.put_nowait(None)
