"""The SDK's errors: a local run (arena, tournament) asked for what cannot be played, a bot
that fails one, a house bot that does not exist, an agent's refused answer, a server that
refuses a bot's token or request or cannot be reached. Each is a
``bullring.errors.BullringError``, so a command reports it in one line with its exit status;
one that is also a bad value is a ``ValueError`` too."""

from __future__ import annotations

from bullring.errors import BullringError, ExitCode


class BotFailedError(BullringError):
    """A bot raised or answered illegally in a local run; ``detail`` holds its traceback,
    trimmed to the author's code."""

    exit_code = ExitCode.BOT_FAILED

    def __init__(self, message: str, *, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail
        """More lines printed after the message (the bot's own traceback)."""


class ArenaSetupError(BullringError, ValueError):
    """An arena run that cannot be played as asked: a bot that does not load or play the
    game, or a table size the game does not allow; the message names the option."""

    exit_code = ExitCode.USAGE


class TournamentError(BullringError, ValueError):
    """A tournament cannot be played as asked: a bad entrant, format or table size."""

    exit_code = ExitCode.USAGE


class UnknownBotError(BullringError, ValueError):
    """No house bot has the name asked for, or it cannot play the game."""

    exit_code = ExitCode.USAGE


class AgentError(BullringError, ValueError):
    """An answer an agent's seat refuses (no decision pending, malformed or illegal): the
    agent may answer again while the decision's time lasts."""


class BotSpecError(BullringError, ValueError):
    """A bot spec (``module:Class``, ``path.py:Class`` or a house bot's name) that does not
    load, or names a bot that does not play the game."""

    exit_code = ExitCode.USAGE


class EnvActionError(BullringError, ValueError):
    """An environment was given an action it cannot take: outside its action space, of
    the wrong kind for the decision, or from an agent with nothing to decide."""

    exit_code = ExitCode.USAGE


class EnvStateError(BullringError, RuntimeError):
    """An environment used out of order: before ``reset()``, or after its game ended."""

    exit_code = ExitCode.USAGE


class CommentError(BullringError, ValueError):
    """A bot's comment the server would refuse (too long, or holding control characters)."""

    exit_code = ExitCode.USAGE


class StreamClosedError(BullringError, RuntimeError):
    """The server ended a bot's stream on purpose for a reason a runner does not recover
    from by connecting again; the message is the server's."""


class AccessEndedError(BullringError, PermissionError):
    """The server ended a bot's stream because its token was rotated or the bot disabled:
    it plays no more with this token."""

    exit_code = ExitCode.REFUSED


class ChallengeUnplayableError(BullringError, RuntimeError):
    """A practice match or challenge that cannot be played: declined, expired or
    cancelled, as the server says."""


class TokenRefusedError(BullringError, PermissionError):
    """The server refused the bot's token (UNAUTHENTICATED or PERMISSION_DENIED) when it
    connected or called: no seat, ladder or challenge is played with it; the message holds
    the server's words."""

    exit_code = ExitCode.REFUSED


class ServerUnreachableError(BullringError, ConnectionError):
    """No server answered: the runner gave up connecting (its addresses refused, or are an
    HTTP port, or stayed away past ``give_up_after_s``), or a call found none."""

    exit_code = ExitCode.UNREACHABLE


class RequestRejectedError(BullringError, ValueError):
    """The server rejected what the bot asked for as invalid, unknown, out of quota or not
    possible now (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, NOT_FOUND, FAILED_PRECONDITION): it
    is not asked again; the message holds the server's words."""

    exit_code = ExitCode.USAGE


class CallFailedError(BullringError, RuntimeError):
    """The server ended a seat's stream or a call with a status the SDK neither retries nor
    names otherwise; the message names the status and holds the server's words."""
