"""Challenges: a bot asks named opponents for an unrated match; they accept or decline; an
accepted challenge is seated as a ladder table is."""

from __future__ import annotations

import json
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, func, or_, update
from sqlmodel import Session, col, select

from bullring.server.errors import (
    ConflictError,
    ForbiddenError,
    InvalidChallengeError,
    NotFoundError,
    OpenQuotaError,
)
from bullring.server.store.base import CHALLENGE, Notice, StoreBase, notify, retried, utc
from bullring.server.store.bots import MAX_OWNER, locked_bot
from bullring.server.store.models import (
    BotRow,
    ChallengeBotRow,
    ChallengeRow,
    MatchRow,
    SeatRow,
    utcnow,
)

HOUSE_PREFIX = "house:"
"""How a challenge names a house bot opponent: ``house:greedy``."""

OPEN_RETRY_S = 30
"""What Retry-After says to a bot with as many challenges waiting as it may have."""

DEFAULT_CHALLENGE_RETENTION_S = 86_400.0
"""How long a challenge that is over is kept before it is deleted (``serve
--challenge-retention``)."""

DEFAULT_CHALLENGE_EXPIRY_S = 3600.0
"""How long a challenge waits for its answers before it expires (``serve
--challenge-expiry``)."""


@dataclass(frozen=True, slots=True)
class Challenge:
    """A stored challenge, as its challenger and opponents see it."""

    id: str
    game: str
    challenger: str
    opponents: tuple[str, ...]
    """In seat order after the challenger: ``house:KIND`` or a registered bot's name."""
    answers: dict[str, str]
    """Each registered opponent's answer: pending, accepted or declined."""
    status: str
    """pending, accepted, declined, cancelled, expired or started."""
    message: str
    match_id: str | None
    created_at: datetime

    @property
    def bots(self) -> tuple[str, ...]:
        """The registered bots it seats: the challenger, then its registered opponents."""
        return (self.challenger,
                *(o for o in self.opponents if not o.startswith(HOUSE_PREFIX)))

    @classmethod
    def of(cls, row: ChallengeRow) -> Challenge:
        """The challenge a stored row holds; a pending one past its expiry is expired."""
        status, message = row.status, row.message
        if _expired(row):
            status, message = "expired", _expiry_message(row)
        return cls(row.id, row.game, row.challenger, tuple(json.loads(row.opponents_json)),
                   dict(json.loads(row.answers_json)), status, message, row.match_id,
                   row.created_at)


def _expired(row: ChallengeRow) -> bool:
    """Whether ``row`` is a pending challenge past its expiry."""
    return row.status == "pending" and row.expires_at is not None \
        and utc(row.expires_at) <= datetime.now(UTC)


def _expiry_message(row: ChallengeRow) -> str:
    waited = (utc(row.expires_at or row.created_at) - utc(row.created_at)).total_seconds()
    unanswered = [b for b, a in json.loads(row.answers_json).items() if a == "pending"]
    return (f"expired: {', '.join(unanswered)} did not answer within {waited:g} s")


