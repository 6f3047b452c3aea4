"""Observations as numpy vectors and actions as integers, built from the SDK's observations.

Every function here reads only the observation value a bot receives (``six_nimmt.Observation``
or ``no_thanks.Observation``, the very value ``bullring.contract.wire.observation_from_request``
rebuilds from a ``DecisionRequest``), so a policy trained on these vectors plays through the
SDK, in the arena or on the ladder, on the same input. docs/envs.md lists every layout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from bullring.referee import no_thanks, six_nimmt
from bullring.referee.core import Action, Decision, DecisionKind
from bullring.referee.registry import get_game
from bullring.sdk.errors import EnvActionError

# ------------------------------------------------------------------------------ 6 nimmt!

CARDS = six_nimmt.HIGHEST_CARD
"""Cards 1..104."""
WAIT = 0
"""The action of a seat that has nothing to decide now (6 nimmt!): only it is legal then."""
ROW_BASE = CARDS + 1
"""Action ``ROW_BASE + r`` takes row ``r``; actions ``1..104`` play (or draft) that card."""
SIX_NIMMT_ACTIONS = ROW_BASE + six_nimmt.ROW_COUNT
"""Size of 6 nimmt!'s action space: wait, 104 cards, 4 rows."""
ROW_SLOTS = six_nimmt.ROW_COUNT * six_nimmt.ROW_LIMIT
"""Row cards in the vector: 4 rows of 5 places, 0 where a place is empty."""


@dataclass(frozen=True, slots=True)
class Layout:
    """Where each part of an observation vector lies, and the vector's bounds."""

    parts: dict[str, slice]
    """Each part's slice of the vector, by name (docs/envs.md)."""
    low: np.ndarray
    high: np.ndarray

    @property
    def size(self) -> int:
        """The vector's length."""
        return int(self.low.shape[0])

    def space(self) -> spaces.Box:
        """The Box holding every vector of this layout."""
        return spaces.Box(self.low, self.high, dtype=np.float32)


def _layout(parts: list[tuple[str, int, float, float]]) -> Layout:
    slices: dict[str, slice] = {}
    lows: list[float] = []
    highs: list[float] = []
    for name, size, low, high in parts:
        slices[name] = slice(len(lows), len(lows) + size)
        lows.extend([low] * size)
        highs.extend([high] * size)
    return Layout(slices, np.array(lows, dtype=np.float32), np.array(highs, dtype=np.float32))


def six_nimmt_layout(seats: int, settings: Mapping[str, Any] | None = None) -> Layout:
    """The vector layout of a 6 nimmt! seat's observation at ``seats`` seats.

    Seat-indexed parts are rotated so that the observing seat comes first.
    """
    parsed = get_game("six_nimmt").new_state(seats, settings, 0).settings
    fixed = int(parsed["rounds"])
    rounds = fixed or int(parsed["end_threshold"]) + 1
    most = sum(six_nimmt.BULLHEADS)
    top = most * fixed if fixed else int(parsed["end_threshold"]) + most
    return _layout([
        ("hand", CARDS, 0, 1),
        ("seen", CARDS, 0, 1),
        ("pool", CARDS, 0, 1),
        ("rows", ROW_SLOTS, 0, CARDS),
        ("trick_plays", seats, 0, CARDS),
        ("penalties", seats, 0, most),
        ("totals", seats, 0, top),
        ("trick", 1, 0, six_nimmt.HAND_SIZE),
        ("round", 1, 0, rounds),
        ("kind", 3, 0, 1),
    ])


def six_nimmt_vector(observation: six_nimmt.Observation, layout: Layout) -> np.ndarray:
    """The vector of a 6 nimmt! observation: its hand, the cards seen this round (rows, tricks
    played, piles taken), the draft pool, the rows, this trick's cards while a row choice is
    pending, penalties, totals, trick, round, and the pending decision's kind."""
    p = layout.parts
    vector = np.zeros(layout.size, dtype=np.float32)
    start = p["hand"].start - 1
    for card in observation.hand:
        vector[start + card] = 1
    start = p["seen"].start - 1
    for row in observation.rows:
        for card in row:
            vector[start + card] = 1
    for group in (observation.revealed, observation.piles):
        for cards in group:
            for card in cards:
                vector[start + card] = 1
    start = p["pool"].start - 1
    for card in observation.pool:
        vector[start + card] = 1
    start = p["rows"].start
    for r, row in enumerate(observation.rows):
        vector[start + r * six_nimmt.ROW_LIMIT:start + r * six_nimmt.ROW_LIMIT + len(row)] = row
    seat, seats = observation.seat, len(observation.totals)
    order = [(seat + i) % seats for i in range(seats)]
    if observation.trick_plays:
        vector[p["trick_plays"]] = [observation.trick_plays[s] for s in order]
    vector[p["penalties"]] = [observation.penalties[s] for s in order]
    vector[p["totals"]] = [observation.totals[s] for s in order]
    vector[p["trick"].start] = observation.trick
    vector[p["round"].start] = observation.round
    decision = observation.decision
    if decision is not None:
        kinds = (DecisionKind.PLAY_CARD, DecisionKind.CHOOSE_ROW, DecisionKind.DRAFT_CARD)
        vector[p["kind"].start + kinds.index(decision.kind)] = 1
    return vector


