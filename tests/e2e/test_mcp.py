"""``bullring mcp`` as a real process, driven by the ``mcp`` package's client as a scripted
agent through whole matches on a live server."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from bullring.referee.replay import verify
from bullring.server.store import Store
from tests.ladder_helpers import LadderBot, LadderServer
from tests.serving import CLI, ServerProcess, db_url

pytestmark = pytest.mark.e2e


def _params(server: ServerProcess, token: str | None) -> StdioServerParameters:
    assert token is not None
    return StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "--server",
                                                       server.address],
                                 env={**os.environ, "BULLRING_TOKEN": token})


def _text(result: Any) -> str:
    return " ".join(c.text for c in result.content if getattr(c, "text", None))


async def _agent(session: ClientSession, illegal: Any) -> dict[str, Any]:
    """Play the seat to the end: answer the first decision illegally once, then always the
    first legal answer; return what the agent saw."""
    seen: dict[str, Any] = {"decisions": 0, "first": None, "refusal": "", "end": None}
    while True:
        result = await session.call_tool("next_decision", {"timeout_s": 60})
        assert not result.is_error, _text(result)
        content = result.structured_content
        assert content is not None
        if content["status"] in ("match_ended", "finished"):
            seen["end"] = content
            return seen
        if content["status"] == "waiting":
            continue
        assert content["status"] == "decision"
        assert "Time left:" in _text(result) and content["time_left_ms"] > 0
        if seen["first"] is None:
            seen["first"] = content
            refused = await session.call_tool("act", {"action": illegal})
            assert refused.is_error
            seen["refusal"] = _text(refused)
        answered = await session.call_tool("act", {"action": content["legal"][0]})
        assert not answered.is_error, _text(answered)
        assert answered.structured_content is not None
        assert answered.structured_content["decision_id"] == content["decision_id"]
        seen["decisions"] += 1


async def _play(server: ServerProcess, token: str | None, illegal: Any
                ) -> tuple[dict[str, Any], str, str]:
    async with stdio_client(_params(server, token)) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name for t in (await session.list_tools()).tools}
        assert {"next_decision", "act", "rules", "match_so_far"} <= tools
        seen = await _agent(session, illegal)
        rules = _text(await session.call_tool("rules", {}))
        so_far = _text(await session.call_tool("match_so_far", {}))
        return seen, rules, so_far


def _replay(server: ServerProcess, match_id: str) -> dict[str, Any]:
    replay: dict[str, Any] = json.loads(server.replay(match_id))
    return replay


def test_an_agent_plays_a_whole_six_nimmt_match_over_stdio(server: ServerProcess) -> None:
    match = server.create_match("six_nimmt", 3, "--house", "1=random", "--house", "2=greedy",
                                "--deadline-ms", "20000", "--setting", "rounds=1")
    seen, rules, so_far = asyncio.run(_play(server, match.tokens[0], 105))
    assert seen["decisions"] >= 10  # ten tricks, maybe a row choice
    assert "not a legal answer" in seen["refusal"] and "105" in seen["refusal"]
    assert seen["end"]["result"]["termination"]
    observation = seen["first"]["observation"]
    assert seen["first"]["kind"] == "PLAY_CARD"
    # Only the seat's own hand: ten cards, exactly those dealt to seat 0.
    assert len(observation["hand"]) == 10 and sorted(seen["first"]["legal"]) == \
        sorted(observation["hand"])
    replay = _replay(server, match.match_id)
    others = _dealt_hands(replay)[1:]
    assert others and not set(observation["hand"]) & {c for hand in others for c in hand}
    assert not {"hands", "chips_by_seat"} & set(observation)
    assert "6 nimmt!" in rules and "bullheads" in rules
    assert "CardsRevealed" in so_far and "Ended" in so_far


def test_an_agent_plays_a_whole_no_thanks_match_over_stdio(server: ServerProcess) -> None:
    match = server.create_match("no_thanks", 3, "--house", "1=random", "--house",
                                "2=never_take", "--deadline-ms", "20000")
    seen, rules, so_far = asyncio.run(_play(server, match.tokens[0], "maybe"))
    assert seen["decisions"] >= 1
    assert "not a legal answer" in seen["refusal"] and "maybe" in seen["refusal"]
    assert seen["end"]["result"]["termination"]
    observation = seen["first"]["observation"]
    assert observation["chips"] == 11 and isinstance(observation["chips"], int)
    # Chips of the other seats are never shown: one number, the seat's own.
    assert "No Thanks!" in rules
    assert "Took" in so_far and "Ended" in so_far


def _dealt_hands(replay: dict[str, Any]) -> list[list[int]]:
    """The first round's hands by seat, wherever the replay keeps them."""
    found: list[list[int]] = []

    def walk(value: Any) -> None:
        if found:
            return
        if isinstance(value, dict):
            if "hands" in value and isinstance(value["hands"], list):
                found.extend(value["hands"])
                return
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(replay)
    return found


