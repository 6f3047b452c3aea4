"""Ladder rules that need no server: table planning, table sizes, house bot names, widened
ratings; and the one-server-per-SQLite-file guard."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bullring.server import ratings
from bullring.server.ladder.seating import TableSize, house_names, plan_tables
from tests.serving import CLI, ServerProcess, db_url


@pytest.mark.parametrize("waiting,size,tables", [
    (3, TableSize(4, 5), []),
    (4, TableSize(4, 5), [4]),
    (6, TableSize(4, 5), [5]),
    (8, TableSize(4, 5), [4, 4]),
    (9, TableSize(4, 5), [5, 4]),
    (11, TableSize(4, 5), [5, 5]),
    (13, TableSize(4, 5), [5, 4, 4]),
    (7, TableSize(4, 4), [4]),
    (12, TableSize(4, 4), [4, 4, 4]),
])
def test_tables_seat_as_many_as_possible_evenly(waiting: int, size: TableSize,
                                                tables: list[int]) -> None:
    """The planner seats as many waiting bots as the sizes allow, in tables as even as
    possible, each within MIN..MAX."""
    assert plan_tables(waiting, size) == tables
    assert sum(tables) <= waiting


def test_table_sizes_parse_or_say_what_is_wrong() -> None:
    """``4-5`` and ``4`` parse; anything else is refused with a message."""
    assert TableSize.parse("4-5") == TableSize(4, 5)
    assert TableSize.parse("4") == TableSize(4, 4)
    for bad in ("five", "5-4", "1"):
        with pytest.raises(ValueError, match="table size"):
            TableSize.parse(bad)


def test_house_bots_given_twice_are_two_bots() -> None:
    """Each house bot kind listed gets its own registered name; unknown kinds are refused."""
    assert house_names(["greedy", "random", "random"]) == [
        ("house-greedy", "greedy"), ("house-random", "random"), ("house-random-2", "random")]
    with pytest.raises(ValueError, match="unknown house bot 'clever'"):
        house_names(["clever"])


def test_a_new_version_widens_sigma_up_to_a_new_bots() -> None:
    """Widening keeps mu, grows sigma, and never exceeds a new bot's sigma."""
    sure = ratings.Skill(30.0, 1.0)
    wider = ratings.widen(sure)
    assert wider.mu == 30.0 and 1.0 < wider.sigma < ratings.DEFAULT_SIGMA
    assert ratings.widen(ratings.NEW).sigma == ratings.DEFAULT_SIGMA


def test_a_sqlite_file_serves_one_server(tmp_path: Path) -> None:
    """A second server on the same SQLite file is refused with a message pointing to
    PostgreSQL (a SQLite database cannot be shared safely by servers)."""
    first = ServerProcess(db_url(tmp_path)).start()
    try:
        second = subprocess.run([*CLI, "serve", "--port", "0", "--http-port", "0", "--db",
                                 first.db],
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 5
        assert "another bullring server already serves" in second.stderr
        assert "PostgreSQL" in second.stderr
    finally:
        first.stop()


def test_a_stopping_ladder_refuses_joins_as_unavailable(tmp_path: Path) -> None:
    """Once the ladder is stopping, a join (a bot reconnecting after its stream was closed)
    is refused with UNAVAILABLE, which bots retry, instead of opening a stream that would
    only be cut off when the server's grace period ends (the soak found those logged as
    errors)."""
    import asyncio

    from bullring.server.errors import ShuttingDownError
    from bullring.server.ladder.seating import Ladder, LadderOptions
    from bullring.server.match.hub import MatchHub
    from bullring.server.store import Store

    store = Store(db_url(tmp_path))
    store.add_bot("late")
    bot = store.bot("late")

    async def body() -> None:
        ladder = Ladder(store, MatchHub(store), LadderOptions(games=("six_nimmt",)))
        await ladder.start()
        assert ladder.join(bot, "six_nimmt").open
        await ladder.stop()
        with pytest.raises(ShuttingDownError):
            ladder.join(bot, "six_nimmt")

    asyncio.run(body())
