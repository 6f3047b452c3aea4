"""A bot that speaks only HTTP: Python's standard library, no gRPC, no Bullring code.

    python tests/bots/http_only.py BASE_URL TOKEN [--transport poll|sse] [--seed N]

It reads its seat's messages by long-poll (or Server-Sent Events), answers every decision
with a random legal action, and prints the result when the match ends. It exits 0 only if
every answer was accepted.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import urllib.request
from collections.abc import Iterator
from typing import Any


class Seat:
    """One seat's HTTP connection: requests carry the seat's bearer token."""

    def __init__(self, base: str, token: str) -> None:
        self.base = base.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: Any = None, timeout: float = 60) -> Any:
        """One JSON request; the decoded JSON answer."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers=self.headers)
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())

    def poll(self) -> Iterator[dict[str, Any]]:
        """Every message of the seat, by long-poll, acknowledging as it goes."""
        after: int | None = None
        while True:
            query = "wait_ms=10000" + ("" if after is None else f"&after={after}")
            result = self.call("GET", f"/api/play/poll?{query}")
            for message in result["messages"]:
                after = message["seq"]
                yield message
            if result["closed"]:
                after = None

    def stream(self) -> Iterator[dict[str, Any]]:
        """Every message of the seat, from its Server-Sent Events stream."""
        request = urllib.request.Request(self.base + "/api/play/stream", headers=self.headers)
        with urllib.request.urlopen(request, timeout=60) as response:
            data: list[str] = []
            for raw in response:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("data:"):
                    data.append(line[5:].strip())
                elif not line and data:
                    yield json.loads("\n".join(data))
                    data = []


def main(argv: list[str] | None = None) -> int:
    """Play the seat to the end of its match."""
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("token")
    parser.add_argument("--transport", choices=("poll", "sse"), default="poll")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    seat = Seat(args.base, args.token)
    rng = random.Random(args.seed)
    rejected = answered = 0
    messages = seat.poll() if args.transport == "poll" else seat.stream()
    for message in messages:
        if "decision" in message:
            decision = message["decision"]
            verdict = seat.call("POST", "/api/play/answer", {
                "decision_id": decision["decision_id"], "action": rng.choice(decision["legal"])})
            answered += 1
            if "accepted" not in verdict:
                rejected += 1
                print(f"rejected: {verdict}", file=sys.stderr)
        elif "match_ended" in message:
            ended = message["match_ended"]
            print(f"match ended {ended['termination']}: totals {ended['totals']}; "
                  f"{answered} answers, {rejected} rejected; grpc loaded: "
                  f"{'grpc' in sys.modules}", flush=True)
            return 0 if rejected == 0 else 1
    return 1


if __name__ == "__main__":
    sys.exit(main())
