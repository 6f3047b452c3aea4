"""Persistence: matches and seats, the bot registry, ratings, the admin token, replays.

sqlmodel on a SQLite file by default; PostgreSQL (``postgresql+psycopg://...``) with ``--db``.
The schema is migrated to the newest alembic revision when a Store opens the database.
Every call is synchronous and short; the server runs them in a worker thread.

Writes that must not happen twice are conditional updates checked by their row count (a
bot is seated only if it sits nowhere; a match is recorded only if it is still running),
so two servers on one PostgreSQL database never seat a bot twice or record a match twice.
On SQLite every transaction begins IMMEDIATE, which serialises writers the same way.

The calls the running server makes are retried while the database is unavailable for a
moment (server/store/retry.py); being single conditional transactions, a retry never applies a
write twice. Calls that are not safe to repeat (registering a bot, new tokens) are not retried.
"""

from __future__ import annotations

from bullring.server.errors import (
    BotError,
    BotNameTakenError,
    MatchElsewhereError,
    UnknownBotNameError,
    UnknownMatchError,
)
from bullring.server.ratings import LeaderboardEntry
from bullring.server.store.base import DEFAULT_DB, FREED_CHANNEL, hash_token
from bullring.server.store.bots import MAX_OWNER, BotRegistry
from bullring.server.store.challenges import (
    DEFAULT_CHALLENGE_EXPIRY_S,
    DEFAULT_CHALLENGE_RETENTION_S,
    HOUSE_PREFIX,
    Challenge,
    ChallengeRecords,
)
from bullring.server.store.leaderboard import RatingRecords
from bullring.server.store.matches import MatchConfig, MatchRecords, MatchSummary
from bullring.server.store.models import BotRow, MatchRow, RatingChangeRow, RatingRow, SeatRow
from bullring.server.store.seating import Seating
from bullring.server.store.tournaments import TournamentRecords


class Store(MatchRecords, Seating, RatingRecords, ChallengeRecords, BotRegistry,
            TournamentRecords):
    """The store on one database URL; the schema is upgraded to head on opening.

    ``retry_s`` is how long a call keeps retrying while the database is unavailable. Each
    base holds the calls of one kind of record (``server/store/*.py``)."""


__all__ = [
    "DEFAULT_CHALLENGE_EXPIRY_S",
    "DEFAULT_CHALLENGE_RETENTION_S",
    "DEFAULT_DB",
    "FREED_CHANNEL",
    "HOUSE_PREFIX",
    "MAX_OWNER",
    "BotError",
    "BotNameTakenError",
    "BotRow",
    "Challenge",
    "LeaderboardEntry",
    "MatchConfig",
    "MatchElsewhereError",
    "MatchRow",
    "MatchSummary",
    "RatingChangeRow",
    "RatingRow",
    "SeatRow",
    "Store",
    "UnknownBotNameError",
    "UnknownMatchError",
    "hash_token",
]
