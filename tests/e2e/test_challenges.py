"""Practice matches and challenges end to end: a real ``bullring serve`` and registered
bots in their own ``bullring bot --ladder`` processes. Two bots wait on a ladder whose
tables need four, so every match they play is one they asked for."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from client_sdk import wire
from client_sdk.generated.bullring.v2 import referee_pb2 as pb
from referee.replay import verify
from server.store import Store
from tests.ladder_helpers import LadderBot, LadderServer, Lines, wait_until
from tests.serving import CLI, db_url

FAST = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
        "--ladder-setting", "six_nimmt:deadline_ms=1000"]
"""Short 6 nimmt! matches: one round of ten tricks."""


class Calls:
    """ChallengeService and LadderService calls over one real gRPC channel."""

    def __init__(self, address: str) -> None:
        self.loop = asyncio.new_event_loop()
        # grpc.aio looks up the current loop outside the calls too (a channel's callbacks):
        # make ours the current one, or it finds none after other tests closed theirs.
        asyncio.set_event_loop(self.loop)
        self.channel = self.loop.run_until_complete(self._open(address))
        self.challenges = wire.challenge_stub(self.channel)
        self.ladder = wire.ladder_stub(self.channel)

    @staticmethod
    async def _open(address: str) -> grpc.aio.Channel:
        return grpc.aio.insecure_channel(address)

    def challenge(self, method: str, token: str, request: Any) -> Any:
        """Call a ChallengeService method as the bot of ``token``."""
        return self.loop.run_until_complete(self.challenges[method](
            request, metadata=(("authorization", f"Bearer {token}"),), timeout=10))

    def matches(self) -> list[pb.MatchSummary]:
        """The match log (LadderService.ListMatches)."""
        return list(self.loop.run_until_complete(self.ladder["ListMatches"](
            pb.ListMatchesRequest(), timeout=10)).matches)

    def close(self) -> None:
        """Close the channel and the loop."""
        self.loop.run_until_complete(self.channel.close())
        self.loop.close()
        asyncio.set_event_loop(None)


@pytest.fixture
def ladder(tmp_path: Path, stop_all: list[LadderBot | LadderServer]
           ) -> Iterator[tuple[LadderServer, dict[str, str], dict[str, LadderBot], Calls]]:
    """A server with ann, bob and cy registered; ann and bob wait on its 6 nimmt! ladder."""
    server = LadderServer(db_url(tmp_path), FAST).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in ("ann", "bob", "cy")}
    bots = {name: LadderBot.start(name, server.address, tokens[name], "six_nimmt",
                                  "house:greedy") for name in ("ann", "bob")}
    stop_all.extend(bots.values())
    for bot in bots.values():
        bot.err.wait(lambda lines: any("waiting on the six_nimmt ladder" in ln for ln in lines),
                     30, "the bot to wait on the ladder")
    calls = Calls(server.address)
    yield server, tokens, bots, calls
    calls.close()


def ended(bot: LadderBot, match_id: str) -> bool:
    """Whether ``bot`` saw ``match_id`` end normally."""
    return (match_id, "normal") in bot.matches()


def assert_unrated(store: Store, match_id: str, seats: list[str]) -> None:
    """The match is stored finished and unrated, its replay says so and verifies, and no
    rating changed."""
    summary = store.match_page(match_id=match_id)[0][0]
    assert summary.status == "finished" and not summary.rated
    assert list(summary.seat_names) == seats
    replay = store.replay(match_id)
    assert replay["rated"] is False
    verify(replay)
    assert store.rating_changes(match_id=match_id) == []


def test_a_practice_match_and_an_accepted_challenge_play_to_the_end_unrated(
        ladder: tuple[LadderServer, dict[str, str], dict[str, LadderBot], Calls]) -> None:
    """ann asks for a practice match against two house bots: it is accepted at once, seated
    on ann's ladder stream (MatchStarted says unrated) and played to the end. Then ann
    challenges bob; bob sees it, accepts, and both play it out. Neither match changes a
    rating or reaches the leaderboard; the match log and the replays say unrated."""
    server, tokens, bots, calls = ladder
    made = calls.challenge("CreateChallenge", tokens["ann"], pb.CreateChallengeRequest(
        game="six_nimmt", opponents=["house:greedy", "house:random"])).challenge
    assert made.status == "accepted" and list(made.opponents) == ["house:greedy",
                                                                  "house:random"]
    wait_until(lambda: calls.challenge("GetChallenge", tokens["ann"], pb.GetChallengeRequest(
        challenge_id=made.challenge_id)).challenge.match_id != "", 30, "the practice match")
    practice = calls.challenge("GetChallenge", tokens["ann"], pb.GetChallengeRequest(
        challenge_id=made.challenge_id)).challenge
    assert practice.status == "started"
    wait_until(lambda: ended(bots["ann"], practice.match_id), 60, "the practice match's end")
    assert f"match {practice.match_id} started: six_nimmt, seat 0 of [ann, house:greedy, " \
           f"house:random], playing house:greedy (unrated)" in bots["ann"].err.text()

    asked = calls.challenge("CreateChallenge", tokens["ann"], pb.CreateChallengeRequest(
        game="six_nimmt", opponents=["bob"])).challenge
    assert asked.status == "pending" and dict(asked.answers) == {"bob": "pending"}
    seen = calls.challenge("ListChallenges", tokens["bob"], pb.ListChallengesRequest())
    assert [c.challenge_id for c in seen.challenges if c.status == "pending"] == \
        [asked.challenge_id]
    accepted = calls.challenge("AnswerChallenge", tokens["bob"], pb.AnswerChallengeRequest(
        challenge_id=asked.challenge_id, accept=True)).challenge
    assert accepted.status in ("accepted", "started")
    wait_until(lambda: calls.challenge("GetChallenge", tokens["bob"], pb.GetChallengeRequest(
        challenge_id=asked.challenge_id)).challenge.match_id != "", 30, "the challenge match")
    match_id = calls.challenge("GetChallenge", tokens["bob"], pb.GetChallengeRequest(
        challenge_id=asked.challenge_id)).challenge.match_id
    wait_until(lambda: ended(bots["ann"], match_id) and ended(bots["bob"], match_id), 60,
               "the challenge match's end")
    assert "(unrated)" in bots["bob"].err.text()

    logged = {m.match_id: m for m in calls.matches()}
    assert not logged[practice.match_id].rated and not logged[match_id].rated
    store = Store(server.db)
    assert_unrated(store, practice.match_id, ["ann", "house:greedy", "house:random"])
    assert_unrated(store, match_id, ["ann", "bob"])
    assert store.leaderboard("six_nimmt") == []
    assert {m.id for m in store.matches()} == {practice.match_id, match_id}


def test_a_declined_challenge_is_reported_to_the_challenger(
        ladder: tuple[LadderServer, dict[str, str], dict[str, LadderBot], Calls]) -> None:
    """ann challenges cy; cy's owner declines with a reason: ann reads the challenge as
    declined, by whom and why; it can be answered no more and no match is made. Bad
    requests get the status that names the problem."""
    server, tokens, _, calls = ladder
    asked = calls.challenge("CreateChallenge", tokens["ann"], pb.CreateChallengeRequest(
        game="six_nimmt", opponents=["cy"])).challenge
    declined = calls.challenge("AnswerChallenge", tokens["cy"], pb.AnswerChallengeRequest(
        challenge_id=asked.challenge_id, accept=False, reason="not today")).challenge
    assert declined.status == "declined"
    seen = calls.challenge("GetChallenge", tokens["ann"], pb.GetChallengeRequest(
        challenge_id=asked.challenge_id)).challenge
    assert (seen.status, seen.message, dict(seen.answers)) == \
        ("declined", "declined by cy: not today", {"cy": "declined"})
    with pytest.raises(grpc.aio.AioRpcError) as late:
        calls.challenge("AnswerChallenge", tokens["cy"], pb.AnswerChallengeRequest(
            challenge_id=asked.challenge_id, accept=True))
    assert late.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "is declined" in (late.value.details() or "")

    refusals = [
        (tokens["ann"], pb.CreateChallengeRequest(game="six_nimmt", opponents=["zed"]),
         grpc.StatusCode.NOT_FOUND, "no bot named 'zed'"),
        (tokens["ann"], pb.CreateChallengeRequest(game="six_nimmt", opponents=[]),
         grpc.StatusCode.INVALID_ARGUMENT, "name 1 to"),
        (tokens["ann"], pb.CreateChallengeRequest(game="six_nimmt",
                                                  opponents=["house:nope"]),
         grpc.StatusCode.INVALID_ARGUMENT, "unknown house bot 'nope'"),
        (tokens["ann"], pb.CreateChallengeRequest(game="no_thanks",
                                                  opponents=["house:greedy"]),
         grpc.StatusCode.FAILED_PRECONDITION, "not no_thanks"),
        ("bot_not-a-token", pb.CreateChallengeRequest(game="six_nimmt", opponents=["cy"]),
         grpc.StatusCode.UNAUTHENTICATED, "not a registered bot's token"),
    ]
    for token, request, code, words in refusals:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            calls.challenge("CreateChallenge", token, request)
        assert refused.value.code() == code and words in (refused.value.details() or "")
    assert Store(server.db).matches() == []


def test_the_same_over_http(
        ladder: tuple[LadderServer, dict[str, str], dict[str, LadderBot], Calls]) -> None:
    """Over HTTP: bob turns on auto-accept, so ann's challenge is accepted when made and
    played to the end unrated (the match log says so); cy declines another and ann reads
    why; errors are JSON with the right status."""
    server, tokens, bots, _ = ladder

    def auth(name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {tokens[name]}"}

    with httpx.Client(base_url=server.http, timeout=10) as http:
        turned = http.put("/api/challenges/auto-accept", json={"auto_accept": True},
                          headers=auth("bob"))
        assert turned.status_code == 200 and turned.json() == {"bot": "bob",
                                                               "auto_accept": True}
        made = http.post("/api/challenges", json={"game": "six_nimmt", "opponents": ["bob"]},
                         headers=auth("ann"))
        assert made.status_code == 201 and made.json()["status"] == "accepted"
        challenge_id = made.json()["id"]
        wait_until(lambda: http.get(f"/api/challenges/{challenge_id}", headers=auth("bob"))
                   .json()["match_id"] is not None, 30, "the challenge match")
        match_id = http.get(f"/api/challenges/{challenge_id}", headers=auth("ann")
                            ).json()["match_id"]
        wait_until(lambda: ended(bots["ann"], match_id) and ended(bots["bob"], match_id), 60,
                   "the challenge match's end")
        info = http.get(f"/api/matches/{match_id}").json()
        assert info["status"] == "finished" and info["rated"] is False
        assert http.get(f"/api/matches/{match_id}/replay").json()["rated"] is False

        asked = http.post("/api/challenges", json={"game": "six_nimmt", "opponents": ["cy"]},
                          headers=auth("ann")).json()
        assert asked["status"] == "pending"
        assert [c["id"] for c in http.get("/api/challenges", headers=auth("cy"))
                .json()["challenges"]] == [asked["id"]]
        declined = http.post(f"/api/challenges/{asked['id']}/decline",
                             json={"reason": "busy"}, headers=auth("cy"))
        assert declined.status_code == 200
        seen = http.get(f"/api/challenges/{asked['id']}", headers=auth("ann")).json()
        assert (seen["status"], seen["message"]) == ("declined", "declined by cy: busy")

        again = http.post(f"/api/challenges/{asked['id']}/accept", headers=auth("cy"))
        assert again.status_code == 409 and "is declined" in again.json()["error"]["message"]
        assert http.get("/api/challenges").status_code == 401
        wrong = http.post("/api/challenges", json={"game": "six_nimmt", "opponents": ["cy"]},
                          headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        assert http.post("/api/challenges", json={"game": "six_nimmt", "opponents": []},
                         headers=auth("ann")).status_code == 422
        assert http.get("/api/challenges/nope", headers=auth("ann")).json()["error"]["code"] \
            == "not_found"
        table = http.post("/api/challenges", json={"game": "six_nimmt",
                                                   "opponents": ["house:random"] * 10},
                          headers=auth("ann"))
        assert table.status_code == 400 and "seats 2-10" in table.json()["error"]["message"]
    assert Store(server.db).leaderboard("six_nimmt") == []


def bullring(*args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``bullring ARGS`` (with ``--token`` when given)."""
    extra = ["--token", token] if token is not None else []
    return subprocess.run([*CLI, *args, *extra], capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if k != "BULLRING_TOKEN"})


