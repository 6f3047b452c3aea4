"""Protobuf ⇄ domain values, and the gRPC method table shared by server and SDK.

The service wiring is kept here, on top of the generated message code, so that both ends use
one table of method paths and serializers.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

import grpc
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.contract.protowrite import CARDS
from bullring.errors import BullringError
from bullring.referee.core import Action, Decision, DecisionKind
from bullring.referee.registry import GAMES, AnyGameSpec, UnknownGameError, get_game


class ContractError(BullringError, ValueError):
    """A message that carries nothing this side can read (no observation, an unknown
    event), or a value the contract has no field for."""


BOT_SERVICE = "bullring.v2.BotService"
"""The full name of the bots' service."""
SPECTATOR_SERVICE = "bullring.v2.SpectatorService"
"""The full name of the spectators' service."""
ADMIN_SERVICE = "bullring.v2.AdminService"
"""The full name of the bot registry's admin service."""
LADDER_SERVICE = "bullring.v2.LadderService"
"""The full name of the ladder's public read service."""
CHALLENGE_SERVICE = "bullring.v2.ChallengeService"
"""The full name of the practice matches' and challenges' service."""
PLAY = f"/{BOT_SERVICE}/Play"
SUBSCRIBE = f"/{BOT_SERVICE}/Subscribe"
SUBMIT_ANSWER = f"/{BOT_SERVICE}/SubmitAnswer"
WATCH = f"/{SPECTATOR_SERVICE}/Watch"
MAX_MESSAGE_BYTES = 64 * 1024
"""The largest message either side accepts; a request is far smaller."""

KIND_TO_PROTO: dict[DecisionKind, pb.DecisionKind] = {
    DecisionKind.PLAY_CARD: pb.DECISION_KIND_PLAY_CARD,
    DecisionKind.CHOOSE_ROW: pb.DECISION_KIND_CHOOSE_ROW,
    DecisionKind.DRAFT_CARD: pb.DECISION_KIND_DRAFT_CARD,
    DecisionKind.TAKE_OR_PASS: pb.DECISION_KIND_TAKE_OR_PASS,
    DecisionKind.REVEAL_HIDDEN_CARD: pb.DECISION_KIND_REVEAL_HIDDEN_CARD,
}
KIND_FROM_PROTO: dict[int, DecisionKind] = {v: k for k, v in KIND_TO_PROTO.items()}
ACTION_FIELD: dict[DecisionKind, str] = {
    DecisionKind.PLAY_CARD: "card",
    DecisionKind.DRAFT_CARD: "card",
    DecisionKind.CHOOSE_ROW: "row",
    DecisionKind.TAKE_OR_PASS: "word",
    DecisionKind.REVEAL_HIDDEN_CARD: "word",
}
"""The ``Action`` field that answers each decision kind; any other is malformed."""
KIND_NAME: dict[DecisionKind, str] = {
    kind: pb.DecisionKind.Name(number) for kind, number in KIND_TO_PROTO.items()}
"""Each decision kind's name on the wire, such as ``DECISION_KIND_PLAY_CARD``."""


TERMINATION: dict[str, pb.Termination] = {"normal": pb.TERMINATION_NORMAL,
                                          "aborted": pb.TERMINATION_ABORTED}
"""``MatchEnded.termination`` by the name replays and the store use."""


def termination_name(termination: int) -> str:
    """The name (``normal``, ``aborted``) of a ``Termination`` value."""
    for name, value in TERMINATION.items():
        if value == termination:
            return name
    return "unspecified"


def action_to_proto(kind: DecisionKind, action: Action) -> pb.Action:
    """Encode ``action`` for a decision of ``kind``."""
    field = ACTION_FIELD[kind]
    if field == "word":
        return pb.Action(word=str(action))
    if field == "row":
        return pb.Action(row=int(action))
    return pb.Action(card=int(action))


def action_from_proto(message: pb.Action) -> Action | None:
    """Decode an action; None when no value is set."""
    which = message.WhichOneof("value")
    if which is None:
        return None
    value: Action = getattr(message, which)
    return value


