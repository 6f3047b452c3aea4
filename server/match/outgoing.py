"""The referee's outgoing messages, encoded straight to protobuf bytes.

Every decision point sends each seat its verdict, the public events and its next request;
building those as protobuf objects and serializing them was a third of the server's work per
decision. Here they are written as bytes directly, following the protobuf encoding of
``proto/bullring/v2/referee.proto``: the bytes are exactly those protobuf itself writes for
the same message (tests/unit/test_wire.py checks it over random games of every game), so a
client
cannot tell the difference. Cold paths (match start and end, rejections, spectators) build
protobuf objects as usual.
"""

from __future__ import annotations

from typing import Any

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee import six_nimmt
from bullring.referee.core import Decision, DecisionKind


def _long_varint(value: int) -> bytes:
    """``value`` (0 <= value < 2**64) as a protobuf varint, seven bits a byte."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_VARINTS = tuple(_long_varint(v) for v in range(1 << 14))
"""Varints of 0..16383 (one or two bytes): every length and nearly every number here."""


def varint(value: int) -> bytes:
    """``value`` as a protobuf varint (an int32 below zero takes ten bytes, as protobuf
    writes it)."""
    if 0 <= value < 16384:
        return _VARINTS[value]
    return _long_varint(value if value >= 0 else value + (1 << 64))


def _tag(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


def _delimited(tag: bytes, body: bytes) -> bytes:
    """A length-delimited field: a string, a sub-message or a packed list."""
    return tag + varint(len(body)) + body


def _scalar(tag: bytes, value: int) -> bytes:
    """An int32 field; proto3 writes nothing for zero."""
    return tag + varint(value) if value else b""


def _packed_body(values: tuple[int, ...]) -> bytes:
    """A packed ``repeated int32`` list's length and bytes."""
    if min(values) >= 0 and max(values) < 128:
        body = bytes(values)  # every varint one byte: cards, seats, most scores
    else:
        body = b"".join([varint(v) for v in values])
    return varint(len(body)) + body


def _packed(tag: bytes, values: tuple[int, ...]) -> bytes:
    """A packed ``repeated int32`` field; nothing when empty."""
    return tag + _packed_body(values) if values else b""


_CARDS = _tag(1, 2)
"""``Cards.cards``."""


def _cards_body(cards: tuple[int, ...]) -> bytes:
    """One ``Cards`` message's length and bytes."""
    body = _CARDS + _packed_body(cards) if cards else b""
    return varint(len(body)) + body


def _cards(tag: bytes, cards: tuple[int, ...]) -> bytes:
    """One ``Cards`` message as a field (written even when it holds no card)."""
    return tag + _cards_body(cards)


def _card_lists(tag: bytes, lists: tuple[tuple[int, ...], ...]) -> bytes:
    """A ``repeated Cards`` field."""
    return tag + tag.join(map(_cards_body, lists)) if lists else b""


_KIND = {kind: _tag(2, 0) + varint(number) for kind, number in wire.KIND_TO_PROTO.items()}
"""``DecisionRequest.kind`` for each decision kind."""
_ACTION_FIELD = {DecisionKind.PLAY_CARD: 1, DecisionKind.DRAFT_CARD: 1,
                 DecisionKind.CHOOSE_ROW: 2}
"""The ``Action`` field of each decision kind answered with a number (card 1, row 2);
the others are answered with a word (field 3)."""
_LEGAL = _tag(3, 2)
_NUMBERS = {field: [_delimited(_LEGAL, _tag(field, 0) + varint(v)) for v in range(256)]
            for field in (1, 2)}
"""``DecisionRequest.legal`` entries holding card or row 0..255, encoded once."""
_WORD = _tag(3, 2)
"""``Action.word``."""


def _legal(decision: Decision) -> bytes:
    field = _ACTION_FIELD.get(decision.kind)
    if field is None:
        return b"".join([_delimited(_LEGAL, _delimited(_WORD, str(word).encode()))
                         for word in decision.legal])
    table = _NUMBERS[field]
    legal: Any = decision.legal
    if legal and min(legal) >= 0 and max(legal) < len(table):
        return b"".join([table[a] for a in legal])
    return b"".join([_delimited(_LEGAL, _tag(field, 0) + varint(int(a)))  # pragma: no cover
                     for a in legal])


