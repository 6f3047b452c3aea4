"""The stored tables: matches and their seats, registered bots, ratings and their changes.

The schema is owned by the alembic migrations in ``server/store/migrations``; these models are
what the code reads and writes. A change here needs a new migration.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Index, Table
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    """Now, in UTC (what every stored time is)."""
    return datetime.now(UTC)


class MatchRow(SQLModel, table=True):
    """One match: its game, settings, seed, status and (once over) its replay."""

    __tablename__ = "match"
    id: str = Field(primary_key=True)
    game: str
    settings_json: str
    seed: int
    seat_count: int
    status: str = Field(default="created", index=True)
    """created | running | finished | aborted"""
    created_at: datetime = Field(default_factory=utcnow, index=True)
    finished_at: datetime | None = None
    replay_json: str | None = None
    ladder: bool = False
    """True for a match the ladder formed (its seats are registered bots or, in a practice
    match, house seats)."""
    rated: bool = False
    """True when its end updates ratings: a ladder match; never a practice match or
    challenge, nor a match made with seat tokens."""
    instance: str | None = Field(default=None, index=True)
    """The server process running it (set when it starts); a dead instance's match is
    aborted by the next server that looks."""
    tournament_id: str | None = Field(default=None, index=True)
    """The live tournament whose game it plays, if any."""
    tournament_game: int | None = None
    """With ``tournament_id``: the game's index in the tournament's schedule."""


class SeatRow(SQLModel, table=True):
    """One seat of a match: its name, a house bot or the hash of its token, and (on the
    ladder) the registered bot and version that plays it."""

    __tablename__ = "seat"
    match_id: str = Field(primary_key=True, foreign_key="match.id")
    seat: int = Field(primary_key=True)
    name: str
    house: str | None = None
    token_hash: str | None = Field(default=None, index=True, unique=True)
    bot: str | None = Field(default=None, index=True)
    """The registered bot seated here (ladder matches)."""
    bot_version: int | None = None
    human: bool = False
    """A person plays this seat (in the browser): it is named as one, and its match is
    unrated."""


class BotRow(SQLModel, table=True):
    """A registered bot: its token hash, version, whether it may play, and where it sits."""

    __tablename__ = "bot"
    name: str = Field(primary_key=True)
    owner: str = ""
    version: int = 1
    token_hash: str | None = Field(default=None, index=True, unique=True)
    """None for a house bot, which the server runs itself."""
    house: str | None = None
    """The house bot it is (``greedy``...), or None for a bot that connects."""
    enabled: bool = True
    created_at: datetime = Field(default_factory=utcnow)
    current_match: str | None = Field(default=None, index=True)
    """The ladder match it is seated in now; claimed with a conditional update, so no two
    servers seat it twice."""
    last_seated_at: datetime | None = None
    """When it was last seated; the ladder seats the least recently seated first."""
    auto_accept: bool = False
    """Accept every challenge naming it without being asked."""


class RatingRow(SQLModel, table=True):
    """A bot's rating at one game (openskill Plackett-Luce)."""

    __tablename__ = "rating"
    bot: str = Field(primary_key=True, foreign_key="bot.name")
    game: str = Field(primary_key=True)
    mu: float
    sigma: float
    games: int = 0
    updated_at: datetime = Field(default_factory=utcnow)


class RatingChangeRow(SQLModel, table=True):
    """One rated seat of one match: the rating before and after, written with the result.

    Its key (match, bot) makes a second rating of the same match impossible.
    """

    __tablename__ = "rating_change"
    match_id: str = Field(primary_key=True, foreign_key="match.id")
    bot: str = Field(primary_key=True, foreign_key="bot.name")
    game: str
    version: int
    rank: int
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float
    recorded_at: datetime = Field(default_factory=utcnow, index=True)


