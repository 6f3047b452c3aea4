"""Crafted positions and whole random games of 6 nimmt!, shared by the engine's property
tests: ``crafted`` sets ``rows`` and ``hands`` directly and calls ``_ask_play`` so the pending
decisions match the hands; ``play_game`` plays a whole game with random legal answers drawn
from a seeded ``random.Random``."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from bullring.referee.core import DecisionKind
from bullring.referee.six_nimmt import (
    SixNimmtState,
    bullheads,
)

ALL_CARDS = frozenset(range(1, 105))
ROWS = (0, 1, 2, 3)


def cost(cards: tuple[int, ...] | list[int]) -> int:
    """Bullheads of some cards, from the docs/rules.md §1 table (independent of the engine)."""
    return sum(bullheads(c) for c in cards)


def crafted(seats: int, rows: Sequence[tuple[int, ...]], hands: Sequence[tuple[int, ...]],
            seed: int = 0) -> SixNimmtState:
    """A standard state whose table and hands are set by hand, PLAY_CARD pending for all."""
    state = SixNimmtState(seats, seed=seed)
    state._lay_rows(tuple(rows))
    state.hands = [tuple(sorted(h)) for h in hands]
    state._ask_play()
    return state


def random_answers(state: SixNimmtState, rng: random.Random) -> dict[int, Any]:
    """One random legal answer for every pending seat."""
    return {s: rng.choice(d.legal) for s, d in sorted(state.pending.items())}


def snapshot(state: SixNimmtState) -> tuple[Any, ...]:
    """Everything a caller can see of a state, for 'left unchanged' checks."""
    return (state.replay_rounds(), [state.observation(s) for s in range(state.seats)],
            dict(state.pending), state.step, state.view(), state.result(), state.over)


def play_game(seats: int, game_settings: dict[str, Any], seed: int, answer_seed: int,
              each_step: Callable[[SixNimmtState, list[Any]], None] | None = None,
              max_steps: int = 20_000) -> tuple[SixNimmtState, list[Any], list[Any]]:
    """Play a whole game with random legal answers; return (state, events, answers)."""
    state = SixNimmtState(seats, game_settings, seed=seed)
    rng = random.Random(answer_seed)
    events: list[Any] = []
    answers: list[Any] = []
    if each_step:
        each_step(state, [])
    for _ in range(max_steps):
        if state.over:
            break
        answer = random_answers(state, rng)
        answers.append(answer)
        new = state.apply(answer)
        events.extend(new)
        if each_step:
            each_step(state, new)
    assert state.over, "the game did not end"
    return state, events, answers


def place_trick(rows: tuple[tuple[int, ...], ...], plays: tuple[int, ...],
                choice: int | None) -> tuple[tuple[tuple[int, ...], ...], list[tuple[int, ...]]]:
    """An independent reading of rules 1-4: return (rows after, cards taken by seat)."""
    table = [list(r) for r in rows]
    taken: list[tuple[int, ...]] = [() for _ in plays]
    for card in sorted(plays):
        seat = plays.index(card)
        below = [r for r in ROWS if table[r][-1] < card]
        if not below:  # rule 4
            assert choice is not None
            taken[seat] = tuple(table[choice])
            table[choice] = [card]
            continue
        target = max(below, key=lambda r: table[r][-1])  # rule 2
        if len(table[target]) == 5:  # rule 3
            taken[seat] = tuple(table[target])
            table[target] = [card]
        else:
            table[target].append(card)
    return tuple(tuple(r) for r in table), taken


game_settings_strategy = st.fixed_dictionaries({
    "end_threshold": st.integers(1, 80),
    "end_rule": st.sampled_from(["at_least", "more_than"]),
    "rounds": st.sampled_from([0, 0, 1, 2, 3]),
    "variant": st.sampled_from(["standard", "professional"]),
})

FAST = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def reshuffled(state: SixNimmtState, seats: list[int], rng: random.Random) -> SixNimmtState:
    """A sibling state: the hands of ``seats`` redealt from every card none of them can see
    (their hands and the undealt cards), hand sizes kept; pending decisions follow the hands."""
    sibling = copy.deepcopy(state)
    seen = {c for r in state.rows for c in r} | {c for p in state.piles for c in p}
    seen |= set(state.trick_plays or ())
    seen |= {c for s, h in enumerate(state.hands) if s not in seats for c in h}
    hidden = sorted(ALL_CARDS - seen)
    rng.shuffle(hidden)
    for s in seats:
        size = len(state.hands[s])
        sibling.hands[s] = tuple(sorted(hidden[:size]))
        hidden = hidden[size:]
    if all(d.kind is DecisionKind.PLAY_CARD for d in state.pending.values()):
        sibling._ask_play()
    return sibling
