"""Every error a caller is refused with, and the one table that gives each its gRPC status,
its HTTP status and its stable error code, the same on every transport.

Every error Bullring raises on purpose is a ``bullring.errors.BullringError``, and the table
has a row for each (its own or its nearest listed base's): the refusals defined here, and
the rules', the SDK's and the commands' own errors, which are raised on the caller's side
and never sent (``Status.wire`` false). A refusal is an exception of one of these types (or
of another type the table names, such as the referee's ``UnknownGameError``); gRPC
servicers end the call with ``abort_grpc`` and the HTTP API answers with the JSON error body
(``server/transports/http/errors.py``), both from ``ERRORS``. A command that ends on any of
them exits with its class's ``exit_code``. An answer to a decision is not refused this way:
its verdict travels in-band, with the reason ``REJECT_REASONS`` gives for the referee's
``ActionError``.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import grpc
from sqlalchemy.exc import OperationalError

from bullring.commandline import (
    CommandError,
    RefusedError,
    UnreachableError,
    UsageError,
)
from bullring.commandline import DatabaseError as CommandDatabaseError
from bullring.commandline import NotFoundError as CommandNotFoundError
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.contract.wire import ContractError
from bullring.errors import BullringError, ConfigurationError, ExitCode, OutOfRangeError
from bullring.referee.core import (
    ActionError,
    IllegalActionError,
    MalformedActionError,
    NotPendingError,
    RefereeError,
)
from bullring.referee.registry import UnknownGameError
from bullring.sdk.errors import (
    AccessEndedError,
    AgentError,
    ArenaSetupError,
    BotFailedError,
    BotSpecError,
    CallFailedError,
    ChallengeUnplayableError,
    CommentError,
    EnvActionError,
    EnvStateError,
    RequestRejectedError,
    ServerUnreachableError,
    StreamClosedError,
    TokenRefusedError,
    TournamentError,
    UnknownBotError,
)

T = TypeVar("T")


class ServiceError(BullringError):
    """Base of the refusals this module defines that are no built-in kind of error;
    ``ERRORS`` gives each type's statuses."""

    exit_code = ExitCode.USAGE


class DatabaseUnavailableError(BullringError, RuntimeError):
    """The database stayed unavailable for the whole retry budget of a call."""

    exit_code = ExitCode.DATABASE


class DatabaseBusyError(BullringError, RuntimeError):
    """Another server process already serves this SQLite database."""

    exit_code = ExitCode.DATABASE


class BrokerError(BullringError, ConnectionError):
    """The fleet's broker could not be reached (``bullring serve --broker``)."""

    exit_code = ExitCode.UNREACHABLE


class RelayFrameError(BullringError, ValueError):
    """A message on a server's relay subject that is not a frame of this fleet's servers
    (``bullring.server.fleet.frames``)."""


class NotAuthenticatedError(ServiceError):
    """No bearer token, or one the server does not know."""

    exit_code = ExitCode.REFUSED


class ForbiddenError(ServiceError):
    """The token is known but may not do this."""

    exit_code = ExitCode.REFUSED


class NotAdminError(ForbiddenError):
    """An admin call with a token that is not the admin token."""

    def __init__(self, message: str = "this token is not the admin token") -> None:
        super().__init__(message)


class BotDisabledError(ForbiddenError):
    """The registered bot is disabled."""


class HouseBotError(ForbiddenError):
    """A house bot's token may not join a ladder or challenge."""


class FellBehindError(ServiceError):
    """A spectator left too many messages unread and was cut off."""


class HumanMatchesOffError(ForbiddenError):
    """This server makes no matches for people."""


class QuotaError(ServiceError):
    """A request over a limit on how much a client may ask for; ``retry_after_s`` says when
    to try again (HTTP's Retry-After; the message says it too). Each kind has its row."""

    def __init__(self, message: str = "", retry_after_s: int = 30) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class TooManyMatchesError(QuotaError):
    """As many matches for people are open as the server allows."""


class OpenQuotaError(QuotaError):
    """The address or bot already has as many matches or challenges open as it may."""


class HourlyQuotaError(QuotaError):
    """The address or bot asked for as many matches or challenges in the last hour as it
    may."""


class SettingOverCapError(ServiceError):
    """A match made without the admin token asks for a setting (or a table) above the
    server's cap (``bullring.server.quotas.MatchCaps``)."""


class TournamentTooLargeError(ServiceError):
    """A tournament whose schedule would hold more games than the server schedules."""


class InvalidRequestError(ServiceError):
    """A request that cannot be read: not valid protobuf or JSON, a field out of range, a
    Play stream whose first message is not a Join."""


