"""The decision-point interface shared by every game.

A game state says which seats must decide now (one seat, or several at once for a
simultaneous decision) and what each may do; the caller answers, and ``apply`` returns the
public events that followed. Time, network and storage never enter here.
"""

from __future__ import annotations

import enum
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, TypeAlias

from bullring.errors import BullringError, ExitCode

Seat: TypeAlias = int
"""A seat index, 0-based in seating order."""

Action: TypeAlias = int | str
"""An answer to a decision: a card, a row index, or a word such as ``"take"``."""


class DecisionKind(enum.StrEnum):
    """The kinds of decision a seat can be asked for."""

    PLAY_CARD = "PLAY_CARD"
    CHOOSE_ROW = "CHOOSE_ROW"
    DRAFT_CARD = "DRAFT_CARD"
    TAKE_OR_PASS = "TAKE_OR_PASS"
    REVEAL_HIDDEN_CARD = "REVEAL_HIDDEN_CARD"


class Decision(NamedTuple):
    """A decision one seat must make now, with every action it may answer."""

    seat: Seat
    kind: DecisionKind
    legal: tuple[Action, ...]


class RefereeError(BullringError, ValueError):
    """Base of every error the referee raises about its input."""

    exit_code = ExitCode.USAGE


class SettingsError(RefereeError):
    """A match setting (or the seat count) is outside what the rules allow."""


class ActionError(RefereeError):
    """An answer the referee refuses; the state is left unchanged. Catch this to catch
    every refusal; each kind below is a sibling, so no except clause shadows another."""

    def __init__(self, seat: Seat, action: object, reason: str) -> None:
        super().__init__(f"seat {seat}: {action!r} is not allowed: {reason}")
        self.seat = seat
        self.action = action
        self.reason = reason


class IllegalActionError(ActionError):
    """An answer is well formed but not allowed now."""


class MalformedActionError(ActionError):
    """An answer is not even of the right type for its decision (say, a word for a card)."""


class NotPendingError(ActionError):
    """An answer came from a seat that has no decision pending."""


def competition_ranks(totals: Sequence[int]) -> tuple[int, ...]:
    """Rank seats by total, lower is better; equal totals share a place (1, 1, 3)."""
    ordered = sorted(totals)
    return tuple([1 + bisect_left(ordered, own) for own in totals])


AnswerMap: TypeAlias = Mapping[Seat, Action]
"""Answers by seat for every pending decision."""


class RoundsGame(Protocol):
    """A game played in rounds, as ``next_round_or_end`` moves it on."""

    over: bool
    pending: dict[Seat, Decision]

    def result(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(totals, ranks) so far."""

    def _start_round(self) -> list[Any]:
        """Deal the next round; return its public events."""


def next_round_or_end(state: RoundsGame, events: list[Any], game_over: bool,
                      game_ended: Callable[[tuple[int, ...], tuple[int, ...]], Any]) -> list[Any]:
    """After a round's scores, end ``state``'s game when ``game_over`` (nothing is pending,
    and ``game_ended(totals, ranks)`` is its last event), or else deal the next round;
    return ``events`` with what followed appended."""
    if game_over:
        state.over = True
        state.pending = {}
        events.append(game_ended(*state.result()))
    else:
        events.extend(state._start_round())
    return events
