"""The rounds of a 6 nimmt! match (docs/rules.md §1): the deal, or the draft of the
professional variant, the rows laid out, each round's scores and the end of the game.

``SixNimmtRounds`` holds a match's state and moves it from round to round; the decisions
and the tricks in between are ``SixNimmtState``'s (``engine.py`` beside it), built on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import add
from typing import Any, Final

from bullring.referee.core import (
    Decision,
    DecisionKind,
    Seat,
    SettingsError,
    competition_ranks,
    next_round_or_end,
)
from bullring.referee.seeding import seeded_sample
from bullring.referee.settings import SettingValue, check_seats, parse_settings
from bullring.referee.six_nimmt.values import (
    ALONE,
    GAME_ID,
    HAND_SIZE,
    HIGHEST_CARD,
    MAX_SEATS,
    MIN_SEATS,
    ROW_COUNT,
    ROW_INDEXES,
    SETTINGS,
    CardDrafted,
    Event,
    GameEnded,
    RoundEnded,
    RoundStarted,
    TrickResolved,
    round_record,
)

_ROW_INDEXES: Final = ROW_INDEXES
_DECK: Final = range(1, HIGHEST_CARD + 1)
_ALONE: Final = ALONE
_PLAY_CARD: Final = DecisionKind.PLAY_CARD
_new: Final = tuple.__new__
"""Builds a NamedTuple from a ready tuple, skipping its Python-level ``__new__`` (hot path)."""
_DECISION: Final = Decision
_ROUND_STARTED: Final = RoundStarted
_ROUND_ENDED: Final = RoundEnded
"""Final aliases of the names the hot path uses: the mypyc build reads them as constants
instead of looking each up in the module's dict on every use."""
CHOOSE_ROW_ASKS: Final = tuple(Decision(s, DecisionKind.CHOOSE_ROW, ROW_INDEXES)
                                for s in range(MAX_SEATS))
"""Each seat's row-choice decision, by seat: the same for every match."""

STATE_FIELDS = ("_asks", "_draft_order", "_ends", "_fixed_rounds", "_kind",
                 "_more_than", "_nothing_taken", "_order", "_row_at", "_seat_order",
                 "_seat_range", "_threshold", "_tricks", "hands", "opening", "over",
                 "penalties", "pending", "piles", "pool", "professional", "revealed", "round",
                 "rounds_log", "rows", "seats", "seed", "settings", "deals", "step", "totals",
                 "trick", "trick_plays")
"""Every attribute of a 6 nimmt! match (its ``__slots__``; ``SixNimmtState.__deepcopy__`` copies
them)."""



class SixNimmtRounds:
    """A 6 nimmt! match's state, from round to round (``SixNimmtState`` plays the tricks)."""

    game = GAME_ID
    __slots__ = STATE_FIELDS

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

    def replay_rounds(self) -> list[dict[str, Any]]:
        """Return every round so far as a docs/replay-format.md ROUND record (plain JSON values)."""
        return [round_record(record) for record in self.rounds_log]

    def round_scores(self) -> list[tuple[int, ...]]:
        """Bullheads taken in each finished round, by seat."""
        return [tuple(r["penalties"]) for r in self.rounds_log if "penalties" in r]

    def result(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Return (totals, ranks) so far; final once ``over`` is true."""
        return self.totals, competition_ranks(self.totals)

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
                # ``__class__ is int``: a card is an int, never a bool
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

    def _end_round(self) -> list[Event]:
        penalties = self.penalties
        self.totals = tuple(map(add, self.totals, penalties))
        self.rounds_log[-1]["penalties"] = list(penalties)
        events: list[Event] = [_new(_ROUND_ENDED, (self.round, penalties, self.totals))]
        return next_round_or_end(self, events, self._game_ends(), GameEnded)

    def _game_ends(self) -> bool:
        if self._fixed_rounds:
            return self.round + 1 >= self._fixed_rounds
        top = max(self.totals)
        return top > self._threshold if self._more_than else top >= self._threshold
