"""Games found by versioned id (``six_nimmt/1``), each with its seat limits and settings."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bullring.referee import no_thanks, six_nimmt
from bullring.referee.core import Action, Decision, RefereeError, Seat
from bullring.referee.settings import Setting, SettingValue


class GameState(Protocol):
    """What every game's state offers: the decision-point interface."""

    game: str
    seats: int
    seed: int
    step: int
    over: bool
    settings: dict[str, SettingValue]
    pending: dict[Seat, Decision]
    totals: tuple[int, ...]
    opening: list[Any]
    """The public events of the deal, before the first decision."""

    def observation(self, seat: Seat) -> Any:
        """What ``seat`` may know now."""

    def view(self) -> Any:
        """What a seat-less spectator may know now."""

    def validate(self, seat: Seat, action: Action) -> None:
        """Raise unless ``action`` answers ``seat``'s pending decision."""

    def default_action(self, seat: Seat) -> Action:
        """The action a silent seat gets."""

    def apply(self, answers: Mapping[Seat, Action]) -> list[Any]:
        """Apply one answer per pending seat; return the public events."""

    def result(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Totals and ranks by seat."""

    def round_scores(self) -> list[tuple[int, ...]]:
        """Each finished round's score by seat (lower is better)."""

    def replay_rounds(self) -> list[dict[str, Any]]:
        """Every round so far as a docs/replay-format.md ROUND record."""


DealtState = Callable[[int, Mapping[str, Any] | None, int, Sequence[Sequence[int]]],
                     GameState]
"""A game's constructor dealt from given deals (by round) as far as they go, then from the
seed: how a replay recorded elsewhere is re-checked from its rounds."""


class UnknownGameError(RefereeError):
    """No game is registered under the id asked for."""


@dataclass(frozen=True, slots=True)
class GameSpec:
    """A registered game: its id, version, seat limits, settings and constructor."""

    id: str
    version: int
    title: str
    min_seats: int
    max_seats: int
    settings: tuple[Setting, ...]
    new_state: Callable[[int, Mapping[str, Any] | None, int], GameState]
    dealt_state: DealtState | None = None
    """The constructor from given deals, for games whose replays can be checked from their
    rounds alone; None if this game's cannot."""

    @property
    def versioned_id(self) -> str:
        """The id with its rules version, such as ``six_nimmt/1``."""
        return f"{self.id}/{self.version}"


GAMES: dict[str, GameSpec] = {
    spec.versioned_id: spec
    for spec in (
        GameSpec("six_nimmt", 1, "6 nimmt!", six_nimmt.MIN_SEATS, six_nimmt.MAX_SEATS,
                 six_nimmt.SETTINGS, six_nimmt.new_state, six_nimmt.new_state),
        GameSpec("no_thanks", 1, "No Thanks!", no_thanks.MIN_SEATS, no_thanks.MAX_SEATS,
                 no_thanks.SETTINGS, no_thanks.new_state, no_thanks.new_state),
    )
}
"""Every game, by versioned id."""


def get_game(game_id: str) -> GameSpec:
    """Return the game ``six_nimmt/1`` or, for a bare id like ``six_nimmt``, its newest version."""
    if game_id in GAMES:
        return GAMES[game_id]
    versions = [spec for spec in GAMES.values() if spec.id == game_id]
    if versions:
        return max(versions, key=lambda spec: spec.version)
    known = ", ".join(sorted(GAMES))
    raise UnknownGameError(f"unknown game {game_id!r}; known games: {known}")
