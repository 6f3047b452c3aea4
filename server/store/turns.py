"""Fair seating between servers that share one PostgreSQL database: whose turn a table is.

Each server process publishes, per game, the bots it can seat (those connected to its
ladder, and its house bots: its *presence*) and records when it last seated a ladder table.
Seating a table takes a lock per game in the same transaction that claims its bots, and the
table goes to the server that seated least recently among those that can seat every one of
its bots: a server whose turn it is not gets ``TurnElsewhereError`` and leaves the table to
that server, which the database wakes (LISTEN/NOTIFY) as it wakes every server. So the
server that ran a match has no head start in seating its bots again, and servers that
share their bots take turns. A server that was left a table and has not seated within
``TURN_GRACE_S`` (busy, or gone) is passed over: the next try seats without deferring.

Servers that relay seats through a broker (``bullring serve --broker``, ``relays`` on their
turn rows) share their bots: a relaying server can seat any bot (not a house bot, which
only the servers that run it seat) that a relaying server has present, so its turn comes at
any table of such bots that one of them is connected to, and its queue holds them too
(``Seatable``). So a table is never run by a server that would relay every seat of it (a
relayed seat costs both servers more than one on the match's server), and the turns among
the servers its bots are connected to keep the fleet's shares of matches even. The servers
deal their queue alike (``Ladder._fleet_deal``), so each seats the tables that are its turn
and leaves the others to theirs.

On SQLite one server process serves the database: it is always its turn.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from sqlalchemy import delete, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session, col

from bullring.server.store.base import PRESENCE, SEATED, Notice, notify
from bullring.server.store.models import LadderPresenceRow, LadderTurnRow, utcnow

if TYPE_CHECKING:
    from bullring.server.store import Store

TURN_GRACE_S = 2.0
"""How long a server leaves a table to the server whose turn it is before seating it itself."""


class TurnElsewhereError(RuntimeError):
    """A table is another server's turn: it can seat all the table's bots and seated less
    recently than this one."""

    def __init__(self, instance: str, game: str) -> None:
        super().__init__(f"the next {game} table is the turn of server {instance}")
        self.instance = instance
        """The server whose turn it is."""


def _game_key(game: str) -> int:
    """The transaction advisory lock key that serialises the seating of ``game``'s tables."""
    digest = hashlib.sha256(f"bullring-ladder-turn:{game}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


_SEATED = text("""
INSERT INTO ladder_turn (game, instance, seated_at, relays)
VALUES (:game, :instance, :now, false)
ON CONFLICT (game, instance) DO UPDATE SET seated_at = EXCLUDED.seated_at
""")
"""Record a server's seating of a game's table as its latest."""


def take_turn(session: Session, game: str, instance: str, bots: Sequence[str],
              defer: bool) -> None:
    """Inside the transaction about to seat ``bots`` at a ``game`` table on ``instance``:
    serialise it with every other server's seating of that game and, with ``defer``, raise
    TurnElsewhereError if it is another server's turn; else record this seating as
    ``instance``'s latest and tell every server (NOTIFY, sent when the transaction commits)
    so a server that left this table to ``instance`` looks at its queue again. Nothing on
    SQLite."""
    if session.get_bind().dialect.name != "postgresql":
        return
    session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _game_key(game)})
    if defer:
        rival = _rival(session, game, instance, sorted(set(bots)))
        if rival is not None:
            raise TurnElsewhereError(rival, game)
    session.execute(_SEATED, {"game": game, "instance": instance, "now": utcnow()})
    notify(session, Notice(SEATED, game, instance))


