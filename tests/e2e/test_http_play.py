"""HTTP play: bots without gRPC play real matches over long-poll or Server-Sent Events, with
the same semantics as BotService (decision ids, idempotent answers, deadlines, in-band
rejections)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest

from bullring.referee.replay import verify
from tests.serving import ServerProcess, finish

HTTP_BOT = str(Path(__file__).resolve().parents[1] / "bots" / "http_only.py")


def http_bot(server: ServerProcess, token: str | None, *args: str) -> subprocess.Popen[str]:
    """Start the stdlib-only HTTP bot for one seat, in its own process (no Bullring code)."""
    assert token is not None
    return subprocess.Popen([sys.executable, "-I", HTTP_BOT, server.http, token, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("game,args", [
    ("six_nimmt", ["--setting", "rounds=2"]),
    ("no_thanks", ["--setting", "hidden_card=true"]),
])
def test_http_only_bots_play_a_full_match_and_its_replay_verifies(
        server: ServerProcess, game: str, args: list[str]) -> None:
    """Two HTTP-only bots (one long-polling, one on SSE) and a gRPC bot finish a match with
    no rejected answer and no default action; the stored replay verifies."""
    match = server.create_match(game, 3, "--seed", "11", "--deadline-ms", "5000", *args)
    procs = [http_bot(server, match.tokens[0], "--transport", "poll", "--seed", "1"),
             http_bot(server, match.tokens[1], "--transport", "sse", "--seed", "2"),
             server.bot(match.tokens[2], "house:random")]
    results = finish(procs)
    assert [code for code, _ in results] == [0, 0, 0], [out[-1500:] for _, out in results]
    for _, out in results[:2]:
        assert "(TERMINATION_NORMAL); " in out and "grpc loaded: False" in out
    replay: dict[str, Any] = json.loads(server.replay(match.match_id))
    verify(replay)
    answers = [e for e in replay["events"] if e["type"] == "answer" and e["seat"] in (0, 1)]
    assert answers and not any(e["default"] for e in answers)
    assert not [e for e in replay["events"] if e["type"] == "reject"]


def poll(client: httpx.Client, token: str, after: int | None, wait_ms: int = 10_000
         ) -> dict[str, Any]:
    """One long-poll of a seat."""
    params: dict[str, int] = {"wait_ms": wait_ms}
    if after is not None:
        params["after"] = after
    response = client.get("/api/play/poll", params=params,
                          headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def next_of(client: httpx.Client, token: str, after: int | None, kind: str
            ) -> tuple[dict[str, Any], int]:
    """Poll until a message of ``kind``; return it and its seq."""
    while True:
        result = poll(client, token, after)
        for message in result["messages"]:
            after = message["seq"]
            if kind in message:
                return message[kind], after


def answer(client: httpx.Client, token: str, decision_id: str, action: dict[str, Any]
           ) -> httpx.Response:
    """POST one answer."""
    return client.post("/api/play/answer", json={"decision_id": decision_id, "action": action},
                       headers={"Authorization": f"Bearer {token}"})


class Opening(NamedTuple):
    """A two-seat 6 nimmt! match (deadline 20 s) whose seats both joined by long-poll, seat
    0 at its first decision."""

    match_id: str
    token: str
    """Seat 0's."""
    other: str
    """Seat 1's."""
    other_seq: int
    """The seq of seat 1's ``match_started``."""
    started: dict[str, Any]
    """Seat 0's ``match_started``."""
    decision: dict[str, Any]
    """Seat 0's first decision request."""
    seq: int
    """Its seq."""


def opening(server: ServerProcess, client: httpx.Client) -> Opening:
    """Create a two-seat match, join both seats and take seat 0's first decision request."""
    match = server.create_match("six_nimmt", 2, "--deadline-ms", "20000", "--setting",
                                "rounds=1")
    token, other = str(match.tokens[0]), str(match.tokens[1])
    _, other_seq = next_of(client, other, None, "match_started")
    started, seq = next_of(client, token, None, "match_started")
    decision, seq = next_of(client, token, seq, "decision")
    return Opening(match.match_id, token, other, other_seq, started, decision, seq)


