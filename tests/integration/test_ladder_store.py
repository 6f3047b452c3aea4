"""The ladder's persistence on SQLite and on the real PostgreSQL: the bot registry, seating
claims, results recorded once with their rating updates, orphaned matches, the match log."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import create_engine, inspect, text

from bullring.server import ratings
from bullring.server.errors import UnknownMatchError
from bullring.server.store import BotError, LeaderboardEntry, Store, hash_token
from bullring.server.store.migrate import upgrade
from tests.databases import fresh_postgres


def replay_of(match_id: str, ranks: list[int], termination: str = "normal") -> dict[str, Any]:
    """The parts of a replay the store reads."""
    return {"match_id": match_id, "termination": termination, "ranks": ranks,
            "totals": [r * 10 for r in ranks]}


def seat(store: Store, bots: list[str], instance: str = "me") -> str:
    """A ladder match of ``bots`` that must be seated."""
    match_id = store.seat_ladder_match("six_nimmt", {"rounds": 1}, 7, bots, instance)
    assert match_id is not None
    return match_id


@pytest.fixture
def store(db: str) -> Store:
    """A Store on a fresh database of each backend, with four registered bots."""
    opened = Store(db)
    for name in ("ann", "bob", "cy", "dee"):
        opened.add_bot(name, owner="tests")
    return opened


def test_opening_migrates_to_head_and_twice_is_harmless(db: str) -> None:
    """A new database gets every table from the alembic migrations at head; opening it again
    changes nothing."""
    Store(db)
    store = Store(db)
    tables = set(inspect(store.engine).get_table_names())
    assert {"match", "seat", "bot", "rating", "rating_change", "admin_token", "challenge",
            "tournament", "ladder_presence", "ladder_turn", "alembic_version"} <= tables
    with store.engine.connect() as connection:
        assert connection.execute(text("SELECT version_num FROM alembic_version")).scalar() \
            == "0009"


def test_a_token_is_stored_only_as_its_hash_and_rotation_retires_it(store: Store) -> None:
    """``add_bot`` returns the token once; the database holds only its SHA-256; a rotated
    token replaces the old one, which stops naming the bot."""
    token = store.add_bot("eve")
    row = store.bot("eve")
    assert row.token_hash == hash_token(token) and token not in (row.token_hash or "")
    assert store.bot_for_token(token) is not None
    new = store.rotate_token("eve")
    assert store.bot_for_token(token) is None
    found = store.bot_for_token(new)
    assert found is not None and found.name == "eve"


def test_bad_registry_requests_say_what_is_wrong(store: Store) -> None:
    """A taken name, a bad name and an unknown bot are refused with a clear BotError."""
    with pytest.raises(BotError, match="already registered"):
        store.add_bot("ann")
    with pytest.raises(BotError, match="bad bot name"):
        store.add_bot("no spaces please")
    with pytest.raises(BotError, match="no bot named 'zed'"):
        store.new_version("zed")


def test_a_bot_is_never_seated_in_two_matches_at_once(store: Store) -> None:
    """Seating claims every bot; a table with a bot already seated is refused whole (its
    other bots stay free), and a finished match frees its bots."""
    first = seat(store, ["ann", "bob", "cy"])
    assert store.seat_ladder_match("six_nimmt", {}, 1, ["dee", "ann"], "me") is None
    assert store.free_bots(["ann", "bob", "cy", "dee"]) == {"dee"}
    assert store.finish_match(first, replay_of(first, [1, 2, 3]))
    assert store.free_bots(["ann", "bob", "cy", "dee"]) == {"ann", "bob", "cy", "dee"}


def test_concurrent_claims_seat_each_bot_once(store: Store) -> None:
    """Many threads claiming overlapping tables at once: every bot ends in at most one match
    (the conditional claim holds under real concurrency on both backends)."""
    tables = [["ann", "bob", "cy"], ["cy", "dee", "ann"], ["bob", "dee", "ann"],
              ["dee", "cy", "bob"]] * 3
    won: list[str] = []
    barrier = threading.Barrier(len(tables))

    def claim(bots: list[str]) -> None:
        barrier.wait()
        match_id = store.seat_ladder_match("six_nimmt", {}, 1, bots, "me")
        if match_id is not None:
            won.append(match_id)

    threads = [threading.Thread(target=claim, args=(t,)) for t in tables]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1  # every pair of these tables shares a bot
    seated = [s.bot for s in store.seats(won)[won[0]]]
    assert {b.name: b.current_match for b in store.bots() if b.name in seated} == \
        dict.fromkeys(seated, won[0])


@pytest.mark.parametrize("returning", [True, False])
def test_a_result_is_recorded_once_with_its_ratings(store: Store, returning: bool) -> None:
    """Finishing stores the result and one rating change per seat in one go; finishing the
    same match again (another server, a retry) records nothing more; so too on a database
    without UPDATE ... RETURNING (SQLite before 3.35), and an unknown match is an error."""
    if not returning:
        store.engine.dialect.update_returning = False
    match_id = seat(store, ["ann", "bob", "cy", "dee"])
    with pytest.raises(UnknownMatchError):
        store.finish_match("nope", replay_of("nope", [1, 2, 3, 4]))
    assert store.finish_match(match_id, replay_of(match_id, [1, 2, 2, 4]))
    assert not store.finish_match(match_id, replay_of(match_id, [4, 3, 2, 1]))
    changes = store.rating_changes(match_id=match_id)
    assert sorted(c.bot for c in changes) == ["ann", "bob", "cy", "dee"]
    board = {e.bot: e for e in store.leaderboard("six_nimmt")}
    assert all(e.games == 1 for e in board.values())
    assert board["bob"].mu == pytest.approx(board["cy"].mu)
    assert board["ann"].mu > board["bob"].mu > board["dee"].mu


def test_ratings_follow_openskill_in_match_order(store: Store) -> None:
    """Each match's update starts from the ratings the previous match left (match order);
    the numbers are openskill Plackett-Luce's, with tied ranks shared."""
    results = [(["ann", "bob", "cy"], [1, 2, 3]), (["cy", "bob", "dee"], [1, 1, 3]),
               (["ann", "dee", "cy"], [3, 2, 1])]
    expected = {n: ratings.NEW for n in ("ann", "bob", "cy", "dee")}
    for bots, ranks in results:
        match_id = seat(store, bots)
        store.finish_match(match_id, replay_of(match_id, ranks))
        after = ratings.rate([expected[b] for b in bots], ranks)
        expected.update(zip(bots, after, strict=True))
    board = store.leaderboard("six_nimmt")
    for entry in board:
        assert entry.mu == pytest.approx(expected[entry.bot].mu)
        assert entry.sigma == pytest.approx(expected[entry.bot].sigma)
        assert entry.ordinal == pytest.approx(entry.mu - 3 * entry.sigma)
    assert [e.ordinal for e in board] == sorted((e.ordinal for e in board), reverse=True)
    assert isinstance(board[0], LeaderboardEntry)
    assert {e.bot: e.games for e in board} == {"ann": 2, "bob": 2, "cy": 3, "dee": 2}


