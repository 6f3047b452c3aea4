"""6 nimmt! (game id ``six_nimmt``), exactly as docs/rules.md §1 says.

Every seat plays a card at once (``PLAY_CARD``); the cards are revealed together and placed
lowest first. A card lower than every row end makes its seat choose a row to take
(``CHOOSE_ROW``). The professional variant drafts the hands first (``DRAFT_CARD``).
"""

from __future__ import annotations

import copy
import random
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from operator import add
from typing import Any, Final, NamedTuple, NoReturn, cast

from referee.core import (
    Action,
    Decision,
    DecisionKind,
    IllegalActionError,
    MalformedActionError,
    NotPendingError,
    Seat,
    SettingsError,
    competition_ranks,
    derive_seed,
    seeded_sample,
)
from referee.settings import COMMON_SETTINGS, Setting, SettingValue, check_seats, parse_settings

GAME_ID: Final = "six_nimmt"
HIGHEST_CARD: Final = 104
HAND_SIZE: Final = 10
ROW_COUNT: Final = 4
ROW_LIMIT: Final = 5
MIN_SEATS: Final = 2
MAX_SEATS: Final = 10


def bullheads(card: int) -> int:
    """Return the penalty points printed on ``card`` (1..104)."""
    if not 1 <= card <= HIGHEST_CARD:
        raise ValueError(f"6 nimmt! cards run from 1 to {HIGHEST_CARD}, not {card!r}")
    if card == 55:
        return 7
    if card % 11 == 0 and card < 100:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


BULLHEADS: tuple[int, ...] = (0, *(bullheads(c) for c in range(1, HIGHEST_CARD + 1)))
"""Bullheads indexed by card number (index 0 unused)."""

SETTINGS: tuple[Setting, ...] = (
    Setting("end_threshold", 66, "the game ends after a round in which a total reaches this",
            minimum=1, maximum=10_000),
    Setting("end_rule", "at_least", "whether a total must reach or exceed end_threshold",
            choices=("at_least", "more_than")),
    Setting("rounds", 0, "a fixed number of rounds; overrides end_threshold when above 0",
            minimum=0, maximum=1000),
    Setting("variant", "standard", "standard deal, or professional (drafted hands)",
            choices=("standard", "professional")),
    *COMMON_SETTINGS,
)
"""Every 6 nimmt! setting with its default."""


class CardsRevealed(NamedTuple):
    """Every seat's card of a trick, revealed together (by seat)."""

    round: int
    trick: int
    plays: tuple[int, ...]


class TrickResolved(NamedTuple):
    """A trick placed: the row choice (if any), what each seat took, and the rows after."""

    round: int
    trick: int
    plays: tuple[int, ...]
    row_choice: tuple[Seat, int] | None
    taken: tuple[tuple[int, ...], ...]
    rows_after: tuple[tuple[int, ...], ...]


class CardDrafted(NamedTuple):
    """A seat took a card from the face-up draft pool (professional variant)."""

    round: int
    seat: Seat
    card: int


class RoundStarted(NamedTuple):
    """A round's four starting rows are laid out (hands are private to their seats)."""

    round: int
    rows: tuple[tuple[int, ...], ...]


class RoundEnded(NamedTuple):
    """A round is over: bullheads taken this round and the running totals, by seat."""

    round: int
    penalties: tuple[int, ...]
    totals: tuple[int, ...]


class GameEnded(NamedTuple):
    """The game is over: final totals and ranks (1 = best, ties share)."""

    totals: tuple[int, ...]
    ranks: tuple[int, ...]


Event = CardsRevealed | TrickResolved | CardDrafted | RoundStarted | RoundEnded | GameEnded
"""Every public event a 6 nimmt! state emits."""


