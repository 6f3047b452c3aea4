"""The protobuf adapters the server runs for every message: a request carries exactly the
referee's observation, the messages the server writes as bytes (bullring.contract.codec) are
the bytes protobuf writes, a batch put together from bytes is the batch protobuf would write,
and every public event is a typed message that carries its engine event exactly."""

from __future__ import annotations

import importlib
import random
from typing import Any

import pytest

from bullring.contract import codec, messages, wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee import no_thanks, six_nimmt
from bullring.referee.core import Decision, DecisionKind
from bullring.referee.registry import get_game

GAMES = [("six_nimmt", 2, {}), ("six_nimmt", 5, {"variant": "professional"}),
         ("no_thanks", 3, {}), ("no_thanks", 4, {"hidden_card": "true", "tens_out": "true"})]


def _playout(game: str, seats: int, settings: dict[str, Any], seed: int) -> Any:
    """Every (observation, events) of a random game, decision point by decision point."""
    state = get_game(game).new_state(seats, settings, seed)
    rng = random.Random(seed)
    events: list[Any] = list(state.opening)
    while not state.over:
        observations = [state.observation(seat) for seat in state.pending]
        yield observations, events
        events = state.apply({o.decision.seat: rng.choice(o.decision.legal)
                              for o in observations})
    yield [], events


@pytest.mark.parametrize(("game", "seats", "settings"), GAMES)
def test_a_request_carries_the_observation_exactly(game: str, seats: int,
                                                   settings: dict[str, Any]) -> None:
    """Every observation of random games comes back unchanged from its DecisionRequest,
    and the PlayResponse the server writes as bytes is protobuf's, byte for byte."""
    for seed in range(3):
        for step, (observations, _) in enumerate(_playout(game, seats, settings, seed)):
            for o in observations:
                request = wire.observation_to_request(o, f"m:{step}", 250)
                assert wire.observation_from_request(request) == o
                assert (request.decision_id, request.time_left_ms) == (f"m:{step}", 250)
                assert codec.play_bytes(messages.Request(f"m:{step}", o, 250)) == \
                    pb.PlayResponse(decision=request).SerializeToString()


def test_a_batch_from_bytes_is_the_batch_protobuf_writes() -> None:
    """``codec.batch`` equals appending the messages to a batch and serializing it, for
    messages small and large (lengths that take one and two varint bytes)."""
    messages = [pb.PlayResponse(accepted=pb.AnswerAccepted(decision_id="m:1:0")),
                pb.PlayResponse(event=wire.event_to_proto(six_nimmt.RoundStarted(
                    0, tuple((c,) * 30 for c in range(4))))),
                pb.PlayResponse(match_ended=pb.MatchEnded(totals=[1, 2], ranks=[1, 2]))]
    batch = pb.PlayResponse()
    batch.batch.messages.extend(messages)
    raw = codec.batch([m.SerializeToString() for m in messages])
    assert raw == batch.SerializeToString()
    assert list(wire.unbatch(pb.PlayResponse.FromString(raw))) == messages


@pytest.mark.parametrize(("game", "seats", "settings"), GAMES)
def test_an_event_is_typed_and_written_as_protobuf_writes_it(
        game: str, seats: int, settings: dict[str, Any]) -> None:
    """Each public event of random games comes back unchanged from its typed PublicEvent,
    and the bytes the server writes for it are protobuf's."""
    seen: set[str] = set()
    for seed in range(3):
        for _, events in _playout(game, seats, settings, seed):
            for event in events:
                message = wire.event_to_proto(event)
                assert message.WhichOneof("game") == game
                assert wire.event_from_proto(message) == event
                seen.add(wire.event_type(message))
                sent = messages.Event(event)
                assert codec.play_bytes(sent) == \
                    pb.PlayResponse(event=message).SerializeToString()
                assert codec.watch_bytes(sent) == \
                    pb.WatchResponse(event=message).SerializeToString()
    assert {"RoundStarted", "RoundEnded", "GameEnded"} <= seen


def test_every_event_message_has_the_engine_event_fields() -> None:
    """Each engine event class maps to a message of its game whose fields are the event's
    fields, in order, numbered from 1: nothing an engine publishes is left off the wire."""
    for module in (six_nimmt, no_thanks):
        spec = get_game(module.__name__.rsplit(".", 1)[1])
        assert set(spec.events) == set(module.Event.__args__), module.__name__
        for cls in spec.events:
            event: Any = cls
            assert getattr(importlib.import_module(f"bullring.referee.{spec.id}"),
                           event.__name__) is event
            message = wire.event_message(cls)
            assert [(f.name, f.number) for f in message.fields] == \
                [(field, n) for n, field in enumerate(event._fields, 1)]


@pytest.mark.parametrize(("game", "seats", "settings"), GAMES)
def test_settings_are_typed_and_every_setting_has_a_field(
        game: str, seats: int, settings: dict[str, Any]) -> None:
    """A match's settings, every declared one, travel as MatchSettings and come back
    unchanged; the game's field names match its declared settings exactly."""
    spec = get_game(game)
    parsed = spec.new_state(seats, settings, 0).settings
    message = wire.settings_to_proto(parsed, game)
    assert message.WhichOneof("game") == game
    assert wire.settings_from_proto(message) == parsed
    declared = {s.name for s in spec.settings}
    fields = {f.name for f in pb.MatchSettings.DESCRIPTOR.fields if f.name != game} - \
        {f.name for f in pb.MatchSettings.DESCRIPTOR.oneofs_by_name["game"].fields}
    typed: Any = pb.MatchSettings.DESCRIPTOR.fields_by_name[game].message_type
    assert declared == fields | {f.name for f in typed.fields}


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**31 - 1, -1, -130, -2**31])
def test_a_number_is_written_as_protobuf_writes_it(value: int) -> None:
    """Every int32, negative ones too (ten bytes), alone, in a packed list and in the card
    lists (a 6 nimmt! observation writes cards below 128 a quicker way); a verdict is
    protobuf's too."""
    cards = [value, 5, value]
    expected = pb.PlayResponse(decision=pb.DecisionRequest(
        decision_id="m:1:0", kind=pb.DECISION_KIND_PLAY_CARD, time_left_ms=value,
        six_nimmt=pb.SixNimmtObservation(round=value, hand=cards, totals=[value],
                                         trick_plays=pb.Cards())))
    empty = six_nimmt.Observation(0, 0, 0, (), (), (), (), (), (), None, (),
                                  Decision(0, DecisionKind.PLAY_CARD, ()))
    observation = empty._replace(round=value, hand=tuple(cards), totals=(value,))
    assert codec.play_bytes(messages.Request("m:1:0", observation, value)) == \
        expected.SerializeToString()
    in_lists = pb.PlayResponse(decision=pb.DecisionRequest(
        decision_id="m:1:0", kind=pb.DECISION_KIND_PLAY_CARD,
        six_nimmt=pb.SixNimmtObservation(rows=[pb.Cards(cards=cards)],
                                         revealed=[pb.Cards(cards=[value])],
                                         trick_plays=pb.Cards(cards=[value]), pool=[value])))
    listed = empty._replace(rows=(tuple(cards),), revealed=((value,),), trick_plays=(value,),
                            pool=(value,))
    assert codec.play_bytes(messages.Request("m:1:0", listed, 0)) == \
        in_lists.SerializeToString()
    assert codec.play_bytes(messages.Accepted(f"m:{value}:0")) == pb.PlayResponse(
        accepted=pb.AnswerAccepted(decision_id=f"m:{value}:0")).SerializeToString()