def test_an_aborted_match_is_not_rated(store: Store) -> None:
    """A match that ended aborted frees its bots and changes no rating."""
    match_id = seat(store, ["ann", "bob", "cy"])
    assert store.finish_match(match_id, replay_of(match_id, [1, 2, 3], "aborted"))
    assert store.rating_changes(match_id=match_id) == []
    assert store.leaderboard("six_nimmt") == []
    assert store.matches(status="aborted")[0].id == match_id


def test_a_new_version_widens_the_interval_and_keeps_the_mean(store: Store) -> None:
    """``new_version`` bumps the version and widens sigma (never past a new bot's)."""
    match_id = seat(store, ["ann", "bob", "cy", "dee"])
    store.finish_match(match_id, replay_of(match_id, [1, 2, 3, 4]))
    before = {e.bot: e for e in store.leaderboard("six_nimmt")}["ann"]
    assert store.new_version("ann") == 2
    after = {e.bot: e for e in store.leaderboard("six_nimmt")}["ann"]
    assert after.version == 2 and after.mu == before.mu
    assert before.sigma < after.sigma <= ratings.DEFAULT_SIGMA
    second = seat(store, ["ann", "bob", "cy"])
    store.finish_match(second, replay_of(second, [1, 2, 3]))
    assert store.rating_changes(match_id=second, bot="ann")[0].version == 2
    history = store.rating_changes(bot="ann")
    assert [c.match_id for c in history] == [match_id, second]
    assert store.rating_changes(bot="ann", last=1) == history[-1:]  # the latest, for a chart
    assert store.rating_changes(bot="ann", last=5) == history


def test_a_disabled_bot_is_not_seated_and_leaves_the_board(store: Store) -> None:
    """Disabling refuses its seating and hides it from the leaderboard; enabling undoes it."""
    match_id = seat(store, ["ann", "bob", "cy", "dee"])
    store.finish_match(match_id, replay_of(match_id, [1, 2, 3, 4]))
    store.set_enabled("ann", False)
    assert store.seat_ladder_match("six_nimmt", {}, 1, ["ann", "bob", "cy"], "me") is None
    assert "ann" not in {e.bot for e in store.leaderboard("six_nimmt")}
    store.set_enabled("ann", True)
    assert "ann" in {e.bot for e in store.leaderboard("six_nimmt")}


def test_orphans_of_dead_instances_are_aborted_unrated(store: Store) -> None:
    """Running matches of an instance that is gone are aborted and free their bots; those of
    a live instance are left alone; nothing is rated."""
    dead = seat(store, ["ann", "bob"], instance="dead")
    live = seat(store, ["cy", "dee"], instance="alive")
    aborted = store.abort_orphans("me", lambda instance: instance == "alive")
    assert aborted == [dead]
    statuses = {m.id: m.status for m in store.matches()}
    assert statuses == {dead: "aborted", live: "running"}
    assert store.free_bots(["ann", "bob", "cy", "dee"]) == {"ann", "bob"}
    assert not store.finish_match(dead, replay_of(dead, [1, 2]))
    assert store.rating_changes() == []


