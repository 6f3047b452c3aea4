"""An answer must set the ``Action`` field of its decision's kind: ``card`` for PLAY_CARD and
DRAFT_CARD, ``row`` for CHOOSE_ROW, ``word`` for TAKE_OR_PASS and REVEAL_HIDDEN_CARD. Any
other field is rejected in-band as MALFORMED_ACTION with a message naming the field expected,
whatever its value (a ``row`` 2 answering PLAY_CARD does not play card 2), over gRPC and HTTP,
and the decision stays open for a right answer. Real servers, every decision kind."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import httpx
import pytest

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.transports.http.proto_json import to_json
from tests.seat_client import SeatClient
from tests.serving import ServerProcess

MATCHES = [
    # The professional variant drafts (DRAFT_CARD), then plays (PLAY_CARD); playing the
    # lowest card soon falls below every row's end (CHOOSE_ROW).
    ("six_nimmt", ["--seats", "2", "--house", "1=greedy", "--setting", "variant=professional",
                   "--setting", "rounds=1"],
     {"DECISION_KIND_DRAFT_CARD", "DECISION_KIND_PLAY_CARD", "DECISION_KIND_CHOOSE_ROW"}),
    # A seat holding a hidden card is asked to reveal it before its turn's take or pass.
    ("no_thanks", ["--seats", "3", "--house", "1=random", "--house", "2=random", "--setting",
                   "hidden_card=true"],
     {"DECISION_KIND_REVEAL_HIDDEN_CARD", "DECISION_KIND_TAKE_OR_PASS"}),
]
FIELDS = ("card", "row", "word")
WRONG_VALUE: dict[str, Any] = {"card": 2, "row": 1, "word": "take"}
"""A value of each field that would be legal somewhere, so only the field is wrong."""


def create(server: ServerProcess, game: str, args: list[str]) -> str:
    """A match of ``game`` with seat 0 for the test (a minute per decision); its token."""
    seats = int(args[args.index("--seats") + 1])
    rest = [a for i, a in enumerate(args) if a != "--seats" and args[i - 1] != "--seats"]
    match = server.create_match(game, seats, *rest, "--setting", "deadline_ms=60000")
    token = match.tokens[0]
    assert token is not None
    return token


def right_action(kind: str, legal: list[dict[str, Any]]) -> dict[str, Any]:
    """A legal answer: the lowest card, the first row or word (``pass`` when it may)."""
    if kind == "DECISION_KIND_TAKE_OR_PASS" and {"word": "pass"} in legal:
        return {"word": "pass"}
    if "card" in legal[0]:
        return {"card": min(a["card"] for a in legal)}
    return legal[0]


def check_rejection(verdict: dict[str, Any], kind: str, field: str) -> None:
    """``verdict`` rejects a ``field`` answer to a ``kind`` decision as malformed, naming the
    field that kind takes."""
    expected = {"DECISION_KIND_PLAY_CARD": "card", "DECISION_KIND_DRAFT_CARD": "card",
                "DECISION_KIND_CHOOSE_ROW": "row", "DECISION_KIND_TAKE_OR_PASS": "word",
                "DECISION_KIND_REVEAL_HIDDEN_CARD": "word"}[kind]
    assert "rejected" in verdict, (kind, field, verdict)
    assert verdict["rejected"]["reason"] == "REJECT_REASON_MALFORMED_ACTION"
    message = verdict["rejected"]["message"]
    assert f"'{expected}'" in message and f"'{field}'" in message and kind in message, message


@pytest.mark.parametrize(("game", "args", "kinds"), MATCHES, ids=[m[0] for m in MATCHES])
def test_a_wrong_action_field_is_malformed_over_grpc(server: ServerProcess, game: str,
                                                     args: list[str], kinds: set[str]) -> None:
    """Over the Play stream, every wrong field of every decision kind is MALFORMED_ACTION
    naming the right field; the right field then is accepted."""
    token = create(server, game, args)

    async def body() -> set[str]:
        tried: set[str] = set()
        async with grpc.aio.insecure_channel(server.address) as channel:
            client = SeatClient(channel, token)
            client.join()
            while True:
                message = await client.read()
                assert message is not None
                which = message.WhichOneof("body")
                if which == "match_ended":
                    client.close()
                    return tried
                if which != "decision":
                    continue
                request = to_json(message.decision)
                kind, did = request["kind"], request["decision_id"]
                if kind not in tried:
                    tried.add(kind)
                    right = next(iter(right_action(kind, request["legal"])))
                    for field in FIELDS:
                        if field == right:
                            continue
                        client.answer(did, pb.Action(**{field: WRONG_VALUE[field]}))
                        rejected = await client.next("rejected")
                        check_rejection({"rejected": to_json(rejected)}, kind, field)
                client.answer(did, pb.Action(**right_action(kind, request["legal"])))
                assert (await client.next("accepted")).decision_id == did

    assert asyncio.run(body()) == kinds


@pytest.mark.parametrize(("game", "args", "kinds"), MATCHES, ids=[m[0] for m in MATCHES])
def test_a_wrong_action_field_is_malformed_over_http(server: ServerProcess, game: str,
                                                     args: list[str], kinds: set[str]) -> None:
    """Over HTTP play (long-poll and POST), the same: every wrong field of every decision
    kind is MALFORMED_ACTION naming the right field; the right field then is accepted."""
    token = create(server, game, args)
    tried: set[str] = set()
    headers = {"Authorization": f"Bearer {token}"}
    after: int | None = None
    with httpx.Client(base_url=server.http, headers=headers, timeout=60) as client:
        while True:
            params: dict[str, Any] = {"wait_ms": 20_000}
            if after is not None:
                params["after"] = after
            polled = client.get("/api/play/poll", params=params).json()
            for message in polled["messages"]:
                after = message["seq"]
                if "match_ended" in message:
                    assert tried == kinds
                    return
                if "decision" not in message:
                    continue
                request = message["decision"]
                kind, did = request["kind"], request["decision_id"]
                right = right_action(kind, request["legal"])
                if kind not in tried:
                    tried.add(kind)
                    for field in FIELDS:
                        if field in right:
                            continue
                        verdict = client.post("/api/play/answer", json={
                            "decision_id": did, "action": {field: WRONG_VALUE[field]}}).json()
                        check_rejection(verdict, kind, field)
                verdict = client.post("/api/play/answer", json={"decision_id": did,
                                                                "action": right}).json()
                assert verdict == {"accepted": {"decision_id": did}}
            assert not polled["closed"]
