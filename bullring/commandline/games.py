"""Argument types for games, house bots, bot specs, settings and table sizes, checked
against the registry when they are parsed (see ``bullring.commandline``)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bullring.commandline.boundary import UsageError
from bullring.commandline.values import ArgType

# --------------------------------------------------------------------------- games and bots


def _games() -> dict[str, Any]:
    from bullring.referee.registry import GAMES

    return {spec.id: spec for spec in GAMES.values()}


class GameName(ArgType):
    """A game of the registry (``six_nimmt``, or with its version, ``six_nimmt/1``)."""

    good = "six_nimmt"
    bad = ("chess",)

    def __call__(self, text: str) -> str:
        from bullring.referee.registry import UnknownGameError, get_game

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
    from bullring.sdk.house import HOUSE_BOTS

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
    _MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")

    def __init__(self, bare_house: bool = False) -> None:
        self.bare_house = bare_house
        self.bad = ("house:nobody", "nobody" if bare_house else "random", "x.py:Bot",
                    "a b:C", "mod\n:Bot")
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
        elif not self._MODULE.fullmatch(where):
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
        from bullring.referee.core import SettingsError

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
    from bullring.referee.core import SettingsError
    from bullring.referee.settings import parse_settings

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
