"""Argument types for plain values: counts, durations, ports, addresses, database URLs,
paths, names and times, each checked when it is parsed (see ``bullring.commandline``)."""

from __future__ import annotations

import argparse
import ipaddress
import math
import os
import re
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

from bullring.commandline.logs import has_control_characters

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
    bad = ("", "no such host", "[::1", "localhost\n")
    _NAME = re.compile(r"(?=.{1,253}\Z)[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?")

    def __call__(self, text: str) -> str:
        host = text[1:-1] if text.startswith("[") and text.endswith("]") else text
        try:
            ipaddress.ip_address(host)
            return host
        except ValueError:
            pass
        if not self._NAME.fullmatch(host):
            self.fail(f"must be a host name or IP address, not {text!r}")
        return host


class Origin(ArgType):
    """A web page's origin as a browser sends it, ``scheme://host[:port]`` (lower case)."""

    good = "https://agent.example.org"
    bad = ("agent.example.org", "*", "https://agent.example.org/page", "ftp://x.org", "null")

    def __call__(self, text: str) -> str:
        parts = urlsplit(text)
        try:
            parts.port  # noqa: B018 (checks the port)
        except ValueError:
            self.fail(f"{text!r} has a bad port")
        if parts.scheme not in ("http", "https") or not parts.hostname or \
                parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
            self.fail(f"must be an origin such as https://agent.example.org, not {text!r}")
        return f"{parts.scheme}://{parts.netloc}".lower()


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


class ServerAddresses(ArgType):
    """One gRPC server address or several, comma separated (``HOST:PORT,HOST:PORT``), each
    once: the servers of one fleet, tried in order."""

    good = "127.0.0.1:50051,127.0.0.2:50051"
    bad = ("localhost", "127.0.0.1:50051,", "127.0.0.1:50051,,127.0.0.2:50051",
           "127.0.0.1:50051,127.0.0.1:50051")

    def __call__(self, text: str) -> list[str]:
        addresses = [a.strip() for a in text.split(",")]
        if any(not a for a in addresses):
            self.fail(f"must be HOST:PORT or HOST:PORT,HOST:PORT,... (such as "
                      f"127.0.0.1:50051), not {text!r}")
        checked = [ServerAddress()(a) for a in addresses]
        if len(set(checked)) != len(checked):
            self.fail(f"an address is named twice in {text!r}")
        return checked


class DatabaseUrl(ArgType):
    """A database URL: ``sqlite:///FILE`` or ``postgresql+psycopg://USER@HOST/DB``.

    ``existing``: the SQLite file must be there already (every command but ``bullring
    serve``, which creates it: its folder must be writable).
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
                self.fail(f"no database at {str(file.absolute())!r}: only `bullring serve` "
                          f"creates one (start `bullring serve --db {text}` there first, or "
                          f"give the right --db)")
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


class WritableFile(ArgType):
    """A file the command writes (replaced whole if there; its folder created when missing)."""

    good = "out.txt"
    bad = ("/proc/no-such-folder/x", "/dev/null/x", ".")

    def __call__(self, text: str) -> Path:
        path = Path(text)
        if not path.name or path.is_dir():
            self.fail(f"{text!r} is a folder, not a file")
        writable_folder(path.parent, f"cannot write {text!r}", self.fail)
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
        self.bad = ("two\nlines", "a\u2028b", "x" * (limit + 1), *(() if allow_empty else ("",)))

    def __call__(self, text: str) -> str:
        if not text and not self.allow_empty:
            self.fail("must not be empty")
        if len(text) > self.limit:
            self.fail(f"must be at most {self.limit} characters, not {len(text)}")
        if has_control_characters(text):
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


BOT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""What a registered bot's name may hold (the whole name: checked with ``fullmatch``, as
every name and id here is; ``$`` would also match before a trailing newline)."""


def bot_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a registered bot, or None when it can."""
    if BOT_NAME.fullmatch(name):
        return None
    return f"bad bot name {name!r}: use 1-64 letters, digits, '-', '_' or '.'"


class BotName(ArgType):
    """The name of a registered bot."""

    good = "mybot"
    bad = ("no spaces", "", "mybot\n")

    def __call__(self, text: str) -> str:
        problem = bot_name_problem(text)
        if problem:
            self.fail(problem)
        return text


class BotNames(ArgType):
    """Registered bots' names, comma separated, each once."""

    good = "ann,bob"
    bad = ("ann,,bob", "ann,ann", "ann,no spaces")

    def __call__(self, text: str) -> list[str]:
        names = [n.strip() for n in text.split(",")]
        for name in names:
            problem = bot_name_problem(name)
            if problem:
                self.fail(problem)
        if len(set(names)) != len(names):
            self.fail(f"a bot is named twice in {text!r}")
        return names


class Opponents(ArgType):
    """Opponents in seat order, comma separated: ``house:KIND`` or a registered bot."""

    good = "house:greedy,bob"
    bad = ("", "bob,,cy", "x" * 73)

    def __call__(self, text: str) -> list[str]:
        names = [n.strip() for n in text.split(",")]
        if not text.strip() or any(not 0 < len(n) <= 72 for n in names):
            self.fail(f"name opponents separated by commas (house:greedy,bob), not {text!r}")
        return names


class MatchId(ArgType):
    """A stored match's id."""

    good = "1f2e3d4c5b6a"
    bad = ("../etc", "", "1f2e3d4c5b6a\n")
    _ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

    def __call__(self, text: str) -> str:
        if not self._ID.fullmatch(text):
            self.fail(f"{text!r} is not a match id (such as 1f2e3d4c5b6a)")
        return text


_AGO = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


class When(ArgType):
    """An ISO date/time (UTC unless it says otherwise) or an age such as ``30m``, ``2h``."""

    good = "2h"
    bad = ("yesterday", "99999999d", "2h\n")

    def __call__(self, text: str) -> datetime:
        ago = _AGO.fullmatch(text)
        try:
            if ago:
                return datetime.now(UTC) - timedelta(**{_UNITS[ago.group(2)]:
                                                        float(ago.group(1))})
            when = datetime.fromisoformat(text)
        except (ValueError, OverflowError):
            self.fail(f"{text!r} is neither an ISO time (2026-12-02T17:00) nor an age "
                      f"(30m, 2h, 1d)")
        return when if when.tzinfo else when.replace(tzinfo=UTC)


