"""Bounded work per request, in one place: the caps on the settings of a match that a client
without the admin token makes (a person's match from the web page's button, a challenge, a
practice match), and the quotas per address and per bot.

``bullring serve`` sets them (``--match-cap NAME=MAX``, ``--human-open-per-address``,
``--human-per-hour``, ``--challenges-open``, ``--challenges-per-hour``); the defaults bound
every anonymous and every bot's request without the operator setting anything. A match made
with the admin token (``bullring match create``, AdminService.CreateMatch,
``POST /api/admin/matches``) and the ladder's own settings are the operator's choice and are
not capped. Over a cap, a request is refused with ``SettingOverCapError`` (400
``setting_over_cap``); over a quota with ``OpenQuotaError`` or ``HourlyQuotaError`` (429 with
Retry-After over HTTP, RESOURCE_EXHAUSTED over gRPC, the same message).

The hourly quotas count in this process's memory, in a moving window of one hour (the
``limits`` library); servers sharing a database each count their own. What is open at once
is counted where it lives: a person's open matches in this process, a bot's open challenges
in the database.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields

from limits import RateLimitItemPerHour
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

from bullring.errors import ConfigurationError
from bullring.referee.registry import GAMES
from bullring.referee.settings import Setting
from bullring.server.errors import HourlyQuotaError, SettingOverCapError

CLOCK_CAPS = ("deadline_ms", "max_timeouts", "time_bank_ms")
"""The settings every game has (``COMMON_SETTINGS``) that ``MatchCaps`` caps itself."""
OWN_CAPS = ("seats", *CLOCK_CAPS)
"""The caps that are ``MatchCaps``'s own fields: the table and the clock."""


def _declared() -> dict[str, int]:
    """The games' own settings that declare a public cap, in the order of the games and
    their settings, each with the most any installed game declares."""
    declared: dict[str, int] = {}
    for spec in GAMES.values():
        for s in spec.settings:
            if s.public_max is not None and s.name not in CLOCK_CAPS:
                declared[s.name] = max(declared.get(s.name, 0), s.public_max)
    return declared


@dataclass(frozen=True, slots=True)
class MatchCaps:
    """The most each setting that drives a match's work may ask for, in a match made
    without the admin token: the table and the clock, every game's, and each game's own
    settings that declare a public cap (``Setting.public_max``) or that the operator caps by
    name (``games``). With the defaults a match is at most 10 rounds of at most 10 seats
    (the games' own caps), and a silent seat costs at most ``max_timeouts`` deadlines plus
    its bank."""

    seats: int = 10
    """Seats at the table (every game's largest table fits)."""
    deadline_ms: int = 60_000
    """``deadline_ms``, the time for each decision."""
    max_timeouts: int = 5
    """``max_timeouts``, timeouts in a row before a seat counts as disconnected."""
    time_bank_ms: int = 60_000
    """``time_bank_ms``, each seat's extra time for the whole match."""
    games: Mapping[str, int] = field(default_factory=dict, hash=False)
    """The operator's caps on the games' own settings, by name (``rounds``: every game's
    ``rounds``), in place of the caps the games declare; each a name some installed game
    caps (``game_names``)."""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.games) - set(self.game_names()))
        if unknown:
            raise ConfigurationError(f"no cap on {unknown[0]!r}; caps: "
                                     f"{', '.join(self.names())}")
        caps = {name: getattr(self, name) for name in OWN_CAPS}
        for name, cap in {**caps, **self.games}.items():
            if cap < 1:
                raise ConfigurationError(f"the cap on {name} must be at least 1, not {cap}")

    @classmethod
    def given(cls, caps: Iterable[tuple[str, int]]) -> MatchCaps:
        """The caps with the operator's (``--match-cap NAME=MAX``, as name and cap pairs,
        the last of a name counting) in place of the defaults; raises ConfigurationError
        for a name nothing caps or a cap below 1."""
        own: dict[str, int] = {}
        games: dict[str, int] = {}
        for name, cap in caps:
            (own if name in OWN_CAPS else games)[name] = cap
        return cls(**own, games=games)

    @staticmethod
    def game_names() -> tuple[str, ...]:
        """The games' own settings that have a cap: those an installed game declares with
        a ``public_max``, in the order of the games and their settings."""
        return tuple(_declared())

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Every name that has a cap, ``seats`` first, the clock's last."""
        return ("seats", *cls.game_names(), *CLOCK_CAPS)

    def cap(self, setting: Setting) -> int | None:
        """The cap on a game's ``setting``: the clock's, the operator's for its name, else
        the game's own (``public_max``); None if nothing caps it."""
        if setting.name in CLOCK_CAPS:
            return int(getattr(self, setting.name))
        if isinstance(setting.default, bool) or not isinstance(setting.default, int):
            return None
        return self.games.get(setting.name, setting.public_max)

    def defaults(self) -> dict[str, int]:
        """Every cap by name, as ``names`` orders them (a game's own: the operator's, else
        the most any installed game declares)."""
        declared = _declared()
        return {name: getattr(self, name) if name in OWN_CAPS
                else self.games.get(name, declared[name]) for name in self.names()}

    def check(self, seats: int, settings: Mapping[str, object],
              declared: Sequence[Setting] = ()) -> None:
        """Refuse (SettingOverCapError) a table of ``seats`` or a setting of ``settings``
        (the engine's, every setting written out) above its cap; ``declared`` is the game's
        settings (``GameSpec.settings``), which say what each is capped at. A setting that
        is not among them, or that nothing caps, is not checked."""
        caps: dict[str, int | None] = {"seats": self.seats}
        caps.update((s.name, self.cap(s)) for s in declared if s.name not in CLOCK_CAPS)
        caps.update((name, getattr(self, name)) for name in CLOCK_CAPS)
        asked: dict[str, object] = {"seats": seats, **settings}
        for name, cap in caps.items():
            value = asked.get(name)
            if cap is None or isinstance(value, bool) or not isinstance(value, int):
                continue
            if value > cap:
                raise SettingOverCapError(
                    f"{name} is at most {cap} in a match made without the admin token, not "
                    f"{value} (the server's cap: bullring serve --match-cap {name}=MAX)")


