"""The JSON shapes of the HTTP API (they are also its OpenAPI schemas)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    AliasChoices,
    AliasGenerator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    StrictStr,
)
from pydantic.alias_generators import to_camel

from bullring.server.ratings import LeaderboardEntry
from bullring.server.store import MAX_OWNER, Challenge, MatchSummary


def _whole(value: object) -> object:
    """A JSON number with no fraction (``5.0``) as the integer it is; anything else as
    given, for the strict integer check to take or refuse."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


AS_WHOLE = BeforeValidator(_whole)
"""Reads ``5.0`` as ``5``: the last mark of a JSON body's integer, after its bounds (bounds
after it would not reach the OpenAPI document)."""
Whole = Annotated[int, Strict(), AS_WHOLE]
"""An integer in a JSON body: a number without a fraction, as JSON Schema's ``integer`` says
(``5`` or ``5.0``); never text (``"5"``), a true/false or ``5.5``."""

BOT_NAME = r"^[A-Za-z0-9_.-]{1,64}$"
"""What a registered bot's name may hold (``bullring.commandline.values.BOT_NAME``)."""
ONE_LINE = "^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*$"
"""One line of text: no control character, line or paragraph separator (an owner, a
reason)."""
Int32 = Annotated[int, Strict(), Field(ge=-(2**31), le=2**31 - 1), AS_WHOLE]
"""A proto int32 in a JSON body (a card or a row on the gRPC wire)."""


def _both_names(name: str) -> str | AliasChoices:
    """The names a JSON body may give the field ``name`` by: its proto field name, and its
    lowerCamelCase JSON name where that differs (``decision_id``, ``decisionId``)."""
    camel = to_camel(name)
    return name if camel == name else AliasChoices(name, camel)


class JsonIn(BaseModel):
    """A JSON request body. Each field is read by either name the proto3 JSON mapping
    gives it, its proto field name (``decision_id``, as the document lists it and as every
    answer writes it) or its lowerCamelCase JSON name (``decisionId``); giving both is
    refused, as is any other field."""

    model_config = ConfigDict(extra="forbid",
                              alias_generator=AliasGenerator(validation_alias=_both_names))


class GameInfo(BaseModel):
    """A game the server referees."""

    id: str
    title: str
    min_seats: int
    max_seats: int
    opponents: list[str] = Field(description="the house bots a person plays against unless "
                                             "the request names others (POST "
                                             "/api/human-matches); empty: none by default")
    view: str | None = Field(description="the script the web page draws this game with, "
                                         "given by the game itself; null: the page's generic "
                                         "view of any game")


MU = "the skill's mean, μ: the middle of the skill interval μ ± 3σ"
SIGMA = "the skill's uncertainty, σ: the skill interval is μ ± 3σ"
RATING = "the rating, μ - 3σ: what the leaderboard orders by"


class LeaderboardRow(BaseModel):
    """One bot version on a ladder; its rating (``ordinal``) orders the table."""

    rank: int
    bot: str
    version: int
    games: int
    mu: float = Field(description=MU)
    sigma: float = Field(description=SIGMA)
    ordinal: float = Field(description=RATING)

    @classmethod
    def of(cls, rank: int, entry: LeaderboardEntry) -> LeaderboardRow:
        """The row of ``entry`` at ``rank``."""
        return cls(rank=rank, bot=entry.bot, version=entry.version, games=entry.games,
                   mu=entry.mu, sigma=entry.sigma, ordinal=entry.ordinal)


class Leaderboard(BaseModel):
    """A game's ladder, best first."""

    game: str
    entries: list[LeaderboardRow]


class BotInfo(BaseModel):
    """A registered bot as the public sees it (never its token)."""

    name: str
    owner: str
    version: int
    enabled: bool
    house: str | None = Field(description="the house bot the server plays it as, if any")
    games: dict[str, int] = Field(description="rated games played, by game id")


class NewBotIn(JsonIn):
    """A bot to register."""

    name: StrictStr = Field(min_length=1, max_length=64, pattern=BOT_NAME,
                            description="1-64 letters, digits, '-', '_' or '.'")
    owner: StrictStr = Field(default="", max_length=MAX_OWNER, pattern=ONE_LINE)


class BotTokenOut(BaseModel):
    """A bot's new token (shown once; only its hash is stored)."""

    name: str
    token: str


class BotVersionOut(BaseModel):
    """A bot's new version (its ratings keep their mean and widen their uncertainty)."""

    name: str
    version: int


class BotEnabledOut(BaseModel):
    """Whether a bot may be seated (a disabled bot also leaves the leaderboard)."""

    name: str
    enabled: bool