_RIVAL = text("""
WITH turn AS (
  SELECT instance, seated_at, relays,
         (SELECT count(*) FROM ladder_presence AS here
          WHERE here.instance = ladder_turn.instance AND here.game = :game
            AND here.bot = ANY(:bots)) AS held
  FROM ladder_turn WHERE game = :game
)
SELECT rival.instance FROM turn AS rival
JOIN turn AS mine ON mine.instance = :instance
WHERE rival.instance <> :instance AND rival.held > 0
  AND (mine.held = 0
       OR (mine.seated_at IS NOT NULL
           AND (rival.seated_at IS NULL OR rival.seated_at < mine.seated_at)))
  AND (SELECT count(*) FROM bot
       WHERE bot.name = ANY(:bots)
         AND (EXISTS (SELECT 1 FROM ladder_presence AS here
                      WHERE here.instance = rival.instance AND here.game = :game
                        AND here.bot = bot.name)
              OR (rival.relays AND bot.house IS NULL
                  AND EXISTS (SELECT 1 FROM ladder_presence AS there
                              JOIN ladder_turn AS relayer
                                ON relayer.instance = there.instance
                               AND relayer.game = :game AND relayer.relays
                              WHERE there.game = :game AND there.bot = bot.name)))
      ) = :count
ORDER BY rival.seated_at ASC NULLS FIRST LIMIT 1
""")
"""The server whose turn a table is, if not the seating server's: among the servers that can
seat every one of the table's bots (a bot it has present, or, it relaying, one a relaying
server has present that is not a house bot) and that have one of them present (connected
there: a relayed seat costs two servers more than a seat on the match's), the one that
seated the game least recently, less recently than the seating server, or at all if the
seating server has none of them present. Written out in SQL: it is run at every seating,
and building it as a SQLAlchemy expression each time cost more than running it."""


def _rival(session: Session, game: str, instance: str, bots: list[str]) -> str | None:
    """The server whose turn a table of ``bots`` is (``_RIVAL``); None when it is
    ``instance``'s (also when it has one of them present and never seated: nobody seated
    less recently)."""
    found: str | None = session.execute(
        _RIVAL, {"game": game, "instance": instance, "bots": bots, "count": len(bots)}
    ).scalar_one_or_none()
    return found


class Seatable(NamedTuple):
    """A bot this server may seat at a table once it is free: where it is connected (None:
    here), when it was last seated, and whether it is free now (enabled, seated nowhere)."""

    instance: str | None
    last_seated_at: datetime | None
    free: bool = True


_RELAYED = text("""
SELECT presence.bot, min(presence.instance), bot.last_seated_at, bot.current_match
FROM ladder_presence AS presence
JOIN bot ON bot.name = presence.bot
JOIN ladder_turn AS turn
  ON turn.instance = presence.instance AND turn.game = :game AND turn.relays
WHERE presence.game = :game AND presence.instance = ANY(:instances)
  AND bot.house IS NULL AND bot.enabled
GROUP BY presence.bot, bot.last_seated_at, bot.current_match
""")
"""The bots (not house bots, enabled) that the relaying servers among ``instances`` have
present on a game's ladder, each with one of those servers, when it was last seated and the
match it plays (PostgreSQL; read at every look of a relaying server's matchmaker)."""


_FREE = text("""
SELECT name, last_seated_at FROM bot
WHERE name = ANY(:bots) AND current_match IS NULL AND enabled
""")
"""The free bots (enabled, seated nowhere) among some, with when each was last seated
(PostgreSQL; read at every look of a relaying server's matchmaker, as ``_RELAYED``)."""


