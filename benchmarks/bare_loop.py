"""A bare list-based 6 nimmt! loop: the floor any engine is compared with.

It deals, plays random cards and places them with plain lists, with no observations,
no validation and no log. ``benchmarks/engine.py`` measures it beside the real engine.
"""

from __future__ import annotations

import random

BULLHEADS = [0] + [
    7 if c == 55 else 5 if c % 11 == 0 and c < 100 else 3 if c % 10 == 0 else 2 if c % 5 == 0
    else 1 for c in range(1, 105)
]


def bare_game(seats: int, seed: int, threshold: int = 66) -> list[int]:
    """Play one random game to ``threshold`` with plain lists and return the totals."""
    rng = random.Random(seed)
    totals = [0] * seats
    while max(totals) < threshold:
        cards = rng.sample(range(1, 105), 10 * seats + 4)
        hands = [cards[i * 10:(i + 1) * 10] for i in range(seats)]
        rows = [[c] for c in cards[10 * seats:]]
        for _ in range(10):
            plays = [hand.pop(rng.randrange(len(hand))) for hand in hands]
            for card, seat in sorted(zip(plays, range(seats), strict=True)):
                best = -1
                for r, row in enumerate(rows):
                    if row[-1] < card and (best < 0 or row[-1] > rows[best][-1]):
                        best = r
                if best < 0:
                    best = rng.randrange(4)
                    totals[seat] += sum(BULLHEADS[c] for c in rows[best])
                    rows[best] = [card]
                elif len(rows[best]) == 5:
                    totals[seat] += sum(BULLHEADS[c] for c in rows[best])
                    rows[best] = [card]
                else:
                    rows[best].append(card)
    return totals
