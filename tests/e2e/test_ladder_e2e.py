"""The ladder end to end: a real ``bullring serve`` and registered bots in their own
``bullring bot --ladder`` processes, on SQLite and on the real PostgreSQL."""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import pytest

from bullring.referee.replay import verify
from bullring.server.store import Store
from tests.databases import fresh_postgres
from tests.ladder_helpers import (
    LadderBot,
    LadderServer,
    all_match_ids,
    wait_for_matches,
    wait_until,
)
from tests.serving import CLI, db_url

FAST = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
        "--ladder-setting", "six_nimmt:deadline_ms=1000"]
"""Short 6 nimmt! ladder matches: one round of ten tricks."""


def start_bots(server: LadderServer, specs: dict[str, str], game: str = "six_nimmt",
               address: str | None = None, tokens: dict[str, str] | None = None
               ) -> list[LadderBot]:
    """Register each bot (unless its token is given) and start its ladder process."""
    tokens = tokens if tokens is not None else {n: server.add_bot(n) for n in specs}
    return [LadderBot.start(name, address or server.address, tokens[name], game, spec)
            for name, spec in specs.items()]


def longest_waits(store: Store) -> dict[str, int]:
    """For each bot, the most ladder matches that started between two of its own, in
    creation order (not before its first: when a bot's process got going is the machine's
    doing, not the ladder's)."""
    matches = sorted(store.matches(), key=lambda m: m.created_at)
    seats = store.seats([m.id for m in matches])
    last: dict[str, int] = {}
    longest: dict[str, int] = defaultdict(int)
    bots = {s.bot for rows in seats.values() for s in rows if s.bot}
    for index, match in enumerate(matches):
        for row in seats[match.id]:
            assert row.bot is not None
            if row.bot in last:
                longest[row.bot] = max(longest[row.bot], index - last[row.bot])
            last[row.bot] = index + 1
    return {bot: longest[bot] for bot in bots}


def test_six_bots_play_the_ladder_unattended(tmp_path: Path,
                                             stop_all: list[LadderBot | LadderServer]) -> None:
    """Six registered bots in their own processes keep being seated without anyone acting:
    at least 30 matches, every stored log verifies as a replay, the greedy bots end rated
    above the random ones (the best is greedy, and the greedy bots' mean rating is above the
    random ones': one-round matches are too noisy to order every pair), and no bot waits
    more than 3 matches longer than another.
    The match log and ``replay export --all`` show the same matches."""
    server = LadderServer(db_url(tmp_path), FAST).start()
    stop_all.append(server)
    specs = {f"greedy{i}": "house:greedy" for i in range(3)} | \
        {f"random{i}": "house:random" for i in range(3)}
    bots = start_bots(server, specs)
    stop_all.extend(bots)
    wait_for_matches(bots, 30, timeout=180)
    for bot in bots:
        bot.stop()
    server.stop()

    store = Store(server.db)
    finished = store.matches(status="finished")
    assert len(finished) >= 30 and all(m.ladder for m in finished)
    for match in finished:
        replay = store.replay(match.id)
        verify(replay)
        assert replay["termination"] == "normal"
    board = store.leaderboard("six_nimmt")
    kinds = [e.bot.rstrip("012") for e in board]
    # One-round matches are noisy, so one bot's place is not telling; the kinds' means are.
    mean = {kind: statistics.mean(e.mu for e, k in zip(board, kinds, strict=True) if k == kind)
            for kind in ("greedy", "random")}
    assert kinds[0] == "greedy" and mean["greedy"] > mean["random"], board
    games = [e.games for e in board]
    assert max(games) - min(games) <= 3
    waits = longest_waits(store)
    assert max(waits.values()) - min(waits.values()) <= 3, waits
    assert sum(len(store.rating_changes(match_id=m.id)) for m in finished) == \
        sum(m.seat_count for m in finished)

    out = tmp_path / "replays"
    export = subprocess.run([*CLI, "replay", "export", "--all", str(out), "--db", server.db],
                            capture_output=True, text=True, check=True)
    assert f"wrote {len(finished)} replays" in export.stdout
    checked = subprocess.run([*CLI, "replay", "verify", str(out)], capture_output=True,
                             text=True)
    assert checked.returncode == 0, checked.stdout
    listed = json.loads(subprocess.run(
        [*CLI, "matches", "--bot", "greedy0", "--since", "1h", "--limit", "1000", "--json",
         "--db", server.db], capture_output=True, text=True, check=True).stdout)
    assert listed and all("greedy0" in m["seats"] for m in listed)
    assert {m["match_id"] for m in listed} == {m.id for m in store.matches(bot="greedy0")}


