"""A fleet's bot outlives its server: real ``bullring serve`` processes on one fresh
PostgreSQL database, and ``bullring bot --ladder`` processes given every server's address
(``--server A,B``). One server is killed with -9 while its bots play a match on it."""

from __future__ import annotations

import re
import time

from bullring.server.store import Store
from tests.databases import fresh_postgres
from tests.ladder_helpers import STARTED, LadderBot, LadderServer, wait_for_matches, wait_until

FAST = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
        "--ladder-setting", "six_nimmt:deadline_ms=1000"]
"""Short 6 nimmt! ladder matches: one round of ten tricks."""
BACK_WITHIN_S = 5.0
"""How soon after its server died a fleet bot must be playing a ladder match on another."""
CONNECTED = re.compile(r"INFO bullring\.bot: connected to (\S+)$")


def connections(bot: LadderBot) -> list[str]:
    """The addresses ``bot`` connected to, in order (its log's INFO lines)."""
    return [m.group(1) for line in list(bot.err.lines) if (m := CONNECTED.search(line.rstrip()))]


def started_after(bot: LadderBot, mark: int) -> list[str]:
    """Ids of the matches ``bot`` was seated in after the first ``mark`` lines of its log."""
    return [m.group(1) for line in list(bot.err.lines)[mark:] if (m := STARTED.search(line))]


def test_bots_of_a_killed_server_play_on_another_within_5_s_and_its_match_counts_once(
        stop_all: list[LadderBot | LadderServer]) -> None:
    """Two servers on one PostgreSQL database; four bots run with ``--server A,B`` (so all
    play on A) and four with B's address alone. While the four play a ladder match on A, A
    is killed with -9. Within 5 s of the kill each of the four has connected to B and been
    seated in a new ladder match there (B sees A's instance lock gone and aborts A's match
    as soon as a bot it holds waits on B); then each finishes ladder matches on B. A's match
    in flight is stored once, aborted, with no rating change; every bot's ladder games on
    the leaderboard are exactly its rating changes, one per finished match it sat in; no
    bot process ended, and B logged no traceback."""
    with fresh_postgres() as url:
        a = LadderServer(url, FAST).start()
        stop_all.append(a)
        b = LadderServer(url, FAST).start()
        stop_all.append(b)
        tokens = {f"fleet{i}": a.add_bot(f"fleet{i}") for i in range(4)} | \
            {f"b-only{i}": a.add_bot(f"b-only{i}") for i in range(4)}
        fleet = [LadderBot.start(name, f"{a.address},{b.address}", tokens[name], "six_nimmt",
                                 "tests.bots.pondering:Pondering") for name in tokens
                 if name.startswith("fleet")]
        b_only = [LadderBot.start(name, b.address, tokens[name], "six_nimmt", "house:random")
                  for name in tokens if name.startswith("b-only")]
        stop_all.extend(fleet + b_only)
        wait_for_matches(fleet + b_only, 4, timeout=120)
        assert all(connections(bot) == [a.address] for bot in fleet)

        # Kill A while the four sit in a match there: one they were all seated in, none saw end.
        in_flight: list[str] = []

        def playing_on_a() -> bool:
            seated = [set(bot.started()) - {m for m, _ in bot.matches()} for bot in fleet]
            in_flight[:] = sorted(set.intersection(*seated))
            return bool(in_flight)

        wait_until(playing_on_a, 60, "the fleet bots in a match on A")
        marks = [len(bot.err.lines) for bot in fleet]
        killed_at = time.monotonic()
        a.kill()

        def back_on_b() -> bool:
            return all(connections(bot)[-1:] == [b.address] and started_after(bot, mark)
                       for bot, mark in zip(fleet, marks, strict=True))

        wait_until(back_on_b, BACK_WITHIN_S - (time.monotonic() - killed_at),
                   "every fleet bot seated on B")
        store = Store(url)
        [killed] = in_flight
        new = {m for bot, mark in zip(fleet, marks, strict=True) for m in started_after(bot, mark)}
        wait_until(lambda: all(len({m for m, _ in bot.matches()} & new) >= 1 for bot in fleet)
                   and all(len(started_after(bot, mark)) >= 2
                           for bot, mark in zip(fleet, marks, strict=True)),
                   60, "a ladder match on B finished by each fleet bot, and the next seated")
        for bot in fleet + b_only:
            assert bot.proc.poll() is None, bot.err.text()[-3000:]
            bot.stop()
        log = b.stop()

        matches = {m.id: m for m in store.matches()}
        a_instance = matches[killed].instance
        assert a_instance is not None
        assert {matches[m].instance for m in new} == {matches[m].instance for bot in b_only
                                                      for m, _ in bot.matches()} != {a_instance}
        assert matches[killed].status == "aborted" and matches[killed].finished_at is not None
        assert store.rating_changes(match_id=killed) == []
        assert [m for m in matches.values() if m.instance == a_instance and
                m.status != "finished"] == [matches[killed]]
        assert log.count("aborted 1 matches of a server that is gone") == 1
        assert "Traceback" not in log
        finished = [m for m in matches.values() if m.status == "finished"]
        assert all(len(store.rating_changes(match_id=m.id)) == m.seat_count for m in finished)
        board = {e.bot: e.games for e in store.leaderboard("six_nimmt")}
        for name in tokens:
            sat_in = [m for m in store.matches(bot=name) if m.status == "finished"]
            assert board[name] == len(sat_in) == len(store.rating_changes(bot=name)), name
