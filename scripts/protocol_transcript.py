"""Transcripts of the protocol: play a seat with bare gRPC calls or plain HTTP and record
every message, in and out.

    python scripts/protocol_transcript.py --server HOST:PORT --token TOKEN > transcript.jsonl
    python scripts/protocol_transcript.py --write docs/protocol.md
    python scripts/protocol_transcript.py --check docs/protocol.md

With ``--server`` and ``--token`` it plays that seat over gRPC and prints one JSON line per
message, ``{"dir": "send"|"recv", "message": {...}}``. It doubles as the smallest bot there
is: no SDK, only the generated messages and a grpc channel. The seat always plays its lowest
card (so it soon has to choose a row) and takes the row with the fewest bullheads.

With ``--write`` it starts a real server on a fresh database in a temporary folder, plays
one seat of a 2-seat 6 nimmt! match against the house bot ``greedy`` over gRPC, once one
message at a time and once with batches, and another such match over HTTP by long-poll,
and writes the transcripts into the page between its ``<!-- transcript:NAME -->`` and
``<!-- /transcript:NAME -->`` markers. ``--check`` plays them again and exits 1, printing
the difference, unless the page holds the same transcripts (match ids, tokens and the time
left differ from run to run and are not compared).
"""

from __future__ import annotations

import argparse
import difflib
import json
import queue
import re
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict, ParseDict

from client_sdk import wire
from client_sdk.generated.bullring.v2 import referee_pb2 as pb
from referee.six_nimmt import BULLHEADS

ROOT = Path(__file__).resolve().parent.parent
SEED = 3
"""The seed of the transcribed matches: seat 0's lowest card is below every row end in the
first trick, so the transcript shows a row choice at once."""
SETTINGS = {"rounds": "1", "deadline_ms": "60000"}
"""One round, and a deadline no slow machine can miss, so every run plays the same match."""

Line = tuple[str, str]
"""One line of a transcript: its direction ("→" sent by the bot, "←" received) and text."""


def _proto_json(message: Any) -> dict[str, Any]:
    body: dict[str, Any] = MessageToDict(message, preserving_proto_field_name=True,
                                         always_print_fields_with_no_presence=True)
    tidy: dict[str, Any] = _tidy(body)
    return tidy


def _tidy(value: Any) -> Any:
    """``value`` with every ``settings`` map in name order (a map's order is arbitrary)."""
    if isinstance(value, list):
        return [_tidy(v) for v in value]
    if not isinstance(value, dict):
        return value
    return {k: dict(sorted(v.items())) if k == "settings" and isinstance(v, dict) else _tidy(v)
            for k, v in value.items()}


def _choose(request: pb.DecisionRequest) -> pb.Action:
    if request.kind == pb.DECISION_KIND_CHOOSE_ROW:
        rows = [list(r.cards) for r in request.six_nimmt.rows]
        best = min((a.row for a in request.legal), key=lambda r: sum(BULLHEADS[c] for c in rows[r]))
        return pb.Action(row=best)
    if request.kind == pb.DECISION_KIND_PLAY_CARD:
        return pb.Action(card=min(a.card for a in request.legal))
    action: pb.Action = request.legal[0]
    return action


def _answer_to(response: pb.PlayResponse) -> pb.PlayRequest | None:
    """The answer the transcript's bot sends to ``response``, if it is a decision."""
    if response.WhichOneof("body") != "decision":
        return None
    decision = response.decision
    return pb.PlayRequest(answer=pb.Answer(decision_id=decision.decision_id,
                                           action=_choose(decision)))


def _ended(response: pb.PlayResponse) -> bool:
    if response.WhichOneof("body") == "batch":
        return any(_ended(m) for m in response.batch.messages)
    return bool(response.WhichOneof("body") == "match_ended")


def play_grpc(server: str, token: str, record: Callable[[str, Any], None],
              batches: bool = False) -> None:
    """Play the seat ``token`` names to the end of its match over ``BotService.Play``,
    telling ``record`` each message sent ("send") and received ("recv")."""
    outbox: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()

    def requests() -> Iterator[pb.PlayRequest]:
        while (message := outbox.get()) is not None:
            record("send", message)
            yield message

    with grpc.insecure_channel(server) as channel:
        play = channel.stream_stream(wire.PLAY,
                                     request_serializer=pb.PlayRequest.SerializeToString,
                                     response_deserializer=pb.PlayResponse.FromString)
        outbox.put(pb.PlayRequest(join=pb.Join(client="protocol_transcript",
                                               accept_batches=batches)))
        for response in play(requests(), metadata=(("authorization", f"Bearer {token}"),)):
            record("recv", response)
            inner = list(response.batch.messages) if response.WhichOneof("body") == "batch" \
                else [response]
            for message in inner:
                answer = _answer_to(message)
                if answer is not None:
                    outbox.put(answer)
            if _ended(response):
                outbox.put(None)


def grpc_transcript(server: str, token: str, batches: bool = False) -> list[Line]:
    """The lines of one seat's whole match over gRPC."""
    lines: list[Line] = []

    def record(direction: str, message: Any) -> None:
        lines.append(("→" if direction == "send" else "←", json.dumps(_proto_json(message))))

    play_grpc(server, token, record, batches)
    return lines


