"""A bot's comment on its answer (``Answer.comment``): checked the same way on every transport,
kept in the replay on its answer event, and shown to nobody while the match runs: not the
other seat, a spectator (Watch, the SSE feed) nor the big screen (``/api/tv``)."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import grpc
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.registry import get_game
from bullring.referee.replay import verify
from bullring.sdk.arena import play_game
from bullring.sdk.bot import Bot
from tests.bots.commenting import ROW_COMMENT, play_comment
from tests.seat_client import SeatClient
from tests.serving import CLI, ServerProcess, finish

MARK = "zq-secret-why"
"""What every comment of these tests holds, so a leak is found by a plain search."""


def comment_of(seat: int, decision_id: str) -> str:
    """The comment ``seat`` gives with its answer to ``decision_id``."""
    return f"{MARK} seat {seat} on {decision_id}: \"<b>it's</b> the safe card\" ✓"


def comments_in(replay: dict[str, Any]) -> dict[str, str]:
    """The comment of every answer event that has one, by ``step:seat``."""
    return {f"{e['step']}:{e['seat']}": e["comment"] for e in replay["events"]
            if e["type"] == "answer" and "comment" in e}


async def grpc_seat(channel: grpc.aio.Channel, token: str, joined: asyncio.Event,
                    go: asyncio.Event, sent: dict[str, str], after_answer: Any) -> list[bytes]:
    """Play seat 0 over the Play stream (``joined`` once it has its seat; answers once
    ``go``), each answer with a comment; every message the seat received, as bytes."""
    seat = SeatClient(channel, token)
    seat.join()
    await seat.next("match_started")
    joined.set()
    await go.wait()
    while (message := await seat.read()) is not None:
        body = message.WhichOneof("body")
        if body == "decision":
            decision = message.decision
            sent[f"{decision.decision_id.split(':')[1]}:0"] = comment_of(0, decision.decision_id)
            seat.send(pb.PlayRequest(answer=pb.Answer(
                decision_id=decision.decision_id, action=decision.legal[0],
                comment=comment_of(0, decision.decision_id))))
            await after_answer()
        elif body == "match_ended":
            break
    seat.close()
    return [m.SerializeToString() for m in seat.received]


async def http_seat(client: httpx.AsyncClient, token: str, go: asyncio.Event,
                    sent: dict[str, str], after_answer: Any) -> list[str]:
    """Play seat 1 over HTTP long-poll, each answer with a comment; every poll's body."""
    auth = {"Authorization": f"Bearer {token}"}
    bodies: list[str] = []
    after: int | None = None
    await go.wait()
    while True:
        params = {"wait_ms": 10_000, **({} if after is None else {"after": after})}
        response = await client.get("/api/play/poll", params=params, headers=auth)
        assert response.status_code == 200, response.text
        bodies.append(response.text)
        for message in response.json()["messages"]:
            after = message["seq"]
            if "decision" in message:
                decision_id = message["decision"]["decision_id"]
                sent[f"{decision_id.split(':')[1]}:1"] = comment_of(1, decision_id)
                verdict = await client.post("/api/play/answer", headers=auth, json={
                    "decision_id": decision_id, "action": message["decision"]["legal"][0],
                    "comment": comment_of(1, decision_id)})
                assert "accepted" in verdict.json(), verdict.text
                await after_answer()
            if "match_ended" in message:
                return bodies


async def watch(channel: grpc.aio.Channel, match_id: str, seen: asyncio.Event) -> list[bytes]:
    """A spectator's Watch stream of ``match_id`` to its end, as bytes."""
    items: list[bytes] = []
    async for item in wire.watch_stub(channel)(pb.WatchRequest(match_id=match_id)):
        items.append(item.SerializeToString())
        seen.set()
        if item.WhichOneof("body") == "match_ended":
            break
    return items