def test_bullring_challenge_over_the_server(
        ladder: tuple[LadderServer, dict[str, str], dict[str, LadderBot], Calls]) -> None:
    """``bullring challenge`` with --server: a practice match is accepted when made and
    played unrated; bob turns auto-accept on and ann's challenge is played; cy declines one
    and ``show`` tells ann who declined and why (exit 1). Bad calls exit with one line."""
    server, tokens, bots, _ = ladder
    where = ["--server", server.address]
    made = bullring("challenge", "create", "--game", "six_nimmt", "--against",
                    "house:greedy,house:random", *where, "--json", token=tokens["ann"])
    assert made.returncode == 0, made.stderr
    practice = json.loads(made.stdout)
    assert practice["status"] == "accepted"

    def match_of(challenge_id: str) -> str | None:
        shown = bullring("challenge", "show", challenge_id, *where, "--json",
                         token=tokens["ann"])
        found: str | None = json.loads(shown.stdout)["match_id"]
        return found

    wait_until(lambda: match_of(practice["id"]) is not None, 30, "the practice match")
    first = match_of(practice["id"])
    assert first is not None
    wait_until(lambda: ended(bots["ann"], first), 60, "the practice match's end")

    turned = bullring("challenge", "auto-accept", "on", *where, token=tokens["bob"])
    assert (turned.returncode, turned.stdout) == (0, "auto-accept on\n")
    asked = bullring("challenge", "create", "--game", "six_nimmt", "--against", "bob", *where,
                     token=tokens["ann"])
    assert asked.returncode == 0 and ": accepted; answers: bob accepted" in asked.stdout
    challenge_id = asked.stdout.split()[1]
    wait_until(lambda: match_of(challenge_id) is not None, 30, "the challenge match")
    second = match_of(challenge_id)
    assert second is not None
    wait_until(lambda: ended(bots["ann"], second) and ended(bots["bob"], second), 60,
               "the challenge match's end")

    asked = bullring("challenge", "create", "--game", "six_nimmt", "--against", "cy", *where,
                     token=tokens["ann"])
    declined_id = asked.stdout.split()[1]
    listed = bullring("challenge", "list", *where, token=tokens["cy"])
    assert listed.returncode == 0 and f"challenge {declined_id} " in listed.stdout
    declined = bullring("challenge", "decline", declined_id, "--reason", "busy", *where,
                        token=tokens["cy"])
    assert declined.returncode == 0 and "declined by cy: busy" in declined.stdout
    shown = bullring("challenge", "show", declined_id, *where, token=tokens["ann"])
    assert shown.returncode == 1
    assert shown.stdout.strip().endswith(": declined; answers: cy declined; declined by cy: busy")

    missing = bullring("challenge", "list", *where)
    assert missing.returncode == 2 and "--token" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    wrong = bullring("challenge", "list", *where, token="bot_wrong")
    assert wrong.returncode == 3 and len(wrong.stderr.strip().splitlines()) == 1
    unknown = bullring("challenge", "create", "--game", "six_nimmt", "--against", "zed",
                       *where, token=tokens["ann"])
    assert unknown.returncode == 7 and "no bot named 'zed'" in unknown.stderr
    late = bullring("challenge", "accept", declined_id, *where, token=tokens["cy"])
    assert late.returncode == 2 and "is declined" in late.stderr

    store = Store(server.db)
    assert {m.id for m in store.matches()} == {first, second}
    assert not any(m.rated for m in store.matches()) and store.leaderboard("six_nimmt") == []