def action_field(message: pb.Action) -> str | None:
    """The field of ``message`` that is set (``card``, ``row`` or ``word``), if any."""
    field: str | None = message.WhichOneof("value")
    return field


def game_field(holder: Any, game: str) -> FieldDescriptor:
    """The field named after ``game`` in ``holder``'s oneof of games; UnknownGameError if
    the proto has none (a game registered without its messages)."""
    field = holder.DESCRIPTOR.fields_by_name.get(game)
    if field is None or field.message_type is None:
        raise UnknownGameError(f"{holder.DESCRIPTOR.name} has no field for the game {game!r}")
    result: FieldDescriptor = field
    return result


def spec_of_observation(observation: Any) -> AnyGameSpec:
    """The registered game whose observations are of ``observation``'s type."""
    for spec in GAMES.values():
        if spec.observation is type(observation):
            return spec
    raise UnknownGameError(f"no registered game has observations of type "
                           f"{type(observation).__name__}")


def _snake(name: str) -> str:
    """``CardsRevealed`` as ``cards_revealed``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def event_field(cls: type) -> tuple[str, str]:
    """The (game, event) field names of ``PublicEvent`` that carry events of ``cls``."""
    for spec in GAMES.values():
        if cls in spec.events:
            return spec.id, _snake(cls.__name__)
    raise UnknownGameError(f"no registered game has events of type {cls.__name__}")


def _fill(message: Any, value: Any, names: Sequence[str] | None) -> None:
    """Set ``message``'s fields from a domain value: a NamedTuple's fields of the same
    names, or (``names`` None) a tuple's items in the message's field order."""
    for field in message.DESCRIPTOR.fields:
        item = value[field.index if names is None else names.index(field.name)]
        target = getattr(message, field.name)
        kind = field.message_type
        if kind is None:
            if field.is_repeated:
                target.extend(item)
            elif field.type == FieldDescriptor.TYPE_STRING:
                setattr(message, field.name, str(item))
            else:
                setattr(message, field.name, item or 0)
        elif kind.full_name == CARDS:
            if field.is_repeated:
                for cards in item:
                    target.add().cards.extend(cards)
            else:
                target.SetInParent()
                target.cards.extend(item or ())
        elif field.is_repeated:
            for each in item:
                _fill(target.add(), each, None)
        elif item is not None:
            target.SetInParent()
            _fill(target, item, None)


def _read(message: Any, cls: type | None, given: dict[str, Any] | None = None,
          optional: frozenset[str] = frozenset()) -> Any:
    """The domain value ``message`` carries: a ``cls`` NamedTuple (fields by name, those
    not in the message from ``given``), or (``cls`` None) a plain tuple in field order.
    An ``optional`` field's zero or empty value reads as None."""
    values: dict[str, Any] = dict(given or {})
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        kind = field.message_type
        if kind is None:
            value = tuple(value) if field.is_repeated else value
        elif kind.full_name == CARDS:
            value = (tuple(tuple(c.cards) for c in value) if field.is_repeated
                     else tuple(value.cards))
        elif field.is_repeated:
            value = tuple(_read(each, None) for each in value)
        else:
            value = _read(value, None) if message.HasField(field.name) else None
        values[field.name] = None if field.name in optional and not value else value
    if cls is None:
        return tuple(values[f.name] for f in message.DESCRIPTOR.fields)
    return cls(**{name: values[name] for name in cls._fields})  # type: ignore[attr-defined]


def observation_to_request(observation: Any, decision_id: str,
                           time_left_ms: int) -> pb.DecisionRequest:
    """Build the DecisionRequest carrying ``observation`` and its pending decision, in the
    field named after its game (any registered game whose messages the proto has)."""
    request = pb.DecisionRequest()
    decision: Decision = observation.decision
    request.decision_id = decision_id
    request.kind = KIND_TO_PROTO[decision.kind]
    request.time_left_ms = time_left_ms
    request.legal.extend(action_to_proto(decision.kind, a) for a in decision.legal)
    game = spec_of_observation(observation).id
    game_field(request, game)
    _fill(getattr(request, game), observation, observation._fields)
    return request