class JoinTimeoutError(ServiceError):
    """A Play stream sent no Join in time."""


class BodyTimeoutError(ServiceError):
    """An HTTP request's body did not arrive whole in time."""


class TooManyConnectionsError(ServiceError):
    """A client address holds as many HTTP connections as one address may."""


class TooManyCallsError(ServiceError):
    """A client address holds as many concurrent gRPC calls as one address may."""


class LadderRequiredError(ServiceError):
    """A registered bot's token connects without naming the ladder to join."""


class LadderNeedsBotTokenError(ServiceError):
    """A ladder named with a seat's token."""


class NoLadderError(ServiceError):
    """This server runs no ladder."""


class NoSuchLadderError(ServiceError):
    """This server runs no ladder of the game asked for."""


class GameMismatchError(ServiceError):
    """The bot's games leave out the seat's or the ladder's game."""


class ShuttingDownError(ServiceError):
    """The server is stopping."""


class NotFoundError(ServiceError):
    """No challenge, tournament or other thing by the id or name asked for."""

    exit_code = ExitCode.NOT_FOUND


class ConflictError(ServiceError):
    """The thing asked for is not in a state that allows this (a challenge answered, a
    tournament bot busy)."""


class UnknownMatchError(BullringError, LookupError):
    """No match is stored under the id asked for."""

    exit_code = ExitCode.NOT_FOUND


class ReplayNotFoundError(BullringError, LookupError):
    """A match that ended has no stored replay."""

    exit_code = ExitCode.NOT_FOUND


class MatchOverError(BullringError, LookupError):
    """The match a token names has already ended."""

    exit_code = ExitCode.USAGE


class MatchElsewhereError(BullringError, RuntimeError):
    """The match is being played by another server process on the same database."""

    exit_code = ExitCode.DATABASE


class MatchNotStartedError(ServiceError):
    """The match has not started yet."""


class MatchNotFinishedError(BullringError, ValueError):
    """A replay asked for before its match ended."""

    exit_code = ExitCode.USAGE


class MatchSetupError(BullringError, ValueError):
    """A match cannot be created as asked (unknown game, bad seats, setting or house bot)."""

    exit_code = ExitCode.USAGE


class BotError(BullringError, ValueError):
    """A bot registry request that cannot be done (unknown name, taken name, bad name)."""

    exit_code = ExitCode.USAGE


class UnknownBotNameError(BotError):
    """No bot is registered under the name asked for."""

    exit_code = ExitCode.NOT_FOUND


class BotNameTakenError(BotError):
    """A bot is already registered under the name asked for."""

    exit_code = ExitCode.NOT_FOUND


class InvalidChallengeError(BullringError, ValueError):
    """A challenge asked for with bad opponents, a bad table or a bad reason."""

    exit_code = ExitCode.USAGE


class InvalidTournamentError(BullringError, ValueError):
    """A tournament asked for with a bad format, bots, table size or wait."""

    exit_code = ExitCode.USAGE


@dataclass(frozen=True, slots=True)
class Status:
    """How every transport answers one type of error."""

    grpc: grpc.StatusCode
    """The gRPC status the call ends with."""
    http: int
    """The HTTP status of the JSON error response."""
    code: str
    """The stable code in the JSON error body."""
    when: str
    """When a caller meets it (for the documentation)."""
    message: str | None = None
    """The message every caller is told, where the exception's own text is the server's
    business (None: the exception's text)."""
    wire: bool = True
    """False for an error raised on the caller's side (by the rules, the SDK or a command)
    that no transport answers with: its statuses are those of the refusal it stands for,
    and the transports and the protocol's table leave it out (a transport answers it, if
    it ever escapes, as an internal error)."""


UNAVAILABLE_MESSAGE = "the database is unavailable for the moment; try again shortly"
"""What a call is told when the database stayed unavailable."""

