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


_CARDS_HEADS = tuple(bytes((n + 2, 10, n)) for n in range(126))
"""The head of a ``Cards`` message of n one-byte cards (n below 126): its length, then its
``cards`` field's key and length."""


def _cards_body(cards: Sequence[int]) -> bytes:
    """One ``Cards`` message's length and bytes."""
    if not cards:
        return b"\x00"
    try:
        body = bytes(cards)
        if len(body) < len(_CARDS_HEADS) and body.isascii():
            return _CARDS_HEADS[len(body)] + body  # every card below 128: a byte each
    except ValueError:  # a card below 0 or above 255
        pass
    body = b"\x0a" + packed_body(cards)
    return varint(len(body)) + body


def _card_list_heads(key: bytes) -> tuple[bytes, ...]:
    """For each n below 126, the head of a ``Cards`` field of n one-byte cards: the field's
    key, the message's length, its ``cards`` key and length (an empty message: key, 0)."""
    return (key + b"\x00", *(key + head for head in _CARDS_HEADS[1:]))


_LINES = {
    _SCALAR: ["if v:", "    append(K{i} + varint(v))"],
    _PACKED: ["if v:", "    append(K{i} + packed_body(v))"],
    _STRING: ["if v:", "    t = str(v).encode()", "    append(K{i} + varint(len(t)) + t)"],
    _CARDS: ["append(K{i} + cards_body(v or ()))"],
    _CARD_LISTS: [
        "if v:",
        "    try:  # every list short, every card below 128: a byte each",
        "        c = b''.join([H{i}[len(x)] + bytes(x) for x in v])",
        "    except (IndexError, ValueError):",
        "        c = b''",
        "    if c.isascii() and c:",
        "        append(c)",
        "    else:",
        "        append(b''.join([K{i} + cards_body(x) for x in v]))"],
    _SUB: ["if v is not None:", "    b = W{i}(v)", "    append(K{i} + varint(len(b)) + b)"],
    _SUBS: ["for x in v:", "    b = W{i}(x)", "    append(K{i} + varint(len(b)) + b)"],
}
"""The code that writes one field of each kind from its value ``v``: the writer of a
message is these lines, field after field, made into one function."""


def message_writer(descriptor: Descriptor, names: Sequence[str] | None = None) -> Writer:
    """A writer of ``descriptor``'s message from a domain value: a NamedTuple whose fields
    have the message's field names (``names``, its field names in order, say which field
    each message field takes; None takes them by order, for a plain tuple).

    The writer is generated from the descriptor as one straight function (no loop over
    the fields at run time): a request is written at every decision point."""
    constants: dict[str, Any] = {"varint": varint, "packed_body": packed_body,
                                 "cards_body": _cards_body}
    lines = ["def write(value):", "    parts = []", "    append = parts.append"]
    for i, field in enumerate(sorted(descriptor.fields, key=lambda f: f.number)):
        index = field.index if names is None else list(names).index(field.name)
        kind = _kind(field)
        key = tag(field.number, 0 if kind == _SCALAR else 2)
        constants[f"K{i}"] = key
        if kind == _CARD_LISTS:
            constants[f"H{i}"] = _card_list_heads(key)
        if kind in (_SUB, _SUBS):
            sub_message: Any = field.message_type
            constants[f"W{i}"] = message_writer(sub_message)
        lines.append(f"    v = value[{index}]  # {field.name}")
        lines.extend("    " + line.format(i=i) for line in _LINES[kind])
    lines.append("    return b''.join(parts)")
    exec("\n".join(lines), constants)
    write: Writer = constants["write"]
    return write


__all__ = ["CARDS", "Writer", "delimited", "message_writer", "packed_body", "tag", "varint"]