async def sse_feed(client: httpx.AsyncClient, match_id: str, seen: asyncio.Event) -> str:
    """The match's public SSE feed to its end, as text."""
    text = ""
    async with client.stream("GET", f"/api/matches/{match_id}/feed") as response:
        assert response.status_code == 200
        async for chunk in response.aiter_text():
            text += chunk
            seen.set()
            if "event: match_ended" in text:
                return text
    return text


def test_comments_stay_secret_during_play_and_land_in_the_replay(
        server: ServerProcess) -> None:
    """Both seats comment on every answer (seat 0 over gRPC Play, seat 1 over HTTP). While
    the match runs, neither seat's stream, a spectator's Watch, the SSE feed, /api/tv nor the
    turn endpoint holds any comment; the stored replay holds each one on its answer event."""
    match = server.create_match("six_nimmt", 2, "--deadline-ms", "20000", "--setting",
                                "rounds=1")
    tokens = [str(t) for t in match.tokens]
    sent: dict[str, str] = {}
    public: list[str] = []

    async def body() -> tuple[list[bytes], list[str], list[bytes], str]:
        async with grpc.aio.insecure_channel(server.address) as channel, \
                httpx.AsyncClient(base_url=server.http, timeout=30) as client:
            async def look_at_public_pages() -> None:
                for path in ("/api/tv", f"/api/matches/{match.match_id}/turn",
                             f"/api/matches/{match.match_id}"):
                    response = await client.get(path)
                    assert response.status_code == 200, (path, response.text)
                    public.append(response.text)

            joined, go = asyncio.Event(), asyncio.Event()
            watching, feeding = asyncio.Event(), asyncio.Event()
            seats = asyncio.gather(
                grpc_seat(channel, tokens[0], joined, go, sent, look_at_public_pages),
                http_seat(client, tokens[1], go, sent, look_at_public_pages))
            await joined.wait()
            second = await client.get("/api/play/poll", params={"wait_ms": 0}, headers={
                "Authorization": f"Bearer {tokens[1]}"})  # both seats in: the match starts
            assert second.status_code == 200
            watcher = asyncio.ensure_future(watch(channel, match.match_id, watching))
            feed = asyncio.ensure_future(sse_feed(client, match.match_id, feeding))
            await watching.wait()
            await feeding.wait()
            go.set()  # nobody answers before the spectators are watching
            (to_grpc, to_http) = await asyncio.wait_for(seats, 120)
            return to_grpc, to_http, await watcher, await feed

    to_grpc, to_http, watched, fed = asyncio.run(body())
    assert len(sent) >= 20  # 10 cards each, and any row choices
    assert all(MARK.encode() not in item for item in to_grpc), "seat 0 saw a comment"
    assert not [text for text in to_http if MARK in text], "seat 1 saw a comment"
    assert watched and all(MARK.encode() not in item for item in watched)
    assert "cards_revealed" in fed and MARK not in fed
    assert len(public) == 3 * len(sent) and not [t for t in public if MARK in t]

    replay = json.loads(server.replay(match.match_id))
    assert comments_in(replay) == sent
    assert all("comment" not in e for e in replay["events"] if e["type"] != "answer")


LONG = "x" * 201


