"""Play one seat with bare gRPC calls and print every message, in and out, as JSON lines.

    python scripts/protocol_transcript.py --server HOST:PORT --token TOKEN > transcript.jsonl

The seat always plays its lowest card (so it soon has to choose a row) and takes the row
with the fewest bullheads. Each line is ``{"dir": "send"|"recv", "message": {...}}`` with
the protobuf JSON mapping (field names as in the .proto, defaults printed), which is where
the examples in docs/bot-authors.md come from. It doubles as the smallest bot there is:
no SDK, only the generated messages and a grpc channel.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
from collections.abc import Iterator
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict

from client_sdk import wire
from client_sdk.generated.bullring.v2 import referee_pb2 as pb
from referee.six_nimmt import BULLHEADS


def _dump(direction: str, message: Any) -> None:
    body = MessageToDict(message, preserving_proto_field_name=True,
                         always_print_fields_with_no_presence=True)
    print(json.dumps({"dir": direction, "message": body}), flush=True)


def _choose(request: pb.DecisionRequest) -> pb.Action:
    if request.kind == pb.DECISION_KIND_CHOOSE_ROW:
        rows = [list(r.cards) for r in request.six_nimmt.rows]
        best = min((a.row for a in request.legal), key=lambda r: sum(BULLHEADS[c] for c in rows[r]))
        return pb.Action(row=best)
    if request.kind == pb.DECISION_KIND_PLAY_CARD:
        return pb.Action(card=min(a.card for a in request.legal))
    return request.legal[0]


def main() -> int:
    """Play the seat to the end of the match, printing the transcript."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--token", required=True)
    args = parser.parse_args()
    outbox: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()

    def requests() -> Iterator[pb.PlayRequest]:
        while (message := outbox.get()) is not None:
            _dump("send", message)
            yield message

    with grpc.insecure_channel(args.server) as channel:
        play = channel.stream_stream(wire.PLAY,
                                     request_serializer=pb.PlayRequest.SerializeToString,
                                     response_deserializer=pb.PlayResponse.FromString)
        outbox.put(pb.PlayRequest(join=pb.Join(client="protocol_transcript")))
        for response in play(requests(), metadata=[("authorization", f"Bearer {args.token}")]):
            _dump("recv", response)
            which = response.WhichOneof("body")
            if which == "decision":
                decision = response.decision
                outbox.put(pb.PlayRequest(answer=pb.Answer(decision_id=decision.decision_id,
                                                           action=_choose(decision))))
            elif which == "match_ended":
                outbox.put(None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
