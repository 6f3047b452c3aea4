"""The notices servers sharing a PostgreSQL database hear on ``bullring_bots_freed``: each
names what changed, the game it concerns and the server that made the change, so that a
server looks again only where the change can matter to it."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from bullring.server.store import FREED_CHANNEL, Store
from bullring.server.store.base import Notice
from bullring.server.store.turns import LadderTurns
from bullring.server.tournaments.live import create_tournament
from tests.databases import fresh_postgres

GAME = "six_nimmt"


@pytest.fixture
def store() -> Iterator[Store]:
    """A Store on a fresh PostgreSQL database with registered bots ann, bob, cy and dee."""
    with fresh_postgres() as url:
        opened = Store(url)
        for name in ("ann", "bob", "cy", "dee"):
            opened.add_bot(name, owner="tests")
        yield opened
        opened.engine.dispose()


def heard(listener: psycopg.Connection[tuple[object, ...]], count: int) -> list[Notice]:
    """The first ``count`` notices ``listener`` is sent (fewer if they do not come in 10 s)."""
    return [Notice.parse(n.payload)
            for n in listener.notifies(timeout=10, stop_after=count)]


def test_every_change_is_told_with_what_it_is(store: Store) -> None:
    """A server publishing its bots, seating a table and recording its end, a challenge
    accepted and a tournament created: each is one notice naming its kind and game, and
    the server that made it when it looks again by itself (the seating, the result and the
    presence); the challenge and the tournament name none, as any process may write them.
    A notice not understood is taken for anything."""
    url = store.listen_url()
    assert url is not None
    with psycopg.connect(url, autocommit=True) as listener:
        listener.execute(f"LISTEN {FREED_CHANNEL}")
        LadderTurns(store, "srv-a").publish(GAME, ["ann", "bob"])
        match_id = store.seat_ladder_match(GAME, {"rounds": 1}, 7, ["ann", "bob"], "srv-a")
        assert match_id is not None
        store.finish_match(match_id, {"match_id": match_id, "termination": "normal",
                                      "ranks": [1, 2], "totals": [10, 20]})
        store.set_auto_accept("dee", True)
        store.create_challenge(GAME, "cy", ["dee"])
        create_tournament(store, GAME, "round-robin", ["ann", "bob"], games=1, seats=2)
        assert heard(listener, 5) == [Notice("presence", GAME, "srv-a"),
                                   Notice("seated", GAME, "srv-a"),
                                   Notice("freed", GAME, "srv-a"),
                                   Notice("challenge", GAME, ""),
                                   Notice("tournament", GAME, "")]
    assert Notice.parse("") == Notice.parse("moved six_nimmt srv-a") == Notice("")
