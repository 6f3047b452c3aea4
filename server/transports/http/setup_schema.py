"""The JSON Schemas of a match to make (``POST /api/admin/matches``, ``POST
/api/human-matches``), drawn from the game registry, the settings' declarations and the house
bots: one branch per game and table size, so the OpenAPI document says which games, tables,
settings (by name, each value as the text the server takes), house bots and people's seats a
server takes, and a client (or a fuzzer) can tell a request the server refuses from one it
accepts.

True/false settings that rule each other out at one table size (two variants of a game that
cannot be played together at its largest table) are ruled out by a ``not`` of the pair.
Two rules between fields are left to the server's answer, as JSON Schema cannot say them in
a form a generator draws from (a ``not`` per seat makes 2^seats alternatives; a
tournament's limit a branch per table size, number of bots and format, some 160): one seat
named both a house bot's and a person's, and a tournament's schedule over the server's
limit. Their operations declare them (``errors.beyond_schema``).
"""

from __future__ import annotations

import math
from typing import Any

from bullring.referee.core import RefereeError
from bullring.referee.registry import GAMES, AnyGameSpec
from bullring.referee.settings import Setting
from bullring.sdk.house import HOUSE_BOTS
from bullring.server.quotas import MatchCaps

TRUE_WORDS = ("true", "1", "yes", "on")
"""What a true/false setting takes for true (``bullring.referee.settings``)."""
FALSE_WORDS = ("false", "0", "no", "off")
"""And for false."""
BOT_NAME_TEXT = "[A-Za-z0-9_.-]{1,64}"
"""A registered bot's name (``bullring.commandline.values.BOT_NAME``)."""
MAX_SEATS = 20
"""The most seats a match asks for (CreateMatchIn.seats); a game allows fewer."""


def digits(low: int, high: int) -> str:
    """A regular expression matching exactly the decimal numbers ``low``..``high`` (both at
    least 0), written as the server reads them: no sign, no leading zero, no space."""
    alternatives: list[str] = []
    while low <= high:
        top = min(high, 10 ** len(str(low)) - 1)
        alternatives += _same_length(str(low), str(top))
        low = top + 1
    return "^(" + "|".join(alternatives) + ")$"


def _same_length(low: str, high: str) -> list[str]:
    """Alternatives matching the digit strings ``low``..``high`` of one length."""
    if low == high:
        return [low]
    common = 0
    while low[common] == high[common]:
        common += 1
    prefix, low, high = low[:common], low[common:], high[common:]
    rest = len(low) - 1
    tail = f"[0-9]{{{rest}}}" if rest else ""
    if low[1:] == "0" * rest and high[1:] == "9" * rest:
        return [prefix + _span(int(low[0]), int(high[0])) + tail]
    found: list[str] = []
    first = int(low[0])
    if low[1:] != "0" * rest:
        found += [prefix + low[0] + part for part in _same_length(low[1:], "9" * rest)]
        first += 1
    last = int(high[0]) if high[1:] == "9" * rest else int(high[0]) - 1
    if first <= last:
        found.append(prefix + _span(first, last) + tail)
    if high[1:] != "9" * rest:
        found += [prefix + high[0] + part for part in _same_length("0" * rest, high[1:])]
    return found


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"[{first}-{last}]"


def _value(setting: Setting, caps: MatchCaps | None, seats: int, spec: AnyGameSpec
           ) -> dict[str, Any]:
    """The schema of one setting's text at a table of ``seats``: its choices, true/false
    words, or its numbers (within ``caps``, if given)."""
    text = f"{setting.doc} (default {str(setting.default).lower()})"
    if isinstance(setting.default, bool):
        words = "|".join(_any_case(w) for w in _bool_words(setting, seats, spec))
        return {"type": "string", "pattern": f"^({words})$", "description": text}
    if isinstance(setting.default, int):
        low = setting.minimum if setting.minimum is not None else 0
        high = setting.maximum if setting.maximum is not None else 2**31 - 1
        cap = None if caps is None else caps.cap(setting)
        if cap is not None:
            high = min(high, cap)
        return {"type": "string", "pattern": digits(low, high),
                "description": f"{text}: {low} to {high}"}
    return {"type": "string", "enum": list(setting.choices), "description": text}


def _any_case(word: str) -> str:
    """A regular expression matching ``word`` in any case (the server reads true/false words
    so)."""
    return "".join(f"[{c.upper()}{c}]" if c.isalpha() else c for c in word)


