"""The ladder over HTTP: registered bots that speak only HTTP (long-poll or Server-Sent
Events) play rated ladder matches beside gRPC bots, exactly as a gRPC bot does, and a bot
may move between the transports from one match to the next."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from bullring.referee.replay import verify
from bullring.server.store import Store
from tests.ladder_helpers import LadderBot, LadderServer, Lines
from tests.serving import db_url

HTTP_BOT = str(Path(__file__).resolve().parents[1] / "bots" / "http_only.py")
FAST = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
        "--ladder-setting", "six_nimmt:deadline_ms=2000"]
"""Short 6 nimmt! ladder matches: one round of ten tricks."""


def http_bot(server: LadderServer, name: str, token: str, transport: str, matches: int
             ) -> LadderBot:
    """The stdlib-only HTTP bot on ``server``'s 6 nimmt! ladder, in its own process."""
    proc = subprocess.Popen([sys.executable, "-I", HTTP_BOT, server.http, token, "--ladder",
                             "six_nimmt", "--matches", str(matches), "--transport", transport,
                             "--seed", str(len(name))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    return LadderBot(name, proc, Lines(proc.stdout), Lines(proc.stderr))


def finished(bot: LadderBot) -> str:
    """Wait for ``bot`` to exit 0 and for all its output; return its output."""
    code = bot.proc.wait(timeout=180)
    bot.out.wait(lambda lines: bool(lines) and lines[-1] == "", 10, "the end of output")
    bot.err.wait(lambda lines: bool(lines) and lines[-1] == "", 10, "the end of errors")
    said = bot.out.text() + bot.err.text()
    assert code == 0, said[-3000:]
    return said


def test_http_bots_play_rated_ladder_matches_beside_grpc_bots(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """A long-polling bot and an SSE bot (standard library only, no gRPC) and a gRPC runner
    each play three rated matches at five-seat tables with two house bots: every HTTP
    answer is accepted, the message numbers grow across matches and the connection ends
    with CLOSE_REASON_MATCHES_PLAYED; the leaderboard shows both HTTP bots with three games;
    every match is rated for all five seats and its replay verifies."""
    server = LadderServer(db_url(tmp_path), [*FAST, "--table-size", "six_nimmt=5-5",
                                              "--house-bots", "greedy,random",
                                              "--house-rest", "0"]).start()
    stop_all.append(server)
    bots = [http_bot(server, "bypoll", server.add_bot("bypoll"), "poll", 3),
            http_bot(server, "bysse", server.add_bot("bysse"), "sse", 3),
            LadderBot.start("bygrpc", server.address, server.add_bot("bygrpc"), "six_nimmt",
                            "house:greedy", "--matches", "3")]
    stop_all.extend(bots)
    for bot in bots[:2]:
        said = finished(bot)
        assert said.count("(TERMINATION_NORMAL); ") == 3 and "grpc loaded: False" in said
        assert ", 0 rejected;" in said and "rejected: " not in said
        assert "closed: CLOSE_REASON_MATCHES_PLAYED" in said
    finished(bots[2])

    with httpx.Client(base_url=server.http, timeout=30) as client:
        board = client.get("/api/leaderboard", params={"game": "six_nimmt"}).json()
    games = {row["bot"]: row["games"] for row in board["entries"]}
    assert games["bypoll"] == games["bysse"] == games["bygrpc"] == 3, games
    store = Store(server.db)
    matches = {m.id: m for bot in bots for m in store.matches(bot=bot.name)}
    assert len(matches) == 3
    for match_id, match in matches.items():
        assert match.status == "finished" and match.ladder
        assert len(store.rating_changes(match_id=match_id)) == 5
        replay: dict[str, Any] = store.replay(match_id)
        verify(replay)
        assert replay["termination"] == "normal"
        seats = {seat["name"] for seat in replay["seats"]}
        assert {"bypoll", "bysse", "bygrpc"} <= seats, seats


def test_a_bot_moves_between_grpc_and_http_between_matches(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """One registered bot plays a match over gRPC, the next by long-poll, the next over SSE:
    three rated matches of one bot, one rating."""
    server = LadderServer(db_url(tmp_path), [*FAST, "--table-size", "six_nimmt=2-2",
                                              "--house-bots", "random",
                                              "--house-rest", "0"]).start()
    stop_all.append(server)
    token = server.add_bot("mover")
    grpc_bot = LadderBot.start("mover", server.address, token, "six_nimmt", "house:greedy",
                               "--matches", "1")
    stop_all.append(grpc_bot)
    finished(grpc_bot)
    for transport in ("poll", "sse"):
        bot = http_bot(server, "mover", token, transport, 1)
        stop_all.append(bot)
        assert finished(bot).count("(TERMINATION_NORMAL); ") == 1
    store = Store(server.db)
    played = store.matches(bot="mover")
    assert len(played) == 3 and all(m.status == "finished" for m in played)
    assert len(store.rating_changes(bot="mover")) == 3
    board = {e.bot: e for e in store.leaderboard("six_nimmt")}
    assert board["mover"].games == 3
