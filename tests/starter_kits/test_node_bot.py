"""The Node.js bot (client_sdk/node) plays real matches against the real server.

It needs ``npm ci --prefix client_sdk/node``; without ``node_modules`` the tests skip on a
developer's machine and fail under CI=true, where they must run.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from referee.replay import verify
from tests.serving import CLI, ServerProcess, db_url, finish

NODE_DIR = Path(__file__).resolve().parents[2] / "client_sdk" / "node"
BOT_JS = NODE_DIR / "bot.js"


def _require_node() -> str:
    node = shutil.which("node")
    ready = node is not None and (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir()
    if not ready:
        why = ("node is not on PATH" if node is None else
               "client_sdk/node/node_modules is missing: run `npm ci --prefix client_sdk/node`")
        if os.environ.get("CI"):
            pytest.fail(f"the Node.js bot must run in CI, but {why}")
        pytest.skip(why)
    assert node is not None
    return node


@pytest.fixture
def node() -> str:
    """The ``node`` executable, with the bot's packages installed."""
    return _require_node()


def node_bot(node: str, server: str, token: str | None, *args: str) -> subprocess.Popen[str]:
    """Start ``node client_sdk/node/bot.js`` for one seat."""
    assert token is not None
    return subprocess.Popen([node, str(BOT_JS), "--server", server, "--token", token, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def stored_replay(server: ServerProcess, match_id: str) -> dict[str, Any]:
    """The match's stored replay, after checking that it verifies through the engine."""
    replay: dict[str, Any] = json.loads(server.replay(match_id))
    verify(replay)
    return replay


def seat_answers(replay: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """The answer events of one seat."""
    return [e for e in replay["events"] if e["type"] == "answer" and e["seat"] == seat]


def test_node_bot_plays_six_nimmt_against_house_bots(server: ServerProcess, node: str) -> None:
    """The Node bot joins with its token, answers every decision of a 6 nimmt! match itself
    (row choices included), recovers from a rejected answer, and exits 0 on MatchEnded; the
    stored replay verifies."""
    match = server.create_match("six_nimmt", 4, "--seed", "11", "--house", "1=greedy",
                                "--house", "2=random", "--house", "3=random")
    bot = node_bot(node, server.address, match.tokens[0], "--send-illegal-first")
    [(code, out)] = finish([bot])
    assert code == 0, out[-3000:]
    assert f"match {match.match_id} ended: totals [" in out
    replay = stored_replay(server, match.match_id)
    assert replay["termination"] == "normal"
    mine = seat_answers(replay, 0)
    assert mine and not any(e["default"] for e in mine)
    assert {e["kind"] for e in mine} == {"PLAY_CARD", "CHOOSE_ROW"}
    rejects = [e for e in replay["events"] if e["type"] == "reject"]
    assert [(e["seat"], e["reason"]) for e in rejects] == [(0, "REJECT_REASON_ILLEGAL_ACTION")]
    assert "rejected (REJECT_REASON_ILLEGAL_ACTION)" in out


def test_node_bots_play_no_thanks(server: ServerProcess, node: str) -> None:
    """Two Node bots and a house bot play a No Thanks! match, answering take/pass words;
    the stored replay verifies."""
    match = server.create_match("no_thanks", 3, "--seed", "3", "--house", "2=threshold")
    bots = [node_bot(node, server.address, token) for token in match.tokens[:2]]
    results = finish(bots)
    assert [code for code, _ in results] == [0, 0], results[0][1][-3000:]
    replay = stored_replay(server, match.match_id)
    for seat in (0, 1):
        answers = seat_answers(replay, seat)
        assert answers and not any(e["default"] for e in answers)
        assert {e["action"] for e in answers} <= {"take", "pass"}



def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_node_bot_waits_for_a_server_that_is_not_up_yet(tmp_path: Path, node: str) -> None:
    """Started before the server listens, the Node bot retries with backoff, connects once
    the server is up, and plays its seat to the end."""
    port = _free_port()
    server = ServerProcess(db_url(tmp_path), ["--port", str(port), "--start-timeout", "30"])
    match = server.create_match("six_nimmt", 2, "--setting", "rounds=1", "--house", "1=greedy")
    bot = node_bot(node, f"127.0.0.1:{port}", match.tokens[0])
    assert bot.stderr is not None
    assert "connecting to" in bot.stderr.readline()
    server.start()
    try:
        [(code, out)] = finish([bot])
        assert code == 0, out[-3000:]
        assert not any(e["default"] for e in seat_answers(stored_replay(server, match.match_id), 0))
    finally:
        server.stop()


def test_node_bot_with_an_unknown_token_exits_3(server: ServerProcess, node: str) -> None:
    """A token the server does not know is refused (UNAUTHENTICATED): exit status 3, no retry."""
    [(code, out)] = finish([node_bot(node, server.address, "br_not-a-token")])
    assert code == 3
    assert "UNAUTHENTICATED" in out


def test_node_bot_plays_the_ladder_beside_a_python_bot(tmp_path: Path, node: str) -> None:
    """With a registered bot's token and ``--ladder six_nimmt --matches 2`` the Node bot
    queues, plays two ladder matches against a Python bot on one stream, and exits 0; both
    stored replays verify and hold only the Node bot's own answers."""
    server = ServerProcess(db_url(tmp_path), ["--ladder", "six_nimmt", "--table-size",
                                              "six_nimmt=2-5"]).start()
    try:
        tokens = [subprocess.run([*CLI, "bots", "add", name, "--db", server.db], check=True,
                                 capture_output=True, text=True).stdout.split()[-1]
                  for name in ("nodebot", "pybot")]
        js = node_bot(node, server.address, tokens[0], "--ladder", "six_nimmt",
                      "--matches", "2")
        py = server.bot(tokens[1], "house:greedy", "--ladder", "six_nimmt", "--matches", "2")
        results = finish([js, py])
        assert [code for code, _ in results] == [0, 0], results[0][1][-3000:]
        assert "waiting on the six_nimmt ladder as nodebot" in results[0][1]
        listed = subprocess.run([*CLI, "matches", "--bot", "nodebot", "--json", "--db",
                                 server.db], check=True, capture_output=True, text=True)
        played = 0
        for m in json.loads(listed.stdout):
            if m["status"] != "finished":
                continue
            mine = seat_answers(stored_replay(server, m["match_id"]),
                                m["seats"].index("nodebot"))
            played += bool(mine) and not any(e["default"] for e in mine)
        assert played == 2
    finally:
        server.stop()
