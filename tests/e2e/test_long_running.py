"""What a server that runs for weeks must not keep: the runners of finished matches, and the
queues of spectators who left. The server runs in this process (real gRPC and HTTP on
loopback ports, real SQLite) so that its hub can be looked at; the bots are the SDK's runner
over real connections."""

from __future__ import annotations

import asyncio
import gc
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.sdk.runner import play
from bullring.server.app import RefereeServer, ServerOptions
from bullring.server.ladder.seating import LadderOptions
from bullring.server.match.runner import MatchRunner
from bullring.server.store import MatchConfig, Store
from tests.seat_client import SeatClient
from tests.serving import CLI, Match, db_url

GUARD_S = 30.0
"""The longest wait for something the server owes us (a guard; waits end on the condition)."""


def create_match(db: str, game: str, seats: int, *args: str) -> Match:
    """``bullring match create`` on ``db``, made first if it is not there (as the server
    these tests start afterwards would make it: only ``serve`` creates a database)."""
    Store(db).engine.dispose()
    out = subprocess.run([*CLI, "match", "create", "--game", game, "--seats", str(seats),
                          "--db", db, *args], check=True, capture_output=True,
                         text=True).stdout.splitlines()
    return Match(out[0].split()[1],
                 [line.split()[3] if " token " in line else None for line in out[1:]])


async def until(condition: Callable[[], bool], what: str) -> None:
    """Yield to the server (same event loop) until ``condition`` holds; fail after GUARD_S."""
    loop = asyncio.get_running_loop()
    ends = loop.time() + GUARD_S
    while not condition():
        assert loop.time() < ends, f"still waiting for {what}"
        await asyncio.sleep(0.01)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Callable[[Callable[[RefereeServer], Awaitable[Any]]],
                                                 Any]]:
    """Run an async test body against a RefereeServer on a fresh SQLite file, in this
    process; the finished matches' runners are dropped at once (no linger)."""
    db = db_url(tmp_path)

    def run(body: Callable[[RefereeServer], Awaitable[Any]]) -> Any:
        async def main() -> Any:
            server = RefereeServer(ServerOptions(port=0, http_port=0, db=db, grace_s=1.0,
                                                 start_timeout_s=30.0))
            server.hub.linger_s = 0.0
            await server.start()
            try:
                return await body(server)
            finally:
                await server.stop()
                server.store.engine.dispose()
        return asyncio.run(main())

    yield run


def test_finished_matches_leave_the_hub_and_stay_watchable(
        served: Callable[..., Any], tmp_path: Path) -> None:
    """Three matches played by SDK bots: once they are over, the hub holds no runner, no
    task and no cached seat token of theirs; a finished match is still watched in full over
    gRPC (the very messages a spectator got live) and over HTTP, and its replay exported; a
    seat token of a finished match is told so (FAILED_PRECONDITION)."""
    db = db_url(tmp_path)
    matches = [create_match(db, "six_nimmt", 2, "--house", "1=greedy"),
               create_match(db, "no_thanks", 3),
               create_match(db, "six_nimmt", 2)]

    async def body(server: RefereeServer) -> None:
        address = f"127.0.0.1:{server.port}"
        seats = [t for m in matches[1:] for t in m.tokens if t is not None]
        async with grpc.aio.insecure_channel(address) as channel:
            watch = wire.watch_stub(channel)
            # The first match's runner starts when its seat joins; then a spectator comes.
            first = SeatClient(channel, str(matches[0].tokens[0]))
            first.join()
            await first.next("match_started")
            live: list[pb.WatchResponse] = []

            async def spectate() -> None:
                async for message in watch(pb.WatchRequest(match_id=matches[0].match_id)):
                    live.append(message)

            async def first_legal(client: SeatClient) -> pb.MatchEnded:
                while (message := await client.read()) is not None:
                    if message.WhichOneof("body") == "decision":
                        client.answer(message.decision.decision_id, message.decision.legal[0])
                    if message.WhichOneof("body") == "match_ended":
                        client.close()
                        return message.match_ended
                raise EOFError("the first match's stream ended before the match")

            spectator = asyncio.create_task(spectate())
            ended = await asyncio.gather(first_legal(first), *(
                play(address, t, "house:random", seed=i) for i, t in enumerate(seats)))
            await asyncio.wait_for(spectator, GUARD_S)
            assert all(e.termination == pb.TERMINATION_NORMAL for e in ended)
            await asyncio.wait_for(asyncio.gather(*server.hub.tasks.values()), GUARD_S)

            assert server.hub.runners == {} and server.hub.tasks == {}
            assert not server.hub._tokens  # the token cache must not keep them

            after = [m async for m in watch(pb.WatchRequest(match_id=matches[0].match_id))]
            assert after == live and after[-1].WhichOneof("body") == "match_ended"
            assert len(after) > 10
            http = f"http://127.0.0.1:{server.http.port}/api/matches" if server.http else ""
            async with httpx.AsyncClient(timeout=GUARD_S) as client:
                feed = (await client.get(f"{http}/{matches[0].match_id}/feed")).text
                events = [line for line in feed.splitlines() if line == "event: event"]
                assert len(events) == len(after) - 1 and "event: match_ended" in feed
                resumed = (await client.get(f"{http}/{matches[0].match_id}/feed",
                                            headers={"Last-Event-ID": "3"})).text
                assert resumed.count("event: event") == len(events) - 3
                replay = (await client.get(f"{http}/{matches[1].match_id}/replay")).json()
                assert replay["match_id"] == matches[1].match_id
                assert list(ended[1].totals) == replay["totals"]  # a seat of matches[1]

            late = SeatClient(channel, str(matches[2].tokens[0]))
            late.join()
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await late.next("match_ended")
            assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert "finished" in str(info.value.details())

    served(body)


