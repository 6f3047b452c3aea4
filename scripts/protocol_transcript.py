"""Transcripts of the protocol: play a seat with bare gRPC calls or plain HTTP and record
every message, in and out.

    python scripts/protocol_transcript.py --server HOST:PORT --token TOKEN > transcript.jsonl
    python scripts/protocol_transcript.py --write docs/protocol.md docs/http.md
    python scripts/protocol_transcript.py --check docs/protocol.md docs/http.md

With ``--server`` and ``--token`` it plays that seat over gRPC and prints one JSON line per
message, ``{"dir": "send"|"recv", "message": {...}}``. It doubles as the smallest bot there
is: no SDK, only the generated messages and a grpc channel. The seat always plays its lowest
card (so it soon has to choose a row) and takes the row with the fewest bullheads.

With ``--write`` it starts a real server on a fresh database in a temporary folder, plays
one seat of a 2-seat 6 nimmt! match against the house bot ``greedy`` over gRPC, once one
message at a time and once with batches, and another such match over HTTP by long-poll,
and makes the HTTP API's example requests with urllib (written down as curl commands); it
writes each into the pages between their ``<!-- transcript:NAME -->`` and
``<!-- /transcript:NAME -->`` markers. ``--check`` plays them again and exits 1, printing
the difference, unless the pages hold the same transcripts (match ids, tokens, the time left
and how messages fall into polls differ from run to run and are not compared).
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from transcript_play import (  # beside this script
    MATCH,
    call,
    grpc_transcript,
    http,
    http_transcript,
    play_grpc,
    proto_json,
    request,
    tidy,
)

ROOT = Path(__file__).resolve().parent.parent
SHOWN_BASE = "http://127.0.0.1:8080"
"""The server's address as the examples show it (the default HTTP port)."""
SHOWN_ADMIN = "s3cret"
"""The admin token as the examples show it."""


class Curl:
    """HTTP requests to a real server, written down as curl commands, each followed by its
    answer on ``# `` lines (with the status when it is not 200)."""

    def __init__(self, base: str, admin: str) -> None:
        self.base = base
        self.admin = admin
        self.lines: list[str] = []

    def _command(self, method: str, path: str, shown_token: str | None,
                 body: dict[str, Any] | None, flags: str = "-s") -> None:
        url = SHOWN_BASE + path
        line = f"curl {flags}" + ("" if method == "GET" else f" -X {method}") + \
            (f" '{url}'" if "?" in url else f" {url}")
        if shown_token is not None:
            quote = '"' if shown_token.startswith("$") else "'"
            line += f" -H {quote}Authorization: Bearer {shown_token}{quote}"
        if body is None:
            self.lines.append(line)
            return
        self.lines += [line + " \\",
                       f"  -H 'Content-Type: application/json' -d '{json.dumps(body)}'"]

    def call(self, method: str, path: str, token: str | None = None,
             body: dict[str, Any] | None = None, shown_token: str | None = None) -> Any:
        """Make the request, write it down with its answer, and return the answer."""
        if token == self.admin:
            shown_token = SHOWN_ADMIN
        self._command(method, path, shown_token or token, body)
        status, answer = call(method, self.base + path, token, body)
        if isinstance(answer, dict) and "messages" in answer:
            self.lines += ['# {"messages": [', *(f"#   {json.dumps(m)}"
                                                  for m in answer["messages"]),
                           f'# ], "closed": {json.dumps(answer["closed"])}}}']
        else:
            self.lines.append(f"# {json.dumps(answer)}" +
                              ("" if status == 200 else f"     ({status})"))
        return answer

    def events(self, path: str, token: str | None, shown_token: str | None, head: int,
               until: str | None = None) -> None:
        """Read Server-Sent Events from ``path``: write down the first ``head`` and, with
        ``until``, the event of that name that ends the stream."""
        self._command("GET", path, shown_token or token, None, flags="-N")
        shown = 0
        with urllib.request.urlopen(request("GET", self.base + path, token),
                                    timeout=60) as stream:
            event: list[str] = []
            for raw in stream:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("data: "):
                    line = "data: " + json.dumps(tidy(json.loads(line[6:])))
                if line:
                    event.append(line)
                    continue
                if not event:
                    continue
                name = next((f[7:] for f in event if f.startswith("event: ")), "")
                if shown < head or name == until:
                    if shown == head and until is not None:
                        self.lines.append("# ...")
                    self.lines += [f"# {f}" for f in event] + ["#"]
                    shown += 1
                event = []
                if name == until or (until is None and shown >= head):
                    break
        if self.lines[-1] == "#":
            self.lines.pop()


def http_examples(server: Server, finished_match: str) -> dict[str, list[str]]:
    """The examples of docs/http.md, by marker name."""
    curl = Curl(server.http, server.admin)
    curl.call("GET", "/api/leaderboard?game=chess")
    curl.call("GET", "/api/matches?limit=0")
    examples = {"http-errors": curl.lines}

    curl = Curl(server.http, server.admin)
    curl.events(f"/api/matches/{finished_match}/feed", None, None, 2, until="match_ended")
    examples["http-feed"] = curl.lines

    admin = Curl(server.http, server.admin)
    created = admin.call("POST", "/api/admin/matches", server.admin, MATCH)
    token = created["seats"][0]["token"]
    curl = Curl(server.http, server.admin)
    curl.lines.append(f"T={token}")
    joined = curl.call("GET", "/api/play/poll", token, shown_token="$T")
    after = joined["messages"][-1]["seq"]
    polled = curl.call("GET", f"/api/play/poll?after={after}", token, shown_token="$T")
    examples["http-poll"] = curl.lines
    decision = next(m["decision"] for m in polled["messages"] if "decision" in m)
    hand = decision["six_nimmt"]["hand"]
    answer = Curl(server.http, server.admin)
    for card in (next(c for c in range(104, 0, -1) if c not in hand), min(hand)):
        answer.call("POST", "/api/play/answer", token, {
            "decision_id": decision["decision_id"], "action": {"card": card}}, "$T")
    examples["http-answer"] = answer.lines
    admin.lines.append("")
    admin.call("POST", f"/api/admin/matches/{created['match_id']}/abort", server.admin)
    examples["http-admin-matches"] = admin.lines

    _, token = server.create_match()
    curl = Curl(server.http, server.admin)
    curl.events("/api/play/stream", token, "$T", 2)
    examples["http-stream"] = curl.lines
    return examples