class ChallengeRow(SQLModel, table=True):
    """A registered bot's request for an unrated match against named opponents.

    ``pending`` until every registered opponent accepts (then ``accepted``) or one declines
    (``declined``); the challenger may withdraw it (``cancelled``). An accepted challenge is
    seated by the ladder once all its registered bots wait on the game's ladder
    (``started``, with ``match_id``).
    """

    __tablename__ = "challenge"
    id: str = Field(primary_key=True)
    game: str
    challenger: str = Field(foreign_key="bot.name", index=True)
    opponents_json: str
    """The opponents in seat order (after the challenger): ``house:KIND`` or a bot name."""
    answers_json: str
    """Each registered opponent's answer: ``pending``, ``accepted`` or ``declined``."""
    status: str = Field(default="pending", index=True)
    message: str = ""
    """Why it was declined or cancelled, in words."""
    match_id: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow, index=True)
    """When it last changed: one over for longer than the retention is deleted."""
    expires_at: datetime | None = None
    """While ``pending`` past this moment, the challenge is ``expired``."""


class ChallengeBotRow(SQLModel, table=True):
    """A registered bot a challenge names (its challenger and each registered opponent):
    a bot's challenges are read through this table's (bot, created_at) index, not by
    scanning every bot's newest challenges."""

    __tablename__ = "challenge_bot"
    __table_args__ = (Index("ix_challenge_bot_bot_created_at", "bot", "created_at"),)
    challenge_id: str = Field(primary_key=True, foreign_key="challenge.id")
    bot: str = Field(primary_key=True)
    created_at: datetime
    """The challenge's ``created_at``: the order a bot's list is read in."""


class AdminTokenRow(SQLModel, table=True):
    """The hash of the admin token (one row), needed for admin calls over the network."""

    __tablename__ = "admin_token"
    id: int = Field(default=1, primary_key=True)
    token_hash: str
    created_at: datetime = Field(default_factory=utcnow)


class TournamentRow(SQLModel, table=True):
    """A live tournament among registered bots, played on the ladder's streams.

    ``schedule_json`` lists its games in order (lineup, seed, and once played the match id,
    outcome and which bots were absent); ``standings_json`` holds the standings so far.
    ``running`` until every game is played (``finished``) or the admin cancels it
    (``cancelled``: its games not started yet are not played).
    """

    __tablename__ = "tournament"
    id: str = Field(primary_key=True)
    game: str
    format: str
    entrants_json: str
    games: int
    seats: int
    wait_s: float
    pace_ms: int = 0
    """The least time from one decision point of its matches to the next, in
    milliseconds, so people can follow them; 0: machine speed."""
    status: str = Field(default="running", index=True)
    schedule_json: str
    standings_json: str = "[]"
    forfeited_json: str = "[]"
    created_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None


class LadderPresenceRow(SQLModel, table=True):
    """A bot that a server process can seat on a game's ladder (PostgreSQL): one connected
    to its ladder, or one of its house bots. The turn of a table goes only to a server that
    can seat all of its bots."""

    __tablename__ = "ladder_presence"
    instance: str = Field(primary_key=True)
    game: str = Field(primary_key=True)
    bot: str = Field(primary_key=True)


class LadderTurnRow(SQLModel, table=True):
    """When a server process last seated a ladder table of a game (PostgreSQL; None: not
    yet): the next table goes to the server that seated least recently."""

    __tablename__ = "ladder_turn"
    game: str = Field(primary_key=True)
    instance: str = Field(primary_key=True)
    seated_at: datetime | None = None
    relays: bool = False
    """It relays seats through the fleet's broker (``bullring serve --broker``) and is linked
    to it now: it can seat, besides its own bots, any bot (not a house bot) that a relaying
    server has present."""


def table_of(row: type[SQLModel]) -> Table:
    """The table of a row model, for the Core statements of the paths run at every match
    (seating, recording a result): the ORM's unit of work costs more CPU than they do."""
    return SQLModel.metadata.tables[str(row.__tablename__)]