@dataclass(frozen=True, slots=True)
class Quotas:
    """How much one address (anonymous routes) or one registered bot may ask for: open at
    once and per hour. 0 turns a quota off."""

    human_open_per_address: int = 2
    """Matches for people (``POST /api/human-matches``) one address may have open at once."""
    human_per_hour_per_address: int = 20
    """Matches for people one address may ask for in any hour (refused ones count)."""
    challenges_open_per_bot: int = 10
    """Challenges and practice matches a bot may have waiting at once (pending, or
    accepted and not yet seated)."""
    challenges_per_hour_per_bot: int = 120
    """Challenges and practice matches a bot may ask for in any hour (refused ones
    count)."""

    def __post_init__(self) -> None:
        for f in fields(self):
            if getattr(self, f.name) < 0:
                raise ConfigurationError(f"{f.name} must be 0 (off) or more, not "
                                 f"{getattr(self, f.name)}")


class HourlyQuota:
    """At most ``per_hour`` requests per key in any hour: a moving window kept in memory by
    the ``limits`` library. 0: no limit."""

    def __init__(self, per_hour: int, what: str, option: str) -> None:
        self.per_hour = per_hour
        self.what = what
        """What is counted, in words (``matches for people from one address``)."""
        self.option = option
        """The ``bullring serve`` option that sets ``per_hour``."""
        self._item = RateLimitItemPerHour(max(1, per_hour))
        self._limiter = MovingWindowRateLimiter(MemoryStorage())

    def take(self, key: str) -> None:
        """Count one request of ``key``, or refuse it (HourlyQuotaError, saying in how many
        seconds the oldest request counted leaves the window)."""
        if self.per_hour <= 0 or self._limiter.hit(self._item, key):
            return
        stats = self._limiter.get_window_stats(self._item, key)
        retry = max(1, math.ceil(stats.reset_time - time.time()))
        raise HourlyQuotaError(f"{self.per_hour} {self.what} in the last hour (bullring serve "
                               f"{self.option}); try again in {retry} s", retry)


def address_key(host: str | None) -> str:
    """The key one client address counts under: an IPv4 address, or an IPv6 address's /64
    network (what one machine is usually given); anything else as it is."""
    if not host:
        return "unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address.ipv4_mapped or address) if isinstance(address, ipaddress.IPv6Address) \
        else str(address)