def test_bad_comments_are_malformed_and_the_seat_answers_again(server: ServerProcess) -> None:
    """A 201-character comment and one holding a control character are rejected as
    MALFORMED_ACTION, saying why, over the Play stream, SubmitAnswer and HTTP; the seat then
    answers the same decision with a 200-character comment, which the replay keeps."""
    match = server.create_match("six_nimmt", 2, "--deadline-ms", "20000", "--setting",
                                "rounds=1")
    tokens = [str(t) for t in match.tokens]
    fine = ["a" * 200, "b" * 199 + "é"]

    async def body() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel, \
                httpx.AsyncClient(base_url=server.http, timeout=30) as client:
            seat = SeatClient(channel, tokens[0])
            seat.join()
            auth = {"Authorization": f"Bearer {tokens[1]}"}
            polled = (await client.get("/api/play/poll", params={"wait_ms": 0},
                                       headers=auth)).json()
            after = polled["messages"][-1]["seq"]
            mine = await seat.next("decision")
            submit = wire.bot_stub(channel)["SubmitAnswer"]
            metadata = [("authorization", f"Bearer {tokens[0]}")]
            for comment, why in ((LONG, "201 characters; at most 200"),
                                 ("line one\nline two", "control character U+000A"),
                                 ("bell \x07", "control character U+0007")):
                seat.send(pb.PlayRequest(answer=pb.Answer(
                    decision_id=mine.decision_id, action=mine.legal[0], comment=comment)))
                rejected = await seat.next("rejected")
                assert rejected.reason == pb.REJECT_REASON_MALFORMED_ACTION
                assert why in rejected.message, rejected.message
                unary = await submit(pb.SubmitAnswerRequest(answer=pb.Answer(
                    decision_id=mine.decision_id, action=mine.legal[0], comment=comment)),
                    metadata=metadata)
                assert unary.rejected.reason == pb.REJECT_REASON_MALFORMED_ACTION
                assert why in unary.rejected.message
            seat.send(pb.PlayRequest(answer=pb.Answer(
                decision_id=mine.decision_id, action=mine.legal[0], comment=fine[0])))
            assert (await seat.next("accepted")).decision_id == mine.decision_id

            while True:
                result = (await client.get("/api/play/poll", headers=auth, params={
                    "after": after, "wait_ms": 10_000})).json()
                decisions = [m["decision"] for m in result["messages"] if "decision" in m]
                after = result["messages"][-1]["seq"] if result["messages"] else after
                if decisions:
                    theirs = decisions[0]
                    break
            for comment, why in ((LONG, "201 characters; at most 200"),
                                 ("tab\there", "control character U+0009"),
                                 ("del \x7f", "control character U+007F")):
                verdict = await client.post("/api/play/answer", headers=auth, json={
                    "decision_id": theirs["decision_id"], "action": theirs["legal"][0],
                    "comment": comment})
                assert verdict.status_code == 200
                rejected = verdict.json()["rejected"]
                assert rejected["reason"] == "REJECT_REASON_MALFORMED_ACTION"
                assert why in rejected["message"], rejected["message"]
            verdict = await client.post("/api/play/answer", headers=auth, json={
                "decision_id": theirs["decision_id"], "action": theirs["legal"][0],
                "comment": fine[1]})
            assert verdict.json() == {"accepted": {"decision_id": theirs["decision_id"]}}
            admin = {"Authorization": f"Bearer {server.admin_token()}"}
            aborted = await client.post(f"/api/admin/matches/{match.match_id}/abort",
                                        headers=admin)
            assert aborted.is_success, aborted.text
            seat.close()
            seat.call.cancel()

    asyncio.run(body())
    replay = json.loads(server.replay(match.match_id))
    assert comments_in(replay) == {"0:0": fine[0], "0:1": fine[1]}
    rejects = [e for e in replay["events"] if e["type"] == "reject"]
    assert len(rejects) == 9 and all(e["reason"] == "REJECT_REASON_MALFORMED_ACTION"
                                     for e in rejects)
    assert not any(LONG in json.dumps(e) for e in rejects)  # a refused comment is not kept