def crash_and_restart(db: str, tmp_path: Path, stop_all: list[LadderBot | LadderServer]
                      ) -> None:
    """Kill -9 the server while a match is in flight, restart it on the same database, and
    check what the store holds and that the ladder continues."""
    server = LadderServer(db, ["--ladder", "six_nimmt", "--ladder-setting",
                               "six_nimmt:rounds=2"]).start()
    stop_all.append(server)
    specs = {f"bot{i}": "house:greedy" if i % 2 else "house:random" for i in range(5)}
    tokens = {n: server.add_bot(n) for n in specs}
    bots = start_bots(server, specs, tokens=tokens)
    stop_all.extend(bots)
    wait_for_matches(bots, 3, timeout=120)
    in_flight: set[str] = set()

    def a_match_is_in_flight() -> bool:
        in_flight.clear()
        in_flight.update(m for b in bots for m in b.started())
        in_flight.difference_update(all_match_ids(bots))
        return bool(in_flight)

    wait_until(a_match_is_in_flight, 60, "a match in flight")
    server.kill()

    store = Store(db)
    before = {m.id: m.status for m in store.matches()}
    finished_before = {m for m, status in before.items() if status == "finished"}
    running_before = {m for m, status in before.items() if status == "running"}
    assert running_before, "the kill should catch a match in flight"
    changes_before = {(c.match_id, c.bot): (c.mu_after, c.sigma_after)
                      for c in store.rating_changes()}

    port = server.address.rsplit(":", 1)[1]
    again = LadderServer(db, [*server.extra, "--port", port]).start()  # where the bots dial
    stop_all.append(again)
    # The bots reconnect on their own (the runner's backoff) and the ladder goes on.
    wait_for_matches(bots, 3, timeout=120, exclude=frozenset(before))
    for bot in bots:
        assert bot.proc.poll() is None, bot.err.text()[-2000:]
        bot.stop()
    log = again.stop()
    assert "aborted" in log

    after = {m.id: m for m in store.matches()}
    for match_id in finished_before:
        assert after[match_id].status == "finished"
        rated = store.rating_changes(match_id=match_id)
        assert len(rated) == after[match_id].seat_count  # exactly once
        assert {(c.match_id, c.bot): (c.mu_after, c.sigma_after) for c in rated} == \
            {k: v for k, v in changes_before.items() if k[0] == match_id}
    for match_id in running_before:
        assert after[match_id].status == "aborted"
        assert store.rating_changes(match_id=match_id) == []
    new_finished = [m for m in after.values() if m.id not in before and m.status == "finished"]
    assert new_finished
    # Every rating is the chain of its changes, in the order they were recorded.
    last: dict[str, tuple[float, float]] = {}
    for change in store.rating_changes():
        if change.bot in last:
            assert (change.mu_before, change.sigma_before) == pytest.approx(last[change.bot])
        last[change.bot] = (change.mu_after, change.sigma_after)
    board = {e.bot: e for e in store.leaderboard("six_nimmt")}
    for name, (mu, sigma) in last.items():
        assert (board[name].mu, board[name].sigma) == pytest.approx((mu, sigma))
        assert board[name].games == len(store.rating_changes(bot=name))


