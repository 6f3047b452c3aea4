"""End to end: a real server process and real bot processes started through the runner."""

from __future__ import annotations

import asyncio
import json
import signal
from typing import Any

import grpc
import pytest

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.replay import verify
from bullring.sdk.house import house_bot
from tests.seat_client import SeatClient
from tests.serving import ServerProcess, finish


def stored_replay(server: ServerProcess, match_id: str) -> dict[str, Any]:
    """The match's stored replay, exported with the CLI, after checking it verifies."""
    replay: dict[str, Any] = json.loads(server.replay(match_id))
    verify(replay)
    return replay


@pytest.mark.parametrize("game,seats,bots,transport", [
    ("six_nimmt", 4, ["house:greedy", "house:random", "tests.bots.low_card:LowCard",
                      "house:random"], "stream"),
    ("six_nimmt", 10, ["house:random"] * 10, "stream"),
    ("no_thanks", 4, ["house:threshold", "house:never_take", "house:random", "house:random"],
     "unary"),
])
def test_full_matches_with_bot_processes(server: ServerProcess, game: str, seats: int,
                                         bots: list[str], transport: str) -> None:
    """Bots in their own processes play a whole match; its stored replay verifies."""
    match = server.create_match(game, seats, "--seed", "5")
    procs = [server.bot(token, bot, "--transport", transport)
             for token, bot in zip(match.tokens, bots, strict=True)]
    results = finish(procs)
    assert [code for code, _ in results] == [0] * seats, results[0][1][-2000:]
    replay = stored_replay(server, match.match_id)
    assert replay["termination"] == "normal"
    assert all(f"match {match.match_id} ended" in out for _, out in results)
    answers = [e for e in replay["events"] if e["type"] == "answer"]
    assert answers and not any(e["default"] for e in answers)


def test_a_sleeping_bot_gets_defaults_and_the_match_ends(server: ServerProcess) -> None:
    """A bot slower than its deadline gets default actions, strikes out after 3 timeouts
    and is marked disconnected; the match still completes."""
    match = server.create_match("six_nimmt", 3, "--deadline-ms", "200", "--setting",
                                "rounds=1")
    procs = [server.bot(match.tokens[0], "tests.bots.sleepy:Sleepy"),
             server.bot(match.tokens[1], "house:random"),
             server.bot(match.tokens[2], "house:greedy")]
    results = finish(procs)
    assert [code for code, _ in results] == [0, 0, 0]
    replay = stored_replay(server, match.match_id)
    events = replay["events"]
    timeouts = [e for e in events if e["type"] == "timeout" and e["seat"] == 0]
    assert [e["strikes"] for e in timeouts[:3]] == [1, 2, 3]
    assert any(e["type"] == "disconnect" and e["seat"] == 0 for e in events)
    defaults = [e for e in events if e["type"] == "answer" and e["seat"] == 0]
    assert defaults and all(e["default"] for e in defaults)


def test_a_killed_bot_is_disconnected_and_takes_its_seat_back(server: ServerProcess) -> None:
    """A bot killed mid-match is marked disconnected and gets defaults; started again with
    its token it takes its seat back, and the match completes."""
    match = server.create_match("six_nimmt", 2, "--deadline-ms", "20000", "--setting",
                                "rounds=2")

    async def body() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            me = SeatClient(channel, str(match.tokens[1]))
            me.join()
            started = await me.next("match_started")
            bot = house_bot("random", started.game, 1)
            first = server.bot(match.tokens[0], "house:random", "-v")

            async def answer_one() -> pb.DecisionRequest:
                request: pb.DecisionRequest = await me.next("decision")
                observation = wire.observation_from_request(request)
                me.answer(request.decision_id, wire.action_to_proto(
                    observation.decision.kind, bot.decide(observation)))
                await me.next("accepted")
                return request

            await answer_one()
            await answer_one()
            first.send_signal(signal.SIGKILL)
            first.wait()
            for _ in range(3):
                await answer_one()
            again = server.bot(match.tokens[0], "house:random", "-v")
            assert again.stderr is not None
            line = ""
            while " started: " not in line:  # the bot is back in its seat
                line = await asyncio.to_thread(again.stderr.readline)
                assert line, "the restarted bot exited before joining"
            while True:
                message = await me.call.read()
                if message is grpc.aio.EOF:
                    break
                kind = message.WhichOneof("body")
                if kind == "decision":
                    observation = wire.observation_from_request(message.decision)
                    me.answer(message.decision.decision_id, wire.action_to_proto(
                        observation.decision.kind, bot.decide(observation)))
                elif kind == "match_ended":
                    break
            me.close()
            code, _ = await asyncio.to_thread(lambda: finish([again])[0])
            assert code == 0

    asyncio.run(body())
    events = stored_replay(server, match.match_id)["events"]
    kinds = [(e["type"], e.get("seat")) for e in events]
    assert ("disconnect", 0) in kinds and ("reconnect", 0) in kinds
    gone = kinds.index(("disconnect", 0))
    back = kinds.index(("reconnect", 0))
    between = [e for e in events[gone:back] if e["type"] == "answer" and e["seat"] == 0]
    after = [e for e in events[back:] if e["type"] == "answer" and e["seat"] == 0]
    assert between and all(e["default"] for e in between)
    assert after and not all(e["default"] for e in after)
