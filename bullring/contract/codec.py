"""The typed messages of a match (``bullring.contract.messages``) as protobuf: the bytes a
gRPC stream writes, and the protobuf objects whose JSON the HTTP edge sends.

A request and a public event are written straight to bytes (``bullring.contract.protowrite``,
by plans read from the descriptors of the game's messages); the rarer messages are built as
protobuf objects and serialized. Either way the bytes are kept on the message, so one shared
by many connections is encoded once. ``play_message`` reads such bytes back into the typed
message, for a server that relays a seat whose match another server runs.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.contract.messages import (
    Accepted,
    Closed,
    Ended,
    Event,
    Outgoing,
    Queued,
    Rejected,
    Request,
    Started,
    Watched,
)
from bullring.contract.protowrite import Writer, delimited, message_writer, tag, varint
from bullring.referee.core import DecisionKind

_PLAY = {name: tag(field.number, 2)
         for name, field in pb.PlayResponse.DESCRIPTOR.fields_by_name.items()}
"""The key of each body of ``PlayResponse``."""
_WATCH_EVENT, _WATCH_ENDED = (tag(pb.WatchResponse.DESCRIPTOR.fields_by_name[name].number, 2)
                              for name in ("event", "match_ended"))
_REQUEST = {name: tag(field.number, 0 if field.message_type is None and not field.is_repeated
                      and field.type != field.TYPE_STRING else 2)
            for name, field in pb.DecisionRequest.DESCRIPTOR.fields_by_name.items()}
"""The key of each field of ``DecisionRequest``."""
_KIND = {kind: _REQUEST["kind"] + varint(number) for kind, number in wire.KIND_TO_PROTO.items()}
"""``DecisionRequest.kind`` for each decision kind."""
_ACTION = {name: field.number for name, field in pb.Action.DESCRIPTOR.fields_by_name.items()}
_NUMBERS = {name: [delimited(_REQUEST["legal"], tag(_ACTION[name], 0) + varint(v))
                   for v in range(256)] for name in ("card", "row")}
"""``DecisionRequest.legal`` entries holding card or row 0..255, encoded once."""
_ACCEPTED_ID = tag(pb.AnswerAccepted.DESCRIPTOR.fields_by_name["decision_id"].number, 2)
_BATCH_MESSAGE = tag(pb.PlayResponseBatch.DESCRIPTOR.fields_by_name["messages"].number, 2)
_SUBSCRIBED = tag(pb.SubscribeResponse.DESCRIPTOR.fields_by_name["message"].number, 2)

_observations: dict[type, tuple[bytes, Writer]] = {}
"""Each game's observation type: the key of its field in ``DecisionRequest``, and its
writer (made on first use, from the registered games)."""
_events: dict[type, tuple[bytes, bytes, Writer]] = {}
"""Each engine event type: the keys of its game's field in ``PublicEvent`` and of its own
field there, and its writer."""


def _observation(observation: Any) -> tuple[bytes, Writer]:
    kind = type(observation)
    found = _observations.get(kind)
    if found is None:
        game = wire.spec_of_observation(observation).id
        field = wire.game_field(pb.DecisionRequest(), game)
        message: Any = field.message_type
        found = _observations[kind] = (tag(field.number, 2),
                                       message_writer(message, kind._fields))
    return found


def _event(event: Any) -> tuple[bytes, bytes, Writer]:
    kind = type(event)
    found = _events.get(kind)
    if found is None:
        game, name = wire.event_field(kind)
        outer = wire.game_field(pb.PublicEvent(), game)
        holder: Any = outer.message_type
        inner = holder.fields_by_name[name]
        found = _events[kind] = (tag(outer.number, 2), tag(inner.number, 2),
                                 message_writer(inner.message_type, kind._fields))
    return found


def _legal(kind: DecisionKind, legal: tuple[Any, ...]) -> bytes:
    name = wire.ACTION_FIELD[kind]
    table = _NUMBERS.get(name)
    if table is not None and legal and min(legal) >= 0 and max(legal) < len(table):
        return b"".join([table[a] for a in legal])
    return b"".join([delimited(_REQUEST["legal"], wire.action_to_proto(kind, a)
                               .SerializeToString()) for a in legal])


def _request(message: Request) -> bytes:
    observation = message.observation
    decision = observation.decision
    key, write = _observation(observation)
    time_left = message.time_left_ms
    return b"".join([delimited(_REQUEST["decision_id"], message.decision_id.encode()),
                     _KIND[decision.kind], _legal(decision.kind, decision.legal),
                     _REQUEST["time_left_ms"] + varint(time_left) if time_left else b"",
                     delimited(key, write(observation))])


def _public_event(event: Any) -> bytes:
    """The ``PublicEvent`` of one engine event."""
    outer, inner, write = _event(event)
    return delimited(outer, delimited(inner, write(event)))


def play_bytes(message: Outgoing) -> bytes:
    """``message`` as a serialized PlayResponse (made once, then kept on it)."""
    encoded = message.encoded
    if encoded is None:
        if type(message) is Request:
            encoded = delimited(_PLAY["decision"], _request(message))
        elif type(message) is Event:
            encoded = delimited(_PLAY["event"], _public_event(message.event))
        elif type(message) is Accepted:
            encoded = delimited(_PLAY["accepted"],
                                delimited(_ACCEPTED_ID, message.decision_id.encode()))
        else:
            encoded = to_proto(message).SerializeToString()
        message.encoded = encoded
    return encoded


def watch_bytes(message: Watched) -> bytes:
    """``message`` (a public event or the end) as a serialized WatchResponse (made once,
    then kept on it)."""
    encoded = message.watched
    if encoded is None:
        if type(message) is Event:  # the same PublicEvent as the seats', under its own key
            encoded = _WATCH_EVENT + play_bytes(message)[len(_PLAY["event"]):]
        else:
            encoded = watch_proto(message).SerializeToString()
        message.watched = encoded
    return encoded


def size(message: Outgoing) -> int:
    """The bytes ``message`` takes on a seat's stream: what outboxes count."""
    return len(play_bytes(message))