def test_the_match_log_filters_by_bot_and_time(store: Store) -> None:
    """``matches`` lists newest first and filters by registered bot and creation time."""
    first = seat(store, ["ann", "bob"])
    store.finish_match(first, replay_of(first, [1, 2]))
    middle = datetime.now(UTC)
    second = seat(store, ["cy", "bob"])
    assert [m.id for m in store.matches()] == [second, first]
    assert [m.id for m in store.matches(bot="ann")] == [first]
    assert [m.id for m in store.matches(bot="bob")] == [second, first]
    assert [m.id for m in store.matches(since=middle)] == [second]
    assert [m.id for m in store.matches(until=middle)] == [first]
    assert store.matches(since=middle + timedelta(days=1)) == []


def test_the_admin_token_is_made_once_and_checked_by_hash(store: Store) -> None:
    """The first ``ensure_admin_token`` returns a token, later ones None; only the right
    token passes; rotation retires the old one."""
    token = store.ensure_admin_token()
    assert token is not None and store.ensure_admin_token() is None
    assert store.is_admin_token(token) and not store.is_admin_token(token + "x")
    new = store.rotate_admin_token()
    assert store.is_admin_token(new) and not store.is_admin_token(token)


def _behind_an_open_insert(url: str, insert: str, call: Callable[[], Any]) -> Any:
    """Run ``call`` while another connection (another server starting) has inserted the row
    it is about to insert, in a transaction not yet committed: ``call`` looks, finds
    nothing, and its own insert waits on the row's key; the other commits; ``call``'s
    result (or its exception, raised here)."""
    other = create_engine(url)
    outcome: list[Any] = []
    try:
        with other.connect() as connection:
            connection.execute(text(insert))  # the transaction stays open
            database = connection.execute(text("SELECT current_database()")).scalar()
            thread = threading.Thread(target=lambda: outcome.append(_outcome(call)))
            thread.start()
            with other.connect() as watcher:  # wait until ``call`` waits on the key
                waiting = text("SELECT count(*) FROM pg_stat_activity WHERE datname = :db "
                               "AND wait_event_type = 'Lock' AND query LIKE 'INSERT%'")
                while thread.is_alive() and \
                        not watcher.execute(waiting, {"db": database}).scalar():
                    # A transaction sees one snapshot of pg_stat_activity: end it to look anew.
                    watcher.execute(text("SELECT pg_sleep(0.01)"))
                    watcher.rollback()
            blocked = thread.is_alive()
            connection.commit()
        thread.join(30)
    finally:
        other.dispose()
    assert blocked, "the call did not wait on the other connection's insert"
    [result] = outcome
    if isinstance(result, BaseException):
        raise result
    return result


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception as exc:  # handed to the test's thread
        return exc


def test_servers_starting_together_register_the_house_bots_and_admin_token_once() -> None:
    """A fleet's servers starting at the same moment on a new PostgreSQL database each find
    a house bot and the admin token missing and insert them: the one that inserts second
    (its insert waits on the first's key, then meets it) takes the house bot as registered
    and makes no admin token, instead of failing its start."""
    with fresh_postgres() as url:
        store = Store(url)
        assert _behind_an_open_insert(
            url, "INSERT INTO bot (name, owner, house, version, enabled, created_at) VALUES "
                 "('house-greedy', 'house', 'greedy', 1, true, now())",
            lambda: store.ensure_house_bot("house-greedy", "greedy")) is None
        assert store.bot("house-greedy").house == "greedy"
        assert _behind_an_open_insert(
            url, "INSERT INTO admin_token (id, token_hash, created_at) VALUES (1, 'h', now())",
            store.ensure_admin_token) is None
        assert not store.is_admin_token("h")  # the other server's token stands (its hash: h)
        with pytest.raises(BotError, match="not as house bot 'random'"):
            _behind_an_open_insert(
                url, "INSERT INTO bot (name, owner, house, version, enabled, created_at) "
                     "VALUES ('house-random', 'house', 'greedy', 1, true, now())",
                lambda: store.ensure_house_bot("house-random", "random"))


def test_migration_0006_marks_the_seats_the_play_button_made_as_people(db: str) -> None:
    """A database at revision 0005 with a seat the web page's button made (a token seat
    named ``human``), a bot's seat named ``human`` and a plain token seat: upgraded, only
    the first is a person's, and the store reports it so."""
    engine = create_engine(db)
    upgrade(engine, "0005")
    with engine.begin() as connection:
        connection.execute(text(
            "INSERT INTO match (id, game, settings_json, seed, seat_count, status, created_at, "
            "ladder, rated) VALUES ('m1', 'six_nimmt', '{}', 1, 3, 'created', "
            "CURRENT_TIMESTAMP, false, false)"))
        for seat_no, token, bot in ((0, "h0", None), (1, None, "ann"), (2, "h2", None)):
            connection.execute(text(
                "INSERT INTO seat (match_id, seat, name, token_hash, bot) "
                "VALUES ('m1', :seat, :name, :token, :bot)"),
                {"seat": seat_no, "name": "seat2" if seat_no == 2 else "human",
                 "token": token, "bot": bot})
    engine.dispose()
    assert Store(db).match_config("m1").humans == (0,)