def test_bullring_challenge_on_the_database(tmp_path: Path) -> None:
    """``bullring challenge`` with --db does the same on the database: a challenge made,
    listed, declined and shown declined (exit 1); a read never creates a database."""
    db = db_url(tmp_path)
    tokens = {name: Store(db).add_bot(name) for name in ("ann", "cy")}
    made = bullring("challenge", "create", "--game", "six_nimmt", "--against", "cy,house:greedy",
                    "--db", db, "--json", token=tokens["ann"])
    assert made.returncode == 0, made.stderr
    challenge = json.loads(made.stdout)
    assert (challenge["status"], challenge["opponents"]) == ("pending", ["cy", "house:greedy"])
    listed = bullring("challenge", "list", "--db", db, "--json", token=tokens["cy"])
    assert [c["id"] for c in json.loads(listed.stdout)] == [challenge["id"]]
    assert bullring("challenge", "decline", challenge["id"], "--db", db,
                    token=tokens["cy"]).returncode == 0
    shown = bullring("challenge", "show", challenge["id"], "--db", db, token=tokens["ann"])
    assert shown.returncode == 1 and "declined by cy" in shown.stdout
    again = json.loads(bullring("challenge", "create", "--game", "six_nimmt", "--against", "cy",
                                "--db", db, "--json", token=tokens["ann"]).stdout)
    accepted = bullring("challenge", "accept", again["id"], "--db", db, token=tokens["cy"])
    assert accepted.returncode == 0 and ": accepted; answers: cy accepted" in accepted.stdout
    assert bullring("challenge", "auto-accept", "on", "--db", db,
                    token=tokens["cy"]).returncode == 0
    auto = bullring("challenge", "create", "--game", "six_nimmt", "--against", "cy", "--db",
                    db, token=tokens["ann"])
    assert ": accepted; answers: cy accepted" in auto.stdout
    table = bullring("challenge", "create", "--game", "no_thanks", "--against", "house:greedy",
                     "--db", db, token=tokens["ann"])
    assert table.returncode == 2 and "house bot 'greedy' does not play no_thanks" in \
        table.stderr
    assert len(table.stderr.strip().splitlines()) == 1
    nowhere = tmp_path / "none.db"
    absent = bullring("challenge", "list", "--db", f"sqlite:///{nowhere}", token=tokens["ann"])
    assert absent.returncode == 2 and not nowhere.exists()


