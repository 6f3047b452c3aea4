"""The same refusal gives the error table's answer (server/errors.py) over gRPC and over HTTP,
on a real server: a wrong token, another token on an admin call, an unknown bot, match and
game; and an illegal or malformed answer gets the same in-band reason on both."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import grpc
import httpx
import pytest

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.core import ActionError, IllegalActionError, MalformedActionError
from bullring.referee.registry import UnknownGameError
from bullring.server.errors import (
    REJECT_REASONS,
    NotAdminError,
    NotAuthenticatedError,
    UnknownBotNameError,
    UnknownMatchError,
    status_of,
)
from tests.seat_client import SeatClient
from tests.serving import ServerProcess

GrpcCall = Callable[[grpc.Channel, str], Any]
"""One gRPC call, given the channel and the admin token."""


def _unary(service: str, method: str, request: Any, token: str | None) -> GrpcCall:
    def call(channel: grpc.Channel, _admin: str) -> Any:
        stub = channel.unary_unary(f"/{service}/{method}",
                                   request_serializer=type(request).SerializeToString,
                                   response_deserializer=lambda raw: raw)
        metadata = () if token is None else (("authorization", f"Bearer {token}"),)
        return stub(request, metadata=metadata, timeout=10)
    return call


def _admin_call(method: str, request: Any) -> GrpcCall:
    def call(channel: grpc.Channel, admin: str) -> Any:
        return _unary(wire.ADMIN_SERVICE, method, request, admin)(channel, admin)
    return call


def _subscribe(token: str) -> GrpcCall:
    def call(channel: grpc.Channel, _admin: str) -> Any:
        stub = channel.unary_stream(f"/{wire.BOT_SERVICE}/Subscribe",
                                    request_serializer=pb.SubscribeRequest.SerializeToString,
                                    response_deserializer=lambda raw: raw)
        return list(stub(pb.SubscribeRequest(), metadata=(("authorization", f"Bearer {token}"),),
                         timeout=10))
    return call


CASES: list[tuple[type[Exception], GrpcCall, tuple[str, str, bool]]] = [
    (NotAuthenticatedError, _subscribe("seat_not-a-token"),
     ("GET", "/api/play/poll?wait_ms=0", False)),
    (NotAdminError, _unary(wire.ADMIN_SERVICE, "RegisterBot", pb.RegisterBotRequest(name="x"),
                           "not-the-admin"),
     ("POST", "/api/admin/bots/x/version", False)),
    (UnknownBotNameError, _admin_call("NewBotVersion", pb.NewBotVersionRequest(name="zed")),
     ("POST", "/api/admin/bots/zed/version", True)),
    (UnknownMatchError, _unary(wire.LADDER_SERVICE, "GetReplay",
                               pb.GetReplayRequest(match_id="nope"), None),
     ("GET", "/api/matches/nope/replay", False)),
    (UnknownGameError, _unary(wire.LADDER_SERVICE, "GetLeaderboard",
                              pb.GetLeaderboardRequest(game="chess"), None),
     ("GET", "/api/leaderboard?game=chess", False)),
]
"""Each refusal: its type, how to meet it over gRPC, and over HTTP (method, path, whether
with the admin token; otherwise with a token the server does not know)."""


@pytest.mark.parametrize(("error", "over_grpc", "over_http"), CASES,
                         ids=[case[0].__name__ for case in CASES])
def test_a_refusal_answers_as_the_table_says_on_both_transports(
        server: ServerProcess, error: type[Exception], over_grpc: GrpcCall,
        over_http: tuple[str, str, bool]) -> None:
    """The gRPC status, and the HTTP status and code, are the table's row for the error."""
    row = status_of(error.__new__(error))
    assert row is not None
    admin = server.admin_token()
    with grpc.insecure_channel(server.address) as channel, \
            pytest.raises(grpc.RpcError) as refused:
        over_grpc(channel, admin)
    assert refused.value.code() == row.grpc, refused.value.details()
    method, path, as_admin = over_http
    token = admin if as_admin else "not-a-known-token"
    answer = httpx.request(method, server.http + path, timeout=10,
                           headers={"Authorization": f"Bearer {token}"})
    assert (answer.status_code, answer.json()["error"]["code"]) == (row.http, row.code), \
        answer.text


def test_illegal_and_malformed_answers_get_one_reason_on_both_transports(
        server: ServerProcess) -> None:
    """A card not in the hand is ILLEGAL_ACTION and a row answering a card decision is
    MALFORMED_ACTION, over the Play stream and over HTTP, as REJECT_REASONS says."""
    match = server.create_match("six_nimmt", 2, "--house", "1=greedy",
                                "--setting", "deadline_ms=60000")
    token = match.tokens[0]
    assert token is not None
    tries: dict[type[ActionError], tuple[pb.Action, dict[str, int]]] = {
        IllegalActionError: (pb.Action(card=10_000), {"card": 10_000}),
        MalformedActionError: (pb.Action(row=1), {"row": 1})}
    grpc_reasons: dict[type[ActionError], str] = {}
    http_reasons: dict[type[ActionError], str] = {}

    async def answer_both_ways() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel, \
                httpx.AsyncClient(base_url=server.http, timeout=10,
                                  headers={"Authorization": f"Bearer {token}"}) as http:
            client = SeatClient(channel, token)
            client.join()
            decision = await client.next("decision")
            for error, (action, as_json) in tries.items():
                client.answer(decision.decision_id, action)
                rejected = await client.next("rejected")
                grpc_reasons[error] = pb.RejectReason.Name(rejected.reason)
                verdict = (await http.post("/api/play/answer", json={
                    "decision_id": decision.decision_id, "action": as_json})).json()
                http_reasons[error] = verdict["rejected"]["reason"]
            client.close()

    asyncio.run(answer_both_ways())
    expected = {error: pb.RejectReason.Name(REJECT_REASONS[error]) for error in tries}
    assert grpc_reasons == expected and http_reasons == expected
