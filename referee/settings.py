"""Match settings declared as data, parsed and checked with errors that name what is allowed."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bullring.referee.core import SettingsError

DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)")
"""An integer setting as text: decimal digits, no leading zero, space, ``+`` or ``_``."""

SettingValue = int | str | bool
"""The value of one match setting."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One match setting: its name, default and the values it may take."""

    name: str
    default: SettingValue
    doc: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    public_max: int | None = None
    """For an integer setting that drives a match's work (its rounds, how long it lasts):
    the most a match made without the admin token may ask for, unless the server's operator
    sets another (``bullring serve --match-cap NAME=MAX``). None: only ``maximum`` bounds it."""

    def parse(self, raw: object) -> SettingValue:
        """Return ``raw`` (a native value or command-line text) as this setting's value."""
        if isinstance(self.default, bool):
            return self._parse_bool(raw)
        if isinstance(self.default, int):
            return self._parse_int(raw)
        return self._parse_choice(raw)

    def _parse_bool(self, raw: object) -> bool:
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.lower() in ("true", "1", "yes", "on"):
            return True
        if isinstance(raw, str) and raw.lower() in ("false", "0", "no", "off"):
            return False
        raise SettingsError(f"setting {self.name!r} must be true or false, not {raw!r}")

    def _parse_int(self, raw: object) -> int:
        if isinstance(raw, bool) or not isinstance(raw, int | str) or (
                isinstance(raw, str) and not DECIMAL.fullmatch(raw)):
            raise SettingsError(f"setting {self.name!r} must be an integer, not {raw!r}")
        value = int(raw)
        low, high = self.minimum, self.maximum
        if (low is not None and value < low) or (high is not None and value > high):
            raise SettingsError(
                f"setting {self.name!r} must be between {low} and {high}, not {value}"
            )
        return value

    def _parse_choice(self, raw: object) -> str:
        if not isinstance(raw, str) or raw not in self.choices:
            allowed = ", ".join(self.choices)
            raise SettingsError(f"setting {self.name!r} must be one of {allowed}; got {raw!r}")
        return raw


COMMON_SETTINGS: tuple[Setting, ...] = (
    Setting("deadline_ms", 1000, "time for each decision, in milliseconds", minimum=10,
            maximum=60_000),
    Setting("max_timeouts", 3, "timeouts in a row before a seat counts as disconnected",
            minimum=1, maximum=1000),
    Setting("time_bank_ms", 0, "each seat's extra time for the whole match, spent only by "
            "answers after the deadline, in milliseconds", minimum=0, maximum=3_600_000),
)
"""Referee settings shared by every game (docs/rules.md §3)."""


def parse_settings(
    declared: Sequence[Setting], raw: Mapping[str, Any] | None
) -> dict[str, SettingValue]:
    """Return every declared setting, defaults written out, with ``raw`` applied and checked."""
    if not raw:
        return {s.name: s.default for s in declared}
    by_name = {s.name: s for s in declared}
    raw = dict(raw or {})
    unknown = sorted(set(raw) - set(by_name))
    if unknown:
        known = ", ".join(sorted(by_name))
        raise SettingsError(f"unknown setting {unknown[0]!r}; known settings: {known}")
    return {s.name: (s.parse(raw[s.name]) if s.name in raw else s.default) for s in declared}


def check_seats(game: str, seats: int, low: int, high: int) -> None:
    """Raise SettingsError unless ``low <= seats <= high``."""
    if isinstance(seats, bool) or not isinstance(seats, int) or not low <= seats <= high:
        raise SettingsError(f"seats: {game} is played by {low} to {high} seats, not {seats!r}")