_T = [_tag(n, 0) for n in range(12)]
"""Tags of int32 fields 0..11."""
_L = [_tag(n, 2) for n in range(12)]
"""Tags of length-delimited fields 0..11."""


_SHORT = 126
"""Card lists shorter than this, of cards numbered 0 to 127, take a one-byte length and one
byte per card, so their heads can be written in advance. Every list of a real 6 nimmt! game
qualifies (cards run from 1 to 104, and no list holds more than all of them)."""


def _cards_heads(tag: bytes) -> tuple[bytes, ...]:
    """The head of a ``Cards`` field holding n one-byte cards, for each n below ``_SHORT``:
    the field's tag and length, then ``Cards.cards``' tag and length (nothing when empty)."""
    return (tag + b"\x00", *(tag + bytes((n + 2, 10, n)) for n in range(1, _SHORT)))


def _packed_heads(tag: bytes) -> tuple[bytes, ...]:
    """The head of a packed ``repeated int32`` field of n one-byte values, for each n below
    ``_SHORT`` (an empty list is not written at all)."""
    return (b"", *(tag + bytes((n,)) for n in range(1, _SHORT)))


_HAND, _POOL = _packed_heads(_L[4]), _packed_heads(_L[11])
_ROWS, _PILES, _REVEALED, _TRICK = (_cards_heads(_L[n]) for n in (5, 6, 9, 10))


def _six_nimmt(o: six_nimmt.Observation) -> bytes:
    """A ``SixNimmtObservation``: its card lists through the heads above, or, for numbers
    no real game has, the long way (``_six_nimmt_any``)."""
    hand, pool, plays = o.hand, o.pool, o.trick_plays or ()
    try:
        first = b"".join([_HAND[len(hand)], bytes(hand),
                          *[_ROWS[len(c)] + bytes(c) for c in o.rows],
                          *[_PILES[len(c)] + bytes(c) for c in o.piles]])
        last = b"".join([*[_REVEALED[len(c)] + bytes(c) for c in o.revealed],
                         _TRICK[len(plays)], bytes(plays), _POOL[len(pool)], bytes(pool)])
    except (IndexError, ValueError):  # a list too long, a number below 0 or above 255
        return _six_nimmt_any(o)
    if not (first.isascii() and last.isascii()):  # a number from 128 to 255: two bytes
        return _six_nimmt_any(o)
    return b"".join([_scalar(_T[1], o.seat), _scalar(_T[2], o.round), _scalar(_T[3], o.trick),
                     first, _packed(_L[7], o.penalties), _packed(_L[8], o.totals), last])


def _six_nimmt_any(o: six_nimmt.Observation) -> bytes:
    """A ``SixNimmtObservation`` holding any int32 numbers."""
    return b"".join([
        _scalar(_T[1], o.seat), _scalar(_T[2], o.round), _scalar(_T[3], o.trick),
        _packed(_L[4], o.hand), _card_lists(_L[5], o.rows), _card_lists(_L[6], o.piles),
        _packed(_L[7], o.penalties), _packed(_L[8], o.totals),
        _card_lists(_L[9], o.revealed), _cards(_L[10], o.trick_plays or ()),
        _packed(_L[11], o.pool)])


def _no_thanks(n: Any) -> bytes:
    """A ``NoThanksObservation``."""
    history = b"".join([_delimited(_L[9], _scalar(_T[1], seat) + _scalar(_T[2], card)
                                   + _scalar(_T[3], pot) + (_delimited(_L[4], str(word).encode())
                                                           if word else b""))
                        for seat, card, pot, word in n.history])
    return b"".join([
        _scalar(_T[1], n.seat), _scalar(_T[2], n.round), _scalar(_T[3], n.card or 0),
        _scalar(_T[4], n.pot), _scalar(_T[5], n.chips), _scalar(_T[6], n.hidden_card or 0),
        _card_lists(_L[7], n.cards), _scalar(_T[8], n.deck_left), history,
        _packed(_L[10], n.totals), _packed(_L[11], n.out)])


_DECISION = _tag(2, 2)
"""``PlayResponse.decision``."""


def decision(observation: Any, decision_id: str, time_left_ms: int) -> bytes:
    """The PlayResponse carrying ``observation``'s pending decision as a DecisionRequest."""
    if isinstance(observation, six_nimmt.Observation):
        body = _delimited(_L[5], _six_nimmt(observation))
    else:
        body = _delimited(_L[6], _no_thanks(observation))
    request = b"".join([_delimited(_L[1], decision_id.encode()),
                        _KIND[observation.decision.kind], _legal(observation.decision),
                        _scalar(_T[4], time_left_ms), body])
    return _delimited(_DECISION, request)