ERRORS: dict[type[Exception], Status] = {
    NotAuthenticatedError: Status(
        grpc.StatusCode.UNAUTHENTICATED, 401, "unauthorized",
        "no bearer token, or a token the server does not know (or one rotated lately: the "
        "message says so)"),
    ForbiddenError: Status(grpc.StatusCode.PERMISSION_DENIED, 403, "forbidden",
                           "an admin call with another token; an answer to a challenge "
                           "that does not name the bot"),
    BotDisabledError: Status(grpc.StatusCode.PERMISSION_DENIED, 403, "bot_disabled",
                             "a disabled bot joins a ladder or challenges"),
    HouseBotError: Status(grpc.StatusCode.PERMISSION_DENIED, 403, "house_bot",
                          "a house bot's token joins a ladder or challenges"),
    FellBehindError: Status(grpc.StatusCode.RESOURCE_EXHAUSTED, 429, "fell_behind",
                            "a spectator left too much unread and was cut off: watch again "
                            "(on HTTP a comment ends the event stream)"),
    HumanMatchesOffError: Status(grpc.StatusCode.PERMISSION_DENIED, 403, "human_matches_off",
                                 "this server makes no matches for people"),
    TooManyMatchesError: Status(grpc.StatusCode.RESOURCE_EXHAUSTED, 429, "too_many_matches",
                                "as many matches for people are open as the server allows "
                                "(--human-matches)"),
    OpenQuotaError: Status(grpc.StatusCode.RESOURCE_EXHAUSTED, 429, "open_quota",
                           "an address has as many matches for people open at once as it "
                           "may (--human-open-per-address), or a bot as many challenges "
                           "waiting (--challenges-open)"),
    HourlyQuotaError: Status(grpc.StatusCode.RESOURCE_EXHAUSTED, 429, "hourly_quota",
                             "an address asked for as many matches for people in the last "
                             "hour as it may (--human-per-hour), or a bot for as many "
                             "challenges (--challenges-per-hour)"),
    SettingOverCapError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "setting_over_cap",
                                "a match made without the admin token asks for a setting or "
                                "a table above the server's cap (--match-cap NAME=MAX; the "
                                "message names the setting and its cap)"),
    TournamentTooLargeError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400,
                                    "tournament_too_large",
                                    "a tournament whose schedule holds more games than the "
                                    "server schedules (--max-tournament-games)"),
    InvalidRequestError: Status(
        grpc.StatusCode.INVALID_ARGUMENT, 422, "invalid_request",
        "a message that is not valid protobuf (JSON), the first message of Play is not a "
        "Join, an action with two fields or a number out of the int32 range, a field out "
        "of range"),
    JoinTimeoutError: Status(grpc.StatusCode.DEADLINE_EXCEEDED, 408, "join_timeout",
                             "a Play stream sends no Join in time (gRPC only)"),
    BodyTimeoutError: Status(grpc.StatusCode.DEADLINE_EXCEEDED, 408, "body_timeout",
                             "an HTTP request's body does not arrive whole within "
                             "--body-timeout of its head; the connection is closed (HTTP "
                             "only)"),
    TooManyConnectionsError: Status(grpc.StatusCode.RESOURCE_EXHAUSTED, 429,
                                    "too_many_connections",
                                    "a client address holds --max-connections-per-address "
                                    "HTTP connections already; the new one is closed (HTTP "
                                    "only)"),
    TooManyCallsError: Status(grpc.StatusCode.RESOURCE_EXHAUSTED, 429, "too_many_calls",
                              "a client address holds --max-calls-per-address concurrent "
                              "gRPC calls already (gRPC only)"),
    LadderRequiredError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "ladder_required",
                                "a registered bot's token joins without naming a ladder, on a "
                                "server that runs several (on one that runs one, that ladder "
                                "is joined)"),
    LadderNeedsBotTokenError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400,
                                     "ladder_needs_bot_token",
                                     "a ladder named with a seat's token (HTTP only)"),
    UnknownGameError: Status(grpc.StatusCode.NOT_FOUND, 404, "unknown_game",
                             "no game by that name (a ladder, a leaderboard)"),
    NoLadderError: Status(grpc.StatusCode.FAILED_PRECONDITION, 409, "no_ladder",
                          "this server runs no ladder"),
    NoSuchLadderError: Status(grpc.StatusCode.FAILED_PRECONDITION, 409, "no_such_ladder",
                              "this server runs no ladder of that game"),
    GameMismatchError: Status(
        grpc.StatusCode.FAILED_PRECONDITION, 409, "game_mismatch",
        "the bot's games leave out the seat's or ladder's game (the message names both; "
        "the seat stays free)"),
    UnknownMatchError: Status(grpc.StatusCode.NOT_FOUND, 404, "match_not_found",
                              "the token's (or the asked) match is not stored"),
    ReplayNotFoundError: Status(grpc.StatusCode.NOT_FOUND, 404, "replay_not_found",
                                "a match that ended has no stored replay"),
    MatchOverError: Status(grpc.StatusCode.FAILED_PRECONDITION, 409, "match_over",
                           "the match has already ended"),
    MatchElsewhereError: Status(grpc.StatusCode.FAILED_PRECONDITION, 409, "match_not_live",
                                "the match runs on another server of the same database"),
    MatchNotStartedError: Status(grpc.StatusCode.FAILED_PRECONDITION, 409,
                                 "match_not_started", "the match has not started yet"),
    MatchNotFinishedError: Status(grpc.StatusCode.FAILED_PRECONDITION, 409,
                                  "match_not_finished", "a replay before its match ended"),
    MatchSetupError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "invalid_match",
                            "a match with an unknown game, bad seats, settings or house bots"),
    BotError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "invalid_bot",
                     "a bad bot name or owner"),
    UnknownBotNameError: Status(grpc.StatusCode.NOT_FOUND, 404, "bot_not_found",
                                "no bot is registered under that name"),
    BotNameTakenError: Status(grpc.StatusCode.ALREADY_EXISTS, 409, "bot_exists",
                              "a bot is already registered under that name"),
    InvalidChallengeError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "invalid_challenge",
                                  "a challenge with bad opponents, table or reason"),
    InvalidTournamentError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400,
                                   "invalid_tournament",
                                   "a tournament with a bad format, bots, tables or wait"),
    NotFoundError: Status(grpc.StatusCode.NOT_FOUND, 404, "not_found",
                          "no challenge or tournament by that id, no bot by that name"),
    ConflictError: Status(grpc.StatusCode.FAILED_PRECONDITION, 409, "conflict",
                          "a challenge already answered; a tournament bot that cannot play"),
    ShuttingDownError: Status(grpc.StatusCode.UNAVAILABLE, 503, "shutting_down",
                              "the server is stopping: connect again soon"),
    DatabaseUnavailableError: Status(grpc.StatusCode.UNAVAILABLE, 503, "database_unavailable",
                                     "the database is away for the moment: try again",
                                     UNAVAILABLE_MESSAGE),
    OperationalError: Status(grpc.StatusCode.UNAVAILABLE, 503, "database_unavailable",
                             "the database is away for the moment: try again",
                             UNAVAILABLE_MESSAGE),
    # Raised on the caller's side, never sent (``wire=False``): the rules' refusals, the
    # SDK's and the commands' own errors. A command exits with the class's ``exit_code``.
    DatabaseBusyError: Status(grpc.StatusCode.UNAVAILABLE, 503, "database_busy",
                              "another server already serves this SQLite database",
                              wire=False),
    BrokerError: Status(grpc.StatusCode.UNAVAILABLE, 503, "broker_unreachable",
                        "the fleet's broker could not be reached", wire=False),
    RelayFrameError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "relay_frame",
                            "a broker message that is not a relay frame (logged, dropped)",
                            wire=False),
    RefereeError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "refused_by_rules",
                         "the rules refuse a setting, a replay or an answer (an answer's "
                         "refusal travels in-band, with its REJECT_REASONS reason)", wire=False),
    CommandError: Status(grpc.StatusCode.FAILED_PRECONDITION, 409, "check_failed",
                         "what a command checked failed (a replay mismatch, a server not "
                         "SERVING)", wire=False),
    UsageError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "usage",
                       "a bad option, argument or setting of a command", wire=False),
    RefusedError: Status(grpc.StatusCode.UNAUTHENTICATED, 401, "unauthorized",
                         "the server refused a command's token", wire=False),
    UnreachableError: Status(grpc.StatusCode.UNAVAILABLE, 503, "unreachable",
                             "a command could not reach the server", wire=False),
    CommandDatabaseError: Status(grpc.StatusCode.UNAVAILABLE, 503, "database_unavailable",
                                 "the database is away for the moment: try again",
                                 UNAVAILABLE_MESSAGE, wire=False),
    CommandNotFoundError: Status(grpc.StatusCode.NOT_FOUND, 404, "not_found",
                                 "a command names no match or bot the server knows, or a "
                                 "name already taken", wire=False),
    BotFailedError: Status(grpc.StatusCode.FAILED_PRECONDITION, 409, "bot_failed",
                           "a bot raised or answered illegally in a local arena or "
                           "tournament", wire=False),
    ArenaSetupError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "invalid_arena",
                            "an arena run with a bot that does not load or play the game, or "
                            "a table size the game does not allow", wire=False),
    BotSpecError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "invalid_bot_spec",
                         "a bot spec that does not load, or a bot that does not play the "
                         "game", wire=False),
    TournamentError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "invalid_tournament",
                            "a tournament with a bad format, bots, tables or wait",
                            wire=False),
    UnknownBotError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "unknown_house_bot",
                            "no house bot by that name, or one that does not play the game",
                            wire=False),
    AgentError: Status(grpc.StatusCode.FAILED_PRECONDITION, 409, "agent_answer_refused",
                       "an agent's answer with no decision pending, or not a legal one",
                       wire=False),
    EnvActionError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "invalid_env_action",
                           "an environment given an action outside its space or of the "
                           "wrong kind", wire=False),
    EnvStateError: Status(grpc.StatusCode.FAILED_PRECONDITION, 409, "env_not_ready",
                          "an environment used before reset() or after its game ended",
                          wire=False),
    CommentError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "invalid_comment",
                         "a bot's comment too long or holding control characters",
                         wire=False),
    ConfigurationError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "invalid_configuration",
                               "an option, limit, table size or log format out of range",
                               wire=False),
    OutOfRangeError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "out_of_range",
                            "a number outside what a function takes (a bug of its caller)",
                            wire=False),
    StreamClosedError: Status(grpc.StatusCode.FAILED_PRECONDITION, 409, "stream_closed",
                              "the server ended a bot's stream on purpose", wire=False),
    AccessEndedError: Status(grpc.StatusCode.PERMISSION_DENIED, 403, "access_ended",
                             "a bot's token was rotated or the bot disabled", wire=False),
    ChallengeUnplayableError: Status(grpc.StatusCode.FAILED_PRECONDITION, 409,
                                     "challenge_unplayable",
                                     "a practice match declined, expired or cancelled",
                                     wire=False),
    TokenRefusedError: Status(grpc.StatusCode.UNAUTHENTICATED, 401, "token_refused",
                              "the server refused a bot's token", wire=False),
    ServerUnreachableError: Status(grpc.StatusCode.UNAVAILABLE, 503, "server_unreachable",
                                   "no server answered a bot's connection or call",
                                   wire=False),
    RequestRejectedError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "request_rejected",
                                 "the server rejected what a bot asked for", wire=False),
    CallFailedError: Status(grpc.StatusCode.FAILED_PRECONDITION, 409, "call_failed",
                            "the server ended a bot's stream or call with a status the SDK "
                            "does not retry", wire=False),
    ContractError: Status(grpc.StatusCode.INVALID_ARGUMENT, 400, "unreadable_message",
                          "a message carrying nothing this side can read", wire=False),
}
"""The one table: each error type's gRPC status, HTTP status and code; the exit status of a
command that ends on it is the class's ``exit_code``. A subclass without a row of its own
answers as its nearest listed base."""

