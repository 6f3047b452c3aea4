"""Games found by versioned id (``six_nimmt/1``), each with its seat limits and settings.

A game registers itself with one ``GameSpec`` named by a Python entry point of the group
``bullring.games`` in its distribution's metadata (``[project.entry-points."bullring.games"]``
in its ``pyproject.toml``): the two games Bullring comes with are registered so by
``bullring-sdk``, and a game installed from any other distribution the same way. The spec is
everything the rest of Bullring knows of a game: the referee, the wire, the server and the
web page read a game only through it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeAlias, TypeVar

from bullring.referee.core import Action, Decision, RefereeError, Seat
from bullring.referee.settings import Setting, SettingValue

ENTRY_POINT_GROUP = "bullring.games"
"""The entry point group a distribution registers its games in, each entry a ``GameSpec``."""

ObservationT_co = TypeVar("ObservationT_co", covariant=True)
"""What one seat of a game may know (``six_nimmt.Observation``)."""
EventT = TypeVar("EventT")
"""A game's public events (``six_nimmt.Event``)."""
ViewT_co = TypeVar("ViewT_co", covariant=True)
"""What a seat-less spectator of a game may know (``six_nimmt.View``)."""


class GameState(Protocol[ObservationT_co, EventT, ViewT_co]):
    """What every game's state offers: the decision-point interface, over the game's own
    types of observation, public event and spectator's view."""

    game: str
    seats: int
    seed: int
    step: int
    over: bool
    settings: dict[str, SettingValue]
    pending: dict[Seat, Decision]
    totals: tuple[int, ...]
    opening: list[EventT]
    """The public events of the deal, before the first decision."""

    def observation(self, seat: Seat) -> ObservationT_co:
        """What ``seat`` may know now."""

    def view(self) -> ViewT_co:
        """What a seat-less spectator may know now."""

    def validate(self, seat: Seat, action: Action) -> None:
        """Raise unless ``action`` answers ``seat``'s pending decision."""

    def default_action(self, seat: Seat) -> Action:
        """The action a silent seat gets."""

    def apply(self, answers: Mapping[Seat, Action]) -> list[EventT]:
        """Apply one answer per pending seat; return the public events."""

    def result(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Totals and ranks by seat."""

    def round_scores(self) -> list[tuple[int, ...]]:
        """Each finished round's score by seat (lower is better)."""

    def replay_rounds(self) -> list[dict[str, Any]]:
        """Every round so far as a docs/replay-format.md ROUND record."""


AnyGameState: TypeAlias = GameState[Any, Any, Any]
"""A state of any registered game, its observations, events and view left open."""

DealtState = Callable[[int, Mapping[str, Any] | None, int, Sequence[Sequence[int]]],
                     AnyGameState]
"""A game's constructor dealt from given deals (by round) as far as they go, then from the
seed: how a replay recorded elsewhere is re-checked from its rounds."""

RoundPlan: TypeAlias = list[tuple[str, dict[Seat, Action]]]
"""The answers a round record says were given, one decision point at a time in the order the
rules ask them, each with where in the record it is written (``tricks[3].plays``)."""


@dataclass(frozen=True, slots=True)
class RoundsReplay:
    """How a game's replay is checked from its rounds alone, when its match log holds no
    answer (a replay recorded by another program): each round is dealt as its record says,
    then played as its record says (docs/replay-format.md). The two readers take one round
    record (a ROUND of docs/replay-format.md) and raise KeyError, TypeError, ValueError or
    AttributeError for a record they cannot read."""

    dealt_state: DealtState
    """The constructor from given deals, each what ``deal`` reads from a round."""
    deal: Callable[[Mapping[str, Any]], list[int]]
    """The cards of a round as its record says they were dealt, in the order the game deals
    them (one entry of ``dealt_state``'s deals)."""
    plan: Callable[[Mapping[str, Any]], RoundPlan]
    """Every answer of a round as its record says, including those the record implies but
    does not write down (a No Thanks! seat keeping its hidden card)."""


class UnknownGameError(RefereeError):
    """No game is registered under the id asked for."""


class GameRegistrationError(RefereeError):
    """An installed distribution registers a game wrongly: its entry point is not a
    ``GameSpec``, or another distribution registers the same versioned id."""


@dataclass(frozen=True, slots=True)
class GameSpec(Generic[ObservationT_co, EventT, ViewT_co]):
    """A registered game: its id, version, seat limits, settings and constructor, whose
    states give the game's own observation, event and view types."""

    id: str
    version: int
    title: str
    min_seats: int
    max_seats: int
    settings: tuple[Setting, ...]
    new_state: Callable[[int, Mapping[str, Any] | None, int],
                        GameState[ObservationT_co, EventT, ViewT_co]]
    replay_from_rounds: RoundsReplay | None = None
    """How this game's replays are checked from their rounds alone (those whose match log
    holds no answer); None if they cannot be, and a replay without a log is refused."""
    observation: type | None = None
    """The NamedTuple a seat's observation is. The contract encodes it as the message in
    ``DecisionRequest``'s field named after the game's id, field by field by name."""
    optional: frozenset[str] = frozenset()
    """The observation's fields that may be None: sent as 0 or empty, read back as None."""
    events: tuple[type, ...] = ()
    """The NamedTuples of the game's public events. The contract encodes each as the field
    of its snake_case name in the message of ``PublicEvent``'s field named after the game's
    id, the event's fields in order."""
    web_view: tuple[str, str] | None = None
    """The script the web page draws this game with, as (package, file in that package):
    served at ``/games/ID/view.js``, it hands the page its views of a replay, a live match,
    a seat and the big screen. None: the page's generic views, which draw any game's
    replay, events and observations from their JSON."""
    ladder_seats: tuple[int, int] | None = None
    """The fewest and most seats of a ladder table unless the server is told otherwise;
    None: the game's own limits."""
    opponents: tuple[str, ...] = ()
    """The house bots a person plays against in the browser unless the request names others
    (``POST /api/human-matches``); empty: the request must name them."""

    @property
    def versioned_id(self) -> str:
        """The id with its rules version, such as ``six_nimmt/1``."""
        return f"{self.id}/{self.version}"


AnyGameSpec: TypeAlias = GameSpec[Any, Any, Any]
"""A game's spec, whichever game: for code that serves any game."""



def discover(found: Iterable[EntryPoint] | None = None,
             sources: dict[str, str] | None = None) -> dict[str, AnyGameSpec]:
    """Every game the installed distributions register (``found``: the entry points of
    ``ENTRY_POINT_GROUP``), by versioned id in the order of their titles (as a menu lists
    them), newest version last; raise GameRegistrationError for an entry that is not a
    ``GameSpec`` or a versioned id registered twice, naming the distributions. ``sources``
    gets the distribution that registers each game, by versioned id."""
    games: dict[str, AnyGameSpec] = {}
    owners: dict[str, str] = {}
    points = entry_points(group=ENTRY_POINT_GROUP) if found is None else found
    for point in points:
        source = point.dist.name if point.dist else "an unknown distribution"
        owner = f"{source}'s entry point {point.name!r} ({point.value})"
        spec = point.load()
        if not isinstance(spec, GameSpec):
            raise GameRegistrationError(f"{owner} is a {type(spec).__name__}, not a GameSpec")
        if spec.versioned_id in games:
            raise GameRegistrationError(f"{spec.versioned_id} is registered twice: by "
                                        f"{owners[spec.versioned_id]} and by {owner}")
        games[spec.versioned_id] = spec
        owners[spec.versioned_id] = owner
        if sources is not None:
            sources[spec.versioned_id] = source
    return dict(sorted(games.items(), key=lambda item: (item[1].title.casefold(),
                                                        item[1].id, item[1].version)))


SOURCES: dict[str, str]
"""The distribution that registers each game, by versioned id (``bullring-sdk`` for the
games Bullring comes with); found with ``GAMES``."""

GAMES: dict[str, AnyGameSpec]
"""Every game the installed distributions register, by versioned id; found on first use, not
when this module is imported, since a game's own module imports this one (for ``GameSpec``)
and may be the first to."""

_FINDING = threading.RLock()
"""Held while the games are found, so that they are found once."""


def _found() -> dict[str, AnyGameSpec]:
    """``GAMES``, found by the first caller (with ``SOURCES``)."""
    with _FINDING:
        if "GAMES" not in globals():
            sources: dict[str, str] = {}
            games = discover(sources=sources)
            globals().update(GAMES=games, SOURCES=sources)
    found: dict[str, AnyGameSpec] = globals()["GAMES"]
    return found


if not TYPE_CHECKING:  # the type checker reads GAMES and SOURCES as declared above
    def __getattr__(name: str) -> Any:
        """``GAMES`` and ``SOURCES``, found on their first use."""
        if name in ("GAMES", "SOURCES"):
            _found()
            return globals()[name]
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get_game(game_id: str) -> GameSpec[Any, Any, Any]:
    """Return the game ``six_nimmt/1`` or, for a bare id like ``six_nimmt``, its newest version."""
    games = _found()
    if game_id in games:
        return games[game_id]
    versions = [spec for spec in games.values() if spec.id == game_id]
    if versions:
        return max(versions, key=lambda spec: spec.version)
    if not games:
        raise UnknownGameError(f"unknown game {game_id!r}: no game is installed (no entry "
                               f"point of {ENTRY_POINT_GROUP!r}; bullring-sdk registers two: "
                               f"install it again if its metadata is older than its code)")
    known = ", ".join(sorted(games))
    raise UnknownGameError(f"unknown game {game_id!r}; known games: {known}")
