"""The database unavailable for a moment, on a real server: a SQLite file locked by another
connection while a ladder match's result must be written, and a PostgreSQL server stopped
and started again while the ladder runs. The server retries and loses nothing."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import httpx
import pytest

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.replay import verify
from bullring.server.store import Store
from tests.ladder_helpers import LadderBot, LadderServer, all_match_ids, wait_for_matches
from tests.private_postgres import private_postgres
from tests.seat_client import SeatClient
from tests.serving import db_url

FAST = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
        "--ladder-setting", "six_nimmt:deadline_ms=5000", "--table-size", "six_nimmt=4"]
"""Short 6 nimmt! ladder matches of four: one round of ten tricks."""
RETRIED = "database unavailable for"
"""What the server logs (at WARNING) each time it retries a database call."""


async def play_ladder_match(seat: SeatClient,
                            before_last: Callable[[], Awaitable[None]] | None = None,
                            after_last: Callable[[], Awaitable[None]] | None = None
                            ) -> tuple[str, pb.MatchEnded]:
    """Play one ladder match on ``seat`` (lowest card, row 0) until it ends; await
    ``before_last`` before answering the last card and ``after_last`` once every decision of
    this seat is answered. Returns the match id and its MatchEnded."""
    started = await seat.next("match_started")
    last_answered = False
    while True:
        message = await seat.call.read()
        assert message is not grpc.aio.EOF, "the stream ended before the match did"
        kind = message.WhichOneof("body")
        if kind == "match_ended":
            return started.match_id, message.match_ended
        if kind != "decision":
            continue
        request = message.decision
        if request.kind == pb.DECISION_KIND_PLAY_CARD:
            hand = list(request.six_nimmt.hand)
            if len(hand) == 1 and before_last is not None:
                await before_last()
            seat.answer(request.decision_id, pb.Action(card=min(hand)))
            last_answered = len(hand) == 1
        else:
            seat.answer(request.decision_id, pb.Action(row=0))
        if last_answered and after_last is not None:
            # A row choice may still come for this seat: it is answered above, lock or not.
            await after_last()
            after_last = None


def check_stored_once(store: Store, match_id: str, seats: int) -> None:
    """The match is stored finished once, its replay verifies, each seat rated once."""
    match = next(m for m in store.matches() if m.id == match_id)
    assert match.status == "finished" and match.ladder
    replay = store.replay(match_id)
    verify(replay)
    assert replay["termination"] == "normal"
    assert len(store.rating_changes(match_id=match_id)) == seats


def check_rating_chains(store: Store, game: str) -> None:
    """Every stored rating is the chain of its stored changes, one change per rated match."""
    last: dict[str, tuple[float, float]] = {}
    for change in store.rating_changes():
        if change.bot in last:
            assert (change.mu_before, change.sigma_before) == pytest.approx(last[change.bot])
        last[change.bot] = (change.mu_after, change.sigma_after)
    board = {e.bot: e for e in store.leaderboard(game)}
    for name, (mu, sigma) in last.items():
        assert (board[name].mu, board[name].sigma) == pytest.approx((mu, sigma))
        assert board[name].games == len(store.rating_changes(bot=name))


@pytest.mark.parametrize("outlasts_the_budget", [False, True])
def test_a_locked_sqlite_file_delays_the_result_and_loses_nothing(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer],
        outlasts_the_budget: bool) -> None:
    """Another connection holds SQLite's write lock (BEGIN EXCLUSIVE; in WAL mode it blocks
    every writer, and the server begins each transaction IMMEDIATE) from before the last card
    of a ladder match until the server has logged a retry of storing its result (or, with a
    1 s budget, has given up retrying): the result is then stored once, finished, with one
    rating update per seat, the replay verifies, the ladder goes on, the tester's one stream
    lasts until the test ends it (the server logs it leaving once), and no Traceback is
    logged."""
    db = db_url(tmp_path)
    budget = ["--db-retry", "1"] if outlasts_the_budget else []
    awaited = "gave up" if outlasts_the_budget else "(try 1)"
    server = LadderServer(db, [*FAST, "--house-bots", "random,random,random",
                               "--house-rest", "0", *budget]).start()
    stop_all.append(server)
    token = server.add_bot("tester")
    assert server.log is not None
    log = server.log
    path = db.removeprefix("sqlite:///")
    locker = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)

    async def lock() -> None:
        await asyncio.to_thread(locker.execute, "BEGIN EXCLUSIVE")

    async def unlock_after_a_retry() -> None:
        await asyncio.to_thread(log.wait, lambda lines: any(
            f"{RETRIED} finish_match" in line and awaited in line for line in lines), 60,
            f"a line with {awaited!r} about storing the result")
        locker.execute("COMMIT")

    async def body() -> list[tuple[str, pb.MatchEnded]]:
        async with grpc.aio.insecure_channel(server.address) as channel:
            seat = SeatClient(channel, token)
            seat.send(pb.PlayRequest(join=pb.Join(client="test", ladder="six_nimmt")))
            first = await play_ladder_match(seat, lock, unlock_after_a_retry)
            second = await play_ladder_match(seat)  # the ladder goes on
            seat.close()
            return [first, second]

    try:
        played = asyncio.run(body())
    except grpc.aio.AioRpcError as exc:  # the server's side of it is in its log
        text = server.stop()
        about = "".join(line for line in text.splitlines(keepends=True) if "tester" in line)
        raise AssertionError(f"{exc}\nthe server's lines about the tester:\n{about}\n"
                             f"the end of its log:\n{text[-6000:]}") from exc
    finally:
        locker.close()
    text = server.stop()
    assert all(ended.termination == pb.TERMINATION_NORMAL for _, ended in played)
    assert f"{RETRIED} finish_match" in text
    if outlasts_the_budget:
        assert "stored now that the database is back" in text
    assert "Traceback" not in text, text[-3000:]
    left = [line for line in text.splitlines() if "bot tester left the six_nimmt ladder" in line]
    assert len(left) == 1, left  # its stream lasted through the lock, ending as the test did

    store = Store(db)
    for match_id, _ in played:
        check_stored_once(store, match_id, 4)
    for match in store.matches(bot="tester"):  # a third table, seated as the test ended:
        if match.id in {m for m, _ in played}:  # played out without the tester, or aborted
            continue
        if match.status == "finished":
            check_stored_once(store, match.id, 4)
        else:
            assert match.status == "aborted" and not store.rating_changes(match_id=match.id)
    assert store.count("running") == 0
    check_rating_chains(store, "six_nimmt")


def test_a_postgresql_restart_loses_nothing_and_the_ladder_goes_on(
        stop_all: list[LadderBot | LadderServer]) -> None:
    """A private PostgreSQL cluster is stopped while four ladder bots play, and started again
    once the server has logged a retry: every match finished before is intact exactly once,
    the match in flight is finished and recorded once or aborted unrated, new matches are
    played after the restart, no match is left running, every rating is the chain of its
    changes, and no Traceback is logged."""
    with private_postgres() as cluster:
        server = LadderServer(cluster.url, FAST).start()
        stop_all.append(server)
        assert server.log is not None
        specs = {f"bot{i}": "house:greedy" if i % 2 else "house:random" for i in range(4)}
        tokens = {n: server.add_bot(n) for n in specs}
        assert server._store is not None
        server._store.engine.dispose()  # its connections would die with the restart
        bots = [LadderBot.start(n, server.address, tokens[n], "six_nimmt", s)
                for n, s in specs.items()]
        stop_all.extend(bots)
        wait_for_matches(bots, 3, timeout=60)
        before = Store(cluster.url)
        finished_before = {m.id: m for m in before.matches(status="finished")}
        changes_before = {(c.match_id, c.bot): (c.mu_after, c.sigma_after)
                          for c in before.rating_changes()}
        before.engine.dispose()

        cluster.stop()
        server.log.wait(lambda lines: any(RETRIED in line for line in lines), 60,
                        "the server to retry a database call")
        cluster.start()
        seen = frozenset(all_match_ids(bots))
        wait_for_matches(bots, 3, timeout=60, exclude=seen)
        for bot in bots:
            assert bot.proc.poll() is None, bot.err.text()[-2000:]
            bot.stop()
        text = server.stop()
        assert "Traceback" not in text, text[-3000:]

        store = Store(cluster.url)
        after = {m.id: m for m in store.matches()}
        assert not [m for m in after.values() if m.status in ("created", "running")]
        for match_id, match in finished_before.items():
            assert after[match_id].status == "finished"
            assert {(c.match_id, c.bot): (c.mu_after, c.sigma_after)
                    for c in store.rating_changes(match_id=match_id)} == \
                {k: v for k, v in changes_before.items() if k[0] == match_id}
            assert len(store.rating_changes(match_id=match_id)) == match.seat_count
        told = {m: t for b in bots for m, t in b.matches()}
        for match_id, match in after.items():
            if match.status == "finished":
                check_stored_once(store, match_id, match.seat_count)
            else:
                assert match.status == "aborted"
                assert store.rating_changes(match_id=match_id) == []
            if told.get(match_id) == "normal":
                assert match.status == "finished"  # what a bot was told is what is stored
        new = [m for m in after.values() if m.id not in seen and m.status == "finished"]
        assert len(new) >= 2, "the ladder should go on after the restart"
        check_rating_chains(store, "six_nimmt")
        store.engine.dispose()


def check_unavailable(response: httpx.Response) -> None:
    """Assert ``response`` is the API's answer while the database is unavailable: 503 with
    the JSON error ``database_unavailable`` and a Retry-After header."""
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "database_unavailable"
    assert int(response.headers["Retry-After"]) > 0


def test_http_answers_503_while_a_locked_sqlite_file_outlasts_the_budget(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """Another connection holds SQLite's write lock past the server's retry budget (1 s):
    an admin write that is retried (disable a bot) and one that is not (register a bot) get
    503 ``database_unavailable`` with Retry-After, not 500, and so does a read (the server
    begins every transaction IMMEDIATE); once the lock is released the same requests
    succeed, and no Traceback is logged."""
    db = db_url(tmp_path)
    server = LadderServer(db, ["--db-retry", "1"]).start()
    stop_all.append(server)
    admin = {"Authorization": f"Bearer {server.admin_token()}"}
    bots = f"{server.http}/api/admin/bots"
    assert httpx.post(bots, json={"name": "first"}, headers=admin).status_code == 201
    locker = sqlite3.connect(db.removeprefix("sqlite:///"), timeout=30, isolation_level=None)
    try:
        locker.execute("BEGIN EXCLUSIVE")
        check_unavailable(httpx.post(f"{bots}/first/disable", headers=admin, timeout=30))
        check_unavailable(httpx.post(bots, json={"name": "second"}, headers=admin,
                                     timeout=30))
        check_unavailable(httpx.get(f"{server.http}/api/matches", timeout=30))
    finally:
        locker.execute("COMMIT")
        locker.close()
    assert httpx.post(f"{bots}/first/disable", headers=admin).json()["enabled"] is False
    assert httpx.post(bots, json={"name": "second"}, headers=admin).status_code == 201
    text = server.stop()
    assert "database unavailable" in text and "Traceback" not in text, text[-3000:]


def test_http_answers_503_while_postgresql_is_down_past_the_budget(
        stop_all: list[LadderBot | LadderServer]) -> None:
    """A private PostgreSQL cluster is stopped under a server with a 1 s retry budget: the
    public reads (leaderboard, matches) answer 503 ``database_unavailable`` with
    Retry-After, not 500; once the cluster is started again they answer 200, and no
    Traceback is logged."""
    with private_postgres() as cluster:
        server = LadderServer(cluster.url, ["--db-retry", "1"]).start()
        stop_all.append(server)
        reads = [f"{server.http}/api/leaderboard?game=six_nimmt", f"{server.http}/api/matches"]
        assert all(httpx.get(url).status_code == 200 for url in reads)
        cluster.stop()
        for url in reads:
            check_unavailable(httpx.get(url, timeout=30))
        cluster.start()
        assert all(httpx.get(url, timeout=30).status_code == 200 for url in reads)
        text = server.stop()
        assert "database unavailable" in text and "Traceback" not in text, text[-3000:]