_ACCEPTED = _tag(3, 2)
"""``PlayResponse.accepted``."""


def accepted(decision_id: str) -> bytes:
    """The PlayResponse accepting the answer to ``decision_id``."""
    return _delimited(_ACCEPTED, _delimited(_L[1], decision_id.encode()))


_SCALAR, _PACKED, _CARD_LISTS, _PAIR = 0, 1, 2, 3
"""How an event field is written: an int32, a packed ``repeated int32``, a ``repeated
Cards``, or a two-field sub-message (``RowChoice``; absent when None)."""


def _field_kinds(message: Any) -> tuple[tuple[bytes, int], ...]:
    """Each field's tag and kind (above) of an event message type, in field order."""
    kinds = []
    for field in message.DESCRIPTOR.fields:
        repeated = field.is_repeated
        if field.message_type is None:
            kinds.append((_tag(field.number, 2 if repeated else 0),
                          _PACKED if repeated else _SCALAR))
        else:
            kinds.append((_tag(field.number, 2), _CARD_LISTS if repeated else _PAIR))
    return tuple(kinds)


def _event_tags(game: str, name: str) -> tuple[bytes, bytes]:
    """The tags of ``PublicEvent.<game>`` and of that message's ``<name>`` field, which
    enclose an event's message."""
    holder = pb.PublicEvent.DESCRIPTOR.fields_by_name[game]
    inner: Any = holder.message_type
    return _tag(holder.number, 2), _tag(inner.fields_by_name[name].number, 2)


_EVENTS: dict[type, tuple[tuple[bytes, bytes], tuple[tuple[bytes, int], ...]]] = {
    cls: (_event_tags(game, name), _field_kinds(message))
    for cls, (game, name, message) in wire.EVENT_MESSAGES.items()}
"""Each engine event class: the tag of its game's field of ``PublicEvent``, the tag of its
own field there, and its message's fields (tags and kinds), worked out once."""


def public_event(event: Any) -> bytes:
    """The ``PublicEvent`` of one engine event (a NamedTuple), typed as its game's event
    message (``wire.EVENT_MESSAGES``)."""
    (outer, inner), fields = _EVENTS[type(event)]
    parts: list[bytes] = []
    for (tag, kind), value in zip(fields, event, strict=True):
        if kind == _SCALAR:
            if value:
                parts.append(tag + varint(value))
        elif kind == _PACKED:
            if value:
                parts.append(tag + _packed_body(value))
        elif kind == _CARD_LISTS:
            if value:
                parts.append(_card_lists(tag, value))
        elif value is not None:
            parts.append(_delimited(tag, _scalar(_T[1], value[0]) + _scalar(_T[2], value[1])))
    return _delimited(outer, _delimited(inner, b"".join(parts)))


_PLAY_EVENT = _tag(5, 2)
"""``PlayResponse.event``."""


def play_event(public: bytes) -> bytes:
    """The PlayResponse carrying a ``PublicEvent`` from ``public_event``."""
    return _delimited(_PLAY_EVENT, public)


_WATCH_EVENT = _tag(1, 2)
"""``WatchResponse.event``."""


def watch_event(public: bytes) -> bytes:
    """The WatchResponse carrying a ``PublicEvent`` from ``public_event``."""
    return _delimited(_WATCH_EVENT, public)


_BATCH = _tag(7, 2)
"""``PlayResponse.batch``."""
_BATCH_MESSAGE = _tag(1, 2)
"""``PlayResponseBatch.messages``."""


def batch(messages: list[bytes]) -> bytes:
    """The PlayResponse batch of serialized PlayResponses, in order."""
    body = b"".join([_BATCH_MESSAGE + varint(len(m)) + m for m in messages])
    return _BATCH + varint(len(body)) + body


_SUBSCRIBED = _tag(1, 2)
"""``SubscribeResponse.message``."""


def subscribed(message: bytes) -> bytes:
    """The SubscribeResponse carrying a serialized PlayResponse."""
    return _SUBSCRIBED + varint(len(message)) + message


__all__ = ["accepted", "batch", "decision", "play_event", "public_event", "subscribed",
           "varint", "watch_event"]
