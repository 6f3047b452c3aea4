"""The toy game's two hooks for the engine conformance suite (tests/unit/test_conformance.py),
named by its entry point of the group ``bullring.conformance``."""

from __future__ import annotations

import copy
import random
from typing import Any

from bullring.referee.core import Decision, DecisionKind, Seat

from .engine import HAND, ToyState


def hide_from(state: ToyState, seat: Seat, rng: random.Random) -> ToyState:
    """A sibling differing only in what ``seat`` cannot see: the other seats' hands."""
    sibling = copy.deepcopy(state)
    unseen = sorted(set(range(1, HAND * state.seats + 3)) - set(state.hands[seat]))
    rng.shuffle(unseen)
    for other in range(state.seats):
        if other != seat and other in state.pending:
            sibling.hands[other] = tuple(sorted(unseen[:HAND]))
            unseen = unseen[HAND:]
            sibling.pending[other] = Decision(other, DecisionKind.PLAY_CARD,
                                              sibling.hands[other])
    return sibling


def check(state: ToyState, events: list[Any]) -> None:
    """Every round deals distinct cards; totals add the rounds' plays."""
    for record in state.rounds:
        dealt = [c for hand in record["hands"] for c in hand]
        assert len(dealt) == len(set(dealt)) == HAND * state.seats
    if state.round_scores():
        assert state.totals == tuple(map(sum, zip(*state.round_scores(), strict=True)))