REJECT_REASONS: dict[type[ActionError], pb.RejectReason] = {
    MalformedActionError: pb.REJECT_REASON_MALFORMED_ACTION,
    IllegalActionError: pb.REJECT_REASON_ILLEGAL_ACTION,
    NotPendingError: pb.REJECT_REASON_NOT_PENDING,
}
"""The in-band reason an answer the referee refuses is rejected with, by error type."""


def row_of(error: type[BaseException]) -> Status | None:
    """The table's row for the type ``error``: its own, or its nearest listed base's; None
    for a type the table does not name."""
    for cls in error.__mro__:
        found = ERRORS.get(cls)
        if found is not None:
            return found
    return None


def status_of(exc: BaseException) -> Status | None:
    """The row a transport answers ``exc`` with (``row_of`` its type); None for an error the
    table does not name or that is never sent (a bug: the transport answers it as an
    internal error)."""
    found = row_of(type(exc))
    return found if found is not None and found.wire else None


def message_of(exc: BaseException, status: Status) -> str:
    """What the caller is told of ``exc``."""
    return status.message if status.message is not None else str(exc)


def reject_reason(exc: ActionError) -> pb.RejectReason:
    """The in-band reason an answer refused with ``exc`` is rejected with."""
    for cls in type(exc).__mro__:
        if cls in REJECT_REASONS:
            return REJECT_REASONS[cls]
    return pb.REJECT_REASON_ILLEGAL_ACTION


async def abort_grpc(context: grpc.aio.ServicerContext[Any, Any], exc: BaseException
                     ) -> NoReturn:
    """End the call with the table's status for ``exc`` (raised again if it has none)."""
    status = status_of(exc)
    if status is None:
        raise exc
    await context.abort(status.grpc, message_of(exc, status))
    raise AssertionError("unreachable")  # pragma: no cover - abort raises


async def answer_grpc(context: grpc.aio.ServicerContext[Any, Any], work: Awaitable[T]) -> T:
    """The result of ``work``, or the call ended with the table's status for its error."""
    try:
        return await work
    except Exception as exc:  # every error the table names; anything else is raised again
        if status_of(exc) is None:
            raise
        await abort_grpc(context, exc)
