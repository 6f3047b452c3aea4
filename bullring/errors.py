"""The base of every error Bullring raises on purpose, and the exit status each ends a
command with.

The rules (``bullring.referee``), the SDK, the commands and the server each raise their own
errors, all subclasses of ``BullringError``; one whose failure is also a built-in kind (a
value refused, a thing not found) subclasses that built-in too, so ``except ValueError``
keeps catching it. ``bullring.server.errors.ERRORS`` gives each its gRPC status, HTTP status
and code; ``exit_code`` on the class is the status a command exits with when it ends on it
(``bullring.commandline.run``). This module is the lowest layer: it imports nothing of
Bullring, so every layer may import it.
"""

from __future__ import annotations

from enum import IntEnum
from typing import ClassVar


class ExitCode(IntEnum):
    """The exit status of a command, one per class of failure."""

    OK = 0
    FAILED = 1
    """What was checked failed (a replay mismatch, a server not SERVING); or a bug."""
    USAGE = 2
    """A bad option, argument or setting."""
    REFUSED = 3
    """The server refused the token."""
    UNREACHABLE = 4
    """The server could not be reached."""
    DATABASE = 5
    """The database could not be opened or reached."""
    BOT_FAILED = 6
    """A bot raised or answered illegally (arena, tournament)."""
    NOT_FOUND = 7
    """No such match or bot, or the name is taken."""
    OUTPUT_CLOSED = 8
    """Whoever read the output stopped reading (``| head``)."""
    INTERRUPTED = 130
    """Ctrl-C."""


class BullringError(Exception):
    """Base of every error Bullring raises about what it was asked (never of a bug): a
    command reports one in a line, ``PROG: MESSAGE``, and exits with its ``exit_code``."""

    exit_code: ClassVar[ExitCode] = ExitCode.FAILED
    """The status a command exits with when it ends on this error."""


class ConfigurationError(BullringError, ValueError):
    """A value that configures Bullring (an option, a limit, a table size, a log format)
    that is malformed or out of its range; the message names the value and what is wanted."""

    exit_code: ClassVar[ExitCode] = ExitCode.USAGE


class OutOfRangeError(BullringError, ValueError):
    """A number outside what a function takes: a card no deck holds, more draws than
    cards, ranks that do not match the ratings."""