def test_a_killed_server_loses_nothing_and_the_ladder_goes_on(
        db: str, tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """kill -9 during a match, then restart on the same database (SQLite and PostgreSQL):
    every completed match and its rating update are there exactly once, the match in flight
    is aborted and unrated, the bots reconnect by themselves and new matches are played."""
    crash_and_restart(db, tmp_path, stop_all)


def test_two_servers_on_one_postgresql_never_double_seat(
        stop_all: list[LadderBot | LadderServer]) -> None:
    """Two servers on one PostgreSQL database, the same house bots on both and every
    registered bot connected to both: no bot is ever in two matches at once, and every match
    is recorded (and rated) once."""
    with fresh_postgres() as url:
        # Resting house bots (the default second) pass from one server to the other too.
        house = ["--house-bots", "random,random,random,greedy", "--house-rest", "1"]
        first = LadderServer(url, FAST + house).start()
        stop_all.append(first)
        second = LadderServer(url, FAST + house).start()
        stop_all.append(second)
        specs = {f"bot{i}": "house:greedy" if i % 2 else "house:random" for i in range(4)}
        tokens = {n: first.add_bot(n) for n in specs}
        bots = start_bots(first, specs, tokens=tokens)
        twins = [LadderBot.start(f"{b.name}-twin", second.address, tokens[b.name], "six_nimmt",
                                 specs[b.name]) for b in bots]
        stop_all.extend(bots + twins)
        wait_for_matches(bots + twins, 10, timeout=120)
        store = Store(url)
        wait_until(lambda: store.count("finished") >= 40, 120, "40 matches with house bots")
        for bot in bots + twins:
            bot.stop()
        logs = first.stop() + second.stop()

        matches = {m.id: m for m in store.matches()}
        instances = {m.instance for m in matches.values()}
        assert len(instances) == 2  # both servers ran matches
        seats = store.seats(list(matches))
        spans: dict[str, list[tuple[datetime, datetime, str]]] = defaultdict(list)
        for match_id, rows in seats.items():
            match = matches[match_id]
            assert match.finished_at is not None, (match, logs[-3000:])
            for row in rows:
                assert row.bot is not None
                spans[row.bot].append((match.created_at, match.finished_at, match_id))
        for name, held in spans.items():
            held.sort()
            for (_, end, one), (start, _, other) in itertools.pairwise(held):
                assert end <= start, f"{name} sat in {one} and {other} at once"
        for match in matches.values():
            if match.status == "finished":
                assert len(store.rating_changes(match_id=match.id)) == match.seat_count
                verify(store.replay(match.id))


def longest_run(seq: Sequence[str]) -> int:
    """The most equal items in a row in ``seq``."""
    return max((len(list(group)) for _, group in itertools.groupby(seq)), default=0)


def test_two_servers_sharing_their_bots_take_turns_at_the_tables(
        stop_all: list[LadderBot | LadderServer]) -> None:
    """Two servers on one PostgreSQL database, the same house bots (no rest) on both and
    four registered bots connected to both: once each server has seated each of them (so
    each can seat all eight), every table goes to the server that seated least recently (a claim
    in the database, not a race), so the server that ran a match and freed its bots does not
    seat them again before the other: each seats half of 40 tables, give or take one, and
    neither seats three in a row (a server left a table seats it itself only if the other
    did not take its turn within the grace, which a loaded machine may cause once)."""
    with fresh_postgres() as url:
        house = ["--house-bots", "random,random,random,greedy", "--house-rest", "0"]
        first = LadderServer(url, FAST + house).start()
        stop_all.append(first)
        second = LadderServer(url, FAST + house).start()
        stop_all.append(second)
        specs = {f"bot{i}": "house:random" for i in range(4)}
        tokens = {n: first.add_bot(n) for n in specs}
        bots = start_bots(first, specs, tokens=tokens)
        twins = [LadderBot.start(f"{b.name}-twin", second.address, tokens[b.name], "six_nimmt",
                                 specs[b.name]) for b in bots]
        stop_all.extend(bots + twins)
        store = Store(url)
        wait_until(lambda: all(b.started() for b in bots + twins), 120,
                   "every bot seated by each server")
        before = {m.id for m in store.matches()}
        wait_until(lambda: store.count("finished") >= len(before) + 41, 240,
                   "40 more finished matches")
        for bot in bots + twins:
            bot.stop()
        first.stop()
        second.stop()
        after = sorted((m for m in store.matches() if m.id not in before),
                       key=lambda m: m.created_at)[1:41]  # the first may have been in flight
        servers = [str(m.instance) for m in after]
        per_server = Counter(servers)
        assert len(per_server) == 2 and min(per_server.values()) >= 19, per_server
        assert longest_run(servers) <= 2, servers


def test_a_bot_with_matches_n_plays_exactly_n_and_exits_0(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """``bullring bot --ladder six_nimmt --matches 2`` plays two matches and exits 0, and the
    server never seats it in a third: Join.matches tells the server to stop seating it after
    its last match, instead of the next table racing the bot's hang-up. Three bots at once
    (one over Subscribe) beside a house bot that is always ready for the next table."""
    server = LadderServer(db_url(tmp_path), [*FAST, "--table-size", "six_nimmt=2-2",
                                              "--house-bots", "random", "--house-rest", "0"])
    stop_all.append(server.start())
    transports = {"stream1": "stream", "stream2": "stream", "unary1": "unary"}
    bots = [LadderBot.start(name, server.address, server.add_bot(name), "six_nimmt",
                            "house:greedy", "--matches", "2", "--transport", transport)
            for name, transport in transports.items()]
    stop_all.extend(bots)
    for bot in bots:
        assert bot.proc.wait(timeout=120) == 0, bot.err.text()[-3000:]
        bot.out.wait(lambda lines: bool(lines) and lines[-1] == "", 10, "the end of output")
    server.stop()

    store = Store(server.db)
    for bot in bots:
        seen = [match_id for match_id, _ in bot.matches()]
        assert len(seen) == 2, bot.out.text()
        stored = store.matches(bot=bot.name)
        assert sorted(m.id for m in stored) == sorted(seen), (bot.name, stored)
        assert all(m.status == "finished" for m in stored)


def test_ladder_joins_that_cannot_be_served_are_refused(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """A game without a ladder here, a disabled bot and a revoked token are refused at once
    with the runner's exit codes (2 bad request, 3 token refused)."""
    server = LadderServer(db_url(tmp_path), FAST).start()
    stop_all.append(server)
    added = subprocess.run([*CLI, "bots", "add", "solo", "--owner", "team", "--db", server.db],
                           check=True, capture_output=True, text=True).stdout
    token = added.strip().splitlines()[-1]
    assert "shown once" in added and token.startswith("bot_")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, "bot", "--server", server.address, *args, "house:random"],
                              capture_output=True, text=True, timeout=60)

    other = run("--token", token, "--ladder", "no_thanks")
    assert other.returncode == 1 and "FAILED_PRECONDITION" in other.stderr
    unknown = run("--token", token, "--ladder", "chess")
    assert unknown.returncode == 2 and "unknown game 'chess'" in unknown.stderr
    subprocess.run([*CLI, "bots", "disable", "solo", "--db", server.db], check=True,
                   capture_output=True)
    refused = run("--token", token, "--ladder", "six_nimmt")
    assert refused.returncode == 3 and "bot 'solo' is disabled" in refused.stderr
    rotated = subprocess.run([*CLI, "bots", "rotate-token", "solo", "--db", server.db],
                             check=True, capture_output=True, text=True).stdout
    assert rotated.strip().splitlines()[-1] != token
    gone = run("--token", token + "x", "--ladder", "six_nimmt")
    assert gone.returncode == 3 and "UNAUTHENTICATED" in gone.stderr


def test_admin_calls_over_grpc_need_the_admin_token(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """The server writes an admin token to a file at its first start (and says where);
    ``bullring bots ... --server`` registers, versions, disables and rotates over gRPC only
    with that token (none: exit 2, a wrong one: 3), and a taken name or an unknown bot is
    refused (7)."""
    server = LadderServer(db_url(tmp_path), FAST).start()
    stop_all.append(server)
    assert server.proc is not None and server.proc.stdout is not None
    line = server.proc.stdout.readline()
    assert f"admin token written to {tmp_path / 'bullring-admin-token'}" in line
    admin = server.first_admin_token()
    assert admin.startswith("admin_") and admin not in line

    def bots(*args: str, token: str | None = admin) -> subprocess.CompletedProcess[str]:
        extra = [] if token is None else ["--admin-token", token]
        return subprocess.run([*CLI, "bots", *args, "--server", server.address, *extra],
                              capture_output=True, text=True, timeout=60,
                              env={k: v for k, v in os.environ.items()
                                   if k != "BULLRING_ADMIN_TOKEN"})

    missing = bots("add", "remote", token=None)
    assert missing.returncode == 2 and "admin token" in missing.stderr
    wrong = bots("add", "remote", token=admin + "x")
    assert wrong.returncode == 3 and "refused the admin token" in wrong.stderr
    added = bots("add", "remote", "--owner", "net")
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip().splitlines()[-1]
    store = Store(server.db)
    found = store.bot_for_token(token)
    assert found is not None and found.name == "remote" and found.owner == "net"
    assert bots("add", "remote").returncode == 7  # ALREADY_EXISTS: the name is taken
    assert "version 2" in bots("version", "remote").stdout
    assert bots("disable", "remote").returncode == 0 and not store.bot("remote").enabled
    assert bots("enable", "remote").returncode == 0 and store.bot("remote").enabled
    rotated = bots("rotate-token", "remote").stdout.strip().splitlines()[-1]
    assert store.bot_for_token(token) is None and store.bot_for_token(rotated) is not None
    unknown = bots("version", "nobody")
    assert unknown.returncode == 7 and "no bot named 'nobody'" in unknown.stderr
    server.stop()
    assert server.admin_file is not None
    server.admin_file.unlink()
    again = LadderServer(server.db, FAST).start()  # the token is made and written only once
    stop_all.append(again)
    assert again.proc is not None and again.proc.stdout is not None
    assert "admin token" not in again.proc.stdout.readline()
    assert not server.admin_file.exists()


def test_a_ladder_that_cannot_fill_a_table_says_so(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """At start the server says which ladders its house bots fill on their own; a bot that
    joins a ladder too few bots can fill is told why it waits (in its log, from the
    server's LadderQueued), and the server logs the same warning."""
    server = LadderServer(db_url(tmp_path), [
        "--ladder", "six_nimmt,no_thanks", "--house-bots", "greedy,greedy,random,random",
        "--house-rest", "3600", "--table-size", "six_nimmt=4"]).start()
    stop_all.append(server)
    assert server.proc is not None and server.proc.stdout is not None
    report = ""
    while "house bots fill" not in report:
        report = server.proc.stdout.readline()
        assert report, "the server's start-up lines ended without the ladders' report"
    assert "six_nimmt: house bots fill its tables (4 of 4 needed)" in report
    assert "no_thanks: needs 2 more bots to join (2 house bots of 4 needed)" in report
    [bot] = start_bots(server, {"alone": "house:random"}, game="no_thanks")
    stop_all.append(bot)
    warning = ("the no_thanks ladder cannot fill a table: it needs 4 bots and has 3 "
               "(2 house bots, 1 connected); bots wait until 1 more join")
    bot.err.wait(lambda lines: any(warning in line for line in lines), 60, "the bot's warning")
    assert server.log is not None
    server.log.wait(lambda lines: any(warning in line for line in lines), 60,
                    "the server's warning")
