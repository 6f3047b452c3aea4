"""Protobuf ⇄ domain values, and the gRPC method table shared by server and SDK.

The service wiring is kept here, on top of the generated message code, so that both ends use
one table of method paths and serializers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import grpc

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee import no_thanks, six_nimmt
from bullring.referee.core import Action, Decision, DecisionKind

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


EVENT_MESSAGES: dict[type, tuple[str, str, Any]] = {
    six_nimmt.RoundStarted: ("six_nimmt", "round_started", pb.SixNimmtRoundStarted),
    six_nimmt.CardsRevealed: ("six_nimmt", "cards_revealed", pb.SixNimmtCardsRevealed),
    six_nimmt.TrickResolved: ("six_nimmt", "trick_resolved", pb.SixNimmtTrickResolved),
    six_nimmt.CardDrafted: ("six_nimmt", "card_drafted", pb.SixNimmtCardDrafted),
    six_nimmt.RoundEnded: ("six_nimmt", "round_ended", pb.SixNimmtRoundEnded),
    six_nimmt.GameEnded: ("six_nimmt", "game_ended", pb.GameEnded),
    no_thanks.RoundStarted: ("no_thanks", "round_started", pb.NoThanksRoundStarted),
    no_thanks.CardTurnedUp: ("no_thanks", "card_turned_up", pb.NoThanksCardTurnedUp),
    no_thanks.Passed: ("no_thanks", "passed", pb.NoThanksPassed),
    no_thanks.Took: ("no_thanks", "took", pb.NoThanksTook),
    no_thanks.HiddenRevealed: ("no_thanks", "hidden_revealed", pb.NoThanksHiddenRevealed),
    no_thanks.RoundEnded: ("no_thanks", "round_ended", pb.NoThanksRoundEnded),
    no_thanks.GameEnded: ("no_thanks", "game_ended", pb.GameEnded),
}
"""Each public engine event class (a NamedTuple): its game's field of ``PublicEvent``, the
event's field of that game's event message, and the message type. A message's fields are
the NamedTuple's, in order and of the same names (tests/test_wire.py holds them to it)."""
EVENT_CLASSES: dict[tuple[str, str], Any] = {
    (game, name): cls for cls, (game, name, _message) in EVENT_MESSAGES.items()}
"""Each engine event class by its (game, event) field names in ``PublicEvent``."""


def event_to_proto(event: Any) -> pb.PublicEvent:
    """Encode one public engine event (a NamedTuple) as a typed PublicEvent."""
    game, name, _message = EVENT_MESSAGES[type(event)]
    public = pb.PublicEvent()
    typed = getattr(getattr(public, game), name)
    typed.SetInParent()
    for field, value in zip(event._fields, event, strict=True):
        if value is None:
            continue
        target = getattr(typed, field)
        if isinstance(value, int):
            setattr(typed, field, value)
        elif field == "row_choice":
            target.seat, target.row = value
        elif value and isinstance(value[0], tuple):
            for cards in value:
                target.add().cards.extend(cards)
        else:
            target.extend(value)
    return public


def event_from_proto(public: pb.PublicEvent) -> Any:
    """The engine event (a NamedTuple) a PublicEvent carries; ValueError if it carries
    none this side knows."""
    game = public.WhichOneof("game")
    if game is None:
        raise ValueError("the PublicEvent carries no event")
    holder = getattr(public, game)
    name = holder.WhichOneof("event")
    cls = EVENT_CLASSES.get((game, name or ""))
    if cls is None:
        raise ValueError(f"unknown event {game}.{name}")
    typed = getattr(holder, name or "")
    values: list[Any] = []
    for field in cls._fields:
        value = getattr(typed, field)
        if field == "row_choice":
            values.append((value.seat, value.row) if typed.HasField(field) else None)
        elif isinstance(value, int):
            values.append(value)
        elif typed.DESCRIPTOR.fields_by_name[field].message_type is not None:
            values.append(tuple(tuple(c.cards) for c in value))
        else:
            values.append(tuple(value))
    return cls(*values)


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
            raise ValueError(f"setting {key!r} of {game} has no field in MatchSettings")
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


ADMIN_METHODS: dict[str, tuple[Any, Any]] = {
    "RegisterBot": (pb.RegisterBotRequest, pb.RegisterBotResponse),
    "NewBotVersion": (pb.NewBotVersionRequest, pb.NewBotVersionResponse),
    "SetBotEnabled": (pb.SetBotEnabledRequest, pb.SetBotEnabledResponse),
    "RotateBotToken": (pb.RotateBotTokenRequest, pb.RotateBotTokenResponse),
    "CreateMatch": (pb.CreateMatchRequest, pb.CreateMatchResponse),
    "RotateAdminToken": (pb.RotateAdminTokenRequest, pb.RotateAdminTokenResponse),
    "CreateTournament": (pb.CreateTournamentRequest, pb.CreateTournamentResponse),
    "CancelTournament": (pb.CancelTournamentRequest, pb.CancelTournamentResponse),
}
"""AdminService's methods: (request type, response type) by name."""

LADDER_METHODS: dict[str, tuple[Any, Any]] = {
    "GetLeaderboard": (pb.GetLeaderboardRequest, pb.GetLeaderboardResponse),
    "ListBots": (pb.ListBotsRequest, pb.ListBotsResponse),
    "ListMatches": (pb.ListMatchesRequest, pb.ListMatchesResponse),
    "GetReplay": (pb.GetReplayRequest, pb.GetReplayResponse),
    "GetTournament": (pb.GetTournamentRequest, pb.GetTournamentResponse),
}
"""LadderService's methods: (request type, response type) by name."""

CHALLENGE_METHODS: dict[str, tuple[Any, Any]] = {
    "CreateChallenge": (pb.CreateChallengeRequest, pb.CreateChallengeResponse),
    "ListChallenges": (pb.ListChallengesRequest, pb.ListChallengesResponse),
    "GetChallenge": (pb.GetChallengeRequest, pb.GetChallengeResponse),
    "AnswerChallenge": (pb.AnswerChallengeRequest, pb.AnswerChallengeResponse),
    "SetAutoAccept": (pb.SetAutoAcceptRequest, pb.SetAutoAcceptResponse),
}
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
