"""Protobuf ⇄ domain values, and the gRPC method table shared by server and SDK.

The service wiring is kept here, on top of the generated message code, so that both ends use
one table of method paths and serializers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

import grpc

from client_sdk.generated.bullring.v1 import referee_pb2 as pb
from referee import no_thanks, six_nimmt
from referee.core import Action, Decision, DecisionKind

BOT_SERVICE = "bullring.v1.BotService"
"""The full name of the bots' service."""
SPECTATOR_SERVICE = "bullring.v1.SpectatorService"
"""The full name of the spectators' service."""
ADMIN_SERVICE = "bullring.v1.AdminService"
"""The full name of the bot registry's admin service."""
LADDER_SERVICE = "bullring.v1.LadderService"
"""The full name of the ladder's public read service."""
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


def action_to_proto(kind: DecisionKind, action: Action) -> pb.Action:
    """Encode ``action`` for a decision of ``kind``."""
    if kind is DecisionKind.CHOOSE_ROW:
        return pb.Action(row=int(action))
    if kind in (DecisionKind.PLAY_CARD, DecisionKind.DRAFT_CARD):
        return pb.Action(card=int(action))
    return pb.Action(word=str(action))


def action_from_proto(message: pb.Action) -> Action | None:
    """Decode an action; None when no value is set."""
    which = message.WhichOneof("value")
    if which is None:
        return None
    value: Action = getattr(message, which)
    return value


def observation_to_request(observation: Any, decision_id: str,
                           time_left_ms: int) -> pb.DecisionRequest:
    """Build the DecisionRequest carrying ``observation`` and its pending decision."""
    request = pb.DecisionRequest()
    decision: Decision = observation.decision
    request.decision_id = decision_id
    request.kind = KIND_TO_PROTO[decision.kind]
    request.time_left_ms = time_left_ms
    request.legal.extend(action_to_proto(decision.kind, a) for a in decision.legal)
    if isinstance(observation, six_nimmt.Observation):
        o = observation
        six = request.six_nimmt
        six.seat, six.round, six.trick = o.seat, o.round, o.trick
        six.hand.extend(o.hand)
        for cards, rows in ((six.rows, o.rows), (six.piles, o.piles),
                            (six.revealed, o.revealed)):
            for row in rows:
                cards.add().cards.extend(row)
        six.penalties.extend(o.penalties)
        six.totals.extend(o.totals)
        six.trick_plays.SetInParent()
        six.trick_plays.cards.extend(o.trick_plays or ())
        six.pool.extend(o.pool)
        return request
    n = observation
    nt = request.no_thanks
    nt.seat, nt.round, nt.card, nt.pot = n.seat, n.round, n.card or 0, n.pot
    nt.chips, nt.hidden_card, nt.deck_left = n.chips, n.hidden_card or 0, n.deck_left
    for cards in n.cards:
        nt.cards.add().cards.extend(cards)
    for seat, card, pot, action in n.history:
        nt.history.add(seat=seat, card=card, pot=pot, action=action)
    nt.totals.extend(n.totals)
    nt.out.extend(n.out)
    return request


def observation_from_request(request: pb.DecisionRequest) -> Any:
    """Rebuild the very observation value the referee made, from a DecisionRequest."""
    kind = KIND_FROM_PROTO[request.kind]
    legal = tuple(a for a in (action_from_proto(x) for x in request.legal) if a is not None)
    if kind in (DecisionKind.TAKE_OR_PASS, DecisionKind.REVEAL_HIDDEN_CARD):
        legal = tuple(no_thanks.Move(str(a)) for a in legal)
    if request.WhichOneof("observation") == "six_nimmt":
        o = request.six_nimmt
        decision = Decision(o.seat, kind, legal)
        trick_plays = tuple(o.trick_plays.cards) or None
        return six_nimmt.Observation(
            o.seat, o.round, o.trick, tuple(o.hand), tuple(tuple(r.cards) for r in o.rows),
            tuple(tuple(p.cards) for p in o.piles), tuple(o.penalties), tuple(o.totals),
            tuple(tuple(t.cards) for t in o.revealed), trick_plays, tuple(o.pool), decision)
    n = request.no_thanks
    decision = Decision(n.seat, kind, legal)
    return no_thanks.Observation(
        n.seat, n.round, n.card or None, n.pot, n.chips, n.hidden_card or None,
        tuple(tuple(c.cards) for c in n.cards), n.deck_left,
        tuple((t.seat, t.card, t.pot, t.action) for t in n.history), tuple(n.totals),
        tuple(n.out), decision)


