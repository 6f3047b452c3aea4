"""A bot that speaks only HTTP: Python's standard library, no gRPC, no Bullring code.

    python tests/bots/http_only.py BASE_URL TOKEN [--transport poll|sse] [--seed N]
    python tests/bots/http_only.py BASE_URL BOT_TOKEN --ladder GAME [--matches N] ...

It reads its messages by long-poll (or Server-Sent Events), answers every decision with a
random legal action, and prints each result. With a seat token it plays that seat's match;
with a registered bot's token and ``--ladder`` it plays that game's ladder, match after
match, until the server ends the connection (after ``--matches`` matches, say). It exits 0
only if every answer was accepted, the message numbers only ever grew, and (on the ladder)
each match started after a ``ladder_queued`` and the server ended the connection because the
matches asked for were played.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any


class Connection:
    """A bot's HTTP connection: requests carry its bearer token."""

    def __init__(self, base: str, token: str, query: dict[str, str]) -> None:
        self.base = base.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.query = query
        """Sent with every poll (and the stream): ladder=GAME, matches=N."""

    def call(self, method: str, path: str, body: Any = None, timeout: float = 60) -> Any:
        """One JSON request; the decoded JSON answer."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers=self.headers)
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())

    def poll(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """Every message with its seq, by long-poll, acknowledging as it goes; a seat's
        connection that ended (its match over) is joined again."""
        after: int | None = None
        while True:
            query = {**self.query, "wait_ms": "10000"}
            if after is not None:
                query["after"] = str(after)
            result = self.call("GET", f"/api/play/poll?{urllib.parse.urlencode(query)}")
            for message in result["messages"]:
                after = message["seq"]
                yield after, message
            if result["closed"]:
                after = None

    def stream(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """Every message with its id, from the Server-Sent Events stream."""
        request = urllib.request.Request(
            f"{self.base}/api/play/stream?{urllib.parse.urlencode(self.query)}",
            headers=self.headers)
        with urllib.request.urlopen(request, timeout=60) as response:
            data: list[str] = []
            number = 0
            for raw in response:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("data:"):
                    data.append(line[5:].strip())
                elif line.startswith("id:"):
                    number = int(line[3:].strip())
                elif not line and data:
                    yield number, json.loads("\n".join(data))
                    data = []


def main(argv: list[str] | None = None) -> int:
    """Play the seat to the end of its match, or the ladder until the server ends it."""
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("token")
    parser.add_argument("--transport", choices=("poll", "sse"), default="poll")
    parser.add_argument("--ladder", default=None, metavar="GAME")
    parser.add_argument("--matches", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    query = {} if args.ladder is None else {"ladder": args.ladder, "matches": str(args.matches)}
    connection = Connection(args.base, args.token, query)
    rng = random.Random(args.seed)
    rejected = answered = 0
    last_seq = 0
    match_id = "?"
    queued = False
    messages = connection.poll() if args.transport == "poll" else connection.stream()
    for seq, message in messages:
        if seq <= last_seq:
            print(f"message {seq} came after {last_seq}", file=sys.stderr)
            return 1
        last_seq = seq
        if "ladder_queued" in message:
            queued = True
        elif "match_started" in message:
            match_id = message["match_started"]["match_id"]
            if args.ladder is not None and not queued:
                print(f"match {match_id} started without ladder_queued", file=sys.stderr)
                return 1
            queued = False
        elif "decision" in message:
            decision = message["decision"]
            verdict = connection.call("POST", "/api/play/answer", {
                "decision_id": decision["decision_id"], "action": rng.choice(decision["legal"])})
            answered += 1
            if "accepted" not in verdict:
                rejected += 1
                print(f"rejected: {verdict}", file=sys.stderr)
        elif "match_ended" in message:
            ended = message["match_ended"]
            print(f"match {match_id} ended: totals {ended['totals']} ranks {ended['ranks']} "
                  f"({ended['termination']}); {answered} answers, {rejected} rejected; "
                  f"grpc loaded: {'grpc' in sys.modules}", flush=True)
            if args.ladder is None:
                return 0 if rejected == 0 else 1
        elif "closed" in message:
            closed = message["closed"]
            print(f"closed: {closed['reason']}: {closed['message']}", flush=True)
            done = closed["reason"] == "CLOSE_REASON_MATCHES_PLAYED"
            return 0 if done and rejected == 0 else 1
    return 1


if __name__ == "__main__":
    sys.exit(main())
