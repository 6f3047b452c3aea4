"""Crafted positions and played-out games of No Thanks!, shared by its specification tests
(``test_no_thanks_spec.py``, ``test_no_thanks_games.py``): crafted positions set the engine's
fields (``chips``, ``hidden_cards``, ``to_move``) and call ``_ask`` so the pending decision
matches them."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from bullring.referee.core import DecisionKind
from bullring.referee.no_thanks import NoThanksState

ALL_CARDS = frozenset(range(3, 36))
TENS = frozenset({10, 20, 30})


def independent_score(cards: list[int], chips: int) -> int:
    """docs/rules.md §2.5 written out again, without the engine: runs count their lowest card."""
    ordered = sorted(cards)
    total = sum(c for i, c in enumerate(ordered) if i == 0 or ordered[i - 1] != c - 1)
    return total - chips


def snapshot(state: NoThanksState) -> Any:
    """Everything observable from outside: every seat's observation, the view, the replay."""
    return ([state.observation(s) for s in range(state.seats)], state.view(),
            json.dumps(state.replay_rounds()), state.step, state.over, dict(state.pending))


def random_answer(state: NoThanksState, rng: random.Random) -> dict[int, Any]:
    """One random legal answer (a Move or its plain string, at random) for the pending seat."""
    ((seat, decision),) = state.pending.items()
    move = rng.choice(decision.legal)
    return {seat: move if rng.random() < 0.5 else str(move)}


def play_out(state: NoThanksState, seed: int,
             check: Callable[[NoThanksState], None] | None = None) -> list[Any]:
    """Play ``state`` to its end with random legal answers; return every event."""
    rng = random.Random(seed)
    events: list[Any] = []
    while not state.over:
        events.extend(state.apply(random_answer(state, rng)))
        if check is not None:
            check(state)
    return events


def kind_of(state: NoThanksState, seat: int) -> DecisionKind:
    """The kind of ``seat``'s pending decision (a call, so type checkers do not narrow it)."""
    return state.pending[seat].kind


def at_take_or_pass(state: NoThanksState, seat: int, chips: int) -> NoThanksState:
    """Make ``seat`` the seat to move, holding ``chips``, with TAKE_OR_PASS pending."""
    state.to_move = seat
    state.chips[seat] = chips
    state.hidden_cards[seat] = None
    state._ask()
    return state