def six_nimmt_mask(decision: Decision | None) -> np.ndarray:
    """The legal actions of a 6 nimmt! seat (int8): its decision's cards or rows, or only
    ``WAIT`` when it has nothing to decide now."""
    mask = np.zeros(SIX_NIMMT_ACTIONS, dtype=np.int8)
    if decision is None:
        mask[WAIT] = 1
    elif decision.kind is DecisionKind.CHOOSE_ROW:
        for row in decision.legal:
            mask[ROW_BASE + int(row)] = 1
    else:
        for card in decision.legal:
            mask[int(card)] = 1
    return mask


def six_nimmt_action(decision: Decision, index: int) -> Action:
    """The engine's action for action ``index`` answering ``decision``; ValueError for an
    index that does not answer its kind."""
    if decision.kind is DecisionKind.CHOOSE_ROW:
        if not ROW_BASE <= index < SIX_NIMMT_ACTIONS:
            raise EnvActionError(f"action {index} is not a row (a row is {ROW_BASE}.."
                             f"{SIX_NIMMT_ACTIONS - 1})")
        return index - ROW_BASE
    if not 1 <= index <= CARDS:
        raise EnvActionError(f"action {index} is not a card (a card is 1..{CARDS})")
    return index


def six_nimmt_index(decision: Decision, action: Action) -> int:
    """The action index of the engine's ``action`` answering ``decision``."""
    return ROW_BASE + int(action) if decision.kind is DecisionKind.CHOOSE_ROW else int(action)


# ----------------------------------------------------------------------------- No Thanks!

NO_THANKS_CARDS = no_thanks.HIGHEST_CARD - no_thanks.LOWEST_CARD + 1
"""Cards 3..35: 33."""
MOVES: tuple[no_thanks.Move, ...] = (no_thanks.Move.TAKE, no_thanks.Move.PASS,
                                     no_thanks.Move.REVEAL, no_thanks.Move.KEEP)
"""No Thanks!'s actions by index: take, pass, reveal, keep."""


def no_thanks_layout(seats: int, settings: Mapping[str, Any] | None = None) -> Layout:
    """The vector layout of a No Thanks! seat's observation at ``seats`` seats.

    Seat-indexed parts are rotated so that the observing seat comes first.
    """
    state = get_game("no_thanks").new_state(seats, settings, 0)
    parsed = state.settings
    rounds = int(parsed["rounds"])
    chips = seats * int(getattr(state, "chips_start", 11))
    card_sum = sum(range(no_thanks.LOWEST_CARD, no_thanks.HIGHEST_CARD + 1))
    return _layout([
        ("cards", seats * NO_THANKS_CARDS, 0, 1),
        ("card", NO_THANKS_CARDS, 0, 1),
        ("hidden_card", NO_THANKS_CARDS, 0, 1),
        ("out", NO_THANKS_CARDS, 0, 1),
        ("pot", 1, 0, chips),
        ("chips", 1, 0, chips),
        ("deck_left", 1, 0, NO_THANKS_CARDS),
        # a seat passes at most once per chip it holds on each card, and takes chips back
        ("passes", seats, 0, chips * NO_THANKS_CARDS),
        ("totals", seats, -chips * rounds, card_sum * rounds),
        ("round", 1, 0, rounds),
        ("kind", 2, 0, 1),
    ])


def no_thanks_vector(observation: no_thanks.Observation, layout: Layout) -> np.ndarray:
    """The vector of a No Thanks! observation: every seat's face-up cards, the face-up card,
    its own hidden card, the cards out, the pot, its own chips, the deck left, each seat's
    passes this round (public history), totals, round, and the pending decision's kind."""
    p = layout.parts
    vector = np.zeros(layout.size, dtype=np.float32)
    seat, seats = observation.seat, len(observation.totals)
    order = [(seat + i) % seats for i in range(seats)]
    low = no_thanks.LOWEST_CARD
    start = p["cards"].start
    for i, s in enumerate(order):
        for card in observation.cards[s]:
            vector[start + i * NO_THANKS_CARDS + card - low] = 1
    single: tuple[tuple[str, tuple[int | None, ...]], ...] = (
        ("card", (observation.card,)), ("hidden_card", (observation.hidden_card,)),
        ("out", observation.out))
    for name, cards in single:
        for one in cards:
            if one:
                vector[p[name].start + one - low] = 1
    vector[p["pot"].start] = observation.pot
    vector[p["chips"].start] = observation.chips
    vector[p["deck_left"].start] = observation.deck_left
    passes = [0] * seats
    for who, _card, _pot, action in observation.history:
        if action == "pass":
            passes[who] += 1
    vector[p["passes"]] = [passes[s] for s in order]
    vector[p["totals"]] = [observation.totals[s] for s in order]
    vector[p["round"].start] = observation.round
    decision = observation.decision
    if decision is not None:
        kinds = (DecisionKind.TAKE_OR_PASS, DecisionKind.REVEAL_HIDDEN_CARD)
        vector[p["kind"].start + kinds.index(decision.kind)] = 1
    return vector


