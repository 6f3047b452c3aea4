"""A fleet outlives a restart of its broker: two ``bullring serve --broker`` servers on one
fresh PostgreSQL database, one of them ``--workers 2`` (two processes on one address, each
relaying), linked by a private nats-server (``tests.brokers.private_broker``) that the test
kills with -9 and starts again on the same port while matches mixing both servers' bots are
in flight. Each bot is a ``bullring bot --ladder`` process connected to one server."""

from __future__ import annotations

import re
import time
from collections import Counter
from datetime import UTC, datetime

from bullring.referee.replay import verify
from bullring.server.store import Store
from bullring.server.store.base import utc
from bullring.server.store.turns import LadderTurns
from tests.brokers import LINKED, private_broker
from tests.databases import fresh_postgres
from tests.ladder_helpers import STARTED, LadderBot, LadderServer, wait_until

FAST = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
        "--ladder-setting", "six_nimmt:deadline_ms=1000"]
"""Short 6 nimmt! ladder matches: one round of ten tricks."""
BACK_WITHIN_S = 5.0
"""How soon after the broker accepts connections again every bot must be in a new match."""
BACK = re.compile(r"the link to the broker at \S+ is back")
SEATED = re.compile(r"ladder match (\S+) ")
RELAYED_TO = re.compile(r"; \S+ on server (\S+)")


def linked(server: LadderServer) -> set[str]:
    """The instance ids of ``server``'s processes that linked to the broker."""
    assert server.log is not None
    return {m.group(1) for line in list(server.log.lines) if (m := LINKED.search(line))}


def said(server: LadderServer, line: re.Pattern[str]) -> int:
    """How many lines of ``server``'s log so far match ``line``."""
    assert server.log is not None
    return sum(bool(line.search(text)) for text in list(server.log.lines))


def started_after(bot: LadderBot, mark: int) -> list[str]:
    """Ids of the matches ``bot`` was seated in after the first ``mark`` lines of its log."""
    return [m.group(1) for line in list(bot.err.lines)[mark:] if (m := STARTED.search(line))]


