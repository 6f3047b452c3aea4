"""Games found by versioned id (``six_nimmt/1``), each with its seat limits and settings."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeAlias, TypeVar, get_args

from bullring.referee import no_thanks, six_nimmt
from bullring.referee.core import Action, Decision, RefereeError, Seat
from bullring.referee.settings import Setting, SettingValue

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


class UnknownGameError(RefereeError):
    """No game is registered under the id asked for."""


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
    dealt_state: DealtState | None = None
    """The constructor from given deals, for games whose replays can be checked from their
    rounds alone; None if this game's cannot."""
    observation: type | None = None
    """The NamedTuple a seat's observation is. The contract encodes it as the message in
    ``DecisionRequest``'s field named after the game's id, field by field by name."""
    optional: frozenset[str] = frozenset()
    """The observation's fields that may be None: sent as 0 or empty, read back as None."""
    events: tuple[type, ...] = ()
    """The NamedTuples of the game's public events. The contract encodes each as the field
    of its snake_case name in the message of ``PublicEvent``'s field named after the game's
    id, the event's fields in order."""

    @property
    def versioned_id(self) -> str:
        """The id with its rules version, such as ``six_nimmt/1``."""
        return f"{self.id}/{self.version}"


SIX_NIMMT: GameSpec[six_nimmt.Observation, six_nimmt.Event, six_nimmt.View] = GameSpec(
    "six_nimmt", 1, "6 nimmt!", six_nimmt.MIN_SEATS, six_nimmt.MAX_SEATS, six_nimmt.SETTINGS,
    six_nimmt.new_state, six_nimmt.new_state, six_nimmt.Observation,
    frozenset({"trick_plays"}), get_args(six_nimmt.Event))
"""6 nimmt!, whose states are ``GameState``s of ``six_nimmt``'s Observation, Event and View."""

NO_THANKS: GameSpec[no_thanks.Observation, no_thanks.Event, no_thanks.View] = GameSpec(
    "no_thanks", 1, "No Thanks!", no_thanks.MIN_SEATS, no_thanks.MAX_SEATS, no_thanks.SETTINGS,
    no_thanks.new_state, no_thanks.new_state, no_thanks.Observation,
    frozenset({"card", "hidden_card"}), get_args(no_thanks.Event))
"""No Thanks!, whose states are ``GameState``s of ``no_thanks``'s Observation, Event and View."""

AnyGameSpec: TypeAlias = GameSpec[Any, Any, Any]
"""A game's spec, whichever game: for code that serves any game."""

GAMES: dict[str, GameSpec[Any, Any, Any]] = {
    spec.versioned_id: spec for spec in (SIX_NIMMT, NO_THANKS)}
"""Every game, by versioned id."""


def get_game(game_id: str) -> GameSpec[Any, Any, Any]:
    """Return the game ``six_nimmt/1`` or, for a bare id like ``six_nimmt``, its newest version."""
    if game_id in GAMES:
        return GAMES[game_id]
    versions = [spec for spec in GAMES.values() if spec.id == game_id]
    if versions:
        return max(versions, key=lambda spec: spec.version)
    known = ", ".join(sorted(GAMES))
    raise UnknownGameError(f"unknown game {game_id!r}; known games: {known}")
