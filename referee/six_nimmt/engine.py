"""6 nimmt! (game id ``six_nimmt``), exactly as docs/rules.md §1 says.

Every seat plays a card at once (``PLAY_CARD``); the cards are revealed together and placed
lowest first. A card lower than every row end makes its seat choose a row to take
(``CHOOSE_ROW``). The professional variant drafts the hands first (``DRAFT_CARD``).

Here are the decisions and the tricks (``SixNimmtState``); the rounds around them (deal,
draft, scores, the end) are ``rounds.py`` beside it, the cards, settings, events and
observations ``values.py``.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping, Sequence
from typing import Any, Final, NoReturn, cast

from bullring.referee.core import (
    Action,
    Decision,
    DecisionKind,
    IllegalActionError,
    MalformedActionError,
    NotPendingError,
    Seat,
    SettingsError,
)
from bullring.referee.seeding import derive_seed
from bullring.referee.six_nimmt.rounds import CHOOSE_ROW_ASKS, STATE_FIELDS, SixNimmtRounds
from bullring.referee.six_nimmt.values import (
    ALONE,
    BULLHEADS,
    GAME_ID,
    HAND_SIZE,
    HIGHEST_CARD,
    MAX_SEATS,
    MIN_SEATS,
    ROW_COUNT,
    ROW_INDEXES,
    ROW_LIMIT,
    SETTINGS,
    CardDrafted,
    CardsRevealed,
    Event,
    GameEnded,
    Observation,
    RoundEnded,
    RoundStarted,
    TrickResolved,
    View,
    bullheads,
    row_cost,
)

_ROW_INDEXES: Final = ROW_INDEXES
_ALONE: Final = ALONE
_PLAY_CARD: Final = DecisionKind.PLAY_CARD
_CHOOSE_ROW: Final = DecisionKind.CHOOSE_ROW
_new: Final = tuple.__new__
"""Builds a NamedTuple from a ready tuple, skipping its Python-level ``__new__`` (hot path)."""
_OBSERVATION: Final = Observation
_DECISION: Final = Decision
_CARDS_REVEALED: Final = CardsRevealed
_TRICK_RESOLVED: Final = TrickResolved
"""Final aliases of the names the hot path uses: the mypyc build reads them as constants
instead of looking each up in the module's dict on every use."""
# An answer is a card or a row when ``x.__class__ is int``: an int and not a bool (True is
# no card), and the cheapest such test both interpreted and compiled (``isinstance`` and
# ``type()`` are calls, and would let True through).