def test_a_spectator_who_leaves_is_fed_no_more(served: Callable[..., Any],
                                               tmp_path: Path) -> None:
    """Spectators that leave a live match (the gRPC Watch cancelled, the HTTP feed closed)
    have their queues released at once: the runner feeds only those still watching."""
    match = create_match(db_url(tmp_path), "six_nimmt", 2, "--deadline-ms", "60000")

    async def body(server: RefereeServer) -> None:
        address = f"127.0.0.1:{server.port}"
        async with grpc.aio.insecure_channel(address) as channel:
            seat = SeatClient(channel, str(match.tokens[0]))
            seat.join()
            await seat.next("match_started")
            runner = server.hub.runners[match.match_id]
            watch = wire.watch_stub(channel)
            calls = [watch(pb.WatchRequest(match_id=match.match_id)) for _ in range(3)]
            await until(lambda: len(runner.feed.spectators) == 3, "three spectators")
            calls[0].cancel()
            calls[1].cancel()
            await until(lambda: len(runner.feed.spectators) == 1, "two spectators to leave")
            http = f"http://127.0.0.1:{server.http.port}" if server.http else ""
            async with httpx.AsyncClient(timeout=GUARD_S) as client, client.stream(
                    "GET", f"{http}/api/matches/{match.match_id}/feed") as response:
                assert response.status_code == 200
                await until(lambda: len(runner.feed.spectators) == 2, "the HTTP spectator")
            await until(lambda: len(runner.feed.spectators) == 1, "the HTTP spectator to leave")
            other = SeatClient(channel, str(match.tokens[1]))
            other.join()
            await seat.next("decision")  # the match has started: the runner publishes
            await other.next("decision")
            calls[2].cancel()
            await until(lambda: not runner.feed.spectators, "the last spectator to leave")
            for player in (seat, other):
                player.close()
                player.call.cancel()

    served(body)


def _live_runners() -> set[int]:
    """The ids of the MatchRunner objects alive now (by the collector's list, which holds
    every container object: a runner compiled by mypyc takes no weak reference)."""
    return {id(o) for o in gc.get_objects() if isinstance(o, MatchRunner)}


def test_finished_ladder_runners_are_freed_without_the_cycle_collector(tmp_path: Path) -> None:
    """Ladder matches played by SDK bots that then leave: every finished match's runner is
    freed by reference counting alone (the cycle collector is off meanwhile). The server
    raises GC thresholds, so a runner left in a reference cycle (runner -> seat -> the bot's
    ladder outbox -> its ``on_sent`` -> runner) would wait for a rare full collection."""
    matches = 3
    options = ServerOptions(port=0, http_port=None, db=db_url(tmp_path), grace_s=1.0,
                            ladder=LadderOptions(games=("six_nimmt",), settings={
                                "six_nimmt": {"rounds": "1", "deadline_ms": "2000"}},
                                house_bots=("random",), house_rest_s=0.0))

    async def main() -> None:
        server = RefereeServer(options)
        await server.start()
        assert server.ladder is not None
        started = [0]
        start = server.hub.start

        def counted(config: MatchConfig, attach: Callable[[MatchRunner], None],
                    after: Callable[[MatchRunner], Awaitable[None]]) -> MatchRunner:
            started[0] += 1
            return start(config, attach, after)

        server.hub.start = counted  # type: ignore[method-assign]  # observed, not mocked
        before = _live_runners()  # ids only: holding them would keep nothing new alive
        tokens = [server.store.add_bot(f"leaver-{i}") for i in range(3)]
        gc.collect()
        gc.disable()
        try:
            ended = await asyncio.gather(*(
                play(f"127.0.0.1:{server.port}", token, "house:random", seed=i,
                     ladder="six_nimmt", matches=matches) for i, token in enumerate(tokens)))
            assert all(e.termination == pb.TERMINATION_NORMAL for e in ended)
            ladder = server.ladder
            await until(lambda: not server.hub.tasks and not ladder.sessions,
                        "the matches to end and the bots' streams to close")
            assert started[0] >= matches
            # A match's end hook (the ladder's, run after the hub lets go of the match) may
            # still hold its runner for a moment; a runner in a cycle would stay for good.
            await until(lambda: not _live_runners() - before,
                        f"the {started[0]} finished runners to be freed")
        finally:
            gc.enable()
            await server.stop()
            server.store.engine.dispose()

    asyncio.run(main())
