"""The servers of a fleet deal their queue alike: the random order of a deal is seeded by
the bots waiting (names and when each was last seated), whatever order a server found them
in, so each seats the tables that are its turn and leaves the others to servers that deal
them the same way."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bullring.server.ladder.seating import Ladder
from bullring.server.ladder.sessions import Waiter

SEATED = datetime(2026, 12, 1, tzinfo=UTC)


def waiters(server: str | None) -> list[Waiter]:
    """Eight bots, the first four seen by a server as connected to ``server``."""
    return [Waiter(f"bot{i}", None, SEATED + timedelta(seconds=i), server if i < 4 else None)
            for i in range(8)]


def dealt(waiting: list[Waiter]) -> list[str]:
    """The names of ``waiting`` in the order its deal shuffles them."""
    deal = Ladder._fleet_deal(waiting)
    deal.shuffle(waiting)
    return [w.name for w in waiting]


def test_two_servers_seeing_the_same_bots_wait_deal_them_alike() -> None:
    """Found in other orders, with the connections seen from either server: one deal."""
    mine, theirs = waiters("b"), waiters(None)
    theirs.reverse()
    assert dealt(mine) == dealt(theirs)


def test_the_deal_changes_with_the_bots_and_their_last_seating() -> None:
    """Another seating time, or another bot, deals otherwise (over a few tries)."""
    base = dealt(waiters(None))
    later = waiters(None)
    later[0] = Waiter("bot0", None, SEATED + timedelta(hours=1))
    fewer = waiters(None)[1:]
    assert dealt(later) != base
    assert dealt(fewer) != [n for n in base if n != "bot0"]
