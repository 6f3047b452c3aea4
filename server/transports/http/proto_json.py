"""Protobuf messages as JSON for HTTP clients: the proto3 JSON mapping with proto field
names, enums by name, and every field written out (a seat 0 or an empty pile is there, not
omitted; an unset message field, such as a trick's absent row choice, is left out)."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message


def to_json(message: Message) -> dict[str, Any]:
    """``message`` as the JSON object protobuf's JSON mapping gives, with proto names."""
    result: dict[str, Any] = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    return result