class LadderTurns:
    """What a server publishes on a shared PostgreSQL database so that tables are taken in
    turns: its presence per game and its turn rows. Every call does nothing on SQLite."""

    def __init__(self, store: Store, instance: str) -> None:
        self.store = store
        self.instance = instance
        """This server process."""
        self.shared = not store.sqlite
        """True on PostgreSQL, where several servers may share the database."""

    def _session(self) -> Session:
        return Session(self.store.engine, expire_on_commit=False)

    def register(self, games: Iterable[str], relays: bool = False) -> None:
        """Take part in the turns of ``games`` (not having seated yet: the next table that
        this server can seat is its turn), relaying seats through a broker or not."""
        if self.shared:
            self.store.retry.call("ladder turns", self._register, list(games), relays)

    def _register(self, games: list[str], relays: bool) -> None:
        with self._session() as session:
            for game in games:
                session.execute(insert(LadderTurnRow).values(
                    game=game, instance=self.instance, seated_at=None, relays=relays)
                    .on_conflict_do_update(index_elements=["game", "instance"],
                                           set_={"relays": relays}))
            session.commit()

    def set_relays(self, relays: bool) -> None:
        """From now on this server relays seats through its broker (its link is up), or not
        (lost): only a relaying server's turn comes at tables of bots connected elsewhere."""
        if self.shared:
            self.store.retry.call("ladder turns", self._set_relays, relays)

    def _set_relays(self, relays: bool) -> None:
        with self._session() as session:
            session.execute(update(LadderTurnRow).where(
                col(LadderTurnRow.instance) == self.instance).values(relays=relays))
            session.commit()

    def seatable(self, game: str, here: Sequence[str], instances: Sequence[str]
                 ) -> dict[str, Seatable]:
        """The bots this server may seat at ``game``'s tables, by name: those of ``here``
        (bots it can seat itself) that are free, and the bots (not house bots, enabled)
        that relaying servers among ``instances`` have present, free or playing now, each
        with one of those servers (the same one every time)."""
        return self.store.retry.call("ladder seatable", self._seatable, game, list(here),
                                     list(instances))

    def _seatable(self, game: str, here: list[str], instances: list[str]
                  ) -> dict[str, Seatable]:
        found: dict[str, Seatable] = {}
        with self._session() as session:
            if here:
                for name, seated_at in session.execute(_FREE, {"bots": here}).all():
                    found[name] = Seatable(None, seated_at)
            if instances and self.shared:
                rows = session.execute(_RELAYED, {"game": game, "instances": instances}).all()
                for name, instance, seated_at, playing in rows:
                    found.setdefault(name, Seatable(instance, seated_at, playing is None))
        return found

    def publish(self, game: str, bots: Iterable[str]) -> None:
        """From now on this server can seat exactly ``bots`` on ``game``'s ladder; every
        server is told (NOTIFY): a bot that joined here may complete a table that only
        another can seat (one with house bots that only it runs), and that server may have
        nothing else to wake it."""
        if self.shared:
            self.store.retry.call("ladder presence", self._publish, game, sorted(set(bots)))

    def _publish(self, game: str, bots: list[str]) -> None:
        with self._session() as session:
            session.execute(delete(LadderPresenceRow).where(
                col(LadderPresenceRow.instance) == self.instance,
                col(LadderPresenceRow.game) == game))
            for bot in bots:
                session.add(LadderPresenceRow(instance=self.instance, game=game, bot=bot))
            notify(session, Notice(PRESENCE, game, self.instance))
            session.commit()

    def presence(self, game: str) -> dict[str, set[str]]:
        """The bots each server can seat on ``game``'s ladder, by server instance."""
        found: dict[str, set[str]] = {}
        with self._session() as session:
            rows = session.execute(
                select(col(LadderPresenceRow.instance), col(LadderPresenceRow.bot))
                .where(col(LadderPresenceRow.game) == game)).all()
        for instance, bot in rows:
            found.setdefault(instance, set()).add(bot)
        return found

    def forget(self, instances: Sequence[str] = ()) -> None:
        """Take ``instances`` (default: this server) out of the turns: stopped or gone."""
        if self.shared:
            self.store.retry.call("ladder turns", self._forget, list(instances or
                                                                    [self.instance]))

    def _forget(self, instances: list[str]) -> None:
        with self._session() as session:
            session.execute(delete(LadderPresenceRow).where(
                col(LadderPresenceRow.instance).in_(instances)))
            session.execute(delete(LadderTurnRow).where(
                col(LadderTurnRow.instance).in_(instances)))
            session.commit()

    def forget_dead(self, alive: Callable[[str], bool]) -> list[str]:
        """Take the servers that ``alive`` says are gone out of the turns; return them."""
        if not self.shared:
            return []
        with self._session() as session:
            others = session.execute(select(col(LadderTurnRow.instance)).where(
                col(LadderTurnRow.instance) != self.instance).distinct()).scalars().all()
        dead = [i for i in others if not alive(i)]
        if dead:
            self.forget(dead)
        return dead