class MatchInfo(BaseModel):
    """A match as anyone may see it: never its seed or tokens; a result once it ended."""

    id: str
    game: str
    status: str = Field(description="created | running | finished | aborted")
    seats: list[str]
    created_at: datetime
    finished_at: datetime | None
    totals: list[int] | None
    ranks: list[int] | None
    termination: str | None
    live: bool = Field(description="running on this server: its feed can be watched")
    bots: list[str | None] = Field(
        default_factory=list, description="the registered bot playing each seat, by seat "
                                          "(null for a seat that is not one; its page is "
                                          "/api/bots/{name})")
    rated: bool = Field(default=False, description="its end updates ratings (a ladder match); "
                                                   "false for a practice match, a challenge "
                                                   "or a match made with seat tokens")
    humans: list[int] = Field(default_factory=list,
                              description="the seats a person plays (never rated)")

    @classmethod
    def of(cls, summary: MatchSummary, live: bool) -> MatchInfo:
        """The public form of ``summary``."""
        return cls(id=summary.match_id, game=summary.game, status=summary.status,
                   seats=list(summary.seat_names), created_at=summary.created_at,
                   finished_at=summary.finished_at,
                   totals=None if summary.totals is None else list(summary.totals),
                   ranks=None if summary.ranks is None else list(summary.ranks),
                   termination=summary.termination, live=live,
                   bots=list(summary.seat_bots), rated=summary.rated,
                   humans=list(summary.humans))


class MatchPage(BaseModel):
    """One page of matches, newest first."""

    matches: list[MatchInfo]
    total: int = Field(description="matches that pass the filters, on all pages")
    limit: int
    offset: int


class BotRating(BaseModel):
    """A bot's rating at one game now, and its place on that game's leaderboard."""

    game: str
    rank: int = Field(description="place on the leaderboard, 1 = best")
    games: int = Field(description="rated games played")
    mu: float = Field(description=MU)
    sigma: float = Field(description=SIGMA)
    ordinal: float = Field(description=RATING)


class RatingPoint(BaseModel):
    """One rated match of a bot: its place and its rating before and after."""

    match_id: str
    game: str
    version: int = Field(description="the bot's version that played")
    rank: int = Field(description="its place in the match, 1 = best")
    mu_before: float
    sigma_before: float
    mu: float = Field(description="the skill's mean, μ, after the match")
    sigma: float = Field(description="the skill's uncertainty, σ, after the match")
    ordinal: float = Field(description="the rating, μ - 3σ, after the match")
    recorded_at: datetime


class HeadToHead(BaseModel):
    """How a bot placed against one opponent at one game, over the finished matches both
    sat in: a win is a better place than the opponent's, a draw an equal one."""

    opponent: str
    game: str
    matches: int
    wins: int
    draws: int
    losses: int


class BotPage(BaseModel):
    """Everything public about one registered bot: what it is, its ratings now, every rated
    match in order (its rating history) and its record against each opponent."""

    bot: BotInfo
    ratings: list[BotRating]
    history: list[RatingPoint] = Field(description="rated matches, oldest first (the last "
                                                   "1000 of them)")
    head_to_head: list[HeadToHead] = Field(
        description="by game, most played opponent first, over its last finished matches "
                    "(at most 1000)")


class WaitingSeat(BaseModel):
    """A seat that must still answer the decision in progress, and its clock."""

    seat: int
    name: str
    ms_left: int = Field(description="milliseconds before its deadline, when the default "
                                     "action is played for it (its time bank included)")
    bank_ms: int | None = Field(default=None, description=(
        "what is left of its time bank for the match, in ms (ms_left counts it); null "
        "without a time bank"))


class TurnInfo(BaseModel):
    """Whose turn it is in a match: the seats that must still answer and their clocks.
    Public facts only: never what a seat chose, nor how long it took (answer times are in
    the replay's log once the match has ended)."""

    match_id: str
    running: bool = Field(description="the match is being played on this server now; "
                                      "false before it starts, after it ends, or when "
                                      "another server plays it")
    deadline_ms: int | None = Field(description="the match's time per decision")
    waiting: list[WaitingSeat] = Field(description="empty between two decision points")


class ActionIn(JsonIn):
    """One action (the contract's Action): exactly one of a card, a row index or a word, the
    field of the decision's kind; another field is rejected as MALFORMED_ACTION. Two fields
    (even one of them null) are refused (422)."""

    model_config = ConfigDict(json_schema_extra={"maxProperties": 1})
    card: Int32 | None = Field(default=None, description="a card: the field of "
                                   "DECISION_KIND_PLAY_CARD and DECISION_KIND_DRAFT_CARD")
    row: Int32 | None = Field(default=None, description="a row index 0..3: the field of "
                                  "DECISION_KIND_CHOOSE_ROW")
    word: StrictStr | None = Field(default=None, description='a word: "take" or "pass" for '
                                   'DECISION_KIND_TAKE_OR_PASS, "reveal" or "keep" for '
                                   'DECISION_KIND_REVEAL_HIDDEN_CARD')


