"""Seating registered bots in running ladder matches, and freeing them: each bot is claimed
by a conditional update, so two servers on one database never seat a bot twice."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import insert, update
from sqlmodel import col, select

from bullring.server.store.base import StoreBase, retried
from bullring.server.store.models import BotRow, MatchRow, SeatRow, table_of, utcnow
from bullring.server.store.turns import take_turn

_BOTS, _MATCHES, _SEATS = table_of(BotRow), table_of(MatchRow), table_of(SeatRow)


class Seating(StoreBase):
    """Ladder tables: bots claimed for a match, freed when it ends or its server is gone."""

    def seat_ladder_match(self, game: str, settings: Mapping[str, Any], seed: int,
                          bots: Sequence[str], instance: str,
                          token_hashes: Mapping[str, str] | None = None,
                          defer: bool = False) -> str | None:
        """Create a running ladder match of ``bots`` (in seat order) on ``instance``.

        Each bot is claimed with a conditional update (enabled, seated nowhere, and still
        holding the token hash given in ``token_hashes``, for bots that connected with one);
        if any claim fails nothing is written and None is returned. With ``defer``, a table
        that is another server's turn (``bullring.server.store.turns``) is not seated:
        TurnElsewhereError. Retried with the same match id, so a try whose commit went
        through but whose answer was lost is recognised.
        """
        return self.retry.call("seat_ladder_match", self._seat_ladder_match,
                               uuid.uuid4().hex[:12], game, settings, seed, bots, instance,
                               dict(token_hashes or {}), defer)

    def _seat_ladder_match(self, match_id: str, game: str, settings: Mapping[str, Any],
                           seed: int, bots: Sequence[str], instance: str,
                           token_hashes: Mapping[str, str], defer: bool) -> str | None:
        # Core statements on the session's connection (``table_of``).
        with self._session() as session:
            conn = session.connection()
            if conn.execute(select(_MATCHES.c.id).where(_MATCHES.c.id == match_id)).first():
                return match_id  # an earlier try committed it
            take_turn(session, game, instance, bots, defer)
            for name in sorted(bots):  # one lock order for every server: no deadlocks
                claim = update(_BOTS).where(_BOTS.c.name == name, _BOTS.c.current_match.is_(None),
                                            _BOTS.c.enabled.is_(True))
                if name in token_hashes:  # a token rotated meanwhile: not seated
                    claim = claim.where(_BOTS.c.token_hash == token_hashes[name])
                if conn.execute(claim.values(current_match=match_id)).rowcount != 1:
                    session.rollback()
                    return None
            # Taken once every claim holds its row: later than the end of the bots' last
            # matches, so a bot's matches never overlap in stored time either.
            now = utcnow()
            conn.execute(insert(_MATCHES).values(MatchRow(
                id=match_id, game=game, settings_json=json.dumps(dict(settings)), seed=seed,
                seat_count=len(bots), status="running", ladder=True, rated=True,
                instance=instance, created_at=now).model_dump()))
            conn.execute(update(_BOTS).where(_BOTS.c.name.in_(list(bots)))
                         .values(last_seated_at=now))
            rows = {name: (house, version) for name, house, version in conn.execute(
                select(_BOTS.c.name, _BOTS.c.house, _BOTS.c.version)
                .where(_BOTS.c.name.in_(list(bots))))}
            conn.execute(insert(_SEATS), [
                SeatRow(match_id=match_id, seat=seat, name=name, house=rows[name][0],
                        bot=name, bot_version=rows[name][1]).model_dump()
                for seat, name in enumerate(bots)])
            session.commit()
        return match_id

    @retried
    def free_bots(self, names: Sequence[str]) -> set[str]:
        """Those of ``names`` that are enabled and seated in no match."""
        with self._session() as session:
            return set(session.exec(select(BotRow.name).where(
                col(BotRow.name).in_(list(names)), col(BotRow.current_match).is_(None),
                col(BotRow.enabled).is_(True))).all())

    @retried
    def abort_orphans(self, instance: str, alive: Callable[[str], bool]) -> list[str]:
        """Abort the running matches of server instances that are gone (not ``instance``,
        and ``alive`` says no); free their bots. They are not rated. Returns their ids."""
        with self._session() as session:
            others = session.exec(select(MatchRow.instance).where(
                MatchRow.status == "running", col(MatchRow.instance).is_not(None),
                MatchRow.instance != instance).distinct()).all()
        return self._abort_running([i for i in others if i is not None and not alive(i)])

    @retried
    def abort_running(self, instances: Sequence[str]) -> list[str]:
        """Abort every running match of ``instances`` (unrated) and free their bots; return
        their ids. A server stopping calls it for itself, for matches it seated but did not
        get to run."""
        return self._abort_running(instances)

    def _abort_running(self, instances: Sequence[str]) -> list[str]:
        aborted: list[str] = []
        if not instances:
            return aborted
        dead = list(instances)
        with self._session() as session:
            ids = list(session.exec(select(MatchRow.id).where(
                MatchRow.status == "running", col(MatchRow.instance).in_(dead))).all())
            if ids:
                session.execute(update(MatchRow).where(col(MatchRow.id).in_(ids),
                                                       col(MatchRow.status) == "running")
                                .values(status="aborted", finished_at=utcnow()))
                session.execute(update(BotRow).where(col(BotRow.current_match).in_(ids))
                                .values(current_match=None))
                self._announce_free(session)
                aborted = ids
            session.commit()
        return aborted