def no_thanks_mask(decision: Decision | None) -> np.ndarray:
    """The legal actions of a No Thanks! seat (int8); all zero when it is not its turn."""
    mask = np.zeros(len(MOVES), dtype=np.int8)
    if decision is not None:
        for move in decision.legal:
            mask[MOVES.index(no_thanks.Move(str(move)))] = 1
    return mask


# ---------------------------------------------------------------------------- both games


@dataclass(frozen=True, slots=True)
class Encoder:
    """One game's encoding at one table size: its spaces, and observation ⇄ vector, mask and
    action index ⇄ engine action. What an env builds its spaces with, and what a trained
    policy's bot calls on each observation it receives."""

    game: str
    layout: Layout

    def observation_space(self) -> spaces.Dict:
        """``{"observation": Box, "action_mask": MultiBinary}``, PettingZoo's convention."""
        return spaces.Dict({"observation": self.layout.space(),
                            "action_mask": spaces.MultiBinary(self.actions)})

    def action_space(self) -> spaces.Discrete:
        """The actions: 6 nimmt!'s wait, cards and rows, or No Thanks!' four words."""
        return spaces.Discrete(self.actions)

    @property
    def actions(self) -> int:
        """How many actions there are."""
        return SIX_NIMMT_ACTIONS if self.game == "six_nimmt" else len(MOVES)

    def vector(self, observation: Any) -> np.ndarray:
        """The observation's vector (float32)."""
        if self.game == "six_nimmt":
            return six_nimmt_vector(observation, self.layout)
        return no_thanks_vector(observation, self.layout)

    def mask(self, observation: Any) -> np.ndarray:
        """The legal actions of the observation's pending decision (int8)."""
        return self.decision_mask(observation.decision)

    def decision_mask(self, decision: Decision | None) -> np.ndarray:
        """The legal actions answering ``decision`` (int8); None is a seat with nothing to
        decide now."""
        if self.game == "six_nimmt":
            return six_nimmt_mask(decision)
        return no_thanks_mask(decision)

    def checked_index(self, index: Any) -> int:
        """``index`` as an action number; ValueError unless it lies in ``action_space()``
        (an index outside it is malformed, whatever the decision)."""
        number = int(index)
        if not 0 <= number < self.actions:
            raise EnvActionError(
                f"action {index!r} is not in the action space 0..{self.actions - 1}")
        return number

    @property
    def penalty_span(self) -> float:
        """How far apart the best and the worst game totals of one seat can lie (the bounds of
        ``totals`` in the vector): an environment's default penalty for an illegal action is
        minus this, so ending a game that way never returns more than finishing it."""
        totals = self.layout.parts["totals"].start
        return float(self.layout.high[totals] - self.layout.low[totals])

    def encode(self, observation: Any) -> dict[str, np.ndarray]:
        """The observation as an element of ``observation_space()``."""
        return {"observation": self.vector(observation), "action_mask": self.mask(observation)}

    def action(self, decision: Decision, index: int) -> Action:
        """The engine's action for ``index``; ValueError if it does not answer ``decision``."""
        number = int(index)
        if self.game == "six_nimmt":
            return six_nimmt_action(decision, number)
        if not 0 <= number < len(MOVES):
            raise EnvActionError(f"action {number} is not one of 0..{len(MOVES) - 1}")
        return str(MOVES[number])

    def index(self, decision: Decision, action: Action) -> int:
        """The index of the engine's ``action`` answering ``decision``."""
        if self.game == "six_nimmt":
            return six_nimmt_index(decision, action)
        return MOVES.index(no_thanks.Move(str(action)))


def encoder(game: str, seats: int, settings: Mapping[str, Any] | None = None) -> Encoder:
    """The encoder of ``game`` (``six_nimmt`` or ``no_thanks``) at ``seats`` seats."""
    spec = get_game(game)
    if spec.id == "six_nimmt":
        return Encoder(spec.id, six_nimmt_layout(seats, settings))
    return Encoder(spec.id, no_thanks_layout(seats, settings))