_JSON = json.JSONEncoder(separators=(",", ":"))
"""Compact JSON, made once: ``json.dumps`` with options builds an encoder per call."""
_C_ENCODE = None if c_make_encoder is None else c_make_encoder(
    None, _JSON.default, encode_basestring_ascii, None, ":", ",", False, False, True)
"""The C encoder ``_JSON.encode`` would build on every call, built once (no check for
circular references: an event holds only numbers, strings and tuples of them)."""


def _compact_json(value: dict[str, Any]) -> str:
    if _C_ENCODE is None:  # pragma: no cover - CPython always has the C encoder
        return _JSON.encode(value)
    return "".join(_C_ENCODE(value, 0))


def event_json(event: Any) -> str:
    """The compact JSON object of one public engine event's (a NamedTuple's) fields."""
    return _compact_json(dict(zip(event._fields, event, strict=True)))  # _asdict, in C


def event_to_proto(event: Any) -> pb.PublicEvent:
    """Encode one public engine event (a NamedTuple) as a PublicEvent."""
    return pb.PublicEvent(type=type(event).__name__, json=event_json(event))


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
            response_deserializer=pb.PlayResponse.FromString),
        "SubmitAnswer": channel.unary_unary(
            SUBMIT_ANSWER, request_serializer=pb.SubmitAnswerRequest.SerializeToString,
            response_deserializer=pb.SubmitAnswerResponse.FromString),
    }


ADMIN_METHODS: dict[str, tuple[Any, Any]] = {
    "RegisterBot": (pb.RegisterBotRequest, pb.RegisterBotResponse),
    "NewBotVersion": (pb.NewBotVersionRequest, pb.NewBotVersionResponse),
    "SetBotEnabled": (pb.SetBotEnabledRequest, pb.SetBotEnabledResponse),
    "RotateBotToken": (pb.RotateBotTokenRequest, pb.RotateBotTokenResponse),
    "CreateMatch": (pb.CreateMatchRequest, pb.CreateMatchResponse),
    "RotateAdminToken": (pb.RotateAdminTokenRequest, pb.RotateAdminTokenResponse),
}
"""AdminService's methods: (request type, response type) by name."""

LADDER_METHODS: dict[str, tuple[Any, Any]] = {
    "GetLeaderboard": (pb.GetLeaderboardRequest, pb.GetLeaderboardResponse),
    "ListBots": (pb.ListBotsRequest, pb.ListBotsResponse),
    "ListMatches": (pb.ListMatchesRequest, pb.ListMatchesResponse),
    "GetReplay": (pb.GetReplayRequest, pb.GetReplayResponse),
}
"""LadderService's methods: (request type, response type) by name."""


def admin_stub(channel: grpc.aio.Channel) -> dict[str, Any]:
    """The AdminService methods on ``channel``, by name."""
    return {name: channel.unary_unary(f"/{ADMIN_SERVICE}/{name}",
                                      request_serializer=request.SerializeToString,
                                      response_deserializer=response.FromString)
            for name, (request, response) in ADMIN_METHODS.items()}


def ladder_stub(channel: grpc.aio.Channel) -> dict[str, Any]:
    """The LadderService methods on ``channel``, by name."""
    return {name: channel.unary_unary(f"/{LADDER_SERVICE}/{name}",
                                      request_serializer=request.SerializeToString,
                                      response_deserializer=response.FromString)
            for name, (request, response) in LADDER_METHODS.items()}


def watch_stub(channel: grpc.aio.Channel) -> Any:
    """The SpectatorService.Watch method on ``channel``."""
    return channel.unary_stream(WATCH, request_serializer=pb.WatchRequest.SerializeToString,
                                response_deserializer=pb.WatchResponse.FromString)