LATE_DECISIONS = 3
"""How many decisions the slow agent answers late."""


async def _slow_agent(session: ClientSession, late_s: float) -> list[int]:
    """Answer the first ``LATE_DECISIONS`` decisions ``late_s`` after they came (the lateness
    under test), the others at once; return the time left each decision was offered with."""
    offered: list[int] = []
    while True:
        result = await session.call_tool("next_decision", {"timeout_s": 60})
        content = result.structured_content
        assert content is not None and not result.is_error, _text(result)
        if content["status"] in ("match_ended", "finished"):
            return offered
        if content["status"] != "decision":
            continue
        offered.append(content["time_left_ms"])
        if len(offered) <= LATE_DECISIONS:
            await asyncio.sleep(late_s)
        answered = await session.call_tool("act", {"action": content["legal"][0]})
        assert not answered.is_error, _text(answered)


def test_a_slow_agent_answers_late_from_its_time_bank_and_is_never_defaulted(
        server: ServerProcess, tmp_path: Path) -> None:
    """1,000 ms a decision and a 20 s bank: answers 1.5 s past the deadline are taken, each
    spends about 1.5 s of the bank, the replay says so and verifies; a replay whose bank
    figures are changed does not."""
    match = server.create_match("six_nimmt", 2, "--house", "1=greedy", "--deadline-ms", "1000",
                                "--setting", "time_bank_ms=20000", "--setting", "rounds=1")

    async def play() -> list[int]:
        async with stdio_client(_params(server, match.tokens[0])) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            return await _slow_agent(session, 2.5)

    offered = asyncio.run(play())
    assert len(offered) >= 10 and offered[0] > 10_000  # the deadline and the bank
    replay = json.loads(server.replay(match.match_id))
    assert replay["settings"]["time_bank_ms"] == 20_000
    mine = [e for e in replay["events"] if e.get("type") == "answer" and e["seat"] == 0]
    assert len(mine) == len(offered) and not any(e.get("default") for e in mine)
    assert not [e for e in replay["events"] if e.get("type") == "timeout"]
    late = mine[:LATE_DECISIONS]
    # 1.5 s past the deadline, and what a loaded machine adds to the agent's round trips
    assert all(1400 <= e["bank_spent_ms"] <= 3500 for e in late), late
    assert all(e["bank_spent_ms"] == 0 for e in mine[LATE_DECISIONS:])
    assert mine[-1]["bank_left_ms"] == round(20_000 - sum(e["bank_spent_ms"] for e in late), 3)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(replay), encoding="utf-8")
    verified = subprocess.run([*CLI, "replay", "verify", str(good)], capture_output=True,
                              text=True)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    late[0]["bank_left_ms"] += 1000  # a bank that was not spent as the times say
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(replay), encoding="utf-8")
    refused = subprocess.run([*CLI, "replay", "verify", str(bad)], capture_output=True,
                             text=True)
    assert refused.returncode == 1 and "time bank" in refused.stdout


