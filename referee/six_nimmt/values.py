"""The values of 6 nimmt! (docs/rules.md §1): its cards and their bullheads, its settings,
the public events a match emits, and what a seat or a spectator may know. The match itself,
its rules in motion, is ``engine.py`` beside it."""

from __future__ import annotations

from typing import Any, Final, NamedTuple

from bullring.errors import OutOfRangeError
from bullring.referee.core import Decision, DecisionKind, Seat
from bullring.referee.settings import COMMON_SETTINGS, Setting

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
        raise OutOfRangeError(f"6 nimmt! cards run from 1 to {HIGHEST_CARD}, not {card!r}")
    if card == 55:
        return 7
    if card % 11 == 0 and card < 100:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


BULLHEADS: Final[tuple[int, ...]] = (0, *(bullheads(c) for c in range(1, HIGHEST_CARD + 1)))
"""Bullheads indexed by card number (index 0 unused)."""

ROW_INDEXES: Final[tuple[int, ...]] = tuple(range(ROW_COUNT))
"""Every row's index, in order."""

ALONE: Final[tuple[tuple[int, ...], ...]] = tuple((card,) for card in range(HIGHEST_CARD + 1))
"""``(card,)`` for every card: a row's new last card without building a tuple each time
(typed ``tuple[int, ...]``: the compiled module would unbox a ``tuple[int]`` and build a
new one at every use)."""

SETTINGS: tuple[Setting, ...] = (
    Setting("end_threshold", 66, "the game ends after a round in which a total reaches this",
            minimum=1, maximum=10_000, public_max=100),
    Setting("end_rule", "at_least", "whether a total must reach or exceed end_threshold",
            choices=("at_least", "more_than")),
    Setting("rounds", 0, "a fixed number of rounds; overrides end_threshold when above 0",
            minimum=0, maximum=1000, public_max=10),
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


def row_cost(cards: tuple[int, ...]) -> int:
    """The bullheads of ``cards`` (a row, a pile); a plain loop, which the compiled module
    runs on machine integers (a trick's takes are summed here)."""
    cost = 0
    for card in cards:
        cost += BULLHEADS[card]
    return cost


def round_record(record: dict[str, Any]) -> dict[str, Any]:
    """A round as a state logs it, as a docs/replay-format.md ROUND record (plain JSON
    values)."""
    tricks = [{
        "plays": list(t.plays),
        "row_choice": (None if t.row_choice is None
                       else {"seat": t.row_choice[0], "row": t.row_choice[1]}),
        "taken": [list(c) for c in t.taken],
        "rows_after": [list(r) for r in t.rows_after],
    } for t in record["tricks"]]
    return {**record, "hands": [list(h) for h in record.get("hands", ())],
            "rows": [list(r) for r in record.get("rows", ())], "tricks": tricks}
