"""What ``bullring bot`` tells its user on a real server's ladder: one line per match, at its
end, marking the bot's own seat; its log says where it connected and what went wrong, and
``-v`` adds every match's start and every decision answered."""

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
