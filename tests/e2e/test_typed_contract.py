"""One typed contract: no string on the wire carries JSON. The proto has no JSON-ish string
field, no string value of a real match's traffic (gRPC messages to a seat and a spectator,
HTTP poll and feed) parses as a JSON object or list, and the OpenAPI document names the
schema of the decision request, every event, the verdict and the poll and stream payloads,
with a description on every field, made from the same messages."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.registry import GAMES
from tests.seat_client import SeatClient
from tests.serving import ServerProcess

JSONISH = ("json", "payload", "blob")
"""Parts of a field name that say it carries an encoded document."""


def messages(descriptor: Any) -> Iterator[Descriptor]:
    """Every message type of a file or message descriptor, nested ones too."""
    for message in descriptor.message_types_by_name.values() if hasattr(
            descriptor, "message_types_by_name") else descriptor.nested_types:
        yield message
        yield from messages(message)


def carries_json(text: str) -> bool:
    """Whether ``text`` parses as a JSON object or list."""
    try:
        return isinstance(json.loads(text), dict | list)
    except ValueError:
        return False


def strings(message: Message) -> Iterator[tuple[str, str]]:
    """Every (field name, value) of a string field set anywhere inside ``message``."""
    for field, value in message.ListFields():
        values = value if field.is_repeated else [value]
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            values = list(value.values())
            for item in values:
                if isinstance(item, str):
                    yield field.name, item
                elif isinstance(item, Message):
                    yield from strings(item)
            continue
        for item in values:
            if field.type == FieldDescriptor.TYPE_STRING:
                yield field.name, item
            elif field.message_type is not None:
                yield from strings(item)


def json_strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)


def test_no_string_field_of_the_proto_is_named_for_json() -> None:
    """No string field of any message in the contract is a JSON carrier by its name."""
    checked = 0
    for message in messages(pb.DESCRIPTOR):
        for field in message.fields:
            if field.type == FieldDescriptor.TYPE_STRING:
                checked += 1
                assert not any(part in field.name.lower() for part in JSONISH), \
                    f"{message.full_name}.{field.name}"
    assert checked > 20


def play_grpc(server: ServerProcess) -> tuple[list[pb.PlayResponse], list[pb.WatchResponse]]:
    """Seat 0 of a 6 nimmt! match over gRPC (lowest card, first row) while a spectator
    watches: every message each got."""
    match = server.create_match("six_nimmt", 3, "--house", "1=greedy", "--house", "2=random",
                                "--setting", "rounds=1")
    token = match.tokens[0]
    assert token is not None

    async def body() -> tuple[list[pb.PlayResponse], list[pb.WatchResponse]]:
        async with grpc.aio.insecure_channel(server.address) as channel:
            client = SeatClient(channel, token, batches=True)
            client.join()
            started = False
            watched: list[pb.WatchResponse] = []
            while (message := await client.read()) is not None:
                which = message.WhichOneof("body")
                if which == "match_started" and not started:
                    started = True
                if which == "decision":
                    request = message.decision
                    client.answer(request.decision_id, min(
                        request.legal, key=lambda a: (a.card, a.row)))
                if which == "match_ended":
                    break
            client.close()
            call = wire.watch_stub(channel)(pb.WatchRequest(match_id=match.match_id))
            async for item in call:
                watched.append(item)
            return client.seen, watched

    return asyncio.run(body())


def play_http(server: ServerProcess) -> list[Any]:
    """Seat 0 of a No Thanks! match over HTTP long-poll (first legal word) while a spectator
    reads the feed: every JSON payload each got."""
    match = server.create_match("no_thanks", 3, "--house", "1=random", "--house", "2=random",
                                "--setting", "hidden_card=true")
    token = match.tokens[0]
    got: list[Any] = []
    feed: list[Any] = []

    def spectate() -> None:
        with httpx.Client(base_url=server.http, timeout=60) as client, \
                client.stream("GET", f"/api/matches/{match.match_id}/feed") as response:
            for line in response.iter_lines():
                if line.startswith("data:"):
                    feed.append(json.loads(line[5:]))
                if line.startswith("event: match_ended"):
                    break

    with httpx.Client(base_url=server.http, timeout=60,
                      headers={"Authorization": f"Bearer {token}"}) as client:
        after: int | None = None
        spectator: threading.Thread | None = None
        while True:
            params: dict[str, Any] = {} if after is None else {"after": after}
            polled = client.get("/api/play/poll", params=params).json()
            got.append(polled)
            if spectator is None:
                spectator = threading.Thread(target=spectate)
                spectator.start()
            ended = False
            for message in polled["messages"]:
                after = message["seq"]
                if "decision" in message:
                    request = message["decision"]
                    got.append(client.post("/api/play/answer", json={
                        "decision_id": request["decision_id"],
                        "action": request["legal"][0]}).json())
                ended = ended or "match_ended" in message
            if ended:
                break
        spectator.join(60)
    return got + feed


def test_no_string_of_a_real_match_carries_json(server: ServerProcess) -> None:
    """Over gRPC (a seat and a spectator) and HTTP (long-poll, answers and the feed), no
    string value anywhere in a real match's traffic is a JSON object or list, and the
    events came typed."""
    seen, watched = play_grpc(server)
    kinds = {m.WhichOneof("body") for m in seen}
    assert {"match_started", "decision", "accepted", "event", "match_ended"} <= kinds
    assert len(watched) > 10 and watched[-1].WhichOneof("body") == "match_ended"
    for message in [*seen, *watched]:
        for name, value in strings(message):
            assert not carries_json(value), (name, value)
    payloads = play_http(server)
    events = [p for p in payloads if "event" in p] + \
        [m for p in payloads for m in p.get("messages", ()) if "event" in m]
    assert events and all(isinstance(e["event"]["no_thanks"], dict) for e in events)
    for payload in payloads:
        for value in json_strings(payload):
            assert not carries_json(value), value


def reachable(document: dict[str, Any], names: list[str]) -> dict[str, dict[str, Any]]:
    """The named schemas ``names`` and every named schema they refer to."""
    components = document["components"]["schemas"]
    found: dict[str, dict[str, Any]] = {}
    todo = list(names)

    def refs(value: Any) -> Iterator[str]:
        if isinstance(value, dict):
            if "$ref" in value:
                yield value["$ref"].rsplit("/", 1)[1]
            for item in value.values():
                yield from refs(item)
        elif isinstance(value, list):
            for item in value:
                yield from refs(item)

    while todo:
        name = todo.pop()
        if name not in found:
            found[name] = components[name]
            todo.extend(refs(components[name]))
    return found


def properties(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every property of a schema, inside allOf parts too."""
    yield from schema.get("properties", {}).items()
    for part in schema.get("allOf", ()):
        yield from properties(part)