class Observation(NamedTuple):
    """What one seat may know (docs/rules.md §4): its hand and every public fact."""

    seat: Seat
    round: int
    trick: int
    hand: tuple[int, ...]
    rows: tuple[tuple[int, ...], ...]
    piles: tuple[tuple[int, ...], ...]
    """Cards each seat has taken this round."""
    penalties: tuple[int, ...]
    """Bullheads each seat has taken this round."""
    totals: tuple[int, ...]
    """Bullheads of the finished rounds, by seat."""
    revealed: tuple[tuple[int, ...], ...]
    """The plays (by seat) of each finished trick of this round."""
    trick_plays: tuple[int, ...] | None
    """This trick's revealed cards while a row choice is pending, else None."""
    pool: tuple[int, ...]
    """Cards still in the face-up draft pool (professional variant), else empty."""
    decision: Decision | None


class View(NamedTuple):
    """What a seat-less spectator may know: only public facts."""

    round: int
    trick: int
    rows: tuple[tuple[int, ...], ...]
    piles: tuple[tuple[int, ...], ...]
    penalties: tuple[int, ...]
    totals: tuple[int, ...]
    revealed: tuple[tuple[int, ...], ...]
    trick_plays: tuple[int, ...] | None
    pool: tuple[int, ...]
    pending: tuple[tuple[Seat, DecisionKind], ...]


_ROW_INDEXES: Final[tuple[int, ...]] = tuple(range(ROW_COUNT))
_DECK: Final = range(1, HIGHEST_CARD + 1)
_ALONE: Final[tuple[tuple[int], ...]] = tuple((card,) for card in range(HIGHEST_CARD + 1))
"""``(card,)`` for every card: a row's new last card without building a tuple each time."""
_bullheads_of: Final = BULLHEADS.__getitem__
_PLAY_CARD: Final = DecisionKind.PLAY_CARD
_CHOOSE_ROW: Final = DecisionKind.CHOOSE_ROW
_new: Final = tuple.__new__
"""Builds a NamedTuple from a ready tuple, skipping its Python-level ``__new__`` (hot path)."""
_OBSERVATION: Final = Observation
_DECISION: Final = Decision
_CARDS_REVEALED: Final = CardsRevealed
_TRICK_RESOLVED: Final = TrickResolved
_ROUND_STARTED: Final = RoundStarted
_ROUND_ENDED: Final = RoundEnded
_bisect_left: Final = bisect_left
"""Final aliases of the names the hot path uses: the mypyc build reads them as constants
instead of looking each up in the module's dict on every use."""


_STATE_FIELDS = (
    "_asks",
    "_choose_row",
    "_draft_order",
    "_ends",
    "_fixed_rounds",
    "_kind",
    "_more_than",
    "_nothing_taken",
    "_order",
    "_row_at",
    "_seat_order",
    "_seat_range",
    "_threshold",
    "_tricks",
    "hands",
    "opening",
    "over",
    "penalties",
    "pending",
    "piles",
    "pool",
    "professional",
    "revealed",
    "round",
    "rounds_log",
    "rows",
    "seats",
    "seed",
    "settings",
    "deals",
    "step",
    "totals",
    "trick",
    "trick_plays",
)
"""Every attribute of a ``SixNimmtState`` (its ``__slots__``; ``__deepcopy__`` copies them)."""