def test_a_broker_restart_loses_no_result_counts_none_twice_and_bots_play_on_within_5_s(
        stop_all: list[LadderBot | LadderServer]) -> None:
    """Server A and server B (``--workers 2``) relay seats through a private broker; four
    Pondering bots are connected to each. Once each of the three processes that has bots
    has run, or relayed a seat of, a finished match mixing both servers' bots, the broker
    is killed with -9 as soon as bots of both servers are seated in a new match, and
    started again on the same port once A's bots have played a match of their own. Every
    match finished before the restart is unchanged (status, end, replay, rating changes);
    every match in flight at the kill is stored once and ended (aborted and unrated, or
    finished and rated if its game and the vetting of its links beat the kill), a mixed one
    among them aborted; within 5 s of the broker accepting connections again every bot is
    seated in a new ladder match, one of them mixing both servers' bots, and such a match
    is then recorded finished. Each bot's ladder games are exactly its rating changes, one
    per finished match it sat in; no bot process ended; each process said once that its
    link is back; no error in any log."""
    with private_broker() as broker, fresh_postgres() as url:
        fleet = [*FAST, "--broker", broker.url]
        a = LadderServer(url, fleet).start()
        stop_all.append(a)
        b = LadderServer(url, [*fleet, "--workers", "2"]).start()
        stop_all.append(b)
        wait_until(lambda: len(linked(a)) == 1 and len(linked(b)) == 2, 60,
                   "A and both of B's workers linked to the broker")
        home = {f"a{i}": a for i in range(4)} | {f"b{i}": b for i in range(4)}
        tokens = {name: a.add_bot(name) for name in home}
        bots = [LadderBot.start(name, server.address, tokens[name], "six_nimmt",
                                "tests.bots.pondering:Pondering")
                for name, server in home.items()]
        stop_all.extend(bots)
        homes = {bot.name: home[bot.name] for bot in bots}
        store = Store(url)
        turns = LadderTurns(store, "test")

        def mixed(match_ids: list[str]) -> set[str]:
            return {match_id for match_id, rows in store.seats(match_ids).items()
                    if len({id(homes[str(row.bot)]) for row in rows}) == 2}

        def each_relayed_in_a_mixed_match() -> bool:
            """Every process with bots connected ran a finished match mixing both servers'
            bots or relayed a seat of one (a table goes to the process that has most of its
            bots: one given no bot by the kernel runs none)."""
            done = {m.id: str(m.instance) for m in store.matches(status="finished")}
            shared = mixed(list(done))
            took_part = {done[m] for m in shared}
            for server in (a, b):
                assert server.log is not None
                for line in list(server.log.lines):
                    if (seated := SEATED.search(line)) and seated.group(1) in shared:
                        took_part.update(RELAYED_TO.findall(line))
            serving = {i for i, names in turns.presence("six_nimmt").items() if names}
            return bool(shared) and serving <= took_part

        wait_until(each_relayed_in_a_mixed_match, 90,
                   "each process with bots to run or relay a finished mixed match")

        def seated(marks: dict[str, int]) -> dict[str, set[str]]:
            """The bots seated in each match after the first ``marks`` lines of their logs."""
            found: dict[str, set[str]] = {}
            for bot in bots:
                for match_id in started_after(bot, marks.get(bot.name, 0)):
                    found.setdefault(match_id, set()).add(bot.name)
            return found

        def ended() -> set[str]:
            """The matches a bot saw end."""
            return {match_id for bot in bots for match_id, _ in bot.matches()}

        def together(marks: dict[str, int]) -> set[str]:
            """The matches bots of both servers were seated in after ``marks``."""
            return {m for m, names in seated(marks).items()
                    if len({id(homes[name]) for name in names}) == 2}

        # Kill the broker as soon as bots of both servers are seated in a new match: its game
        # (ten tricks of Pondering bots, half a second) has only begun.
        seen = together({})
        wait_until(lambda: bool(together({}) - seen - ended()), 60,
                   "a new mixed match in flight")
        killed = datetime.now(UTC)
        killed_at = time.monotonic()
        broker.kill()
        down = {bot.name: len(bot.err.lines) for bot in bots}
        before = {m.id: m for m in store.matches(status="finished")}
        rated_before = {(c.match_id, c.bot): c.model_dump() for c in store.rating_changes()}
        own = {name for name, server in homes.items() if server is a}
        wait_until(lambda: any(names == own for m, names in seated(down).items()
                               if m in ended()), 30,
                   "A's bots to play a match of their own while the broker is down")
        broker.start()
        ready_at = time.monotonic()
        ready = datetime.now(UTC)
        marks = {bot.name: len(bot.err.lines) for bot in bots}

        wait_until(lambda: all(started_after(bot, marks[bot.name]) for bot in bots)
                   and bool(together(marks)), BACK_WITHIN_S,
                   "every bot seated in a new match, one of them mixing both servers' bots")
        print(f"broker down {ready_at - killed_at:.2f} s; every bot seated again and a mixed "
              f"table {time.monotonic() - ready_at:.2f} s after it accepted connections")
        wait_until(lambda: not store.matches(status="running", until=killed), 20,
                   "every match in flight at the kill to end")
        wait_until(lambda: bool(together(marks) & {
            m.id for m in store.matches(status="finished", since=ready)}), 30,
                   "a mixed match seated after the restart to be recorded finished")
        assert said(a, BACK) == 1 and said(b, BACK) == 2  # each process said so once
        for bot in bots:
            assert bot.proc.poll() is None, bot.err.text()[-3000:]
            bot.stop()
        for log in (a.stop(), b.stop()):
            assert " ERROR " not in log and "Traceback" not in log, log[-5000:]

        matches = {m.id: m for m in store.matches()}
        changes = Counter(c.match_id for c in store.rating_changes())
        for match_id, match in before.items():  # 0 lost: as they were
            now = matches[match_id]
            assert (now.status, now.finished_at, now.replay_json) == \
                (match.status, match.finished_at, match.replay_json), match_id
            assert changes[match_id] == match.seat_count
        rated = {(c.match_id, c.bot): c.model_dump() for c in store.rating_changes()}
        assert {key: rated.get(key) for key in rated_before} == rated_before
        in_flight = {m.id for m in matches.values() if utc(m.created_at) <= killed and
                     (m.finished_at is None or utc(m.finished_at) > killed)}
        shared = mixed(list(in_flight))
        statuses = Counter(matches[m].status for m in in_flight)
        print(f"in flight at the kill: {len(in_flight)} matches ({len(shared)} mixing both "
              f"servers' bots), {dict(statuses)}; {len(matches)} matches in all")
        assert any(matches[m].status == "aborted" for m in shared), shared
        for match in matches.values():  # none left open, each rated once or not at all
            assert match.status in ("finished", "aborted") and match.finished_at, match
            assert changes[match.id] == (match.seat_count if match.status == "finished"
                                         else 0), match
            if match.status == "finished":
                verify(store.replay(match.id))
        board = {e.bot: e.games for e in store.leaderboard("six_nimmt")}
        for name in home:  # 0 double-counted
            sat_in = [m for m in store.matches(bot=name) if m.status == "finished"]
            assert board[name] == len(sat_in) == len(store.rating_changes(bot=name)), name
