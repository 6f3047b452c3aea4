"""Protobuf bytes written straight from domain values, by plans read from the proto's
descriptors.

Every decision point sends each seat a request and every seat the public events; building
those as protobuf objects to serialize them costs about three times as much as writing the
bytes. So a game's observation and event messages are written here field by field, by a
plan made once per message type from its descriptor (field numbers, wire types, which
fields are card lists), matching the domain value's fields by name (an observation) or by
order (an event). The bytes are exactly those protobuf writes for the same message
(tests/unit/test_wire.py checks it over random games of every game); nothing here names a
game or a field number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor


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


def tag(number: int, wire_type: int) -> bytes:
    """The key of field ``number`` with ``wire_type`` (0 varint, 2 length-delimited)."""
    return varint(number << 3 | wire_type)


def delimited(key: bytes, body: bytes) -> bytes:
    """A length-delimited field: a string, a sub-message or a packed list."""
    return key + varint(len(body)) + body


def packed_body(values: Sequence[int]) -> bytes:
    """A packed ``repeated int32`` list's length and bytes."""
    try:
        body = bytes(values)  # every value 0..255: one byte each if below 128
        if body.isascii():
            return varint(len(body)) + body
    except ValueError:  # a value below 0 or above 255
        pass
    body = b"".join([varint(v) for v in values])
    return varint(len(body)) + body


_SCALAR, _STRING, _PACKED, _CARDS, _CARD_LISTS, _SUB, _SUBS = range(7)
"""How a field is written: an int32 (None as 0), a string, a packed ``repeated int32``, a
``Cards`` message (always written, None as empty), a ``repeated Cards``, a sub-message (a
tuple of its fields in order; absent when None), a repeated sub-message."""

CARDS = "bullring.v2.Cards"
"""The full name of the message that holds one list of cards."""

Writer = Callable[[Any], bytes]
"""Writes a domain value as the body of its message."""


def _kind(field: FieldDescriptor) -> int:
    repeated = field.is_repeated
    message = field.message_type
    if message is None:
        if field.type == FieldDescriptor.TYPE_STRING:
            return _STRING
        return _PACKED if repeated else _SCALAR
    if message.full_name == CARDS:
        return _CARD_LISTS if repeated else _CARDS
    return _SUBS if repeated else _SUB


def _cards_body(cards: Sequence[int]) -> bytes:
    """One ``Cards`` message's length and bytes."""
    body = b"\x0a" + packed_body(cards) if cards else b""
    return varint(len(body)) + body


def _write_field(key: bytes, kind: int, sub: Writer | None, value: Any) -> bytes:
    """One field of ``kind`` holding ``value`` (nothing when proto3 writes nothing)."""
    if kind == _SCALAR:
        return key + varint(value) if value else b""
    if kind == _PACKED:
        return key + packed_body(value) if value else b""
    if kind == _CARDS:
        return key + _cards_body(value or ())
    if kind == _CARD_LISTS:
        return b"".join([key + _cards_body(cards) for cards in value])
    if kind == _STRING:
        return delimited(key, str(value).encode()) if value else b""
    assert sub is not None
    if kind == _SUB:
        return b"" if value is None else delimited(key, sub(value))
    return b"".join([delimited(key, sub(item)) for item in value])


def message_writer(descriptor: Descriptor, names: Sequence[str] | None = None) -> Writer:
    """A writer of ``descriptor``'s message from a domain value: a NamedTuple whose fields
    have the message's field names (``names``, its field names in order, say which field
    each message field takes; None takes them by order, for a plain tuple)."""
    plan: list[tuple[int, bytes, int, Writer | None]] = []
    for field in sorted(descriptor.fields, key=lambda f: f.number):  # protobuf's order
        index = field.index if names is None else list(names).index(field.name)
        kind = _kind(field)
        sub_message: Any = field.message_type
        sub = message_writer(sub_message) if kind in (_SUB, _SUBS) else None
        plan.append((index, tag(field.number, 0 if kind == _SCALAR else 2), kind, sub))

    def write(value: Any) -> bytes:
        parts = []
        for index, key, kind, sub in plan:
            item = value[index]
            if kind == _SCALAR:
                if item:
                    parts.append(key + varint(item))
            elif kind == _PACKED:
                if item:
                    parts.append(key + packed_body(item))
            else:
                parts.append(_write_field(key, kind, sub, item))
        return b"".join(parts)

    return write


__all__ = ["CARDS", "Writer", "delimited", "message_writer", "packed_body", "tag", "varint"]