@pytest.mark.parametrize("transport", ["stream", "unary"])
def test_a_python_sdk_bot_comments_with_bot_comment(
        server: ServerProcess, transport: str) -> None:
    """A bot that calls ``self.comment`` in ``play_card`` and ``choose_row``, run by
    ``bullring bot`` over the Play stream or SubmitAnswer: each of its answers carries the
    comment it gave for that decision into the replay, and none of the house bot's does."""
    match = server.create_match("six_nimmt", 2, "--house", "1=greedy", "--deadline-ms",
                                "20000", "--setting", "rounds=1")
    results = finish([server.bot(match.tokens[0], "tests.bots.commenting:Commenting", "--transport",
                                 transport)])
    assert results[0][0] == 0, results[0][1][-1500:]
    replay = json.loads(server.replay(match.match_id))
    verify(replay)
    mine = [e for e in replay["events"] if e["type"] == "answer" and e["seat"] == 0]
    assert len(mine) >= 10 and not any(e["default"] for e in mine)
    for event in mine:
        expected = (play_comment(event["action"]) if event["kind"] == "PLAY_CARD"
                    else ROW_COMMENT)
        assert event["comment"] == expected
    assert not [e for e in replay["events"] if e["type"] == "answer" and e["seat"] == 1
                and "comment" in e]


def test_bot_comment_refuses_what_the_server_would_and_the_arena_keeps_it() -> None:
    """``Bot.comment`` raises ValueError, saying why, for a comment the server would reject;
    a comment given is taken once (``pop_comment``); the arena's replay log keeps it."""
    bot = Bot()
    with pytest.raises(ValueError, match="201 characters; at most 200"):
        bot.comment(LONG)
    with pytest.raises(ValueError, match=r"control character U\+000A"):
        bot.comment("two\nlines")
    bot.comment("first")
    bot.comment("second thoughts")
    assert bot.pop_comment() == "second thoughts" and bot.pop_comment() == ""

    class Chatty(Bot):
        def decide(self, observation: Any) -> Any:
            action = observation.decision.legal[0]
            self.comment(f"the first of {len(observation.decision.legal)}")
            return action

    log: list[dict[str, Any]] = []
    state = get_game("no_thanks").new_state(3, {}, 5)
    play_game(state, [Chatty(), Chatty(), Chatty()], log)
    assert log and all(e["comment"].startswith("the first of ") for e in log)


async def _agent_comments(server: ServerProcess, token: str) -> list[str]:
    """Play the seat through ``bullring mcp``: the first answer tries a 201-character
    comment (refused; the decision stays open), then every answer says why; the comments
    sent, in order."""
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "--server",
                                                         server.address],
                                   env={**os.environ, "BULLRING_TOKEN": token})
    sent: list[str] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        while True:
            result = await session.call_tool("next_decision", {"timeout_s": 60})
            content = result.structured_content
            assert content is not None and not result.is_error
            if content["status"] in ("match_ended", "finished"):
                return sent
            if content["status"] == "waiting":
                continue
            if not sent:
                refused = await session.call_tool("act", {"action": content["legal"][0],
                                                          "comment": LONG})
                text = " ".join(getattr(c, "text", "") for c in refused.content)
                assert refused.is_error and "at most 200" in text, text
            comment = f"agent: {content['legal'][0]} looks right at {content['decision_id']}"
            answered = await session.call_tool("act", {"action": content["legal"][0],
                                                       "comment": comment})
            assert not answered.is_error
            sent.append(comment)


def test_an_mcp_agent_comments_through_act(server: ServerProcess) -> None:
    """The MCP ``act`` tool's ``comment`` reaches the replay, on the answer it came with."""
    match = server.create_match("no_thanks", 3, "--house", "1=random", "--house",
                                "2=never_take", "--deadline-ms", "20000")
    sent = asyncio.run(_agent_comments(server, str(match.tokens[0])))
    replay = json.loads(server.replay(match.match_id))
    kept = [e["comment"] for e in replay["events"] if e["type"] == "answer" and e["seat"] == 0]
    assert sent and kept == sent


def test_the_openapi_document_describes_the_comment(server: ServerProcess) -> None:
    """/openapi.json lists ``comment`` on an HTTP answer, with its limits."""
    schemas = httpx.get(f"{server.http}/openapi.json").json()["components"]["schemas"]
    comment = schemas["AnswerIn"]["properties"]["comment"]
    assert comment["type"] == "string" and "200 characters" in comment["description"]
