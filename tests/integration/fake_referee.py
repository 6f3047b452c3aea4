"""A fake referee for the runner's tests: a real ``grpc.aio`` server on a loopback port whose
Play is scripted per connection, and the messages it sends."""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.registry import get_game


def decision(decision_id: str, time_left_ms: int = 5000) -> tuple[pb.PlayResponse, int]:
    """A real 6 nimmt! opening decision for seat 0, and the card LowCard answers with."""
    state = get_game("six_nimmt").new_state(2, {}, 1)
    observation = state.observation(0)
    request = wire.observation_to_request(observation, decision_id, time_left_ms)
    return pb.PlayResponse(decision=request), min(observation.hand)


STARTED = pb.PlayResponse(match_started=pb.MatchStarted(
    match_id="m-1", game="six_nimmt", seat=0, seat_names=["me", "house"]))
ENDED = pb.MatchEnded(totals=[3, 7], ranks=[1, 2], termination=pb.TERMINATION_NORMAL)

Script = Callable[[int, Any], Awaitable[None]]
"""A fake referee's Play behaviour: ``(connection number, context)``."""


class FakeReferee:
    """A grpc.aio server on 127.0.0.1 whose Play runs ``script`` for each connection."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.connections = 0
        self.tokens: list[str | None] = []
        self.server = grpc.aio.server()
        self.address = ""

    async def _play(self, request_iterator: Any, context: Any) -> None:
        self.connections += 1
        self.tokens.append(dict(context.invocation_metadata()).get("authorization"))
        await self.script(self.connections, context)

    async def __aenter__(self) -> FakeReferee:
        handler = grpc.stream_stream_rpc_method_handler(
            self._play, request_deserializer=pb.PlayRequest.FromString,
            response_serializer=pb.PlayResponse.SerializeToString)
        self.server.add_generic_rpc_handlers(
            [grpc.method_handlers_generic_handler(wire.BOT_SERVICE, {"Play": handler})])
        port = self.server.add_insecure_port("127.0.0.1:0")
        await self.server.start()
        self.address = f"127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.server.stop(None)


async def read_rest(context: Any) -> list[pb.PlayRequest]:
    """Every request until the client half-closes the stream."""
    rest = []
    while (request := await context.read()) is not grpc.aio.EOF:
        rest.append(request)
    return rest


def free_port() -> int:
    """A loopback port nothing listens on (just released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