class AnswerIn(JsonIn):
    """An answer to the decision request with the same ``decision_id`` (the contract's
    Answer)."""

    decision_id: StrictStr = Field(max_length=200, description="the decision id of the "
                                   "request this answers")
    action: ActionIn = Field(description="the action chosen")
    comment: StrictStr = Field(default="", description="why, in the bot's own words: at "
                               "most 200 characters, no control characters (else the answer "
                               "is rejected as MALFORMED_ACTION); stored in the replay, shown "
                               "to nobody before the match ends")


class Verdict(BaseModel):
    """The verdict on an answer: ``accepted`` or ``rejected`` (in-band, with HTTP 200)."""

    accepted: dict[str, Any] | None = Field(default=None, description="AnswerAccepted")
    rejected: dict[str, Any] | None = Field(
        default=None, description="AnswerRejected: decision_id, reason, message")


class PollResult(BaseModel):
    """Messages for a seat, oldest first; each is a PlayResponse (proto JSON) plus ``seq``."""

    messages: list[dict[str, Any]]
    closed: bool = Field(description="this connection ended (match over, or replaced by a "
                                     "newer one); poll without 'after' to join again")


class CreateMatchIn(JsonIn):
    """A match to register: its game, seats, settings, seed and house bots by seat."""

    game: StrictStr = Field(max_length=40)
    seats: Whole = Field(ge=1, le=20)
    settings: dict[str, StrictStr] = Field(default_factory=dict)
    seed: Annotated[int, Strict(), Field(ge=0, le=2**31 - 1), AS_WHOLE] | None = Field(
        default=None, description=(
        "the deal's root seed; omitted: a fresh random one (kept secret until the match "
        "ends, then in its replay)"))
    house: dict[str, StrictStr] = Field(default_factory=dict,
                                        description='house bots by seat, e.g. {"1": "greedy"}')
    humans: list[Whole] = Field(default_factory=list, max_length=20, description=(
        "seats a person plays in the browser: each is named human (humanN for seat N when "
        "several are) and gets a play page; the deadline is 30000 ms unless settings give "
        "deadline_ms"))


class CreatedSeat(BaseModel):
    """One seat of a created match: its token (shown once) or its house bot; a person's seat
    also has its play page."""

    seat: int
    name: str
    token: str | None
    house: str | None
    human: bool = Field(default=False, description="a person plays this seat")
    play: str | None = Field(default=None, description=(
        "a person's seat: its play page's path with the seat token in the fragment, "
        "/play/MATCH_ID#TOKEN"))


class CreatedMatchOut(BaseModel):
    """A registered match and its seats."""

    match_id: str
    game: str
    seats: list[CreatedSeat]


class AbortedOut(BaseModel):
    """The outcome of an abort."""

    match_id: str
    status: str


class ChallengeIn(JsonIn):
    """A challenge to make: the game and the opponents, in seat order after the caller."""

    game: StrictStr = Field(min_length=1, max_length=64,
                            description="a game whose ladder the server runs (GET "
                                        "/api/games)")
    opponents: list[StrictStr] = Field(
        min_length=1, max_length=16,
        description="house:KIND (such as house:greedy) or a registered bot's name, each; "
                    "with the challenger, a table the game allows")


class DeclineIn(JsonIn):
    """Why a challenge is declined (or withdrawn)."""

    reason: StrictStr = Field(default="", max_length=MAX_OWNER, pattern=ONE_LINE,
                              description="shown to the challenger")


class AutoAcceptIn(JsonIn):
    """Whether the calling bot accepts every challenge naming it without being asked."""

    auto_accept: StrictBool


class ChallengeOut(BaseModel):
    """A request for an unrated match, as its bots see it."""

    id: str
    game: str
    challenger: str = Field(description="the registered bot that made it; it takes seat 0")
    opponents: list[str] = Field(description="seat 1 on: house:KIND or a registered bot")
    answers: dict[str, str] = Field(description="each registered opponent's answer: "
                                                "pending, accepted or declined")
    status: str = Field(description="pending | accepted | declined | cancelled | expired | "
                                    "started: "
                                    "an accepted challenge is seated once its bots wait on "
                                    "the game's ladder")
    message: str = Field(description="who declined or cancelled it and why, or who did not "
                                     "answer before it expired; empty otherwise")
    match_id: str | None = Field(description="the unrated match it started, once it has")
    created_at: datetime

    @classmethod
    def of(cls, challenge: Challenge) -> ChallengeOut:
        """The JSON form of ``challenge``."""
        return cls(id=challenge.id, game=challenge.game, challenger=challenge.challenger,
                   opponents=list(challenge.opponents), answers=challenge.answers,
                   status=challenge.status, message=challenge.message,
                   match_id=challenge.match_id, created_at=challenge.created_at)


class ChallengeList(BaseModel):
    """Challenges a bot made or is named in, newest first (at most 100)."""

    challenges: list[ChallengeOut]


class AutoAcceptOut(BaseModel):
    """A bot's auto-accept setting after the change."""

    bot: str
    auto_accept: StrictBool
