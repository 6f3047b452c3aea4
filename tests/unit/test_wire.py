"""The protobuf adapters the server runs for every message: a request carries exactly the
referee's observation, the messages the server writes as bytes (server/outgoing.py) are the
bytes protobuf writes, a batch put together from bytes is the batch protobuf would write,
and an event's JSON is the compact JSON of its fields."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from client_sdk import wire
from client_sdk.generated.bullring.v1 import referee_pb2 as pb
from referee import six_nimmt
from referee.core import Decision, DecisionKind
from referee.registry import get_game
from server import outgoing

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
                assert outgoing.decision(o, f"m:{step}", 250) == \
                    pb.PlayResponse(decision=request).SerializeToString()


def test_a_batch_from_bytes_is_the_batch_protobuf_writes() -> None:
    """``outgoing.batch`` equals appending the messages to a batch and serializing it, for
    messages small and large (lengths that take one and two varint bytes)."""
    messages = [pb.PlayResponse(accepted=pb.AnswerAccepted(decision_id="m:1:0")),
                pb.PlayResponse(event=pb.PublicEvent(type="T", json="{}" * 100)),
                pb.PlayResponse(match_ended=pb.MatchEnded(totals=[1, 2], ranks=[1, 2]))]
    batch = pb.PlayResponse()
    batch.batch.messages.extend(messages)
    raw = outgoing.batch([m.SerializeToString() for m in messages])
    assert raw == batch.SerializeToString()
    assert list(wire.unbatch(pb.PlayResponse.FromString(raw))) == messages


@pytest.mark.parametrize(("game", "seats", "settings"), GAMES)
def test_an_event_is_the_compact_json_of_its_fields(game: str, seats: int,
                                                    settings: dict[str, Any]) -> None:
    """Each public event's JSON is ``json.dumps`` of its fields with compact separators."""
    for _, events in _playout(game, seats, settings, 1):
        for event in events:
            message = wire.event_to_proto(event)
            assert message.type == type(event).__name__
            assert message.json == json.dumps(event._asdict(), separators=(",", ":"))
            public = outgoing.public_event(event)
            assert public == message.SerializeToString()
            assert outgoing.play_event(public) == \
                pb.PlayResponse(event=message).SerializeToString()


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
    assert outgoing.decision(observation, "m:1:0", value) == expected.SerializeToString()
    in_lists = pb.PlayResponse(decision=pb.DecisionRequest(
        decision_id="m:1:0", kind=pb.DECISION_KIND_PLAY_CARD,
        six_nimmt=pb.SixNimmtObservation(rows=[pb.Cards(cards=cards)],
                                         revealed=[pb.Cards(cards=[value])],
                                         trick_plays=pb.Cards(cards=[value]), pool=[value])))
    listed = empty._replace(rows=(tuple(cards),), revealed=((value,),), trick_plays=(value,),
                            pool=(value,))
    assert outgoing.decision(listed, "m:1:0", 0) == in_lists.SerializeToString()
    assert outgoing.accepted(f"m:{value}:0") == pb.PlayResponse(
        accepted=pb.AnswerAccepted(decision_id=f"m:{value}:0")).SerializeToString()
