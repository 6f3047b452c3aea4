"""The bot registry (names, owners, versions, tokens, enabled or not) and the admin token."""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from bullring.commandline import bot_name_problem, has_control_characters
from bullring.server import ratings
from bullring.server.errors import BotError, BotNameTakenError, UnknownBotNameError
from bullring.server.ratings import Skill
from bullring.server.store.base import StoreBase, hash_token, new_token, retried
from bullring.server.store.models import AdminTokenRow, BotRow, RatingRow, utcnow

MAX_OWNER = 200
"""The longest owner text a bot may be registered with (on every path: CLI, gRPC, HTTP)."""


def _check_name(name: str) -> str:
    problem = bot_name_problem(name)
    if problem:
        raise BotError(problem)
    return name


def _check_owner(owner: str) -> str:
    if len(owner) > MAX_OWNER or has_control_characters(owner):
        raise BotError(f"bad owner: at most {MAX_OWNER} characters and no control characters "
                       f"(got {len(owner)} characters)")
    return owner


def locked_bot(session: Session, name: str) -> BotRow:
    """The registered bot ``name``, its row locked for update in ``session``."""
    row = session.exec(select(BotRow).where(BotRow.name == name).with_for_update()).first()
    if row is None:
        raise UnknownBotNameError(f"no bot named {name!r} is registered")
    return row


class BotRegistry(StoreBase):
    """The store's registered bots and its admin token."""

    def add_bot(self, name: str, owner: str = "") -> str:
        """Register a bot; return its token (only the hash is stored, so print it now)."""
        _check_name(name)
        _check_owner(owner)
        token = new_token("bot")
        with self._session() as session:
            if session.get(BotRow, name) is not None:
                raise BotNameTakenError(f"a bot named {name!r} is already registered")
            session.add(BotRow(name=name, owner=owner, token_hash=hash_token(token)))
            session.commit()
        return token

    @retried
    def ensure_house_bot(self, name: str, house: str) -> None:
        """Register the house bot ``name`` (played by the server as ``house``) if missing.
        Servers of a fleet starting together on a new database may all find it missing:
        the first registers it, the others then find it."""
        _check_name(name)
        try:
            self._ensure_house_bot(name, house)
        except IntegrityError:  # registered by another server since this one looked
            self._ensure_house_bot(name, house)

    def _ensure_house_bot(self, name: str, house: str) -> None:
        with self._session() as session:
            row = session.get(BotRow, name)
            if row is None:
                session.add(BotRow(name=name, owner="house", house=house))
            elif row.house != house:
                raise BotError(f"{name!r} is registered, but not as house bot {house!r}")
            session.commit()

    @retried
    def bot(self, name: str) -> BotRow:
        """The registered bot ``name``."""
        with self._session() as session:
            row = session.get(BotRow, name)
        if row is None:
            raise UnknownBotNameError(f"no bot named {name!r} is registered")
        return row

    @retried
    def bots(self) -> list[BotRow]:
        """Every registered bot, by name."""
        with self._session() as session:
            return list(session.exec(select(BotRow).order_by(col(BotRow.name))).all())

    @retried
    def bot_states(self, names: Sequence[str]) -> dict[str, tuple[str | None, bool]]:
        """The token hash and whether it is enabled, of each of ``names`` that is registered."""
        with self._session() as session:
            rows = session.exec(select(BotRow.name, BotRow.token_hash, BotRow.enabled).where(
                col(BotRow.name).in_(list(names)))).all()
        return {name: (token_hash, enabled) for name, token_hash, enabled in rows}

    @retried
    def bot_for_token(self, token: str) -> BotRow | None:
        """The registered bot whose token this is, or None."""
        with self._session() as session:
            return session.exec(select(BotRow).where(BotRow.token_hash == hash_token(token))
                                ).first()

    def new_version(self, name: str) -> int:
        """Start a new version of ``name``: its ratings keep their mean, widen their
        uncertainty. Returns the new version number."""
        with self._session() as session:
            row = locked_bot(session, name)
            row.version += 1
            session.add(row)
            for rating in session.exec(select(RatingRow).where(RatingRow.bot == name)
                                       .with_for_update()).all():
                wider = ratings.widen(Skill(rating.mu, rating.sigma))
                rating.sigma = wider.sigma
                session.add(rating)
            session.commit()
            return row.version

    @retried
    def set_enabled(self, name: str, enabled: bool) -> None:
        """Enable or disable a bot; a disabled bot is not seated and leaves the leaderboard."""
        with self._session() as session:
            row = locked_bot(session, name)
            row.enabled = enabled
            session.add(row)
            session.commit()

    def rotate_token(self, name: str) -> str:
        """Give ``name`` a new token (the old one stops working); return it."""
        token = new_token("bot")
        with self._session() as session:
            row = locked_bot(session, name)
            if row.house is not None:
                raise BotError(f"{name!r} is a house bot; it has no token")
            row.token_hash = hash_token(token)
            session.add(row)
            session.commit()
        return token

    def ensure_admin_token(self) -> str | None:
        """Create the admin token if there is none; return it then (only once), else None
        (also when another server starting at the same moment made it first)."""
        token = new_token("admin")
        with self._session() as session:
            if session.get(AdminTokenRow, 1) is not None:
                return None
            session.add(AdminTokenRow(id=1, token_hash=hash_token(token)))
            try:
                session.commit()
            except IntegrityError:
                return None
        return token

    def rotate_admin_token(self) -> str:
        """Replace the admin token; return the new one."""
        token = new_token("admin")
        with self._session() as session:
            row = session.get(AdminTokenRow, 1) or AdminTokenRow(id=1, token_hash="")
            row.token_hash = hash_token(token)
            row.created_at = utcnow()
            session.add(row)
            session.commit()
        return token

    @retried
    def is_admin_token(self, token: str) -> bool:
        """True when ``token`` is the admin token."""
        with self._session() as session:
            row = session.get(AdminTokenRow, 1)
        return row is not None and secrets.compare_digest(row.token_hash, hash_token(token))