def test_a_challenge_not_answered_in_time_expires(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """With ``serve --challenge-expiry 0.5``, ann's challenge to cy is pending when made;
    unanswered, ann then reads it as expired, naming who did not answer (``bullring
    challenge show`` exits 1 saying so), and cy can no longer accept it."""
    server = LadderServer(db_url(tmp_path), [*FAST, "--challenge-expiry", "0.5"]).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in ("ann", "cy")}
    calls = Calls(server.address)
    try:
        asked = calls.challenge("CreateChallenge", tokens["ann"], pb.CreateChallengeRequest(
            game="six_nimmt", opponents=["cy"])).challenge
        assert asked.status == "pending"
        request = pb.GetChallengeRequest(challenge_id=asked.challenge_id)
        seen = asked
        for _ in range(10_000):  # each call waits on the server's answer
            seen = calls.challenge("GetChallenge", tokens["ann"], request).challenge
            if seen.status != "pending":
                break
        assert (seen.status, seen.message) == ("expired", "expired: cy did not answer within "
                                                          "0.5 s")
        with pytest.raises(grpc.aio.AioRpcError) as late:
            calls.challenge("AnswerChallenge", tokens["cy"], pb.AnswerChallengeRequest(
                challenge_id=asked.challenge_id, accept=True))
        assert late.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "is expired" in (late.value.details() or "")
    finally:
        calls.close()
    shown = bullring("challenge", "show", asked.challenge_id, "--server", server.address,
                     token=tokens["ann"])
    assert shown.returncode == 1 and "expired: cy did not answer" in shown.stdout
    assert Store(server.db).challenge(asked.challenge_id).status == "expired"


