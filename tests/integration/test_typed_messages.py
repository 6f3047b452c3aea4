"""The runner speaks no wire format: what a match puts in a seat's and a spectator's outbox
is typed messages (``bullring.contract.messages``), and HTTP and the spectators' paths
encode those themselves, never parsing bytes another part wrote."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from bullring.contract import codec
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.contract.messages import (
    Accepted,
    Closed,
    Ended,
    Event,
    Message,
    Queued,
    Rejected,
    Request,
    Started,
)
from bullring.referee.core import DecisionKind
from bullring.referee.registry import get_game
from bullring.server.match.outbox import Outbox
from bullring.server.match.runner import MatchRunner
from bullring.server.store import MatchConfig
from bullring.server.transports.http.proto_json import play_json, to_json

ROOT = Path(__file__).resolve().parents[2]
PARSERS = {"FromString", "ParseFromString", "MergeFromString"}
"""The protobuf calls that read bytes into a message."""


async def _nothing(_replay: dict[str, Any]) -> None:
    return None


def _runner(game: str) -> MatchRunner:
    """A 2-seat match of ``game``: seat 0 for the test, seat 1 a house bot."""
    given = {"deadline_ms": 5000, **({"two_seats": "true"} if game == "no_thanks" else {})}
    settings = get_game(game).new_state(2, given, 0).settings
    config = MatchConfig(f"typed-{game}", game, dict(settings), 11, ("test", "house"),
                         {1: "random"}, "created")
    return MatchRunner(config, _nothing)


async def _play(runner: MatchRunner, seat: Outbox, spectator: Outbox
                ) -> tuple[list[Any], list[Any]]:
    """Play seat 0 (first legal action each time) to the end; every item each outbox
    held, in order."""
    task = asyncio.create_task(runner.run())
    taken: list[Any] = []
    while (item := await seat.get()) is not None:
        taken.append(item)
        if isinstance(item, Request):
            decision = item.observation.decision
            field = "word" if decision.kind in (DecisionKind.TAKE_OR_PASS,
                                                DecisionKind.REVEAL_HIDDEN_CARD) else \
                "row" if decision.kind == DecisionKind.CHOOSE_ROW else "card"
            runner.submit(0, item.decision_id, decision.legal[0], field=field)
            runner.settle()
    await task
    watched = []
    while (item := await spectator.get()) is not None:
        watched.append(item)
    return taken, watched


@pytest.mark.parametrize("game", ["six_nimmt", "no_thanks"])
def test_a_match_puts_only_typed_messages_in_its_outboxes(game: str) -> None:
    """A whole match, seen by a seat and a spectator: every message is a typed message,
    none is bytes; the seat's start with MatchStarted and ends with MatchEnded, and every
    public event the spectator gets is the very object the seat got (encoded once)."""
    async def scenario() -> tuple[list[Any], list[Any]]:
        runner = _runner(game)
        spectator = runner.feed.watch()
        seat, _ = runner.attach(0)
        return await _play(runner, seat, spectator)

    taken, watched = asyncio.run(scenario())
    assert all(isinstance(item, Message) for item in taken + watched)
    assert isinstance(taken[0], Started) and isinstance(taken[-1], Ended)
    assert any(isinstance(item, Request) for item in taken)
    seat_events = [item for item in taken if isinstance(item, Event)]
    spectator_events = [item for item in watched if isinstance(item, Event)]
    assert [id(e) for e in seat_events] == [id(e) for e in spectator_events]
    assert isinstance(watched[-1], Ended) and watched[-1] is taken[-1]


def _parse_calls(path: Path) -> list[tuple[int, str]]:
    """Every call of a protobuf parser in ``path``: its line and the code."""
    tree = ast.parse(path.read_text())
    return [(node.lineno, ast.unparse(node)) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in PARSERS]


def test_http_and_the_spectators_paths_parse_no_message_bytes() -> None:
    """No module of the HTTP transport, and neither the gRPC servicers (the spectators'
    Watch among them) nor the match's own modules, calls a protobuf parser: they get typed
    messages and encode them. The one parse in the HTTP transport reads the proto's
    descriptor set (the OpenAPI document's schemas), not a message."""
    folders = [ROOT / "server" / "transports" / "http", ROOT / "server" / "match"]
    files = [f for folder in folders for f in sorted(folder.glob("*.py"))]
    files.append(ROOT / "server" / "transports" / "grpc" / "servicers.py")
    found = {str(f.relative_to(ROOT)): [code for _, code in calls]
             for f in files if (calls := _parse_calls(f))}
    assert found == {"server/transports/http/proto_schema.py": [
        "files.ParseFromString((folder / DESCRIPTORS).read_bytes())"]}


def test_the_json_of_a_typed_message_is_the_json_of_its_grpc_bytes() -> None:
    """For every kind of message a seat gets, the HTTP edge's JSON equals protobuf's JSON
    of the bytes the gRPC edge writes: one message, two encodings that agree."""
    async def scenario() -> list[Any]:
        runner = _runner("no_thanks")
        spectator = runner.feed.watch()
        seat, _ = runner.attach(0)
        taken, _ = await _play(runner, seat, spectator)
        return taken

    taken = asyncio.run(scenario())
    for item in taken:
        assert play_json(item) == to_json(pb.PlayResponse.FromString(codec.play_bytes(item)))


def _values(message: Message, unread: str | None = None) -> tuple[Any, ...]:
    """A message's values, without the encodings kept on it (nor the field ``unread``)."""
    return tuple(getattr(message, f.name) for f in dataclasses.fields(message)
                 if f.name not in ("encoded", "watched", unread))


@pytest.mark.parametrize("game", ["six_nimmt", "no_thanks"])
def test_a_relayed_message_reads_back_as_the_message_it_was(game: str) -> None:
    """Every kind of message a seat gets, as gRPC bytes, reads back (``codec.play_message``,
    what a server relaying a seat of a match run elsewhere does) into a message of the same
    type and values, but for a request's observation and an event's engine event, left
    unread; it keeps the bytes it was read from, so the gRPC edge writes them as they came,
    and its JSON for HTTP is the JSON of the message it was."""
    async def scenario() -> list[Any]:
        runner = _runner(game)
        spectator = runner.feed.watch()
        seat, _ = runner.attach(0)
        taken, _ = await _play(runner, seat, spectator)
        return taken

    taken = asyncio.run(scenario())
    taken += [Accepted("m:1:0"), Rejected("m:1:0", pb.REJECT_REASON_ILLEGAL_ACTION, "no card 7"),
              Queued(game, "ann", "the ladder waits for 2 more bots"),
              Closed(pb.CLOSE_REASON_REPLACED, "replaced by a newer connection")]
    assert {type(item) for item in taken} == {Started, Request, Event, Ended, Accepted,
                                              Rejected, Queued, Closed}
    for item in taken:
        data = codec.play_bytes(item)
        read = codec.play_message(data)
        unread = {Request: "observation", Event: "event"}.get(type(item))
        assert type(read) is type(item), item
        assert _values(read, unread) == _values(item, unread), item
        if unread:
            assert getattr(read, unread) is None
        assert read.encoded is data
        assert play_json(read) == play_json(item)


def test_bytes_that_are_not_one_message_are_refused() -> None:
    """A batch, an empty PlayResponse and bytes that are no protobuf are ValueErrors."""
    batch = codec.batch([codec.play_bytes(Accepted("a")), codec.play_bytes(Accepted("b"))])
    for data in (batch, b"", b"\xff\xff\xff"):
        with pytest.raises(ValueError):
            codec.play_message(data)