def test_an_agent_plays_over_streamable_http(server: ServerProcess) -> None:
    """``bullring mcp --transport http``: the same tools at /mcp; a whole No Thanks! match."""
    match = server.create_match("no_thanks", 3, "--house", "1=random", "--house",
                                "2=never_take", "--deadline-ms", "20000")
    assert match.tokens[0] is not None
    proc = subprocess.Popen([*CLI, "mcp", "--server", server.address, "--token",
                             match.tokens[0], "--transport", "http", "--port", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        url = ""
        for line in proc.stderr:  # uvicorn says where it listens
            if "running on http://" in line:
                url = line.split("running on ")[1].split()[0] + "/mcp"
                break
        assert url, "bullring mcp --transport http did not start"
        drain = threading.Thread(target=proc.stderr.read, daemon=True)
        drain.start()

        async def play() -> dict[str, Any]:
            async with streamable_http_client(url) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                return await _agent(session, "maybe")

        seen = asyncio.run(play())
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert seen["end"]["result"]["termination"] == "normal"
    assert "not a legal answer" in seen["refusal"]
    observation = seen["first"]["observation"]
    assert set(observation) >= {"chips", "cards", "card", "pot"}
    assert isinstance(observation["chips"], int)  # its own chips; no other seat's count


def test_an_agent_plays_a_practice_match_on_a_ladder_with_a_time_bank(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """``bullring mcp --ladder GAME --practice --against ...`` with a registered bot's token:
    one unrated match against house bots, on a ladder whose matches have a time bank
    (``bullring serve --ladder-setting six_nimmt:time_bank_ms=20000``); then no more."""
    server = LadderServer(db_url(tmp_path), [
        "--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
        "--ladder-setting", "six_nimmt:deadline_ms=1000",
        "--ladder-setting", "six_nimmt:time_bank_ms=20000"]).start()
    stop_all.append(server)
    token = server.add_bot("ann")
    params = StdioServerParameters(command=CLI[0], args=[
        *CLI[1:], "mcp", "--server", server.address, "--ladder", "six_nimmt", "--practice",
        "--against", "house:random,house:greedy"], env={**os.environ, "BULLRING_TOKEN": token})

    async def play() -> tuple[dict[str, Any], dict[str, Any]]:
        async with stdio_client(params) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            seen = await _agent(session, 0)
            while seen["end"]["status"] != "finished":
                seen["end"] = (await session.call_tool("next_decision", {})).structured_content
            so_far = (await session.call_tool("match_so_far", {})).structured_content
            assert so_far is not None
            return seen, so_far

    seen, so_far = asyncio.run(play())
    assert seen["first"]["time_left_ms"] > 10_000  # the deadline and the ladder's bank
    assert so_far["seat_names"] == ["ann", "house:random", "house:greedy"]
    assert so_far["rated"] is False and so_far["result"]["termination"] == "normal"
    replay = Store(server.db).replay(so_far["match_id"])
    assert replay is not None and replay["settings"]["time_bank_ms"] == 20_000
    assert verify(replay)


AGENT_TOKEN = "agent-" + "x" * 30
"""The bearer token the agent sends to ``bullring mcp --transport http`` beyond loopback."""
ALLOWED = "https://agent.example.org"


@pytest.mark.parametrize(("extra", "env", "says"), [
    (["--transport", "http", "--host", "0.0.0.0"], {}, "beyond loopback, needs a bearer token"),
    (["--transport", "http", "--host", "0.0.0.0"], {"BULLRING_AGENT_TOKEN": "short"},
     "at least 16 characters"),
    (["--transport", "http", "--host", "::"], {"BULLRING_AGENT_TOKEN": "two words" * 3},
     "--agent-token: must be the token as printed"),
    (["--agent-token", AGENT_TOKEN], {}, "--agent-token: only with --transport http"),
])
def test_mcp_over_http_beyond_loopback_refuses_to_start_without_a_token(
        extra: list[str], env: dict[str, str], says: str) -> None:
    """``bullring mcp --transport http --host 0.0.0.0`` would let anyone who reaches the
    port play the seat: without a bearer token for the agent (or with one short enough to
    guess) it refuses to start, in one line naming ``--agent-token``, exit 2; a token is
    for HTTP only."""
    environ = {k: v for k, v in os.environ.items() if k != "BULLRING_AGENT_TOKEN"}
    result = subprocess.run([*CLI, "mcp", "--server", "127.0.0.1:9", "--token", "br_seat",
                             "--port", "0", *extra], capture_output=True, text=True,
                            timeout=60, env={**environ, **env})
    assert result.returncode == 2, result.stderr
    assert says in result.stderr and len(result.stderr.splitlines()) == 1, result.stderr


def _mcp_url(proc: subprocess.Popen[str]) -> str:
    """The /mcp address of a ``bullring mcp --transport http`` process, from uvicorn's line
    (on 0.0.0.0: reached through loopback); the rest of its stderr drained."""
    assert proc.stderr is not None
    for line in proc.stderr:
        if "running on http://" in line:
            port = line.split("running on http://")[1].split()[0].rsplit(":", 1)[1]
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return f"http://127.0.0.1:{port}/mcp"
    raise AssertionError("bullring mcp --transport http did not start")


def test_mcp_beyond_loopback_wants_the_token_and_an_allowed_origin_and_joins_late(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """``bullring mcp --transport http --host 0.0.0.0 --agent-token T --allow-origin O
    --ladder six_nimmt --practice``: a request without the token, or with another, is 401;
    one from a browser page of another origin is 403, even with the token. The seat joins
    nothing while the agent only connects and reads the rules (the server has not heard of
    the bot); at its first ``next_decision`` it joins, and the agent plays the whole
    practice match through the gate."""
    server = LadderServer(db_url(tmp_path), [
        "--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1"]).start()
    stop_all.append(server)
    token = server.add_bot("ann")
    proc = subprocess.Popen([*CLI, "mcp", "--server", server.address, "--token", token,
                             "--ladder", "six_nimmt", "--practice", "--against",
                             "house:random,house:greedy", "--transport", "http", "--host",
                             "0.0.0.0", "--port", "0", "--agent-token", AGENT_TOKEN,
                             "--allow-origin", ALLOWED],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = _mcp_url(proc)
        hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        plain = {"Content-Type": "application/json", "Accept": "application/json, "
                 "text/event-stream"}
        bearer = {**plain, "Authorization": f"Bearer {AGENT_TOKEN}"}
        none = httpx.post(url, json=hello, headers=plain)
        assert none.status_code == 401 and none.headers["www-authenticate"] == "Bearer"
        wrong = httpx.post(url, json=hello, headers={**plain, "Authorization": "Bearer x"})
        assert wrong.status_code == 401, wrong.text
        foreign = httpx.post(url, json=hello, headers={**bearer,
                                                       "Origin": "https://evil.example"})
        assert foreign.status_code == 403 and "origin" in foreign.text
        assert server.log is not None

        def bot_lines() -> list[str]:
            """The server's log lines that name the bot (its challenge, joining, match)."""
            return [line for line in list(server.log.lines) if re.search(r"\bann\b", line)] \
                if server.log else []

        async def play() -> tuple[dict[str, Any], list[str]]:
            client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {AGENT_TOKEN}",
                                                 "Origin": ALLOWED},
                                        timeout=httpx2.Timeout(30, read=300))
            async with client, streamable_http_client(url, http_client=client) as (
                    read, write), ClientSession(read, write) as session:
                await session.initialize()
                assert "6 nimmt!" in _text(await session.call_tool("rules", {
                    "game": "six_nimmt"}))
                before = bot_lines()
                seen = await _agent(session, 0)
                while seen["end"]["status"] != "finished":
                    seen["end"] = (await session.call_tool("next_decision", {})
                                   ).structured_content
                return seen, before

        seen, before = asyncio.run(play())
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert before == [], before  # connected and read the rules: not joined yet
    assert any("bot ann joined the six_nimmt ladder" in line for line in bot_lines())
    assert seen["decisions"] >= 10 and seen["end"]["result"]["termination"] == "normal"
