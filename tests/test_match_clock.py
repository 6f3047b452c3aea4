"""The match runner's clock: a seat's deadline runs from when its request is taken out of
the seat's outbox to be written, not from when a busy server queued it; and a request
nobody takes still ends in a timeout, so a match never hangs."""

from __future__ import annotations

import asyncio
from typing import Any

from client_sdk import wire
from client_sdk.generated.bullring.v1 import referee_pb2 as pb
from referee.six_nimmt import new_state
from server.match_runner import MatchRunner
from server.store import MatchConfig


async def _nothing(_replay: dict[str, Any]) -> None:
    return None


def _runner(deadline_ms: int) -> MatchRunner:
    """A 2-seat 6 nimmt! match: seat 0 for the test, seat 1 a house bot."""
    settings = new_state(2, {"deadline_ms": deadline_ms}).settings
    config = MatchConfig("clock", "six_nimmt", dict(settings), 7, ("test", "house"),
                         {1: "random"}, "created")
    return MatchRunner(config, _nothing)


def test_a_request_held_in_the_outbox_keeps_the_seats_full_deadline() -> None:
    """A request that sits in the outbox longer than the deadline (the server was busy) is
    sent with the full deadline left, and an answer given right after it is taken is
    accepted with no timeout charged."""
    async def body() -> None:
        runner = _runner(500)
        outbox, _ = runner.attach(0)
        task = asyncio.create_task(runner.run())
        await runner.started.wait()  # the first request is queued by now
        await asyncio.sleep(0.7)  # a busy server: the request waits 1.4 deadlines
        message = outbox.get_nowait()  # match start and opening events, then the request
        while message is not None and message.WhichOneof("body") != "decision":
            message = outbox.get_nowait()
        assert message is not None
        request = message.decision
        assert request.time_left_ms == 500
        verdict = runner.submit(0, request.decision_id, wire.action_from_proto(request.legal[0]))
        assert isinstance(verdict, pb.AnswerAccepted)
        assert not [e for e in runner.log if e["type"] == "timeout"]
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    asyncio.run(body())


def test_a_request_nobody_takes_still_times_out_and_the_match_goes_on() -> None:
    """A seat whose connection never takes its request (a stalled stream) is charged a
    timeout and given its default action; the match moves on to the next decision."""
    async def body() -> None:
        runner = _runner(100)
        runner.attach(0)  # connected, but nothing ever reads its outbox
        spectator = runner.watch()
        task = asyncio.create_task(runner.run())
        first = await spectator.get()
        while first is not None and first.event.type != "CardsRevealed":  # the opening rows
            first = await spectator.get()
        assert first is not None  # the trick was played
        timeouts = [e for e in runner.log if e["type"] == "timeout"]
        assert [(e["seat"], e["strikes"]) for e in timeouts] == [(0, 1)]
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    asyncio.run(body())