class SixNimmtState:
    """A 6 nimmt! match in progress: pending decisions in, public events out."""

    game = GAME_ID
    __slots__ = _STATE_FIELDS

    def __init__(self, seats: int, settings: Mapping[str, Any] | None = None, seed: int = 0,
                 deals: Sequence[Sequence[int]] = ()):
        check_seats(GAME_ID, seats, MIN_SEATS, MAX_SEATS)
        self.deals: list[list[int]] = [list(d) for d in deals]
        """Given deals, by round: each seat's hand then the four row cards (a replay recorded
        elsewhere is re-checked with its own); a round past them is dealt from the seed."""
        self.settings: dict[str, SettingValue] = parse_settings(SETTINGS, settings)
        self.seats = seats
        self.seed = seed
        self.professional = self.settings["variant"] == "professional"
        self._threshold = int(self.settings["end_threshold"])
        self._more_than = self.settings["end_rule"] == "more_than"
        self._fixed_rounds = int(self.settings["rounds"])
        self.round = -1
        self.trick = 0
        self.step = 0
        """How many times answers have been applied; part of each default's seed."""
        self.totals: tuple[int, ...] = (0,) * seats
        self.hands: list[tuple[int, ...]] = []
        self.rows: tuple[tuple[int, ...], ...] = ()
        self.piles: tuple[tuple[int, ...], ...] = ()
        self.penalties: tuple[int, ...] = ()
        self.revealed: tuple[tuple[int, ...], ...] = ()
        self.pool: tuple[int, ...] = ()
        self.trick_plays: tuple[int, ...] | None = None
        self._order: list[int] = []
        self._asks: dict[Seat, Decision] = {}
        """The next trick's PLAY_CARD decisions, built with the hands left after this one."""
        """This trick's cards, ascending, while a row choice is pending."""
        self.pending: dict[Seat, Decision] = {}
        self._kind = DecisionKind.PLAY_CARD
        self._seat_range = range(seats)
        self._seat_order = tuple(self._seat_range)
        self._nothing_taken: tuple[tuple[int, ...], ...] = ((),) * seats
        self._choose_row = [Decision(s, DecisionKind.CHOOSE_ROW, _ROW_INDEXES)
                            for s in self._seat_range]
        """Each seat's row-choice decision (it never changes)."""
        self._ends: list[int] = []
        """Row ends, ascending."""
        self._row_at: list[int] = []
        """The row index of each entry of ``_ends``."""
        self.over = False
        self.rounds_log: list[dict[str, Any]] = []
        """One record per started round (``replay_rounds`` writes them as docs/replay-format.md)."""
        self._tricks: list[TrickResolved] = []
        self._draft_order: list[Seat] = []
        self.opening: list[Event] = self._start_round()
        """The public events of the deal before any decision (the first round's start)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> SixNimmtState:
        """An independent copy of the match (written out: the mypyc-compiled class cannot be
        created without its ``__init__``, which ``copy``'s default way needs)."""
        twin = memo[id(self)] = SixNimmtState(self.seats, self.settings, self.seed)
        for name in _STATE_FIELDS:
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
        """Raise IllegalActionError unless ``action`` answers ``seat``'s pending decision."""
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
            return min(_ROW_INDEXES, key=lambda r: (_row_cost(self.rows[r]),
                                                    len(self.rows[r]), r))
        return min(self.pool)

    def apply(self, answers: Mapping[Seat, Action]) -> list[Event]:
        """Apply one answer for every pending seat and return the events that followed.

        Every answer is checked before anything changes: on an IllegalActionError the
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
            self.pending = {seat: self._choose_row[seat]}
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

    def replay_rounds(self) -> list[dict[str, Any]]:
        """Return every round so far as a docs/replay-format.md ROUND record (plain JSON values)."""
        out = []
        for record in self.rounds_log:
            tricks = [{
                "plays": list(t.plays),
                "row_choice": (None if t.row_choice is None
                               else {"seat": t.row_choice[0], "row": t.row_choice[1]}),
                "taken": [list(c) for c in t.taken],
                "rows_after": [list(r) for r in t.rows_after],
            } for t in record["tricks"]]
            out.append({**record, "hands": [list(h) for h in record.get("hands", ())],
                        "rows": [list(r) for r in record.get("rows", ())], "tricks": tricks})
        return out

    def round_scores(self) -> list[tuple[int, ...]]:
        """Bullheads taken in each finished round, by seat."""
        return [tuple(r["penalties"]) for r in self.rounds_log if "penalties" in r]

    def result(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Return (totals, ranks) so far; final once ``over`` is true."""
        return self.totals, competition_ranks(self.totals)

    # -- rules ---------------------------------------------------------------------------

    def _start_round(self) -> list[Event]:
        self.round += 1
        self.trick = 0
        self.piles = ((),) * self.seats
        self.penalties = (0,) * self.seats
        self.revealed = ()
        self.trick_plays = None
        n = self.seats
        self._tricks = []
        record: dict[str, Any] = {"tricks": self._tricks}
        self.rounds_log.append(record)
        if self.professional:
            self.pool = tuple(range(1, HAND_SIZE * n + ROW_COUNT + 1))
            self.hands = [()] * n
            self.rows = ()
            first = self.round % n
            self._draft_order = [(first + i) % n for i in range(HAND_SIZE * n)]
            self._draft_order.reverse()
            record["draft"] = []
            self._ask_draft()
            return []
        if self.round < len(self.deals):
            cards = self.deals[self.round]
            if len(cards) != HAND_SIZE * n + ROW_COUNT or len(set(cards)) != len(cards) or \
                    not all(c.__class__ is int and 1 <= c <= len(_DECK) for c in cards):
                raise SettingsError(f"round {self.round}: a deal is {HAND_SIZE * n + ROW_COUNT}"
                                    f" distinct cards of 1..{len(_DECK)}, not {cards!r}")
        else:
            cards = seeded_sample(_DECK, HAND_SIZE * n + ROW_COUNT, self.seed, "deal",
                                  self.round)
        self.hands = [tuple(sorted(cards[i:i + HAND_SIZE])) for i in range(0, HAND_SIZE * n,
                                                                             HAND_SIZE)]
        self._lay_rows(tuple(map(_ALONE.__getitem__, cards[HAND_SIZE * n:])))
        return self._begin_play(record)

    def _begin_play(self, record: dict[str, Any]) -> list[Event]:
        record["hands"] = tuple(self.hands)
        record["rows"] = self.rows
        self._ask_play()
        return [_new(_ROUND_STARTED, (self.round, self.rows))]

    def _lay_rows(self, rows: tuple[tuple[int, ...], ...]) -> None:
        self.rows = rows
        ends = [row[-1] for row in rows]
        self._row_at = order = sorted(_ROW_INDEXES, key=ends.__getitem__)
        self._ends = [ends[r] for r in order]

    def _ask_draft(self) -> None:
        seat = self._draft_order[-1]
        self._kind = DecisionKind.DRAFT_CARD
        self.pending = {seat: Decision(seat, DecisionKind.DRAFT_CARD, self.pool)}

    def _ask_play(self) -> None:
        self._kind = _PLAY_CARD
        pending = self.pending = {}
        for seat, hand in enumerate(self.hands):
            pending[seat] = _new(_DECISION, (seat, _PLAY_CARD, hand))

    def _draft(self, seat: Seat, card: int) -> list[Event]:
        self._draft_order.pop()
        self.pool = tuple(c for c in self.pool if c != card)
        self.hands[seat] = tuple(sorted((*self.hands[seat], card)))
        record = self.rounds_log[-1]
        record["draft"].append({"seat": seat, "card": card})
        events: list[Event] = [CardDrafted(self.round, seat, card)]
        if self._draft_order:
            self._ask_draft()
            return events
        self._lay_rows(tuple((c,) for c in self.pool))
        self.pool = ()
        events.extend(self._begin_play(record))
        return events

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
            i = _bisect_left(ends, card) - 1
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
                penalties[seat] += sum(map(_bullheads_of, cards))
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

    def _end_round(self) -> list[Event]:
        penalties = self.penalties
        self.totals = tuple(map(add, self.totals, penalties))
        self.rounds_log[-1]["penalties"] = list(penalties)
        events: list[Event] = [_new(_ROUND_ENDED, (self.round, penalties, self.totals))]
        if self._game_ends():
            self.over = True
            self.pending = {}
            events.append(GameEnded(*self.result()))
            return events
        events.extend(self._start_round())
        return events

    def _game_ends(self) -> bool:
        if self._fixed_rounds:
            return self.round + 1 >= self._fixed_rounds
        top = max(self.totals)
        return top > self._threshold if self._more_than else top >= self._threshold


def _row_cost(cards: tuple[int, ...]) -> int:
    return sum(map(_bullheads_of, cards))


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


__all__ = ["BULLHEADS", "SETTINGS", "Observation", "SettingsError", "SixNimmtState", "View",
           "bullheads", "new_state"]
