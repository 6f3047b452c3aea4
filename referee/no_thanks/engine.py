"""No Thanks! (game id ``no_thanks``), exactly as docs/rules.md §2 says.

Turn-based: the seat to move takes the face-up card with its chips, or pays a chip to pass
(``TAKE_OR_PASS``). With ``hidden_card``, a seat still holding its hidden card is first asked
whether to reveal it (``REVEAL_HIDDEN_CARD``).
"""

from __future__ import annotations

import copy
import enum
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, NamedTuple

from bullring.referee.core import (
    Action,
    Decision,
    DecisionKind,
    IllegalActionError,
    MalformedActionError,
    NotPendingError,
    Seat,
    SettingsError,
    competition_ranks,
    next_round_or_end,
)
from bullring.referee.seeding import derive_seed
from bullring.referee.settings import COMMON_SETTINGS, Setting, SettingValue, parse_settings

GAME_ID = "no_thanks"
LOWEST_CARD, HIGHEST_CARD = 3, 35
MIN_SEATS: Final = 2
"""Seat limits; 2 seats need the ``two_seats`` setting."""
MAX_SEATS: Final = 7
TENS = (10, 20, 30)


class Move(enum.StrEnum):
    """The words a No Thanks! seat answers with."""

    TAKE = "take"
    PASS = "pass"
    REVEAL = "reveal"
    KEEP = "keep"


SETTINGS: tuple[Setting, ...] = (
    Setting("rounds", 1, "rounds played; totals add up", minimum=1, maximum=100,
            public_max=10),
    Setting("chips", 0, "chips per seat; 0 means by seat count (11 for 2-5, 9 for 6, 7 for 7)",
            minimum=0, maximum=100, public_max=20),
    Setting("hidden_card", False, "each seat is dealt one removed card it may reveal"),
    Setting("tens_out", False, "remove 10, 20 and 30 openly; 10 chips each, 6 removed cards"),
    Setting("two_seats", False, "allow a 2-seat match (11 chips each)"),
    *COMMON_SETTINGS,
)
"""Every No Thanks! setting with its default."""


def score(cards: Iterable[int], chips: int) -> int:
    """Score face-up ``cards`` and ``chips``: each run counts its lowest card, minus chips."""
    owned = set(cards)
    return sum(c for c in owned if c - 1 not in owned) - chips


def chips_for(seats: int) -> int:
    """Chips per seat by seat count (docs/rules.md §2)."""
    return {6: 9, 7: 7}.get(seats, 11)


class RoundStarted(NamedTuple):
    """A round begins: its start seat, chips per seat, and cards left openly out."""

    round: int
    start_seat: Seat
    chips_start: int
    out: tuple[int, ...]


class CardTurnedUp(NamedTuple):
    """A card is turned up; ``deck_left`` cards remain face down."""

    round: int
    card: int
    deck_left: int


class Passed(NamedTuple):
    """A seat paid a chip onto the card; the pot is now ``pot``."""

    round: int
    seat: Seat
    card: int
    pot: int


class Took(NamedTuple):
    """A seat took the card and the ``pot`` chips on it."""

    round: int
    seat: Seat
    card: int
    pot: int


class HiddenRevealed(NamedTuple):
    """A seat turned its hidden card face up; it now scores."""

    round: int
    seat: Seat
    card: int


class RoundEnded(NamedTuple):
    """The deck is empty: each seat's score this round and the running totals."""

    round: int
    scores: tuple[int, ...]
    totals: tuple[int, ...]


class GameEnded(NamedTuple):
    """The game is over: final totals and ranks (1 = best, ties share)."""

    totals: tuple[int, ...]
    ranks: tuple[int, ...]


Event = RoundStarted | CardTurnedUp | Passed | Took | HiddenRevealed | RoundEnded | GameEnded
"""Every public event a No Thanks! state emits."""

Turn = tuple[Seat, int, int, str]
"""A public turn: (seat, card, pot before the action, "pass" | "take" | "reveal_hidden")."""