def _http(method: str, url: str, token: str, body: dict[str, Any] | None = None
          ) -> dict[str, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        answer: dict[str, Any] = json.loads(response.read())
        return answer


def http_transcript(base: str, token: str) -> list[Line]:
    """The lines of one seat's whole match over HTTP long-poll: each request, then the
    messages it got (one per line)."""
    lines: list[Line] = []
    after: int | None = None
    while True:
        path = "/api/play/poll" if after is None else f"/api/play/poll?after={after}"
        lines.append(("→", f"GET {path}"))
        result = _http("GET", base + path, token)
        lines.append(("←", '{"messages": ['))
        lines.extend(("", "  " + json.dumps(_tidy(m))) for m in result["messages"])
        lines.append(("", f'], "closed": {json.dumps(result["closed"])}}}'))
        for message in result["messages"]:
            after = message["seq"]
            if "decision" in message:
                response = pb.PlayResponse(decision=ParseDict(message["decision"],
                                                              pb.DecisionRequest()))
                answer = _answer_to(response)
                assert answer is not None
                body = _proto_json(answer.answer)
                lines.append(("→", f"POST /api/play/answer {json.dumps(body)}"))
                lines.append(("←", json.dumps(_http("POST", base + "/api/play/answer", token,
                                                    body))))
            if "match_ended" in message or result["closed"]:
                return lines


class Server:
    """A real ``bullring serve`` on free ports and a fresh SQLite database."""

    def __init__(self, folder: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "server.cli", "serve", "--port", "0", "--http-port", "0",
             "--db", f"sqlite:///{folder / 'transcript.db'}"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.grpc = self.http = self.admin = ""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if found := re.search(r"listening on (\S+)", line):
                self.grpc = found.group(1)
            elif found := re.search(r"HTTP API on (http://[^/\s]+)", line):
                self.http = found.group(1)
            elif found := re.search(r"admin token (\S+)", line):
                self.admin = found.group(1)
            if self.grpc and self.http and self.admin:
                return
        raise RuntimeError(f"the server exited with status {self.proc.wait()} before serving")

    def create_match(self) -> str:
        """A 2-seat 6 nimmt! match against ``greedy``; return seat 0's token."""
        created = _http("POST", self.http + "/api/admin/matches", self.admin, {
            "game": "six_nimmt", "seats": 2, "house": {"1": "greedy"}, "seed": SEED,
            "settings": SETTINGS})
        token: str = created["seats"][0]["token"]
        return token

    def stop(self) -> None:
        """Stop the server and wait for it."""
        self.proc.terminate()
        self.proc.wait(timeout=30)


def transcripts() -> dict[str, str]:
    """Every transcript of the page, by marker name, each a fenced block."""
    with tempfile.TemporaryDirectory() as folder:
        server = Server(Path(folder))
        try:
            found = {
                "grpc": grpc_transcript(server.grpc, server.create_match()),
                "grpc-batches": grpc_transcript(server.grpc, server.create_match(), True)[:6],
                "http": http_transcript(server.http, server.create_match()),
            }
        finally:
            server.stop()
    return {name: "```text\n" + "\n".join(f"{d} {t}".rstrip() if d else f"  {t}"
                                          for d, t in lines) + "\n```\n"
            for name, lines in found.items()}


def _marked(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- transcript:{name} -->\n)(.*?)(<!-- /transcript:{name} -->)",
                      re.S)


def fill(page: str, blocks: dict[str, str]) -> str:
    """``page`` with each marked transcript replaced by the one in ``blocks``."""
    for name, block in blocks.items():
        pattern = _marked(name)
        if not pattern.search(page):
            raise ValueError(f"the page has no <!-- transcript:{name} --> markers")
        start, end = pattern.search(page).span(2)  # type: ignore[union-attr]
        page = page[:start] + block + page[end:]
    return page


VOLATILE = [
    (re.compile(r"\b[0-9a-f]{12}\b"), "MATCH"),
    (re.compile(r"\b(br|bot)_[A-Za-z0-9_-]+"), "TOKEN"),
    (re.compile(r'"time_left_ms": \d+'), '"time_left_ms": T'),
    (re.compile(r'^(\u2192 GET /api/play/poll.*|\u2190 \{"messages": \[|  \], "closed": .*)\n',
                re.M), ""),
]
"""What differs between two runs of the same match: its id (and the decision ids made of
it), tokens, the time left when a request was sent, and how the messages fall into polls
(which messages are ready when a poll is answered)."""


def comparable(page: str) -> str:
    """``page`` with what differs between runs of the same match masked."""
    for pattern, mask in VOLATILE:
        page = pattern.sub(mask, page)
    return page


def main() -> int:
    """Play a seat and print its transcript, or write or check the page's transcripts."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server")
    parser.add_argument("--token")
    parser.add_argument("--write", type=Path, metavar="PAGE")
    parser.add_argument("--check", type=Path, metavar="PAGE")
    args = parser.parse_args()
    if args.write or args.check:
        page_path: Path = args.write or args.check
        page = page_path.read_text(encoding="utf-8")
        fresh = fill(page, transcripts())
        if args.write:
            page_path.write_text(fresh, encoding="utf-8")
            return 0
        diff = list(difflib.unified_diff(comparable(page).splitlines(),
                                         comparable(fresh).splitlines(),
                                         f"{page_path} (as written)", "a match played now",
                                         lineterm=""))
        print("\n".join(diff) if diff else f"{page_path}: the transcripts hold")
        return 1 if diff else 0
    if not (args.server and args.token):
        parser.error("give --server and --token, or --write/--check PAGE")

    def dump(direction: str, message: Any) -> None:
        print(json.dumps({"dir": direction, "message": _proto_json(message)}), flush=True)

    play_grpc(args.server, args.token, dump)
    return 0


if __name__ == "__main__":
    sys.exit(main())
