"""Protobuf messages as JSON for HTTP clients: the proto3 JSON mapping with proto field
names, enums by name, and every field written out (a seat 0 or an empty pile is there, not
omitted; an unset message field, such as a trick's absent row choice, is left out). The
messages of a match are written from their typed values (``bullring.contract.messages``),
never from bytes another part wrote."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from bullring.contract import codec
from bullring.contract.messages import Outgoing, Watched


def to_json(message: Message) -> dict[str, Any]:
    """``message`` as the JSON object protobuf's JSON mapping gives, with proto names."""
    result: dict[str, Any] = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    return result


def play_json(message: Outgoing) -> dict[str, Any]:
    """A seat's message as the JSON of its PlayResponse, built from the typed message."""
    return to_json(codec.to_proto(message))


def watch_json(message: Watched) -> dict[str, Any]:
    """A spectator's message as the JSON of its WatchResponse, built from the typed
    message."""
    return to_json(codec.watch_proto(message))
