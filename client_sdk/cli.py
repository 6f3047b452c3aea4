"""What every Bullring command shares: argument types that check a value when it is parsed,
and one error boundary that turns the project's errors into one line and an exit status.

Every option of ``bullring``, ``bullring-bot``, ``bullring-arena`` and ``bullring-tournament``
is parsed by one of the types here, so a wrong value is refused before any work starts, in
one line that names the option: ``bullring arena: --games: must be at least 1, not '-5'``.
The boundary (``run``) maps the project's errors to the exit statuses of ``EXIT_STATUSES``;
any other exception is a bug and keeps its traceback.

This module is imported before every command runs, so it imports nothing heavy at the top.
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import os
import re
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import urlsplit


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


EXIT_STATUSES = """exit status:
  0    done
  1    the check failed (replay verify: a mismatch; health: not SERVING)
  2    a bad option, argument or setting
  3    the server refused the token
  4    the server could not be reached
  5    the database could not be opened or reached
  6    a bot raised or answered illegally (its traceback follows the message)
  7    no such match or bot, or the name is taken
  8    the output was closed before it was all written
  130  interrupted
  A traceback with any other error is a bug in Bullring: please report it."""
"""The exit statuses, as every command's ``--help`` ends."""


class CommandError(Exception):
    """A failure a command reports in one line, ``PROG: MESSAGE``, with its exit status."""

    exit_code = ExitCode.FAILED

    def __init__(self, message: str, *, prog: str | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.prog = prog
        """The command that failed, when it is not the one the boundary runs."""
        self.detail = detail
        """More lines printed after the message (a bot's own traceback)."""


class UsageError(CommandError):
    """A bad option, argument or setting."""

    exit_code = ExitCode.USAGE


class RefusedError(CommandError):
    """The server refused the token."""

    exit_code = ExitCode.REFUSED


class UnreachableError(CommandError):
    """The server did not answer."""

    exit_code = ExitCode.UNREACHABLE


class DatabaseError(CommandError):
    """The database could not be opened or reached."""

    exit_code = ExitCode.DATABASE


class BotFailedError(CommandError):
    """A bot raised or answered illegally; ``detail`` holds its traceback."""

    exit_code = ExitCode.BOT_FAILED


class NotFoundError(CommandError):
    """No such match or bot, or a name already taken."""

    exit_code = ExitCode.NOT_FOUND


# --------------------------------------------------------------------------- the parser


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line naming the option (a ``UsageError``),
    whose help ends with the exit statuses, and whose ``--version`` names the package."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("epilog", EXIT_STATUSES)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def format_help(self) -> str:
        """The help, with the docstrings' ``code`` marks taken out."""
        return super().format_help().replace("``", "")

    def error(self, message: str) -> NoReturn:
        """Raise a ``UsageError`` saying what was wrong (argparse prints usage and exits)."""
        message = message.removeprefix("argument ")
        raise UsageError(f"{message} (see {self.prog} --help)", prog=self.prog)


class _Version(argparse.Action):
    """``--version``: print the installed package's version (looked up only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"{parser.prog} {version()}")
        parser.exit()


def version() -> str:
    """The installed version of Bullring (the full install, else the bot SDK)."""
    from importlib import metadata

    for package in ("bullring", "bullring-sdk"):
        try:
            return f"{metadata.version(package)} ({package})"
        except metadata.PackageNotFoundError:
            continue
    return "(not installed)"


def new_parser(prog: str, description: str | None) -> Parser:
    """A top-level parser for ``prog`` with ``--version``."""
    parser = Parser(prog=prog, description=description)
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    return parser


# --------------------------------------------------------------------------- the boundary


if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[Any]
    """What ``add_subparsers`` returns: a command's sub-commands (annotations only)."""

Classifier = Callable[[BaseException], CommandError | None]
"""Turns an error of some other layer (the database's) into a ``CommandError``, or None."""


def run(prog: str, parser: argparse.ArgumentParser, argv: Sequence[str] | None,
        classify: Classifier | None = None) -> int:
    """Parse ``argv``, run the command it names (``args.run``) and return its exit status.

    Errors the project knows become one line on stderr, ``PROG: MESSAGE``, and the status
    of their class (``ExitCode``); anything else propagates with its traceback.
    """
    args = argparse.Namespace()
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help and --version
            return int(exc.code or 0)
        return int(args.run(args))
    except KeyboardInterrupt:
        print(f"{getattr(args, 'command_prog', prog)}: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        print(f"{getattr(args, 'command_prog', prog)}: the output was closed before it was all "
              f"written", file=sys.stderr)
        return ExitCode.OUTPUT_CLOSED
    except Exception as exc:
        error = known_error(exc, classify)
        if error is None:
            raise
        print(f"{error.prog or getattr(args, 'command_prog', prog)}: {error}", file=sys.stderr)
        if error.detail:
            print(error.detail.rstrip("\n"), file=sys.stderr)
        return error.exit_code


def known_error(exc: BaseException, classify: Classifier | None = None) -> CommandError | None:
    """``exc`` as a ``CommandError`` when it is one of the project's errors, else None."""
    if isinstance(exc, CommandError):
        return exc
    if classify is not None:
        mapped = classify(exc)
        if mapped is not None:
            return mapped
    from client_sdk.house import UnknownBotError
    from referee.core import RefereeError

    if isinstance(exc, RefereeError | UnknownBotError):
        return UsageError(str(exc))
    return None


def command(parser: argparse.ArgumentParser, run: Callable[[argparse.Namespace], int]) -> None:
    """Make ``parser`` run ``run`` and name itself (``bullring arena``) in its errors."""
    parser.set_defaults(run=run, command_prog=parser.prog)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def bot_traceback(exc: BaseException, skip: Callable[[str], bool]) -> str:
    """The traceback of a bot's exception, keeping only frames whose file ``skip`` does not
    reject (the author's code, not the arena's), so it points at the author's file and line."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not skip(f.filename)]
    lines = ["Traceback (the bot's code):\n", *traceback.format_list(frames),
             *traceback.format_exception_only(type(exc), exc)]
    return "".join(lines)


# --------------------------------------------------------------------------- argument types


class ArgType:
    """An argparse ``type`` that checks its value; ``bad`` are values it refuses and
    ``good`` one it takes (tests walk the parsers with them)."""

    bad: tuple[str, ...] = ()
    good: str = ""
    __name__ = "value"

    def __call__(self, text: str) -> Any:
        """The parsed value of ``text``; raises ``argparse.ArgumentTypeError``."""
        raise NotImplementedError

    @staticmethod
    def fail(message: str) -> NoReturn:
        """Refuse the value, saying why."""
        raise argparse.ArgumentTypeError(message)


class Integer(ArgType):
    """An integer from ``minimum`` to ``maximum`` (either may be open)."""

    def __init__(self, minimum: int | None = None, maximum: int | None = None) -> None:
        self.minimum, self.maximum = minimum, maximum
        self.good = str(minimum if minimum is not None else 0)
        bad = ["x"]
        if minimum is not None:
            bad.append(str(minimum - 1))
        if maximum is not None:
            bad.append(str(maximum + 1))
        self.bad = tuple(bad)

    def __call__(self, text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            self.fail(f"must be an integer, not {text!r}")
        if self.minimum is not None and value < self.minimum:
            self.fail(f"must be at least {self.minimum}, not {text!r}")
        if self.maximum is not None and value > self.maximum:
            self.fail(f"must be at most {self.maximum}, not {text!r}")
        return value


def positive() -> Integer:
    """A count: 1 or more."""
    return Integer(1)


def non_negative() -> Integer:
    """0 or more."""
    return Integer(0)


class Seconds(ArgType):
    """A finite number of seconds, at least ``minimum`` (more than it when ``strict``)."""

    good = "1"

    def __init__(self, minimum: float = 0.0, strict: bool = False) -> None:
        self.minimum, self.strict = minimum, strict
        self.bad = ("x", "nan", str(minimum - 1))

    def __call__(self, text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            self.fail(f"must be a number of seconds, not {text!r}")
        if not math.isfinite(value) or value < self.minimum or (
                self.strict and value == self.minimum):
            word = "more than" if self.strict else "at least"
            self.fail(f"must be {word} {self.minimum:g} seconds, not {text!r}")
        return value


class Port(ArgType):
    """A TCP port: 1-65535, and 0 (pick a free one) or -1 (off) when allowed."""

    good = "50051"

    def __init__(self, allow_free: bool = True, allow_off: bool = False) -> None:
        self.low = -1 if allow_off else 0 if allow_free else 1
        self.bad = ("x", "65536", str(self.low - 1))
        self.allow_free, self.allow_off = allow_free, allow_off

    def __call__(self, text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = -2
        if not self.low <= value <= 65535:
            extra = ("; 0 picks a free port" if self.allow_free else "") + (
                "; -1 turns it off" if self.allow_off else "")
            self.fail(f"must be a port from 1 to 65535{extra}, not {text!r}")
        return value


class Host(ArgType):
    """A host name or IP address to listen on or connect to."""

    good = "127.0.0.1"
    bad = ("", "no such host", "[::1")
    _NAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$")

    def __call__(self, text: str) -> str:
        host = text[1:-1] if text.startswith("[") and text.endswith("]") else text
        try:
            ipaddress.ip_address(host)
            return host
        except ValueError:
            pass
        if not self._NAME.match(host):
            self.fail(f"must be a host name or IP address, not {text!r}")
        return host


class ServerAddress(ArgType):
    """A gRPC server address, ``HOST:PORT`` (``[::1]:50051`` for IPv6)."""

    good = "127.0.0.1:50051"
    bad = ("localhost", "localhost:99999", ":50051", "no such host:1")

    def __call__(self, text: str) -> str:
        host, sep, port = text.rpartition(":")
        problem = f"must be HOST:PORT (such as 127.0.0.1:50051), not {text!r}"
        if not sep or not host:
            self.fail(problem)
        try:
            Host()(host)
            Port(allow_free=False)(port)
        except argparse.ArgumentTypeError:
            self.fail(problem)
        return text


class DatabaseUrl(ArgType):
    """A database URL: ``sqlite:///FILE`` or ``postgresql+psycopg://USER@HOST/DB``.

    ``existing``: a command that only reads needs the SQLite file to be there already (it
    never creates one); otherwise its folder must be writable.
    """

    bad: tuple[str, ...] = ("mysql://localhost/x", "sqlite:////proc/nope/bullring.db",
                            "postgresql+psycopg://")

    def __init__(self, existing: bool = False) -> None:
        self.existing = existing
        self.good = "sqlite://"
        if existing:
            self.bad = (*self.bad, "sqlite:///no/such/folder/bullring.db")

    def __call__(self, text: str) -> str:
        scheme, sep, rest = text.partition("://")
        if not sep or scheme.split("+")[0] not in ("sqlite", "postgresql"):
            self.fail(f"must be sqlite:///FILE or postgresql+psycopg://USER@HOST/DB, "
                      f"not {text!r}")
        if scheme.startswith("sqlite"):
            self._sqlite(text, rest)
        else:
            parts = urlsplit(text)
            if not parts.hostname or not parts.path.strip("/"):
                self.fail(f"a PostgreSQL URL names a host and a database "
                          f"(postgresql+psycopg://USER@HOST/DB), not {text!r}")
        return text

    def _sqlite(self, text: str, rest: str) -> None:
        path = rest.removeprefix("/").partition("?")[0]
        if path in ("", ":memory:"):
            return
        file = Path(path)
        if self.existing:
            if not file.is_file():
                self.fail(f"no database at {path!r} (start `bullring serve --db {text}` "
                          f"first, or give the right --db)")
            if not os.access(file, os.R_OK):
                self.fail(f"cannot read the database {path!r}")
        elif file.exists():
            if not file.is_file():
                self.fail(f"{path!r} is not a file")
        else:
            writable_folder(file.parent, f"cannot create the database {path!r}", self.fail)


def writable_folder(folder: Path, what: str, fail: Callable[[str], NoReturn]) -> None:
    """Fail with ``what`` unless files can be made in ``folder`` or in the nearest folder
    above it that exists (it will be created); checked by making and removing a file."""
    here = folder.absolute()
    while not here.exists():
        here = here.parent
    if not here.is_dir():
        fail(f"{what}: {str(here)!r} is not a folder")
    try:
        with tempfile.TemporaryFile(dir=here):
            pass
    except OSError as exc:
        fail(f"{what}: {exc.strerror or exc}")


class WritableDir(ArgType):
    """A folder the command writes into (created when missing)."""

    good = "."
    bad = ("/proc/no-such-folder", "/dev/null")

    def __call__(self, text: str) -> Path:
        path = Path(text)
        if path.exists() and not path.is_dir():
            self.fail(f"{text!r} is not a folder")
        writable_folder(path, f"cannot write in {text!r}", self.fail)
        return path


class ReadablePath(ArgType):
    """A file or folder the command reads."""

    good = "."
    bad = ("/no/such/file",)

    def __call__(self, text: str) -> Path:
        path = Path(text)
        if not path.exists():
            self.fail(f"no such file or folder {text!r}")
        if not os.access(path, os.R_OK):
            self.fail(f"cannot read {text!r}")
        return path


class Text(ArgType):
    """One line of text (no control characters), up to ``limit`` characters."""

    good = "text"

    def __init__(self, limit: int = 200, allow_empty: bool = True) -> None:
        self.limit, self.allow_empty = limit, allow_empty
        self.bad = ("two\nlines", "x" * (limit + 1), *(() if allow_empty else ("",)))

    def __call__(self, text: str) -> str:
        if not text and not self.allow_empty:
            self.fail("must not be empty")
        if len(text) > self.limit:
            self.fail(f"must be at most {self.limit} characters, not {len(text)}")
        if any(ord(c) < 32 or ord(c) == 127 for c in text):
            self.fail(f"must be one line of text without control characters, not {text!r}")
        return text


class Token(ArgType):
    """A token: printable, no spaces."""

    good = "tok_x"
    bad = ("two words", "")

    def __call__(self, text: str) -> str:
        if not text or len(text) > 512 or not all(33 <= ord(c) < 127 for c in text):
            self.fail("must be the token as printed: letters, digits and signs, no spaces")
        return text


BOT_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
"""What a registered bot's name may hold."""


def bot_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a registered bot, or None when it can."""
    if BOT_NAME.match(name):
        return None
    return f"bad bot name {name!r}: use 1-64 letters, digits, '-', '_' or '.'"


class BotName(ArgType):
    """The name of a registered bot."""

    good = "mybot"
    bad = ("no spaces", "")

    def __call__(self, text: str) -> str:
        problem = bot_name_problem(text)
        if problem:
            self.fail(problem)
        return text


class MatchId(ArgType):
    """A stored match's id."""

    good = "1f2e3d4c5b6a"
    bad = ("../etc", "")
    _ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

    def __call__(self, text: str) -> str:
        if not self._ID.match(text):
            self.fail(f"{text!r} is not a match id (such as 1f2e3d4c5b6a)")
        return text


_AGO = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


class When(ArgType):
    """An ISO date/time (UTC unless it says otherwise) or an age such as ``30m``, ``2h``."""

    good = "2h"
    bad = ("yesterday", "99999999d")

    def __call__(self, text: str) -> datetime:
        ago = _AGO.match(text)
        try:
            if ago:
                return datetime.now(UTC) - timedelta(**{_UNITS[ago.group(2)]:
                                                        float(ago.group(1))})
            when = datetime.fromisoformat(text)
        except (ValueError, OverflowError):
            self.fail(f"{text!r} is neither an ISO time (2026-12-02T17:00) nor an age "
                      f"(30m, 2h, 1d)")
        return when if when.tzinfo else when.replace(tzinfo=UTC)


# --------------------------------------------------------------------------- games and bots


def _games() -> dict[str, Any]:
    from referee.registry import GAMES

    return {spec.id: spec for spec in GAMES.values()}


class GameName(ArgType):
    """A game of the registry (``six_nimmt``, or with its version, ``six_nimmt/1``)."""

    good = "six_nimmt"
    bad = ("chess",)

    def __call__(self, text: str) -> str:
        from referee.registry import UnknownGameError, get_game

        try:
            return get_game(text).id
        except UnknownGameError:
            self.fail(f"unknown game {text!r}; known: {', '.join(_games())}")


class GameList(ArgType):
    """Games of the registry, comma separated."""

    good = "six_nimmt,no_thanks"
    bad = ("six_nimmt,chess", ",")

    def __call__(self, text: str) -> tuple[str, ...]:
        names = [g.strip() for g in text.split(",") if g.strip()]
        if not names:
            self.fail("name at least one game")
        return tuple(dict.fromkeys(GameName()(g) for g in names))


def _house_bots() -> tuple[str, ...]:
    from client_sdk.house import HOUSE_BOTS

    return tuple(HOUSE_BOTS)


class HouseBotList(ArgType):
    """House bots by name, comma separated (a name twice is two bots); may be empty."""

    good = "greedy,random"
    bad = ("greedy,nobody",)

    def __call__(self, text: str) -> tuple[str, ...]:
        names = tuple(b.strip() for b in text.split(",") if b.strip())
        known = _house_bots()
        for name in names:
            if name not in known:
                self.fail(f"unknown house bot {name!r}; known: {', '.join(known)}")
        return names


class HouseSeat(ArgType):
    """``SEAT=NAME``: a house bot in a seat."""

    good = "0=random"
    bad = ("x=random", "0=nobody", "0")

    def __call__(self, text: str) -> tuple[int, str]:
        seat, sep, name = text.partition("=")
        if not sep or not seat.isdigit():
            self.fail(f"must be SEAT=NAME (such as 2=greedy), not {text!r}")
        known = _house_bots()
        if name not in known:
            self.fail(f"unknown house bot {name!r}; known: {', '.join(known)}")
        return int(seat), name


class BotSpec(ArgType):
    """A bot: a house bot's name (when ``bare_house``), ``house:NAME``, ``module:Class`` or
    ``path/to/file.py:Class``. Only the form and the file are checked here; the class is
    loaded when the command starts."""

    good = "house:random"
    _MODULE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")

    def __init__(self, bare_house: bool = False) -> None:
        self.bare_house = bare_house
        self.bad = ("house:nobody", "nobody" if bare_house else "random", "x.py:Bot",
                    "a b:C")
        if bare_house:
            self.good = "random"

    def __call__(self, text: str) -> str:
        known = _house_bots()
        forms = ("a house bot (" + ", ".join(known) + "), " if self.bare_house else
                 "house:NAME, ") + "module:Class or path/to/file.py:Class"
        if ":" not in text:
            if self.bare_house and text in known:
                return text
            self.fail(f"unknown bot {text!r}: expected {forms}")
        where, _, name = text.rpartition(":")
        if where == "house":
            if name not in known:
                self.fail(f"unknown house bot {name!r}; known: {', '.join(known)}")
            return text
        if not name or not all(part.isidentifier() for part in name.split(".")):
            self.fail(f"bad bot {text!r}: {name!r} is not a class name; expected {forms}")
        if where.endswith(".py"):
            path = Path(where).expanduser()
            if not path.is_file() or not os.access(path, os.R_OK):
                self.fail(f"bad bot {text!r}: no such file {where!r}")
        elif not self._MODULE.match(where):
            self.fail(f"bad bot {text!r}: {where!r} is neither a module name nor a path to "
                      f"a .py file")
        return text


class BotSpecList(ArgType):
    """Bots in seat order, comma separated (``BotSpec`` each)."""

    good = "random,greedy"
    bad = ("random,nobody", ",")

    def __init__(self) -> None:
        self.one = BotSpec(bare_house=True)

    def __call__(self, text: str) -> tuple[str, ...]:
        names = tuple(b.strip() for b in text.split(",") if b.strip())
        if not names:
            self.fail("name at least one bot")
        return tuple(self.one(name) for name in names)


def _settings_by_name() -> dict[str, list[tuple[str, Any]]]:
    """Every game's settings by name: (game, Setting) pairs."""
    found: dict[str, list[tuple[str, Any]]] = {}
    for game, spec in _games().items():
        for setting in spec.settings:
            found.setdefault(setting.name, []).append((game, setting))
    return found


class SettingPair(ArgType):
    """``KEY=VALUE``: a setting of some game, its value checked against that setting (the
    command checks it again against its ``--game`` before it starts)."""

    good = "deadline_ms=500"
    bad = ("rounds", "bogus=1", "rounds=abc", "=1")

    def __call__(self, text: str) -> tuple[str, str]:
        from referee.core import SettingsError

        key, sep, value = text.partition("=")
        if not sep or not key:
            self.fail(f"must be KEY=VALUE, not {text!r}")
        known = _settings_by_name()
        if key not in known:
            self.fail(f"unknown setting {key!r}; known: {', '.join(sorted(known))}")
        problems = []
        for _, setting in known[key]:
            try:
                setting.parse(value)
                return key, value
            except SettingsError as exc:
                problems.append(str(exc))
        self.fail(problems[0])


def game_settings(game: str, pairs: Sequence[tuple[str, str]],
                  option: str = "--setting") -> dict[str, str]:
    """``pairs`` as ``game``'s settings, each checked against its schema; a ``UsageError``
    naming ``option`` when one does not fit the game."""
    from referee.core import SettingsError
    from referee.settings import parse_settings

    spec = _games()[game]
    settings = dict(pairs)
    try:
        parse_settings(spec.settings, settings)
    except SettingsError as exc:
        raise UsageError(f"{option}: {exc} ({spec.title})") from None
    return settings


class LadderSetting(ArgType):
    """``GAME:KEY=VALUE``: a setting of every ladder match of a game, checked now."""

    good = "six_nimmt:deadline_ms=500"
    bad = ("six_nimmt:rounds=abc", "six_nimmt:bogus=1", "chess:rounds=1", "rounds=1")

    def __call__(self, text: str) -> tuple[str, str, str]:
        game, sep, pair = text.partition(":")
        if not sep:
            self.fail(f"must be GAME:KEY=VALUE, not {text!r}")
        game = GameName()(game)
        key, value = SettingPair()(pair)
        try:
            game_settings(game, [(key, value)])
        except UsageError as exc:
            self.fail(str(exc).removeprefix("--setting: "))
        return game, key, value


class TableSizeArg(ArgType):
    """``GAME=MIN-MAX`` (or ``GAME=N``): ladder table sizes within the game's seat limits."""

    good = "six_nimmt=4-5"
    bad = ("six_nimmt", "six_nimmt=1-99", "chess=4", "six_nimmt=5-4")

    def __call__(self, text: str) -> tuple[str, int, int]:
        game, sep, size = text.partition("=")
        if not sep:
            self.fail(f"must be GAME=MIN-MAX, not {text!r}")
        game = GameName()(game)
        spec = _games()[game]
        low, _, high = size.partition("-")
        try:
            minimum, maximum = int(low), int(high or low)
        except ValueError:
            self.fail(f"a table size is N or MIN-MAX, not {size!r}")
        if not spec.min_seats <= minimum <= maximum <= spec.max_seats:
            self.fail(f"{spec.title} tables have {spec.min_seats} to {spec.max_seats} seats "
                      f"(MIN <= MAX), not {size!r}")
        return game, minimum, maximum