def observation_from_request(request: pb.DecisionRequest) -> Any:
    """Rebuild the very observation value the referee made, from a DecisionRequest."""
    kind = KIND_FROM_PROTO[request.kind]
    legal = tuple(a for a in (action_from_proto(x) for x in request.legal) if a is not None)
    game = request.WhichOneof("observation")
    if game is None:
        raise ContractError("the DecisionRequest carries no observation")
    typed = getattr(request, game)
    spec = get_game(game)
    decision = Decision(typed.seat, kind, legal)
    assert spec.observation is not None
    return _read(typed, spec.observation, {"decision": decision}, spec.optional)


def event_to_proto(event: Any) -> pb.PublicEvent:
    """Encode one public engine event (a NamedTuple) as a typed PublicEvent."""
    game, name = event_field(type(event))
    public = pb.PublicEvent()
    typed = getattr(getattr(public, game_field(public, game).name), name)
    typed.SetInParent()
    _fill(typed, event, event._fields)
    return public


def event_from_proto(public: pb.PublicEvent) -> Any:
    """The engine event (a NamedTuple) a PublicEvent carries; ContractError if it carries
    none this side knows."""
    game = public.WhichOneof("game")
    if game is None:
        raise ContractError("the PublicEvent carries no event")
    holder = getattr(public, game)
    name = holder.WhichOneof("event") or ""
    classes = _event_classes(game)
    cls = classes.get(name)
    if cls is None:
        raise ContractError(f"unknown event {game}.{name}")
    return _read(getattr(holder, name), cls)


@functools.cache
def _event_classes(game: str) -> dict[str, type]:
    """Each event class of ``game`` by its field name in the game's event message (read
    once a game: every event a bot receives is decoded through it)."""
    return {_snake(cls.__name__): cls for spec in GAMES.values() if spec.id == game
            for cls in spec.events}


def event_message(cls: type) -> Descriptor:
    """The message type that carries events of ``cls`` (an engine event NamedTuple)."""
    game, name = event_field(cls)
    holder: Any = game_field(pb.PublicEvent(), game).message_type
    message: Descriptor = holder.fields_by_name[name].message_type
    return message


def event_type(public: pb.PublicEvent) -> str:
    """The engine's name of the event a PublicEvent carries, such as ``TrickResolved``."""
    return type(event_from_proto(public)).__name__


def settings_to_proto(settings: dict[str, Any], game: str) -> pb.MatchSettings:
    """A match's settings (every one, as the game parsed them) as MatchSettings: the common
    ones, then the game's in its own message; a choice becomes its enum value."""
    message = pb.MatchSettings()
    typed = getattr(message, game)
    typed.SetInParent()
    for key, value in settings.items():
        target = message if key in message.DESCRIPTOR.fields_by_name else typed
        field = target.DESCRIPTOR.fields_by_name.get(key)
        if field is None:
            raise ContractError(f"setting {key!r} of {game} has no field in MatchSettings")
        if field.enum_type is not None:
            prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", field.enum_type.name).upper()
            value = field.enum_type.values_by_name[f"{prefix}_{str(value).upper()}"].number
        setattr(target, key, value)
    return message


def settings_from_proto(message: pb.MatchSettings) -> dict[str, Any]:
    """The settings MatchSettings carries, by name, choices as the game names them."""
    result: dict[str, Any] = {"deadline_ms": message.deadline_ms,
                              "max_timeouts": message.max_timeouts,
                              "time_bank_ms": message.time_bank_ms}
    game = message.WhichOneof("game")
    if game is None:
        return result
    typed = getattr(message, game)
    for field in typed.DESCRIPTOR.fields:
        value = getattr(typed, field.name)
        if field.enum_type is not None:
            prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", field.enum_type.name).upper()
            value = field.enum_type.values_by_number[value].name[len(prefix) + 1:].lower()
        result[field.name] = value
    return result


def unbatch(response: pb.PlayResponse) -> Sequence[pb.PlayResponse]:
    """The messages ``response`` carries: those of a batch, in order, or just itself."""
    if response.WhichOneof("body") == "batch":
        return response.batch.messages
    return (response,)