def test_bullring_bot_practice_plays_one_unrated_match(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """``bullring bot --practice`` (three house bots by default) and the SDK's
    ``bullring-bot --practice --against`` ask the server for a practice match, play it to
    the end on the ladder and leave; each match is the challenge's, stored unrated. A
    challenge to a registered bot that declines ends the command with status 1."""
    server = LadderServer(db_url(tmp_path), FAST).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in ("ann", "bob")}
    sdk = [sys.executable, "-m", "client_sdk.runner_cli"]
    runs = [([*CLI, "bot"], []), (sdk, ["--against", "house:random,house:greedy"])]
    store = Store(server.db)
    for command, extra in runs:
        done = subprocess.run([*command, "--server", server.address, "--token", tokens["ann"],
                               "--ladder", "six_nimmt", "--practice", *extra, "house:greedy"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        asked, ended = done.stdout.splitlines()
        challenge_id = asked.split("challenge ")[1].split()[0]
        assert asked.endswith(", accepted")
        match_id = ended.split()[1]
        assert ended.startswith(f"match {match_id} ended: totals ")
        challenge = store.challenge(challenge_id)
        assert challenge.status == "started" and challenge.match_id == match_id
        seats = ["ann", *(extra[1].split(",") if extra else
                          ["house:greedy", "house:random", "house:greedy-2"])]
        assert_unrated(store, match_id, seats)

    declined = subprocess.Popen([*CLI, "bot", "--server", server.address, "--token",
                                 tokens["ann"], "--ladder", "six_nimmt", "--practice",
                                 "--against", "bob", "house:greedy"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert declined.stdout is not None
    out = Lines(declined.stdout)
    out.wait(lambda lines: any("waiting for bob to accept" in ln for ln in lines), 60,
             "the command to wait for bob")
    challenge_id = out.lines[0].split("challenge ")[1].split()[0]
    refused = bullring("challenge", "decline", challenge_id, "--reason", "busy", "--server",
                       server.address, token=tokens["bob"])
    assert refused.returncode == 0, refused.stderr
    _, err = declined.communicate(timeout=60)
    assert declined.returncode == 1
    assert err.strip().splitlines()[-1].endswith(f"challenge {challenge_id} is declined: "
                                                 f"declined by bob: busy")
