"""The rules of the toy game (game id ``toy_high_card``).

*High card, lowest wins*: each round every seat is dealt three cards it alone sees, then
all seats play one at once; each seat scores the card it played; after ``rounds`` rounds the
lowest total wins. Simultaneous decisions, hidden hands, a seeded deal: the shape of 6 nimmt!
in a page. Its messages on the wire are ``ToyHighCard...`` in proto/bullring/v2/referee.proto.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, NamedTuple

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
MIN_SEATS, MAX_SEATS = 2, 4
HAND = 3
"""Cards dealt to each seat a round."""
SETTINGS = (Setting("rounds", 2, "rounds to play", minimum=1, maximum=5), *COMMON_SETTINGS)


class Revealed(NamedTuple):
    """Every seat's card of a round, by seat, revealed together."""

    round: int
    plays: tuple[int, ...]


class GameEnded(NamedTuple):
    """The game is over: totals and ranks by seat."""

    totals: tuple[int, ...]
    ranks: tuple[int, ...]


Event = Revealed | GameEnded
"""Every public event of the toy game."""


class Observation(NamedTuple):
    """What one seat may know: its own hand and every public fact."""

    seat: Seat
    round: int
    hand: tuple[int, ...]
    totals: tuple[int, ...]
    plays: tuple[tuple[int, ...], ...]
    """The plays (by seat) of each finished round."""
    decision: Decision | None


class View(NamedTuple):
    """What a spectator may know: the round, the public plays, the totals, who must act."""

    round: int
    totals: tuple[int, ...]
    plays: tuple[tuple[int, ...], ...]
    pending: tuple[Seat, ...]


class ToyState:
    """A game of high card in progress (the decision-point interface of
    bullring.referee.registry)."""

    game = GAME_ID

    def __init__(self, seats: int, settings: Mapping[str, Any] | None = None, seed: int = 0):
        check_seats(GAME_ID, seats, MIN_SEATS, MAX_SEATS)
        self.settings = parse_settings(SETTINGS, settings)
        self.seats, self.seed, self.step, self.over = seats, seed, 0, False
        self.totals: tuple[int, ...] = (0,) * seats
        self.rounds: list[dict[str, Any]] = []
        self.hands: list[tuple[int, ...]] = []
        self.pending: dict[Seat, Decision] = {}
        self.opening: list[Event] = []
        self._deal()

    def _deal(self) -> None:
        cards = seeded_sample(range(1, HAND * self.seats + 3), HAND * self.seats, self.seed,
                              "deal", len(self.rounds))
        self.hands = [tuple(sorted(cards[HAND * s:HAND * s + HAND])) for s in range(self.seats)]
        self.rounds.append({"hands": [list(h) for h in self.hands], "plays": None})
        self.pending = {s: Decision(s, DecisionKind.PLAY_CARD, h)
                        for s, h in enumerate(self.hands)}

    def _plays(self) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(r["plays"]) for r in self.rounds if r["plays"] is not None)

    def observation(self, seat: Seat) -> Observation:
        """The seat's own hand, the round and the public plays and totals."""
        return Observation(seat, len(self.rounds) - 1, self.hands[seat], self.totals,
                           self._plays(), self.pending.get(seat))

    def view(self) -> View:
        """What a spectator sees: the round, the public plays, the totals, who must act."""
        return View(len(self.rounds) - 1, self.totals, self._plays(), tuple(sorted(self.pending)))

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

    def apply(self, answers: Mapping[Seat, Action]) -> list[Event]:
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
        events: list[Event] = [Revealed(len(self.rounds) - 1, plays)]
        if len(self.rounds) == self.settings["rounds"]:
            self.over, self.pending = True, {}
            events.append(GameEnded(*self.result()))
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


def new_state(seats: int, settings: Mapping[str, Any] | None = None,
              seed: int = 0) -> ToyState:
    """Start a game of high card; raises SettingsError for settings it does not allow."""
    return ToyState(seats, settings, seed)
