"""Practice matches and challenges end to end: a real ``bullring serve`` and registered
bots in their own ``bullring bot --ladder`` processes. Two bots wait on a ladder whose
tables need four, so every match they play is one they asked for."""

from __future__ import annotations

import grpc
import httpx
import pytest

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.store import Store
from tests.e2e.challenge_rig import (  # the ladder fixture: tests/e2e/conftest.py
    Calls,
    assert_unrated,
    ended,
)
from tests.ladder_helpers import LadderBot, LadderServer, wait_until


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
