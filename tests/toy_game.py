"""A tiny game for the engine conformance tests: registered by this module as a pytest
plugin (``pytest -p tests.toy_game``), it shows that a game added to the registry is checked
by tests/unit/test_conformance.py without touching that file.

*High card, lowest wins*: each round every seat is dealt three cards it alone sees, then
all seats play one at once; each seat scores the card it played; after ``rounds`` rounds the
lowest total wins. Simultaneous decisions, hidden hands, a seeded deal: the shape of 6 nimmt!
in forty lines.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from typing import Any, NamedTuple

from bullring.referee import registry
from bullring.referee.core import (
    Action,
    Decision,
    DecisionKind,
    IllegalActionError,
    MalformedActionError,
    NotPendingError,
    Seat,
    competition_ranks,
)
from bullring.referee.seeding import seeded_sample
from bullring.referee.settings import COMMON_SETTINGS, Setting, check_seats, parse_settings

GAME_ID = "toy_high_card"
SETTINGS = (Setting("rounds", 2, "rounds to play", minimum=1, maximum=5), *COMMON_SETTINGS)


class Revealed(NamedTuple):
    """Every seat's card of a round, by seat, revealed together."""

    round: int
    plays: tuple[int, ...]


class Ended(NamedTuple):
    """The game is over: totals and ranks by seat."""

    totals: tuple[int, ...]
    ranks: tuple[int, ...]


class ToyState:
    """A game of high card in progress (the decision-point interface of referee/registry)."""

    game = GAME_ID

    def __init__(self, seats: int, settings: Mapping[str, Any] | None = None, seed: int = 0):
        check_seats(GAME_ID, seats, 2, 4)
        self.settings = parse_settings(SETTINGS, settings)
        self.seats, self.seed, self.step, self.over = seats, seed, 0, False
        self.totals: tuple[int, ...] = (0,) * seats
        self.rounds: list[dict[str, Any]] = []
        self.hands: list[tuple[int, ...]] = []
        self.pending: dict[Seat, Decision] = {}
        self.opening: list[Any] = []
        self._deal()

    def _deal(self) -> None:
        cards = seeded_sample(range(1, 3 * self.seats + 3), 3 * self.seats, self.seed,
                              "deal", len(self.rounds))
        self.hands = [tuple(sorted(cards[3 * s:3 * s + 3])) for s in range(self.seats)]
        self.rounds.append({"hands": [list(h) for h in self.hands], "plays": None})
        self.pending = {s: Decision(s, DecisionKind.PLAY_CARD, h)
                        for s, h in enumerate(self.hands)}

    def observation(self, seat: Seat) -> tuple[Any, ...]:
        """The seat's own hand, the round and the public plays and totals."""
        return (seat, len(self.rounds), self.hands[seat], self.totals,
                [r["plays"] for r in self.rounds[:-1]], self.pending.get(seat))

    def view(self) -> tuple[Any, ...]:
        """What a spectator sees: the round, the public plays, the totals, who must act."""
        return (len(self.rounds), self.totals, [r["plays"] for r in self.rounds[:-1]],
                sorted(self.pending))

    def validate(self, seat: Seat, action: Action) -> None:
        """Raise unless ``action`` is a card of ``seat``'s hand and the seat must play."""
        if seat not in self.pending:
            raise NotPendingError(seat, action, "no decision is pending for this seat")
        if isinstance(action, bool) or not isinstance(action, int):
            raise MalformedActionError(seat, action, "a card must be an integer")
        if action not in self.hands[seat]:
            raise IllegalActionError(seat, action, f"not in the hand {list(self.hands[seat])}")

    def default_action(self, seat: Seat) -> Action:
        """A silent seat plays its lowest card."""
        return self.hands[seat][0]

    def apply(self, answers: Mapping[Seat, Action]) -> list[Any]:
        """Play every seat's card at once; score them; deal the next round or end."""
        for seat, action in answers.items():
            self.validate(seat, action)
        if set(answers) != set(self.pending):
            missing = sorted(set(self.pending) - set(answers))
            raise NotPendingError(missing[0], None, "every seat must answer together")
        plays = tuple(int(answers[s]) for s in range(self.seats))
        self.step += 1
        self.rounds[-1]["plays"] = list(plays)
        self.totals = tuple(t + p for t, p in zip(self.totals, plays, strict=True))
        events: list[Any] = [Revealed(len(self.rounds) - 1, plays)]
        if len(self.rounds) == self.settings["rounds"]:
            self.over, self.pending = True, {}
            events.append(Ended(*self.result()))
        else:
            self._deal()
        return events

    def result(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Totals and ranks by seat."""
        return self.totals, competition_ranks(self.totals)

    def round_scores(self) -> list[tuple[int, ...]]:
        """Each finished round's plays, which are its scores."""
        return [tuple(r["plays"]) for r in self.rounds if r["plays"] is not None]

    def replay_rounds(self) -> list[dict[str, Any]]:
        """Every round: the hands dealt and the cards played."""
        return copy.deepcopy(self.rounds)


def hide_from(state: ToyState, seat: Seat, rng: random.Random) -> ToyState:
    """A sibling differing only in what ``seat`` cannot see: the other seats' hands."""
    sibling = copy.deepcopy(state)
    unseen = sorted(set(range(1, 3 * state.seats + 3)) - set(state.hands[seat]))
    rng.shuffle(unseen)
    for other in range(state.seats):
        if other != seat and other in state.pending:
            sibling.hands[other] = tuple(sorted(unseen[:3]))
            unseen = unseen[3:]
            sibling.pending[other] = Decision(other, DecisionKind.PLAY_CARD,
                                              sibling.hands[other])
    return sibling


def check(state: ToyState, events: list[Any]) -> None:
    """Every round deals distinct cards; totals add the rounds' plays."""
    for record in state.rounds:
        dealt = [c for hand in record["hands"] for c in hand]
        assert len(dealt) == len(set(dealt)) == 3 * state.seats
    if state.round_scores():
        assert state.totals == tuple(map(sum, zip(*state.round_scores(), strict=True)))


SPEC = registry.GameSpec(GAME_ID, 1, "High card", 2, 4, SETTINGS, ToyState)
"""The toy game's registry entry."""


def pytest_configure() -> None:
    """As a pytest plugin: register the toy game and its conformance hooks."""
    registry.GAMES[SPEC.versioned_id] = SPEC  # before the suite's parameters are read
    from tests.unit import test_conformance

    test_conformance.HOOKS[GAME_ID] = test_conformance.Hooks(hide_from, check)
