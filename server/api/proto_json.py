"""Protobuf messages as JSON for HTTP clients: proto field names, enums by name, every
field written out (a seat 0 or an empty pile is there, not omitted)."""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from client_sdk.generated.bullring.v1 import referee_pb2 as pb


def to_json(message: Message) -> dict[str, Any]:
    """``message`` as the JSON object protobuf's JSON mapping gives, with proto names."""
    result: dict[str, Any] = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    return result


def public_event(event: pb.PublicEvent) -> dict[str, Any]:
    """A public event as ``{"type": ..., "data": {...}}``."""
    return {"type": event.type, "data": json.loads(event.json)}


def match_ended(ended: pb.MatchEnded) -> dict[str, Any]:
    """The end of a match: totals, ranks and termination."""
    return {"totals": list(ended.totals), "ranks": list(ended.ranks),
            "termination": ended.termination}