def batch(messages: list[bytes]) -> bytes:
    """The PlayResponse batch of serialized PlayResponses, in order."""
    body = b"".join([_BATCH_MESSAGE + varint(len(m)) + m for m in messages])
    return _PLAY["batch"] + varint(len(body)) + body


def subscribed(message: bytes) -> bytes:
    """The SubscribeResponse carrying a serialized PlayResponse."""
    return _SUBSCRIBED + varint(len(message)) + message


def ended_proto(message: Ended) -> pb.MatchEnded:
    """``MatchEnded``."""
    return pb.MatchEnded(totals=message.totals, ranks=message.ranks,
                         termination=wire.TERMINATION.get(message.termination,
                                                          pb.TERMINATION_UNSPECIFIED))


def accepted_proto(message: Accepted) -> pb.AnswerAccepted:
    """``AnswerAccepted``."""
    return pb.AnswerAccepted(decision_id=message.decision_id)


def rejected_proto(message: Rejected) -> pb.AnswerRejected:
    """``AnswerRejected``."""
    reason: Any = message.reason
    return pb.AnswerRejected(decision_id=message.decision_id, reason=reason,
                             message=message.message)


def closed_proto(message: Closed) -> pb.Closed:
    """``Closed``."""
    reason: Any = message.reason
    return pb.Closed(reason=reason, message=message.message)


def to_proto(message: Outgoing) -> pb.PlayResponse:
    """``message`` as a PlayResponse object (for JSON, and for the rarer messages' bytes)."""
    relayed = (type(message) is Request and message.observation is None) or \
        (type(message) is Event and message.event is None)
    if relayed and message.encoded is not None:  # read by ``play_message``
        return pb.PlayResponse.FromString(message.encoded)
    if isinstance(message, Request):
        return pb.PlayResponse(decision=wire.observation_to_request(
            message.observation, message.decision_id, message.time_left_ms))
    if isinstance(message, Event):
        return pb.PlayResponse(event=wire.event_to_proto(message.event))
    if isinstance(message, Accepted):
        return pb.PlayResponse(accepted=accepted_proto(message))
    if isinstance(message, Rejected):
        return pb.PlayResponse(rejected=rejected_proto(message))
    if isinstance(message, Ended):
        return pb.PlayResponse(match_ended=ended_proto(message))
    if isinstance(message, Started):
        return pb.PlayResponse(match_started=pb.MatchStarted(
            match_id=message.match_id, game=message.game,
            settings=wire.settings_to_proto(message.settings, message.game), seat=message.seat,
            seat_names=message.seat_names, rated=message.rated))
    if isinstance(message, Queued):
        return pb.PlayResponse(ladder_queued=pb.LadderQueued(
            game=message.game, bot=message.bot, notice=message.notice))
    return pb.PlayResponse(closed=closed_proto(message))


def play_message(data: bytes) -> Outgoing:
    """The typed message a serialized PlayResponse carries (one message, not a batch), its
    encoding kept as ``data``: a server that relays a seat of a match run elsewhere writes
    the very bytes it received to a gRPC stream, and builds the JSON of the same values for
    HTTP (``to_proto``). A request's observation and an event's engine event are left
    unread (None): nothing on that server reads them but ``to_proto``, which takes them from
    ``data``, and reading them was most of the CPU a relayed seat cost it. ContractError (a
    ValueError) if ``data`` is not a PlayResponse with one known body."""
    try:
        response = pb.PlayResponse.FromString(data)
    except DecodeError as exc:
        raise wire.ContractError(f"not a PlayResponse: {exc}") from None
    body = response.WhichOneof("body")
    message: Outgoing
    if body == "decision":
        decision = response.decision
        message = Request(decision.decision_id, None, decision.time_left_ms)
    elif body == "event":
        message = Event(None)
    elif body == "accepted":
        message = Accepted(response.accepted.decision_id)
    elif body == "rejected":
        rejected = response.rejected
        message = Rejected(rejected.decision_id, int(rejected.reason), rejected.message)
    elif body == "match_ended":
        ended = response.match_ended
        message = Ended(tuple(ended.totals), tuple(ended.ranks),
                        wire.termination_name(ended.termination))
    elif body == "match_started":
        started = response.match_started
        message = Started(started.match_id, started.game,
                          wire.settings_from_proto(started.settings), started.seat,
                          tuple(started.seat_names), started.rated)
    elif body == "ladder_queued":
        queued = response.ladder_queued
        message = Queued(queued.game, queued.bot, queued.notice)
    elif body == "closed":
        message = Closed(int(response.closed.reason), response.closed.message)
    else:
        raise wire.ContractError(f"a PlayResponse with {body or 'no body'} is not one message")
    message.encoded = data
    return message


def watch_proto(message: Watched) -> pb.WatchResponse:
    """``message`` as a WatchResponse object."""
    if isinstance(message, Event):
        return pb.WatchResponse(event=wire.event_to_proto(message.event))
    return pb.WatchResponse(match_ended=ended_proto(message))


__all__ = ["accepted_proto", "batch", "closed_proto", "ended_proto", "play_bytes", "play_message",
           "rejected_proto", "size", "subscribed", "to_proto", "watch_bytes", "watch_proto"]
