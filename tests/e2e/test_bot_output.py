"""What ``bullring bot`` tells its user on a real server's ladder: one line per match, at its
end, marking the bot's own seat; its log says where it connected and what went wrong, and
``-v`` adds every match's start and every decision answered. A slow bot never leaves the
runner behind the server."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bullring.server.store import Store
from tests.ladder_helpers import ENDED, YOU, LadderBot, LadderServer
from tests.serving import CLI, db_url

TABLES = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
          "--table-size", "six_nimmt=4", "--house-bots", "greedy,random,random",
          "--house-rest", "0"]
"""Short 6 nimmt! matches at tables of four: three house bots and the bot under test."""

SLOW_BOT = """
import time

from bullring.sdk.bot import Bot


class Slow(Bot):
    games = ("six_nimmt",)
    made = 0

    def __init__(self, seed=0):
        super().__init__(seed)
        Slow.made += 1
        self.overruns = 2 if Slow.made == 1 else 0

    def decide(self, obs):
        if self.overruns:
            self.overruns -= 1
            time.sleep(1.5)
        else:
            time.sleep(0.3)
        return min(obs.decision.legal)
"""
"""A bot that overruns the 1 s deadline on its first two decisions (the runner misses a
third, still queued behind them: the server strikes the seat out after three timeouts and
plays the rest of the match at once), then takes 0.3 s a decision."""

def _run(server: LadderServer, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "bot", "--server", server.address, "--token", token,
                           "--ladder", "six_nimmt", "--matches", "3", *args, "house:greedy"],
                          capture_output=True, text=True, timeout=300)


def test_a_ladder_bot_prints_one_line_per_match_marking_its_own_seat(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """Three ladder matches print three lines on stdout, each once: every seat's totals and
    ranks and, marked, the bot's own seat (the one the match log gives it) with its total
    and rank. Its log holds two lines for the whole run (connected, waiting on the ladder):
    no match start, no decision. With ``-v`` each match's start and each decision is
    logged too."""
    server = LadderServer(db_url(tmp_path), TABLES).start()
    stop_all.append(server)
    token = server.add_bot("ann")
    done = _run(server, token)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 3 and len({line.split()[1] for line in lines}) == 3, lines
    store = Store(server.db)
    for line in lines:
        ended, you = ENDED.match(line), YOU.search(line)
        assert ended is not None and you is not None, line
        seat, total, rank = (int(part) for part in you.groups())
        [match] = store.match_page(match_id=ended.group(1))[0]
        assert match.seat_bots[seat] == "ann", (line, match.seat_bots)
        assert match.totals is not None and match.ranks is not None
        assert (match.totals[seat], match.ranks[seat]) == (total, rank)
        assert f"totals {list(match.totals)} ranks {list(match.ranks)} " in line
    log = done.stderr.splitlines()
    assert len(log) == 2, log
    assert "connected to" in log[0] and "waiting on the six_nimmt ladder as ann" in log[1]

    verbose = _run(server, token, "-v")
    assert verbose.returncode == 0, verbose.stderr[-2000:]
    assert len(verbose.stdout.splitlines()) == 3
    assert verbose.stderr.count(" started: six_nimmt, seat ") == 3
    assert verbose.stderr.count("(PLAY_CARD): answered ") >= 30


def test_a_slow_bot_never_leaves_the_runner_behind_the_server(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """A bot that overruns its deadlines gets the seat struck out (three timeouts in a row):
    the server then sends the rest of that match, decision after decision, resolving each
    with the default at once. The runner gives the bot none of the decisions the server has
    already moved past and stops waiting for the one it is deciding once the next arrives, so
    it is never behind the server: it prints the end of each of the three matches the server
    recorded for the bot; not one answer it sent was rejected (each was for the decision the
    server awaited, none for a match already over); and in the two matches after, every
    decision of its seat is the bot's own answer, in time (a runner still answering the old
    match's decisions would miss them)."""
    server = LadderServer(db_url(tmp_path), [*TABLES, "--ladder-setting",
                                             "six_nimmt:deadline_ms=1000"]).start()
    stop_all.append(server)
    (tmp_path / "slow.py").write_text(SLOW_BOT, encoding="utf-8")
    done = subprocess.run([*CLI, "bot", "--server", server.address, "--token",
                           server.add_bot("slow"), "--ladder", "six_nimmt", "--matches", "3",
                           "-v", "slow.py:Slow"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = [m.group(1) for line in done.stdout.splitlines() if (m := ENDED.match(line))]
    store = Store(server.db)
    recorded = {match.id for match in store.matches(bot="slow")}
    assert len(printed) == 3 and set(printed) == recorded, (printed, recorded)
    assert "rejected" not in done.stderr, done.stderr[-3000:]
    assert "not given to the bot: the server has moved past it" in done.stderr

    for number, match_id in enumerate(printed):
        replay = store.replay(match_id)
        seat = [s["name"] for s in replay["seats"]].index("slow")
        mine = [e for e in replay["events"] if e.get("seat") == seat]
        assert not [e for e in mine if e["type"] == "reject"], mine
        if number == 0:
            assert {"type": "disconnect", "seat": seat, "reason": "3 timeouts in a row"} in [
                {k: e.get(k) for k in ("type", "seat", "reason")} for e in mine], mine
        else:
            answers = [e for e in mine if e["type"] in ("answer", "timeout")]
            assert answers and all(e["type"] == "answer" and not e["default"]
                                   for e in answers), (match_id, answers)