def test_http_answers_have_grpc_semantics(server: ServerProcess) -> None:
    """Rejections are in-band with a reason and the seat may answer again; a repeated answer
    is accepted and counted once; a re-join gets the pending decision again; a poll repeats
    what was not acknowledged; a bad token is 401, a malformed body 422, as JSON errors."""
    with httpx.Client(base_url=server.http, timeout=30) as client:
        match_id, token, other, other_seq, started, decision, seq = opening(server, client)
        assert started["seat"] == 0 and started["match_id"] == match_id
        hand = decision["six_nimmt"]["hand"]
        not_held = next(c for c in range(1, 105) if c not in hand)

        illegal = answer(client, token, decision["decision_id"], {"card": not_held}).json()
        assert illegal["rejected"]["reason"] == "REJECT_REASON_ILLEGAL_ACTION"
        malformed = answer(client, token, decision["decision_id"], {"word": "take"}).json()
        assert malformed["rejected"]["reason"] == "REJECT_REASON_MALFORMED_ACTION"
        empty = answer(client, token, decision["decision_id"], {}).json()
        assert empty["rejected"]["reason"] == "REJECT_REASON_MALFORMED_ACTION"
        stale = answer(client, token, "nope:0:0", {"card": hand[0]}).json()
        assert stale["rejected"]["reason"] == "REJECT_REASON_NOT_PENDING"

        again = poll(client, token, None, wait_ms=0)  # a re-join: the pending decision again
        kinds = [next(k for k in m if k != "seq") for m in again["messages"]]
        assert kinds[:2] == ["match_started", "decision"]
        assert again["messages"][1]["decision"]["decision_id"] == decision["decision_id"]
        seq = again["messages"][-1]["seq"]
        lost = poll(client, token, again["messages"][0]["seq"], wait_ms=0)  # a lost response
        assert lost["messages"] == again["messages"][1:]  # is sent again, minus the acked

        first = answer(client, token, decision["decision_id"], {"card": hand[0]}).json()
        repeat = answer(client, token, decision["decision_id"], {"card": hand[-1]}).json()
        assert first == repeat == {"accepted": {"decision_id": decision["decision_id"]}}
        other_decision, _ = next_of(client, other, other_seq, "decision")
        assert answer(client, other, other_decision["decision_id"],
                      other_decision["legal"][0]).json().get("accepted")
        revealed, seq = next_of(client, token, seq, "event")
        while "cards_revealed" not in revealed["six_nimmt"]:
            revealed, seq = next_of(client, token, seq, "event")
        # the first answer counted
        assert revealed["six_nimmt"]["cards_revealed"]["plays"][0] == hand[0]

        for bad_token in ("", "Bearer nope"):
            response = client.get("/api/play/poll", headers={"Authorization": bad_token})
            assert response.status_code == 401
            assert response.json()["error"]["code"] == "unauthorized"
        response = client.post("/api/play/answer", content=b"{not json",
                               headers={"Authorization": f"Bearer {token}",
                                        "Content-Type": "application/json"})
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "invalid_request"
        two = answer(client, token, decision["decision_id"], {"card": 1, "row": 0})
        assert two.status_code == 422 and two.json()["error"]["code"] == "invalid_request"


def test_a_poll_ahead_of_its_connection_is_refused_and_loses_nothing(
        server: ServerProcess) -> None:
    """A poll whose ``after`` names a message not sent yet would acknowledge messages before
    they exist (and drop them unread): it is refused, 422 ``invalid_request`` naming the
    newest seq, and the connection goes on with every message numbered in turn."""
    with httpx.Client(base_url=server.http, timeout=30) as client:
        _, token, other, other_seq, _, decision, seq = opening(server, client)
        ahead = client.get("/api/play/poll", params={"after": seq + 3, "wait_ms": 0},
                           headers={"Authorization": f"Bearer {token}"})
        assert ahead.status_code == 422, ahead.text
        error = ahead.json()["error"]
        assert error["code"] == "invalid_request"
        assert f"after={seq + 3}" in error["message"] and f"({seq})" in error["message"]

        assert answer(client, token, decision["decision_id"],
                      {"card": decision["legal"][0]["card"]}).json().get("accepted")
        other_decision, _ = next_of(client, other, other_seq, "decision")
        assert answer(client, other, other_decision["decision_id"],
                      other_decision["legal"][0]).json().get("accepted")
        numbers = [seq]
        while len(numbers) < 5:  # the verdict, the reveal and what follows, none skipped
            numbers += [m["seq"] for m in poll(client, token, numbers[-1])["messages"]]
        assert numbers == list(range(seq, seq + len(numbers)))


def test_a_silent_http_seat_gets_a_default_at_its_deadline(server: ServerProcess) -> None:
    """A long-polling seat that does not answer gets the default action when its deadline
    passes, a timeout is logged, and the next decision comes with a new id."""
    match = server.create_match("six_nimmt", 2, "--deadline-ms", "300", "--house", "1=random",
                                "--setting", "rounds=1")
    token = str(match.tokens[0])
    with httpx.Client(base_url=server.http, timeout=30) as client:
        _, seq = next_of(client, token, None, "match_started")
        first, seq = next_of(client, token, seq, "decision")
        second, seq = next_of(client, token, seq, "decision")
        assert second["decision_id"] != first["decision_id"]
        late = answer(client, token, first["decision_id"], {"card": first["legal"][0]["card"]})
        assert late.json()["rejected"]["reason"] == "REJECT_REASON_NOT_PENDING"
        abort = client.post(f"/api/admin/matches/{match.match_id}/abort")
        assert abort.status_code == 401  # admin operations need the admin token
        ended, _ = next_of(client, token, seq, "match_ended")
        assert ended["termination"] == "TERMINATION_NORMAL"
    replay: dict[str, Any] = json.loads(server.replay(match.match_id))
    assert any(e["type"] == "timeout" and e["seat"] == 0 for e in replay["events"])