def test_the_openapi_document_names_every_play_payload_with_described_fields(
        server: ServerProcess) -> None:
    """/openapi.json names the decision request, every event, the verdict, the poll result
    and the stream messages; every field of each (and of all they hold) has a description,
    none is a JSON-carrying string; the play routes list their specific error codes."""
    document = httpx.get(f"{server.http}/openapi.json").json()
    events = [wire.event_message(cls).name for spec in GAMES.values() for cls in spec.events]
    roots = ["DecisionRequest", "Verdict", "PollResult", "PollMessage", "PlayResponse",
             "WatchResponse", "PublicEvent", "AnswerIn", "ErrorBody", *events]
    schemas = reachable(document, roots)
    assert {"SixNimmtTrickResolved", "NoThanksTook", "MatchSettings", "Action"} <= set(schemas)
    for name, schema in schemas.items():
        assert schema.get("description"), name
        for field, prop in properties(schema):
            assert prop.get("description"), f"{name}.{field}"
            assert not any(part in field.lower() for part in JSONISH), f"{name}.{field}"
            assert "contentMediaType" not in prop, f"{name}.{field}"
    decision = schemas["DecisionRequest"]["properties"]
    assert decision["kind"]["$ref"].endswith("/DecisionKind")
    assert "DECISION_KIND_CHOOSE_ROW" in document["components"]["schemas"]["DecisionKind"]["enum"]
    paths = document["paths"]
    poll = paths["/api/play/poll"]["get"]["responses"]
    assert poll["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/PollResult")
    answer = paths["/api/play/answer"]["post"]["responses"]
    assert answer["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/Verdict")
    for path, message in (("/api/play/stream", "PlayResponse"),
                          ("/api/matches/{match_id}/feed", "WatchResponse")):
        event = paths[path]["get"]["responses"]["200"]["content"]["text/event-stream"]
        data = event["schema"]["properties"]["data"]  # each event: its name, data and id
        assert data["contentSchema"]["$ref"].endswith(f"/{message}"), (path, event)
        assert "match_ended" in event["schema"]["properties"]["event"]["enum"], (path, event)
    for status, code in (("401", "unauthorized"), ("404", "match_not_found"),
                         ("409", "match_over")):
        assert code in answer[status]["description"], (status, answer[status])