def _bool_words(setting: Setting, seats: int, spec: AnyGameSpec) -> tuple[str, ...]:
    """The words a true/false setting may take at a table of ``seats``, beside the settings
    that table needs (a variant the smallest table is played in, which takes only true
    there): a setting the table cannot have takes only false (the engine decides, with every other
    setting at its default)."""
    base = dict.fromkeys(_needed(spec, seats), True)
    allowed: list[str] = []
    for words, value in ((TRUE_WORDS, True), (FALSE_WORDS, False)):
        if _starts(spec, seats, {**base, setting.name: value}):
            allowed += words
    return tuple(allowed)


def _starts(spec: AnyGameSpec, seats: int, settings: dict[str, Any]) -> bool:
    """Whether ``spec`` starts a match of ``seats`` with ``settings``."""
    try:
        spec.new_state(seats, settings, 0)
    except RefereeError:
        return False
    return True


def _needed(spec: AnyGameSpec, seats: int) -> list[str]:
    """The true/false settings a table of ``seats`` cannot go without (true)."""
    if _starts(spec, seats, {}):
        return []
    return [s.name for s in spec.settings
            if isinstance(s.default, bool) and _starts(spec, seats, {s.name: not s.default})]


def _tables(spec: AnyGameSpec, high: int) -> list[int]:
    """The table sizes of ``spec`` up to ``high`` seats that some settings allow."""
    return [n for n in range(spec.min_seats, min(spec.max_seats, high) + 1)
            if _starts(spec, n, {}) or _needed(spec, n)]


def settings_schema(spec: AnyGameSpec, seats: int, caps: MatchCaps | None = None,
                    left_out: tuple[str, ...] = ()) -> dict[str, Any]:
    """The ``settings`` of a match of ``spec`` at ``seats``: a string map of its settings
    by name (those of ``left_out`` aside), without the true/false values that rule each
    other out at that table (``_conflicts``: ``not`` each pair)."""
    schema: dict[str, Any] = {
        "type": "object", "additionalProperties": False, "required": _needed(spec, seats),
        "description": f"{spec.id}'s settings by name, each as text; an omitted one takes "
                       f"its default",
        "properties": {s.name: _value(s, caps, seats, spec) for s in spec.settings
                       if s.name not in left_out}}
    ruled_out = [{"not": {"required": list(pair), "properties": {
        name: {"pattern": _word_pattern(TRUE_WORDS if value else FALSE_WORDS)}
        for name, value in pair.items()}}} for pair in _conflicts(spec, seats)]
    return {**schema, "allOf": ruled_out} if ruled_out else schema


def _word_pattern(words: tuple[str, ...]) -> str:
    """A regular expression matching one of ``words`` in any case."""
    return f"^({'|'.join(_any_case(w) for w in words)})$"


def _conflicts(spec: AnyGameSpec, seats: int) -> list[dict[str, bool]]:
    """The values of two true/false settings that each start a match of ``seats`` (beside
    the settings that table needs) but not together."""
    base = dict.fromkeys(_needed(spec, seats), True)
    flags = [s.name for s in spec.settings if isinstance(s.default, bool)]
    found = []
    for i, first in enumerate(flags):
        for second in flags[i + 1:]:
            for one in (True, False):
                for other in (True, False):
                    pair = {first: one, second: other}
                    if (_starts(spec, seats, {**base, first: one})
                            and _starts(spec, seats, {**base, second: other})
                            and not _starts(spec, seats, {**base, **pair})):
                        found.append(pair)
    return found


def _names(spec: AnyGameSpec) -> list[str]:
    """The names a request may give ``spec`` by: its id and its versioned id."""
    return [spec.id, spec.versioned_id]


def house_bots(spec: AnyGameSpec) -> list[str]:
    """The house bots that play ``spec``."""
    return sorted(name for name, bot in HOUSE_BOTS.items()
                  if spec.id in getattr(bot, "games", ()))


def create_match_schema(base: dict[str, Any]) -> dict[str, Any]:
    """CreateMatchIn's schema (``base``, from its model) with one branch per game and table
    size: the seats, settings, house bots by seat and people's seats that table takes."""
    branches = []
    for spec in GAMES.values():
        for seats in _tables(spec, MAX_SEATS):
            seat = digits(0, seats - 1)
            branches.append({
                "type": "object", "title": f"{spec.id} at {seats}",
                "required": ["settings"] if _needed(spec, seats) else [],
                "properties": {
                    "game": {"type": "string", "enum": _names(spec)},
                    "seats": {"type": "integer", "enum": [seats]},
                    "settings": settings_schema(spec, seats),
                    "house": {"type": "object", "propertyNames": {"pattern": seat},
                              "additionalProperties": {"type": "string",
                                                       "enum": house_bots(spec)}},
                    "humans": {"type": "array", "items": {
                        "type": "integer", "minimum": 0, "maximum": seats - 1}}}})
    return _branched(base, branches)