class Server:
    """A real ``bullring serve`` on free ports and a fresh SQLite database."""

    def __init__(self, folder: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bullring.server.cli", "serve", "--port", "0",
             "--http-port", "0",
             "--db", f"sqlite:///{folder / 'transcript.db'}"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.grpc = self.http = self.admin = ""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if found := re.search(r"listening on (\S+)", line):
                self.grpc = found.group(1)
            elif found := re.search(r"HTTP API on (http://[^/\s]+)", line):
                self.http = found.group(1)
            elif "admin token written to" in line:  # beside the database, never in the log
                self.admin = (folder / "transcript-admin-token").read_text().strip()
            if self.grpc and self.http and self.admin:
                return
        raise RuntimeError(f"the server exited with status {self.proc.wait()} before serving")

    def create_match(self) -> tuple[str, str]:
        """A 2-seat 6 nimmt! match against ``greedy``; return its id and seat 0's token."""
        created = http("POST", self.http + "/api/admin/matches", self.admin, MATCH)
        return created["match_id"], created["seats"][0]["token"]

    def stop(self) -> None:
        """Stop the server and wait for it."""
        self.proc.terminate()
        self.proc.wait(timeout=30)


def transcripts() -> dict[str, str]:
    """Every transcript and example of the docs, by marker name, each a fenced block."""
    with tempfile.TemporaryDirectory() as folder:
        server = Server(Path(folder))
        try:
            match_id, token = server.create_match()
            found = {"grpc": grpc_transcript(server.grpc, token),
                     "grpc-batches": grpc_transcript(server.grpc, server.create_match()[1],
                                                     True)[:6],
                     "http": http_transcript(server.http, server.create_match()[1])}
            examples = http_examples(server, match_id)
        finally:
            server.stop()
    blocks = {name: "```text\n" + "\n".join(f"{d} {t}".rstrip() if d else f"  {t}"
                                            for d, t in lines) + "\n```\n"
              for name, lines in found.items()}
    blocks.update({name: "```sh\n" + "\n".join(lines) + "\n```\n"
                   for name, lines in examples.items()})
    blocks["errors"] = error_table()
    return blocks


def error_table() -> str:
    """The error table of server/errors.py as a Markdown table, one row per error code a
    server answers with."""
    from bullring.server.errors import ERRORS

    rows = ["| code | gRPC status | HTTP | when |", "|---|---|---|---|"]
    seen: set[str] = set()
    for status in sorted(ERRORS.values(), key=lambda s: (s.http, s.code)):
        if status.wire and status.code not in seen:
            seen.add(status.code)
            rows.append(f"| `{status.code}` | `{status.grpc.name}` | {status.http} | "
                        f"{status.when} |")
    return "\n".join(rows) + "\n"


def _marked(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- transcript:{name} -->\n)(.*?)(<!-- /transcript:{name} -->)",
                      re.S)


def fill(page: str, blocks: dict[str, str]) -> str:
    """``page`` with each of its marked transcripts replaced by the one in ``blocks``."""
    names = re.findall(r"<!-- transcript:([\w-]+) -->", page)
    if not names:
        raise ValueError("the page has no <!-- transcript:NAME --> markers")
    for name in names:
        if name not in blocks:
            raise ValueError(f"no transcript is named {name!r}; known: {', '.join(blocks)}")
        found = _marked(name).search(page)
        if found is None:
            raise ValueError(f"<!-- transcript:{name} --> has no <!-- /transcript:{name} -->")
        start, end = found.span(2)
        page = page[:start] + blocks[name] + page[end:]
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
    """Play a seat and print its transcript, or write or check the pages' transcripts."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server")
    parser.add_argument("--token")
    parser.add_argument("--write", type=Path, nargs="+", metavar="PAGE")
    parser.add_argument("--check", type=Path, nargs="+", metavar="PAGE")
    args = parser.parse_args()
    if args.write or args.check:
        blocks = transcripts()
        failed = False
        for page_path in args.write or args.check:
            page = page_path.read_text(encoding="utf-8")
            fresh = fill(page, blocks)
            if args.write:
                page_path.write_text(fresh, encoding="utf-8")
                continue
            diff = list(difflib.unified_diff(comparable(page).splitlines(),
                                             comparable(fresh).splitlines(),
                                             f"{page_path} (as written)", "played now",
                                             lineterm=""))
            print("\n".join(diff) if diff else f"{page_path}: the transcripts hold")
            failed = failed or bool(diff)
        return 1 if failed else 0
    if not (args.server and args.token):
        parser.error("give --server and --token, or --write/--check PAGE")

    def dump(direction: str, message: Any) -> None:
        print(json.dumps({"dir": direction, "message": proto_json(message)}), flush=True)

    play_grpc(args.server, args.token, dump)
    return 0


if __name__ == "__main__":
    sys.exit(main())
