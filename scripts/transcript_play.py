"""How scripts/protocol_transcript.py plays and records a seat: the match it plays, the
seat's choices (its lowest card, the row with the fewest bullheads), and one seat's whole
match over gRPC or over HTTP long-poll, message by message."""

from __future__ import annotations

import json
import queue
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict, ParseDict

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.six_nimmt import BULLHEADS

SEED = 3
"""The seed of the transcribed matches: seat 0's lowest card is below every row end in the
first trick, so the transcript shows a row choice at once."""
MATCH = {"game": "six_nimmt", "seats": 2, "house": {"1": "greedy"}, "seed": SEED,
         "settings": {"deadline_ms": "60000", "rounds": "1"}}
"""The transcribed match, as the admin API creates it: one round, and a deadline no slow
machine can miss, so every run plays the same match."""

Line = tuple[str, str]
"""One line of a transcript: its direction ("→" sent by the bot, "←" received) and text."""


def proto_json(message: Any) -> dict[str, Any]:
    body: dict[str, Any] = MessageToDict(message, preserving_proto_field_name=True,
                                         always_print_fields_with_no_presence=True)
    tidied: dict[str, Any] = tidy(body)
    return tidied


def tidy(value: Any) -> Any:
    """``value`` with every ``settings`` map in name order (a map's order is arbitrary)."""
    if isinstance(value, list):
        return [tidy(v) for v in value]
    if not isinstance(value, dict):
        return value
    return {k: dict(sorted(v.items())) if k == "settings" and isinstance(v, dict) else tidy(v)
            for k, v in value.items()}


def choose(request: pb.DecisionRequest) -> pb.Action:
    if request.kind == pb.DECISION_KIND_CHOOSE_ROW:
        rows = [list(r.cards) for r in request.six_nimmt.rows]
        best = min((a.row for a in request.legal), key=lambda r: sum(BULLHEADS[c] for c in rows[r]))
        return pb.Action(row=best)
    if request.kind == pb.DECISION_KIND_PLAY_CARD:
        return pb.Action(card=min(a.card for a in request.legal))
    action: pb.Action = request.legal[0]
    return action


def answer_to(response: pb.PlayResponse) -> pb.PlayRequest | None:
    """The answer the transcript's bot sends to ``response``, if it is a decision."""
    if response.WhichOneof("body") != "decision":
        return None
    decision = response.decision
    return pb.PlayRequest(answer=pb.Answer(decision_id=decision.decision_id,
                                           action=choose(decision)))


def ended(response: pb.PlayResponse) -> bool:
    if response.WhichOneof("body") == "batch":
        return any(ended(m) for m in response.batch.messages)
    return bool(response.WhichOneof("body") == "match_ended")


def play_grpc(server: str, token: str, record: Callable[[str, Any], None],
              batches: bool = False) -> None:
    """Play the seat ``token`` names to the end of its match over ``BotService.Play``,
    telling ``record`` each message sent ("send") and received ("recv")."""
    outbox: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()

    def requests() -> Iterator[pb.PlayRequest]:
        while (message := outbox.get()) is not None:
            record("send", message)
            yield message

    with grpc.insecure_channel(server) as channel:
        play = channel.stream_stream(wire.PLAY,
                                     request_serializer=pb.PlayRequest.SerializeToString,
                                     response_deserializer=pb.PlayResponse.FromString)
        outbox.put(pb.PlayRequest(join=pb.Join(client="protocol_transcript",
                                               accept_batches=batches)))
        for response in play(requests(), metadata=(("authorization", f"Bearer {token}"),)):
            record("recv", response)
            inner = list(response.batch.messages) if response.WhichOneof("body") == "batch" \
                else [response]
            for message in inner:
                answer = answer_to(message)
                if answer is not None:
                    outbox.put(answer)
            if ended(response):
                outbox.put(None)


def grpc_transcript(server: str, token: str, batches: bool = False) -> list[Line]:
    """The lines of one seat's whole match over gRPC."""
    lines: list[Line] = []

    def record(direction: str, message: Any) -> None:
        lines.append(("→" if direction == "send" else "←", json.dumps(proto_json(message))))

    play_grpc(server, token, record, batches)
    return lines


def request(method: str, url: str, token: str | None, body: dict[str, Any] | None = None
             ) -> urllib.request.Request:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    return urllib.request.Request(url, data=data, method=method, headers=headers)


def call(method: str, url: str, token: str | None, body: dict[str, Any] | None = None
          ) -> tuple[int, Any]:
    """The status and JSON body of one HTTP request (an error status too)."""
    try:
        with urllib.request.urlopen(request(method, url, token, body), timeout=60) as response:
            return response.status, tidy(json.loads(response.read()))
    except urllib.error.HTTPError as error:
        return error.code, tidy(json.loads(error.read()))


def http(method: str, url: str, token: str | None, body: dict[str, Any] | None = None
          ) -> dict[str, Any]:
    status, answer = call(method, url, token, body)
    if status >= 400:
        raise RuntimeError(f"{method} {url}: {status} {answer}")
    result: dict[str, Any] = answer
    return result


def http_transcript(base: str, token: str) -> list[Line]:
    """The lines of one seat's whole match over HTTP long-poll: each request, then the
    messages it got (one per line)."""
    lines: list[Line] = []
    after: int | None = None
    while True:
        path = "/api/play/poll" if after is None else f"/api/play/poll?after={after}"
        lines.append(("→", f"GET {path}"))
        result = http("GET", base + path, token)
        lines.append(("←", '{"messages": ['))
        lines.extend(("", "  " + json.dumps(tidy(m))) for m in result["messages"])
        lines.append(("", f'], "closed": {json.dumps(result["closed"])}}}'))
        for message in result["messages"]:
            after = message["seq"]
            if "decision" in message:
                response = pb.PlayResponse(decision=ParseDict(message["decision"],
                                                              pb.DecisionRequest()))
                answer = answer_to(response)
                assert answer is not None
                body = proto_json(answer.answer)
                lines.append(("→", f"POST /api/play/answer {json.dumps(body)}"))
                lines.append(("←", json.dumps(http("POST", base + "/api/play/answer", token,
                                                    body))))
            if "match_ended" in message or result["closed"]:
                return lines