class SixNimmtState(SixNimmtRounds):
    """A 6 nimmt! match in progress: pending decisions in, public events out."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> SixNimmtState:
        """An independent copy of the match (written out: the mypyc-compiled class cannot be
        created without its ``__init__``, which ``copy``'s default way needs)."""
        twin = memo[id(self)] = SixNimmtState(self.seats, self.settings, self.seed)
        for name in STATE_FIELDS:
            setattr(twin, name, copy.deepcopy(getattr(self, name), memo))
        return twin

    # -- the decision-point interface ---------------------------------------------------

    def observation(self, seat: Seat) -> Observation:
        """Return what ``seat`` may know now, including its pending decision if any."""
        return _new(_OBSERVATION, (seat, self.round, self.trick, self.hands[seat], self.rows,
                                  self.piles, self.penalties, self.totals, self.revealed,
                                  self.trick_plays, self.pool, self.pending.get(seat)))

    def view(self) -> View:
        """Return the spectator's view: public facts only."""
        return View(self.round, self.trick, self.rows, self.piles, self.penalties, self.totals,
                    self.revealed, self.trick_plays, self.pool,
                    tuple((s, d.kind) for s, d in self.pending.items()))

    def validate(self, seat: Seat, action: object) -> None:
        """Raise an ActionError unless ``action`` answers ``seat``'s pending decision."""
        decision = self.pending.get(seat)
        if decision is None:
            raise NotPendingError(seat, action, "this seat has no decision pending")
        if action.__class__ is not int:
            raise MalformedActionError(seat, action, f"{decision.kind} takes an integer")
        if action not in decision.legal:
            raise IllegalActionError(seat, action, _why_illegal(decision, action))

    def default_action(self, seat: Seat) -> Action:
        """Return the action docs/rules.md §3 gives a seat that did not answer in time."""
        decision = self.pending.get(seat)
        if decision is None:
            raise NotPendingError(seat, None, "this seat has no decision pending")
        if decision.kind is DecisionKind.PLAY_CARD:
            rng = random.Random(derive_seed(self.seed, "default", self.step, seat))
            return rng.choice(decision.legal)
        if decision.kind is DecisionKind.CHOOSE_ROW:
            return min(_ROW_INDEXES, key=lambda r: (row_cost(self.rows[r]),
                                                    len(self.rows[r]), r))
        return min(self.pool)

    def apply(self, answers: Mapping[Seat, Action]) -> list[Event]:
        """Apply one answer for every pending seat and return the events that followed.

        Every answer is checked before anything changes: on an ActionError the
        state is exactly as it was.
        """
        # Answers are typed ``object`` until checked: the mypyc-compiled module would
        # otherwise raise TypeError where the rules say MalformedActionError.
        given: Mapping[Any, object] = answers
        pending = self.pending
        kind = self._kind
        if kind is _CHOOSE_ROW and len(given) == 1:
            # The row choice, checked inline: it answers a third of all decisions.
            for seat, row in given.items():
                if seat in pending and row.__class__ is int and 0 <= row < ROW_COUNT:
                    self.step += 1
                    return self._resolve(self.trick_plays, self._order,  # type: ignore[arg-type]
                                         (seat, row), [])
        if len(given) != len(pending) or not pending:
            self._reject_answer_set(given)
        if kind is not _PLAY_CARD:
            return self._apply_one(given)
        # Every seat is pending: as many answers, one for each seat, means the same seats.
        cards: tuple[object, ...] = tuple(given.values())
        if tuple(given) != self._seat_order:
            try:
                cards = tuple([given[seat] for seat in self._seat_range])
            except KeyError:
                self._reject_answer_set(given)
        # Every card is checked, and the hands without it built, before anything changes.
        # The next trick's decisions are built in the same pass (used once this one is placed).
        rest: list[tuple[int, ...]] = []
        asks: dict[Seat, Decision] = {}
        for seat, (card, hand) in enumerate(zip(cards, self.hands)):  # noqa: B905 (strict=True costs ~130 ns here)
            if card.__class__ is not int:
                self._reject(cards)
            try:
                i = hand.index(card)
            except ValueError:
                self._reject(cards)
            hand = hand[:i] + hand[i + 1:]
            rest.append(hand)
            asks[seat] = _new(_DECISION, (seat, _PLAY_CARD, hand))
        plays = cast(tuple[int, ...], cards)
        self.hands = rest
        self._asks = asks
        self.step += 1
        events: list[Event] = [_new(_CARDS_REVEALED, (self.round, self.trick, plays))]
        order = sorted(plays)
        if order[0] < self._ends[0]:
            seat = plays.index(order[0])
            self.trick_plays = plays
            self._order = order
            self._kind = _CHOOSE_ROW
            self.pending = {seat: CHOOSE_ROW_ASKS[seat]}
            return events
        return self._resolve(plays, order, None, events)

    def _apply_one(self, answers: Mapping[Any, object]) -> list[Event]:
        ((seat, answer),) = answers.items()
        decision = self.pending.get(seat)
        if decision is None:
            self._reject_answer_set(answers)
        if answer.__class__ is not int or answer not in decision.legal:
            self.validate(seat, answer)
        self.step += 1
        if self._kind is _CHOOSE_ROW:
            assert self.trick_plays is not None
            return self._resolve(self.trick_plays, self._order, (seat, answer),  # type: ignore[arg-type]
                                 [])
        return self._draft(seat, answer)  # type: ignore[arg-type]

    def _reject_answer_set(self, answers: Mapping[Any, object]) -> NoReturn:
        if not self.pending:
            raise NotPendingError(next(iter(answers), 0), None,
                                  "the game is over; nothing is pending")
        extra = sorted(set(answers) - set(self.pending))
        if extra:
            raise NotPendingError(extra[0], answers[extra[0]], "this seat has no decision pending")
        missing = sorted(set(self.pending) - set(answers))
        raise IllegalActionError(missing[0], None, "an answer is required")

    def _reject(self, plays: tuple[object, ...]) -> NoReturn:
        for seat, card in enumerate(plays):
            self.validate(seat, card)
        raise AssertionError("a rejected play passed validation")  # pragma: no cover

    def _resolve(self, plays: tuple[int, ...], order: list[int],
                 choice: tuple[Seat, int] | None, events: list[Event]) -> list[Event]:
        # Row ends are kept ascending (``_ends``) with the row of each (``_row_at``): a card
        # placed after the closest lower end replaces it without changing the order.
        rows = list(self.rows)
        ends, row_at = self._ends, self._row_at
        takes: list[tuple[Seat, tuple[int, ...]]] | None = None
        for card in order:
            i = -1  # the closest lower end: four rows, so a scan beats a call to bisect
            for end in ends:
                if end > card:
                    break
                i += 1
            if i >= 0:
                ends[i] = card
                r = row_at[i]
                row = rows[r]
                if len(row) < ROW_LIMIT:
                    rows[r] = row + _ALONE[card]
                    continue
            else:
                assert choice is not None
                r = choice[1]
                j = row_at.index(r)
                del ends[j], row_at[j]
                ends.insert(0, card)
                row_at.insert(0, r)
                row = rows[r]
                self.trick_plays = None
            if takes is None:
                takes = []
            takes.append((plays.index(card), row))
            rows[r] = _ALONE[card]
        self.rows = rows_after = tuple(rows)
        if takes is None:
            taken_t = self._nothing_taken
        else:
            taken = list(self._nothing_taken)
            piles, penalties = list(self.piles), list(self.penalties)
            for seat, cards in takes:
                taken[seat] = cards
                piles[seat] += cards
                penalties[seat] += row_cost(cards)
            taken_t = tuple(taken)
            self.piles, self.penalties = tuple(piles), tuple(penalties)
        trick = self.trick
        resolved = _new(_TRICK_RESOLVED, (self.round, trick, plays, choice, taken_t, rows_after))
        self._tricks.append(resolved)
        events.append(resolved)
        self.revealed = (*self.revealed, plays)
        self.trick = trick = trick + 1
        if trick < HAND_SIZE:
            self._kind = _PLAY_CARD
            self.pending = self._asks
            return events
        events.extend(self._end_round())
        return events

def _why_illegal(decision: Decision, action: object) -> str:
    if decision.kind is DecisionKind.CHOOSE_ROW:
        return f"a row choice must be a row index 0..{ROW_COUNT - 1}"
    if decision.kind is DecisionKind.DRAFT_CARD:
        return "that card is not in the draft pool"
    return f"that card is not in the hand {list(decision.legal)}"


def new_state(seats: int, settings: Mapping[str, Any] | None = None,
              seed: int = 0, deals: Sequence[Sequence[int]] = ()) -> SixNimmtState:
    """Start a 6 nimmt! match; raises SettingsError for settings the rules do not allow."""
    return SixNimmtState(seats, settings, seed, deals)


def round_deal(record: Mapping[str, Any]) -> list[int]:
    """The cards of a round as its replay record says they were dealt, in the order
    ``new_state`` takes its ``deals``: the hands by seat, then the rows' first cards (none
    for a drafted round, whose hands come from the whole pool)."""
    if "draft" in record:
        return []
    return [c for hand in record["hands"] for c in hand] + [r[0] for r in record["rows"]]


def round_plan(record: Mapping[str, Any]) -> list[tuple[str, dict[Seat, Action]]]:
    """The answers a round's replay record says were given, in order, each with where it is:
    the draft's picks, then each trick's plays and its row choice, if any."""
    plan: list[tuple[str, dict[Seat, Action]]] = []
    for p, pick in enumerate(record.get("draft") or []):
        plan.append((f"draft[{p}]", {int(pick["seat"]): pick["card"]}))
    for t, trick in enumerate(record["tricks"]):
        plan.append((f"tricks[{t}].plays", dict(enumerate(trick["plays"]))))
        choice = trick.get("row_choice")
        if choice is not None:
            plan.append((f"tricks[{t}].row_choice", {int(choice["seat"]): choice["row"]}))
    return plan


__all__ = ["BULLHEADS", "GAME_ID", "HAND_SIZE", "HIGHEST_CARD", "MAX_SEATS", "MIN_SEATS",
           "ROW_COUNT", "ROW_LIMIT", "SETTINGS", "CardDrafted", "CardsRevealed", "Event",
           "GameEnded", "Observation", "RoundEnded", "RoundStarted", "SettingsError",
           "SixNimmtState", "TrickResolved", "View", "bullheads", "new_state", "round_deal",
           "round_plan"]