def human_match_schema(base: dict[str, Any], caps: MatchCaps) -> dict[str, Any]:
    """HumanMatchIn's schema (``base``) with one branch per game and table size within
    ``caps``: the house bots beside the person, and the settings that table takes within
    ``caps`` (the deadline is ``deadline_ms``, not a setting here); without bots, the
    game's own opponents for a person (``GameSpec.opponents``), for a game that has them. A
    game no house bot plays has no branch: a person cannot play it here."""
    branches = []
    left_out = ("deadline_ms",)
    for spec in GAMES.values():
        if not house_bots(spec):
            continue
        game = {"type": "string", "enum": _names(spec)}
        kinds = {"type": "string", "enum": house_bots(spec)}
        if spec.opponents:
            table = 1 + len(spec.opponents)
            branches.append({"type": "object", "title": f"{spec.id} against its house bots",
                             "properties": {"game": game,
                                            "bots": {"type": "array", "maxItems": 0},
                                            "settings": settings_schema(spec, table, caps,
                                                                        left_out)}})
        for seats in _tables(spec, caps.seats):
            branches.append({
                "type": "object", "title": f"{spec.id} at {seats}",
                "required": ["bots", *(["settings"] if _needed(spec, seats) else [])],
                "properties": {"game": game, "bots": {
                    "type": "array", "items": kinds, "minItems": seats - 1,
                    "maxItems": seats - 1}, "settings": settings_schema(spec, seats, caps,
                                                                        left_out)}})
    return _branched(base, branches)


def challenge_schema(base: dict[str, Any], caps: MatchCaps) -> dict[str, Any]:
    """ChallengeIn's schema (``base``) with one branch per game: as many opponents as its
    tables (within ``caps``) seat beside the challenger, each a house bot that plays it
    (``house:KIND``) or a registered bot's name."""
    branches = []
    for spec in GAMES.values():
        tables = _tables(spec, caps.seats)
        kinds = "|".join(house_bots(spec))
        branches.append({
            "type": "object", "title": spec.id,
            "properties": {
                "game": {"type": "string", "enum": _names(spec)},
                "opponents": {"type": "array", "minItems": min(tables) - 1,
                              "maxItems": max(tables) - 1, "items": {
                                  "type": "string",
                                  "pattern": f"^(house:({kinds})|{BOT_NAME_TEXT})$"}}}})
    return _branched(base, branches)


def tournament_schema(base: dict[str, Any], max_scheduled: int) -> dict[str, Any]:
    """TournamentIn's schema (``base``) with one branch per game and table size: tables of
    ``seats`` need at least as many bots, and no more than make ``max_scheduled`` tables
    (each plays ``games`` games: a schedule above ``max_scheduled`` games is still refused,
    400 tournament_too_large); without ``seats`` every bot sits at one table."""
    branches = []
    for spec in GAMES.values():
        low, high = spec.min_seats, spec.max_seats
        game = {"type": "string", "enum": _names(spec)}
        branches.append({"type": "object", "title": f"{spec.id} at one table",
                         "properties": {"game": game, "seats": {"type": "null"},
                                        "bots": {"minItems": max(2, low), "maxItems": high}}})
        for seats in range(max(2, low), high + 1):
            most = max(n for n in range(seats, 17) if math.comb(n, seats) <= max_scheduled)
            branches.append({"type": "object", "title": f"{spec.id} at {seats}",
                             "required": ["seats"],
                             "properties": {"game": game, "seats": {"enum": [seats]},
                                            "bots": {"minItems": seats, "maxItems": most}}})
    return _branched(base, branches)


def _branched(base: dict[str, Any], branches: list[dict[str, Any]]) -> dict[str, Any]:
    """``base`` as ``oneOf`` its ``branches``, each branch whole: the base's properties with
    the branch's narrower ones (a generator that reads one branch alone still sees every
    field's bounds)."""
    whole = []
    for branch in branches:
        properties = {name: {**base["properties"].get(name, {}), **narrower}
                      for name, narrower in branch["properties"].items()}
        required = sorted({*base.get("required", []), *branch.get("required", [])})
        extra = {"additionalProperties": base["additionalProperties"]} \
            if "additionalProperties" in base else {}
        whole.append({**branch, **extra, "required": required,
                      "properties": {**base["properties"], **properties}})
    return {**base, "oneOf": whole}