class ChallengeRecords(StoreBase):
    """The store's challenges, from their making to their match."""

    def create_challenge(self, game: str, challenger: str, opponents: Sequence[str],
                         expiry_s: float = DEFAULT_CHALLENGE_EXPIRY_S,
                         open_limit: int = 0) -> Challenge:
        """Store a challenge of ``challenger`` (a connecting bot) against ``opponents``
        (``house:KIND`` or registered bots' names, already checked to play ``game``). A
        registered house bot's name stands for its kind; a bot that auto-accepts accepts
        now, and with no one left to ask the challenge is accepted. Unanswered for
        ``expiry_s`` seconds, it expires. With ``open_limit``, a challenger that has that
        many challenges waiting (pending, or accepted and not seated) is refused
        (OpenQuotaError), counted under a lock on its row, so servers sharing the database
        never let two through on one count."""
        with self._session() as session:
            if open_limit:
                locked_bot(session, challenger)
                waiting = self._waiting_challenges(session, challenger)
                if waiting >= open_limit:
                    raise OpenQuotaError(
                        f"{challenger} has {waiting} challenges waiting to be answered or "
                        f"seated (bullring serve --challenges-open {open_limit}); try again "
                        f"when one is played, answered or withdrawn", OPEN_RETRY_S)
            names = {o for o in opponents if not o.startswith(HOUSE_PREFIX)} | {challenger}
            rows = {b.name: b for b in session.exec(select(BotRow).where(
                col(BotRow.name).in_(sorted(names)))).all()}
            seats: list[str] = []
            answers: dict[str, str] = {}
            for name in opponents:
                row = rows.get(name)
                if name.startswith(HOUSE_PREFIX) or (row is not None and row.house):
                    seats.append(name if row is None else HOUSE_PREFIX + str(row.house))
                    continue
                if row is None:
                    raise NotFoundError(f"no bot named {name!r} is registered")
                if name == challenger or name in answers:
                    raise InvalidChallengeError(f"{name!r} is named twice (a bot takes one seat)")
                if not row.enabled:
                    raise ConflictError(f"bot {name!r} is disabled")
                seats.append(name)
                answers[name] = "accepted" if row.auto_accept else "pending"
            status = "accepted" if all(a == "accepted" for a in answers.values()) else "pending"
            now = utcnow()
            made = ChallengeRow(id=uuid.uuid4().hex[:12], game=game, challenger=challenger,
                                opponents_json=json.dumps(seats),
                                answers_json=json.dumps(answers), status=status,
                                created_at=now, updated_at=now,
                                expires_at=now + timedelta(seconds=expiry_s))
            session.add(made)
            session.flush()
            for bot in dict.fromkeys([challenger, *answers]):
                session.add(ChallengeBotRow(challenge_id=made.id, bot=bot, created_at=now))
            if status == "accepted":
                notify(session, Notice(CHALLENGE, game))
            session.commit()
        return Challenge.of(made)

    @staticmethod
    def _waiting_challenges(session: Session, challenger: str) -> int:
        """How many of ``challenger``'s challenges wait: accepted and not seated, or pending
        and not expired."""
        now = utcnow()
        query = select(func.count()).select_from(ChallengeRow).where(
            ChallengeRow.challenger == challenger,
            or_(col(ChallengeRow.status) == "accepted",
                and_(col(ChallengeRow.status) == "pending",
                     or_(col(ChallengeRow.expires_at).is_(None),
                         col(ChallengeRow.expires_at) > now))))
        return int(session.exec(query).one())

    @retried
    def purge_challenges(self, retention_s: float) -> int:
        """Delete the challenges over (declined, cancelled, started, or expired) for longer
        than ``retention_s`` seconds, with their rows of named bots; return how many. A
        started challenge's match stays, as every match does."""
        before = utcnow() - timedelta(seconds=retention_s)
        over = or_(col(ChallengeRow.status).in_(("declined", "cancelled", "started",
                                                 "expired")),
                   and_(col(ChallengeRow.status) == "pending",
                        col(ChallengeRow.expires_at) < before))
        with self._session() as session:
            gone = select(ChallengeRow.id).where(col(ChallengeRow.updated_at) < before, over)
            session.execute(delete(ChallengeBotRow).where(
                col(ChallengeBotRow.challenge_id).in_(gone)))
            deleted = session.execute(delete(ChallengeRow).where(
                col(ChallengeRow.updated_at) < before, over)
            ).rowcount  # type: ignore[attr-defined]
            session.commit()
        return int(deleted or 0)

    @retried
    def challenge(self, challenge_id: str) -> Challenge:
        """The stored challenge ``challenge_id``."""
        with self._session() as session:
            row = session.get(ChallengeRow, challenge_id)
        if row is None:
            raise NotFoundError(f"no challenge {challenge_id!r}")
        return Challenge.of(row)

    @retried
    def challenges(self, bot: str, limit: int = 100) -> list[Challenge]:
        """The newest challenges ``bot`` made or is named in, newest first (read through
        the named bots' index, whatever other bots asked for)."""
        query = (select(ChallengeRow)
                 .join(ChallengeBotRow, col(ChallengeBotRow.challenge_id) == ChallengeRow.id)
                 .where(ChallengeBotRow.bot == bot)
                 .order_by(col(ChallengeBotRow.created_at).desc(), col(ChallengeRow.id))
                 .limit(limit))
        with self._session() as session:
            return [Challenge.of(row) for row in session.exec(query)]

    @retried
    def answer_challenge(self, challenge_id: str, bot: str, accept: bool,
                         reason: str = "") -> Challenge:
        """``bot`` accepts or declines a pending challenge naming it; its challenger may
        withdraw it (``accept`` False) until it starts. The first decline ends it."""
        if len(reason) > MAX_OWNER or any(unicodedata.category(c) == "Cc" for c in reason):
            raise InvalidChallengeError(f"a reason has at most {MAX_OWNER} "
                                        f"characters and no control characters")
        with self._session() as session:
            row = session.exec(select(ChallengeRow).where(ChallengeRow.id == challenge_id)
                               .with_for_update()).first()
            if row is None:
                raise NotFoundError(f"no challenge {challenge_id!r}")
            answers = dict(json.loads(row.answers_json))
            because = f": {reason}" if reason else ""
            if _expired(row):
                row.status, row.message = "expired", _expiry_message(row)
                row.updated_at = utcnow()
                session.add(row)
                session.commit()
                raise ConflictError(f"challenge {challenge_id} is {row.message}")
            if bot == row.challenger and not accept and row.status in ("pending", "accepted"):
                row.status, row.message = "cancelled", f"cancelled by {bot}{because}"
            elif bot not in answers:
                raise ForbiddenError(f"challenge {challenge_id} does not name {bot!r}")
            elif row.status != "pending" or answers[bot] != "pending":
                raise ConflictError(f"challenge {challenge_id} is {row.status}; {bot} "
                                     f"answered {answers[bot]}")
            elif not accept:
                answers[bot] = "declined"
                row.status, row.message = "declined", f"declined by {bot}{because}"
            else:
                answers[bot] = "accepted"
                if all(a == "accepted" for a in answers.values()):
                    row.status = "accepted"
                    notify(session, Notice(CHALLENGE, row.game))
            row.answers_json = json.dumps(answers)
            row.updated_at = utcnow()
            session.add(row)
            session.commit()
        return Challenge.of(row)

    @retried
    def set_auto_accept(self, name: str, auto_accept: bool) -> None:
        """Whether ``name`` accepts every challenge naming it without being asked."""
        with self._session() as session:
            row = locked_bot(session, name)
            row.auto_accept = auto_accept
            session.add(row)
            session.commit()

    @retried
    def ready_challenges(self, game: str) -> list[Challenge]:
        """The accepted challenges of ``game`` not yet seated, oldest first."""
        with self._session() as session:
            return [Challenge.of(r) for r in session.exec(
                select(ChallengeRow).where(ChallengeRow.game == game,
                                           ChallengeRow.status == "accepted")
                .order_by(col(ChallengeRow.created_at), col(ChallengeRow.id))).all()]

    def seat_challenge(self, challenge: Challenge, settings: Mapping[str, Any], seed: int,
                       seat_names: Sequence[str], instance: str) -> str | None:
        """Create the running, unrated match of an accepted challenge on ``instance``:
        the challenger, then its opponents, in ``seat_names``. Its registered bots are
        claimed as a ladder table's are; None (nothing written) if any claim fails or the
        challenge is no longer accepted."""
        return self.retry.call("seat_challenge", self._seat_challenge, uuid.uuid4().hex[:12],
                               challenge, settings, seed, seat_names, instance)

    def _seat_challenge(self, match_id: str, challenge: Challenge, settings: Mapping[str, Any],
                        seed: int, seat_names: Sequence[str], instance: str) -> str | None:
        with self._session() as session:
            if session.get(MatchRow, match_id) is not None:
                return match_id  # an earlier try committed it
            started = session.execute(
                update(ChallengeRow).where(col(ChallengeRow.id) == challenge.id,
                                           col(ChallengeRow.status) == "accepted")
                .values(status="started", match_id=match_id, updated_at=utcnow())
            ).rowcount  # type: ignore[attr-defined]
            if started != 1:
                session.rollback()
                return None
            for name in sorted(challenge.bots):  # the ladder's lock order
                claimed = session.execute(
                    update(BotRow).where(col(BotRow.name) == name,
                                         col(BotRow.current_match).is_(None),
                                         col(BotRow.enabled).is_(True))
                    .values(current_match=match_id)
                ).rowcount  # type: ignore[attr-defined]
                if claimed != 1:
                    session.rollback()
                    return None
            session.add(MatchRow(id=match_id, game=challenge.game,
                                 settings_json=json.dumps(dict(settings)), seed=seed,
                                 seat_count=len(seat_names), status="running", ladder=True,
                                 rated=False, instance=instance, created_at=utcnow()))
            session.flush()
            versions = {b.name: b.version for b in session.exec(select(BotRow).where(
                col(BotRow.name).in_(list(challenge.bots)))).all()}
            for seat, spec in enumerate((challenge.challenger, *challenge.opponents)):
                house = spec[len(HOUSE_PREFIX):] if spec.startswith(HOUSE_PREFIX) else None
                session.add(SeatRow(match_id=match_id, seat=seat, name=seat_names[seat],
                                    house=house, bot=None if house else spec,
                                    bot_version=None if house else versions[spec]))
            session.commit()
        return match_id
