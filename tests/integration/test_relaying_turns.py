"""Whose turn a table is when servers relay seats through a broker (``bullring serve
--broker``), on the real PostgreSQL: a relaying server can seat any bot a relaying server has
present (but house bots, which only the servers that run them seat), so its turn comes at
tables of bots connected elsewhere, and its queue holds those bots."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlmodel import Session

from bullring.server.store import Store
from bullring.server.store.turns import LadderTurns, Seatable, TurnElsewhereError, take_turn
from tests.databases import fresh_postgres

GAME = "six_nimmt"


@pytest.fixture
def store() -> Iterator[Store]:
    """A Store on a fresh PostgreSQL database with registered bots ann, bob, cy, dee and the
    house bot house-greedy."""
    with fresh_postgres() as url:
        opened = Store(url)
        for name in ("ann", "bob", "cy", "dee"):
            opened.add_bot(name, owner="tests")
        opened.ensure_house_bot("house-greedy", "greedy")
        yield opened
        opened.engine.dispose()


def seat(store: Store, instance: str, bots: list[str], defer: bool = True) -> None:
    """Take ``instance``'s turn at a table of ``bots`` (TurnElsewhereError if it is not)."""
    with Session(store.engine) as session:
        take_turn(session, GAME, instance, bots, defer)
        session.commit()


def server(store: Store, instance: str, bots: list[str], relays: bool) -> LadderTurns:
    """Server ``instance`` taking part in the turns, with ``bots`` present."""
    turns = LadderTurns(store, instance)
    turns.register([GAME], relays)
    turns.publish(GAME, bots)
    return turns


def test_a_relaying_server_takes_its_turn_at_tables_of_bots_connected_elsewhere(
        store: Store) -> None:
    """Server a has ann and its house bot, b has bob: once a has seated, a table of ann and
    bob is the turn of b (which has not seated) only while b relays, and a table with a's
    house bot never is; a server that relays no more takes no such turn."""
    a = server(store, "a", ["ann", "house-greedy"], relays=True)
    b = server(store, "b", ["bob"], relays=False)
    seat(store, "a", ["ann", "bob"], defer=False)  # a seated last: any rival goes first
    seat(store, "a", ["ann", "bob"])  # b relays nothing: it cannot seat ann, so a seats
    b.set_relays(True)
    with pytest.raises(TurnElsewhereError) as turn:
        seat(store, "a", ["ann", "bob"])
    assert turn.value.instance == "b"
    seat(store, "a", ["ann", "house-greedy"])  # only a runs its house bot
    a.set_relays(False)  # bob is seated through a relaying server's presence; a's is not
    seat(store, "a", ["ann", "bob"])


def test_a_relaying_servers_queue_holds_the_free_bots_other_relaying_servers_have(
        store: Store) -> None:
    """What server a may seat: its own free bots, and the bots (not house bots) of the
    relaying servers it names, each with one server and whether it is free; not those of a
    server that relays nothing or that it does not name, nor a seated bot of its own."""
    a = server(store, "a", ["ann"], relays=True)
    server(store, "b", ["bob", "house-greedy"], relays=True)
    server(store, "c", ["cy"], relays=False)
    server(store, "d", ["dee"], relays=True)
    found = a.seatable(GAME, ["ann"], ["b", "c"])
    assert found == {"ann": Seatable(None, None), "bob": Seatable("b", None)}
    assert store.seat_ladder_match(GAME, {"rounds": 1}, 7, ["ann", "bob"], "a") is not None
    seated = a.seatable(GAME, ["ann"], ["b", "c", "d"])
    assert set(seated) == {"bob", "dee"} and seated["dee"] == Seatable("d", None)
    assert seated["bob"].instance == "b" and seated["bob"].last_seated_at is not None
    assert not seated["bob"].free  # playing: the queue waits for it


def test_a_table_is_never_the_turn_of_a_server_none_of_its_bots_is_connected_to(
        store: Store) -> None:
    """Relaying servers a (ann), b (bob) and c (cy): c seated least recently, but a table of
    ann and bob is the turn of a or b, whichever seated less recently, and a server with
    none of a table's bots leaves it to one that has, though it seated less recently."""
    server(store, "a", ["ann"], relays=True)
    server(store, "b", ["bob"], relays=True)
    server(store, "c", ["cy"], relays=True)
    seat(store, "c", ["cy"], defer=False)
    seat(store, "b", ["bob"], defer=False)
    seat(store, "a", ["ann"], defer=False)  # c, then b, then a seated
    with pytest.raises(TurnElsewhereError) as turn:
        seat(store, "a", ["ann", "bob"])  # b seated less recently than a; c has neither
    assert turn.value.instance == "b"
    seat(store, "b", ["ann", "bob"])
    with pytest.raises(TurnElsewhereError) as turn:
        seat(store, "c", ["ann", "bob"])  # c seated least recently, but has neither
    assert turn.value.instance == "a"
    with pytest.raises(TurnElsewhereError) as turn:
        seat(store, "a", ["ann", "bob", "cy"])  # c seated least recently and has cy
    assert turn.value.instance == "c"