class Observation(NamedTuple):
    """What one seat may know (docs/rules.md §4): its own chips and hidden card, public facts."""

    seat: Seat
    round: int
    card: int | None
    """The face-up card, or None between rounds."""
    pot: int
    chips: int
    """This seat's own chips (never another seat's)."""
    hidden_card: int | None
    """This seat's hidden card while unrevealed (``hidden_card`` variant), else None."""
    cards: tuple[tuple[int, ...], ...]
    """Every seat's face-up cards, ascending."""
    deck_left: int
    history: tuple[Turn, ...]
    """The public turns of this round."""
    totals: tuple[int, ...]
    out: tuple[int, ...]
    """Cards removed openly (``tens_out``)."""
    decision: Decision | None


class View(NamedTuple):
    """What a seat-less spectator may know: only public facts."""

    round: int
    card: int | None
    pot: int
    cards: tuple[tuple[int, ...], ...]
    deck_left: int
    history: tuple[Turn, ...]
    totals: tuple[int, ...]
    out: tuple[int, ...]
    pending: tuple[tuple[Seat, DecisionKind], ...]


_WORDS = {m.value: m for m in Move}


class NoThanksState:
    """A No Thanks! match in progress: one pending decision at a time, public events out."""

    game = GAME_ID

    def __init__(self, seats: int, settings: Mapping[str, Any] | None = None, seed: int = 0,
                 deals: Sequence[Sequence[int]] = ()):
        self.settings: dict[str, SettingValue] = parse_settings(SETTINGS, settings)
        self.deals: list[list[int]] = [list(d) for d in deals]
        """Given deals, by round: the removed cards (the hidden ones first, by seat), then
        the deck in the order it is turned up (a replay recorded elsewhere is re-checked
        with its own); a round past them is dealt from the seed."""
        two = bool(self.settings["two_seats"])
        low = 2 if two else 3
        if isinstance(seats, bool) or not isinstance(seats, int) or not low <= seats <= 7:
            hint = "" if two else " (2 seats need the setting two_seats=true)"
            raise SettingsError(f"seats: no_thanks is played by {low} to 7 seats, "
                                f"not {seats!r}{hint}")
        self.tens_out = bool(self.settings["tens_out"])
        self.hidden = bool(self.settings["hidden_card"])
        self._removed_count = 6 if self.tens_out else 9
        if self.hidden and seats > self._removed_count:
            raise SettingsError(f"hidden_card: needs one removed card per seat; "
                                f"{self._removed_count} are removed, not enough for {seats}")
        fixed = int(self.settings["chips"])
        self.chips_start = fixed or (10 if self.tens_out else chips_for(seats))
        self.seats = seats
        self.seed = seed
        self.step = 0
        """How many times answers have been applied."""
        self.round = -1
        self.totals: tuple[int, ...] = (0,) * seats
        self.pending: dict[Seat, Decision] = {}
        self.over = False
        self.rounds_log: list[dict[str, Any]] = []
        """One docs/replay-format.md ROUND record per started round."""
        self.out: tuple[int, ...] = TENS if self.tens_out else ()
        self.chips: list[int] = []
        self.cards: list[tuple[int, ...]] = []
        self.hidden_cards: list[int | None] = []
        self.deck: list[int] = []
        self.card: int | None = None
        self.pot = 0
        self.to_move: Seat = 0
        self.history: list[Turn] = []
        self.opening: list[Event] = self._start_round()
        """The public events of the deal before any decision (the first round's start)."""

    # -- the decision-point interface ---------------------------------------------------

    def observation(self, seat: Seat) -> Observation:
        """Return what ``seat`` may know now, including its pending decision if any."""
        return Observation(seat, self.round, self.card, self.pot, self.chips[seat],
                           self.hidden_cards[seat], tuple(self.cards), len(self.deck),
                           tuple(self.history), self.totals, self.out, self.pending.get(seat))

    def view(self) -> View:
        """Return the spectator's view: public facts only."""
        return View(self.round, self.card, self.pot, tuple(self.cards), len(self.deck),
                    tuple(self.history), self.totals, self.out,
                    tuple((s, d.kind) for s, d in self.pending.items()))

    def validate(self, seat: Seat, action: Action) -> None:
        """Raise an ActionError unless ``action`` answers ``seat``'s pending decision."""
        decision = self.pending.get(seat)
        if decision is None:
            raise NotPendingError(seat, action, "this seat has no decision pending")
        if not isinstance(action, str) or action not in _WORDS:
            raise MalformedActionError(seat, action, f"{decision.kind} takes one of "
                                       f"{', '.join(str(m) for m in decision.legal)}")
        if _WORDS[action] not in decision.legal:
            no_chips = action == Move.PASS and decision.kind is DecisionKind.TAKE_OR_PASS
            why = ("a seat with no chips cannot pass" if no_chips
                   else f"{decision.kind} takes one of "
                        f"{', '.join(str(m) for m in decision.legal)}")
            raise IllegalActionError(seat, action, why)

    def default_action(self, seat: Seat) -> Action:
        """Return the action docs/rules.md §3 gives a seat that did not answer in time."""
        decision = self.pending.get(seat)
        if decision is None:
            raise NotPendingError(seat, None, "this seat has no decision pending")
        if decision.kind is DecisionKind.REVEAL_HIDDEN_CARD:
            return Move.KEEP
        return Move.PASS if self.chips[seat] > 0 else Move.TAKE

    def apply(self, answers: Mapping[Seat, Action]) -> list[Event]:
        """Apply the answer of the seat to move and return the events that followed.

        The answer is checked before anything changes: on an ActionError the state
        is exactly as it was.
        """
        if not self.pending or answers.keys() != self.pending.keys():
            extra = sorted(set(answers) - set(self.pending))
            if extra:
                raise NotPendingError(extra[0], answers[extra[0]],
                                      "this seat has no decision pending")
            if not self.pending:
                raise NotPendingError(self.to_move, None, "the game is over; nothing is pending")
            raise IllegalActionError(self.to_move, None, "an answer is required")
        ((seat, action),) = answers.items()
        self.validate(seat, action)
        self.step += 1
        move = _WORDS[str(action)]
        assert self.card is not None
        record = self.rounds_log[-1]
        if move is Move.REVEAL:
            hidden = self.hidden_cards[seat]
            assert hidden is not None
            self.hidden_cards[seat] = None
            self.cards[seat] = tuple(sorted((*self.cards[seat], hidden)))
            record["turns"].append({"seat": seat, "action": "reveal_hidden", "card": hidden})
            self.history.append((seat, hidden, self.pot, "reveal_hidden"))
            self._ask(reveal_asked=True)
            return [HiddenRevealed(self.round, seat, hidden)]
        if move is Move.KEEP:
            self._ask(reveal_asked=True)
            return []
        card, pot = self.card, self.pot
        record["turns"].append({"seat": seat, "card": card, "pot": pot, "action": str(move)})
        self.history.append((seat, card, pot, str(move)))
        if move is Move.PASS:
            self.chips[seat] -= 1
            self.pot += 1
            self.to_move = (seat + 1) % self.seats
            self._ask()
            return [Passed(self.round, seat, card, self.pot)]
        self.chips[seat] += pot
        self.cards[seat] = tuple(sorted((*self.cards[seat], card)))
        self.pot = 0
        events: list[Event] = [Took(self.round, seat, card, pot)]
        if self.deck:
            events.append(self._turn_up())
            self._ask()
            return events
        events.extend(self._end_round())
        return events

    def round_scores(self) -> list[tuple[int, ...]]:
        """Each finished round's scores, by seat."""
        return [tuple(r["scores"]) for r in self.rounds_log if "scores" in r]

    def replay_rounds(self) -> list[dict[str, Any]]:
        """Return every round so far as a docs/replay-format.md ROUND record (plain JSON values)."""
        return copy.deepcopy(self.rounds_log)

    def result(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Return (totals, ranks) so far; final once ``over`` is true."""
        return self.totals, competition_ranks(self.totals)

    # -- rules ---------------------------------------------------------------------------

    def _start_round(self) -> list[Event]:
        self.round += 1
        n = self.seats
        cards = [c for c in range(LOWEST_CARD, HIGHEST_CARD + 1) if c not in self.out]
        if self.round < len(self.deals):
            given = self.deals[self.round]
            if sorted(given) != cards:
                raise SettingsError(f"round {self.round}: a deal orders the cards {cards[0]}.."
                                    f"{cards[-1]} in play, each once, not {given!r}")
            cards = list(given)
        else:
            random.Random(derive_seed(self.seed, "deal", self.round)).shuffle(cards)
        removed = cards[:self._removed_count]
        self.deck = cards[self._removed_count:]
        self.hidden_cards = list(removed[:n]) if self.hidden else [None] * n
        self.chips = [self.chips_start] * n
        self.cards = [()] * n
        self.pot = 0
        self.history = []
        self.to_move = self.round % n
        self.rounds_log.append({
            "removed": sorted(removed), "deck": list(self.deck), "start_seat": self.to_move,
            "chips_start": self.chips_start, "turns": [],
        })
        if self.hidden:
            self.rounds_log[-1]["hidden"] = list(self.hidden_cards)
        events: list[Event] = [RoundStarted(self.round, self.to_move, self.chips_start,
                                            self.out), self._turn_up()]
        self._ask()
        return events

    def _turn_up(self) -> CardTurnedUp:
        self.card = self.deck.pop(0)
        return CardTurnedUp(self.round, self.card, len(self.deck))

    def _ask(self, reveal_asked: bool = False) -> None:
        seat = self.to_move
        if self.hidden_cards[seat] is not None and not reveal_asked:
            legal: tuple[Move, ...] = (Move.REVEAL, Move.KEEP)
            self.pending = {seat: Decision(seat, DecisionKind.REVEAL_HIDDEN_CARD, legal)}
            return
        legal = (Move.PASS, Move.TAKE) if self.chips[seat] > 0 else (Move.TAKE,)
        self.pending = {seat: Decision(seat, DecisionKind.TAKE_OR_PASS, legal)}

    def _end_round(self) -> list[Event]:
        self.card = None
        scores = tuple(score(c, chips) for c, chips in zip(self.cards, self.chips, strict=True))
        self.totals = tuple(t + s for t, s in zip(self.totals, scores, strict=True))
        record = self.rounds_log[-1]
        record["cards"] = [list(c) for c in self.cards]
        record["chips"] = list(self.chips)
        record["scores"] = list(scores)
        events: list[Event] = [RoundEnded(self.round, scores, self.totals)]
        return next_round_or_end(self, events, self.round + 1 >= int(self.settings["rounds"]),
                                 GameEnded)


def new_state(seats: int, settings: Mapping[str, Any] | None = None,
              seed: int = 0, deals: Sequence[Sequence[int]] = ()) -> NoThanksState:
    """Start a No Thanks! match; raises SettingsError for settings the rules do not allow."""
    return NoThanksState(seats, settings, seed, deals)


def round_deal(record: Mapping[str, Any]) -> list[int]:
    """The cards of a round as its replay record says they were dealt, in the order
    ``new_state`` takes its ``deals``: the removed cards, the hidden ones first (by seat),
    then the deck in the order it was turned up."""
    hidden = list(record.get("hidden") or [])
    return hidden + [c for c in record["removed"] if c not in hidden] + list(record["deck"])


def round_plan(record: Mapping[str, Any]) -> list[tuple[str, dict[Seat, Action]]]:
    """The answers a round's replay record says were given, in order, each with where it is
    (``turns[3]``). A seat still holding its hidden card is asked before each of its turns
    whether to reveal it: where its record shows no reveal there, it kept the card."""
    plan: list[tuple[str, dict[Seat, Action]]] = []
    holding = {seat for seat, card in enumerate(record.get("hidden") or []) if card is not None}
    for t, turn in enumerate(record["turns"]):
        seat, action = int(turn["seat"]), turn["action"]
        if action == "reveal_hidden":
            holding.discard(seat)
            plan.append((f"turns[{t}]", {seat: Move.REVEAL.value}))
            continue
        if seat in holding:
            plan.append((f"turns[{t}]", {seat: Move.KEEP.value}))
        plan.append((f"turns[{t}]", {seat: action}))
    return plan


__all__ = ["SETTINGS", "Move", "NoThanksState", "Observation", "View", "new_state", "round_deal",
           "round_plan", "score"]