def lost_to_own_write(error: grpc.aio.AioRpcError) -> bool:
    """Whether ``error`` is grpc's asyncio client losing the server's status to its own
    failed write, not a status the server sent.

    When a server ends a client-streaming call before reading it (a refused token, at once),
    a write the client still had in flight fails, and grpc.aio (up to at least 1.85)
    overwrites the status the server sent with ``INTERNAL: Internal error from Core``
    (``Failed "execute_batch": (SendMessageOperation,)``): grpc/grpc#36066, fix proposed in
    grpc/grpc#43486. grpc's sync client on the same call reports the server's status.
    """
    return (error.code() == grpc.StatusCode.INTERNAL
            and error.details() == "Internal error from Core"
            and 'Failed "execute_batch"' in (error.debug_error_string() or "")
            and "SendMessageOperation" in (error.debug_error_string() or ""))


def channel_options() -> list[tuple[str, int]]:
    """gRPC options both ends use: message size limits and keepalive."""
    return [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", 4 * 1024 * 1024),
            ("grpc.keepalive_time_ms", 20_000),
            ("grpc.keepalive_permit_without_calls", 1)]


def bot_stub(channel: grpc.aio.Channel) -> dict[str, Any]:
    """The BotService methods on ``channel``, by name."""
    return {
        "Play": channel.stream_stream(PLAY, request_serializer=pb.PlayRequest.SerializeToString,
                                      response_deserializer=pb.PlayResponse.FromString),
        "Subscribe": channel.unary_stream(
            SUBSCRIBE, request_serializer=pb.SubscribeRequest.SerializeToString,
            response_deserializer=pb.SubscribeResponse.FromString),
        "SubmitAnswer": channel.unary_unary(
            SUBMIT_ANSWER, request_serializer=pb.SubmitAnswerRequest.SerializeToString,
            response_deserializer=pb.SubmitAnswerResponse.FromString),
    }


def methods(service: str) -> dict[str, tuple[Any, Any]]:
    """Each method of ``service`` (its full name) as the proto declares it: its request and
    response message types, by name. The servers' handlers and the clients' stubs are made
    from these, so a method added to the proto needs no list kept by hand."""
    descriptor = pb.DESCRIPTOR.services_by_name[service.rsplit(".", 1)[1]]
    return {method.name: (getattr(pb, method.input_type.name),
                          getattr(pb, method.output_type.name))
            for method in descriptor.methods}


ADMIN_METHODS = methods(ADMIN_SERVICE)
"""AdminService's methods: (request type, response type) by name."""
LADDER_METHODS = methods(LADDER_SERVICE)
"""LadderService's methods: (request type, response type) by name."""
CHALLENGE_METHODS = methods(CHALLENGE_SERVICE)
"""ChallengeService's methods: (request type, response type) by name."""


def admin_stub(channel: grpc.Channel | grpc.aio.Channel) -> dict[str, Any]:
    """The AdminService methods on ``channel`` (sync or asyncio), by name."""
    return {name: channel.unary_unary(f"/{ADMIN_SERVICE}/{name}",
                                      request_serializer=request.SerializeToString,
                                      response_deserializer=response.FromString)
            for name, (request, response) in ADMIN_METHODS.items()}


def ladder_stub(channel: grpc.Channel | grpc.aio.Channel) -> dict[str, Any]:
    """The LadderService methods on ``channel`` (sync or asyncio), by name."""
    return {name: channel.unary_unary(f"/{LADDER_SERVICE}/{name}",
                                      request_serializer=request.SerializeToString,
                                      response_deserializer=response.FromString)
            for name, (request, response) in LADDER_METHODS.items()}


def challenge_stub(channel: grpc.aio.Channel) -> dict[str, Any]:
    """The ChallengeService methods on ``channel``, by name."""
    return {name: channel.unary_unary(f"/{CHALLENGE_SERVICE}/{name}",
                                      request_serializer=request.SerializeToString,
                                      response_deserializer=response.FromString)
            for name, (request, response) in CHALLENGE_METHODS.items()}


def watch_stub(channel: grpc.aio.Channel) -> Any:
    """The SpectatorService.Watch method on ``channel``."""
    return channel.unary_stream(WATCH, request_serializer=pb.WatchRequest.SerializeToString,
                                response_deserializer=pb.WatchResponse.FromString)
