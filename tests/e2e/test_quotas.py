"""Bounded work per request, per address and per bot, on a real ``bullring serve``: a match
made without the admin token stays within the server's caps (400 ``setting_over_cap``
naming the setting and its cap), an address gets a few matches for people open at once and
per hour, a bot a few challenges waiting at once and per hour (429 with Retry-After over
HTTP, RESOURCE_EXHAUSTED with the same message over gRPC), a bot's challenges are listed
whatever other bots asked for, and challenges over are deleted after their retention."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from pathlib import Path

import grpc
import httpx
import pytest
from sqlmodel import Session, select

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.store import Store
from bullring.server.store.models import ChallengeBotRow, ChallengeRow, utcnow
from tests.e2e.challenge_rig import FAST, Calls
from tests.ladder_helpers import LadderBot, LadderServer, wait_until
from tests.serving import ServerProcess, db_url

URL = "/api/human-matches"


def client(server: ServerProcess, source: str = "127.0.0.1") -> httpx.Client:
    """An HTTP client of ``server`` whose connections come from the loopback address
    ``source`` (127.0.0.2 is another address of the same machine)."""
    return httpx.Client(base_url=server.http, timeout=30,
                        transport=httpx.HTTPTransport(local_address=source))


def refused(answer: httpx.Response, status: int, code: str) -> str:
    """Assert ``answer`` is the JSON error ``code`` with ``status``; its message."""
    assert answer.status_code == status, answer.text
    body = answer.json()["error"]
    assert body["code"] == code, body
    return str(body["message"])


def test_a_match_for_people_stays_within_the_caps_the_admin_may_exceed(
        tmp_path: Path) -> None:
    """The finding: an anonymous request asked for 1,000 rounds with one timeout (10,000
    tricks in 5 s, 5.6 MB stored) or for a seat lasting 6.9 days (1,000 rounds, 60 s, 1,000
    timeouts, an hour's bank). Each setting that drives work is refused above its cap, 400
    ``setting_over_cap`` naming the setting and the cap, and nothing is stored; a match at
    every cap is made; the admin's match may exceed them; ``--match-cap`` moves a cap."""
    server = ServerProcess(db_url(tmp_path), ["--match-cap", "rounds=3",
                                              "--human-open-per-address", "0"]).start()
    try:
        admin = server.admin_token()
        with client(server) as http:
            for settings, name, cap in (({"rounds": "1000"}, "rounds", 3),
                                        ({"max_timeouts": "1000"}, "max_timeouts", 5),
                                        ({"time_bank_ms": "3600000"}, "time_bank_ms", 60_000),
                                        ({"end_threshold": "10000"}, "end_threshold", 100)):
                message = refused(http.post(URL, json={"game": "six_nimmt",
                                                       "settings": settings}),
                                  400, "setting_over_cap")
                assert message.startswith(f"{name} is at most {cap} ") and \
                    f"--match-cap {name}=MAX" in message, message
            message = refused(http.post(URL, json={"game": "no_thanks",
                                                   "settings": {"chips": "100"}}),
                              400, "setting_over_cap")
            assert message.startswith("chips is at most 20 "), message
            assert Store(server.db).matches() == []

            widest = http.post(URL, json={"game": "six_nimmt", "bots": ["random"] * 9,
                                          "deadline_ms": 60_000, "settings": {
                                              "rounds": "3", "max_timeouts": "5",
                                              "time_bank_ms": "60000"}})
            assert widest.status_code == 201, widest.text
            assert len(widest.json()["seat_names"]) == 10
            made = http.post("/api/admin/matches", headers={"Authorization": f"Bearer {admin}"},
                             json={"game": "six_nimmt", "seats": 2, "settings": {
                                 "rounds": "1000", "max_timeouts": "1000"}})
            assert made.status_code == 201, made.text
    finally:
        server.stop()


def test_one_address_gets_a_few_matches_for_people_open_and_per_hour(tmp_path: Path) -> None:
    """The finding: 8 anonymous requests filled every "play against the bots" slot for 10
    minutes. One address now has at most ``--human-open-per-address`` (2) open: the third
    is 429 ``open_quota`` with Retry-After, while another address still gets one; a match
    over frees its place. ``--human-per-hour`` (4 here) counts an address's requests in
    any hour: the fifth is 429 ``hourly_quota``, Retry-After within the hour."""
    server = ServerProcess(db_url(tmp_path), ["--human-per-hour", "4"]).start()
    try:
        admin = {"Authorization": f"Bearer {server.admin_token()}"}
        with client(server) as here, client(server, "127.0.0.2") as there:
            first = [here.post(URL, json={"game": "no_thanks"}) for _ in range(2)]
            assert [r.status_code for r in first] == [201, 201], [r.text for r in first]
            third = here.post(URL, json={"game": "no_thanks"})
            assert "--human-open-per-address 2" in refused(third, 429, "open_quota")
            assert 0 < int(third.headers["Retry-After"]) <= 60
            assert there.post(URL, json={"game": "no_thanks"}).status_code == 201

            aborted = here.post(f"/api/admin/matches/{first[0].json()['match_id']}/abort",
                                headers=admin)
            assert aborted.status_code == 200, aborted.text
            assert here.post(URL, json={"game": "no_thanks"}).status_code == 201  # 4th
            fifth = here.post(URL, json={"game": "no_thanks"})
            message = refused(fifth, 429, "hourly_quota")
            assert "4 matches for people from this address in the last hour" in message
            assert 3000 < int(fifth.headers["Retry-After"]) <= 3600, fifth.headers
    finally:
        server.stop()


def _challenge(http: httpx.Client, token: str, opponents: list[str]) -> httpx.Response:
    return http.post("/api/challenges", json={"game": "six_nimmt", "opponents": opponents},
                     headers={"Authorization": f"Bearer {token}"})


def test_a_bot_gets_a_few_challenges_waiting_and_per_hour_on_both_transports(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """The finding: one bot made 3,000 challenges in 167 s. With ``--challenges-open 2``
    and ``--challenges-per-hour 4``: two challenges of cy wait, the third is 429
    ``open_quota`` over HTTP and RESOURCE_EXHAUSTED with the same message over gRPC; once
    cy declines one, ann may ask again; the next request, over either transport, is past
    the hour's four (refused ones count): ``hourly_quota``, Retry-After within the hour.
    A practice match counts as a challenge; bob's own quota is untouched."""
    server = LadderServer(db_url(tmp_path), [*FAST, "--challenges-open", "2",
                                             "--challenges-per-hour", "4"]).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in ("ann", "bob", "cy")}
    calls = Calls(server.address)
    try:
        with httpx.Client(base_url=server.http, timeout=30) as http:
            made = [_challenge(http, tokens["ann"], ["cy"]) for _ in range(2)]
            assert [r.status_code for r in made] == [201, 201]
            third = _challenge(http, tokens["ann"], ["cy"])
            message = refused(third, 429, "open_quota")
            assert message.startswith("ann has 2 challenges waiting") and \
                "--challenges-open 2" in message, message
            assert int(third.headers["Retry-After"]) > 0
            with pytest.raises(grpc.aio.AioRpcError) as over_grpc:
                calls.challenge("CreateChallenge", tokens["ann"], pb.CreateChallengeRequest(
                    game="six_nimmt", opponents=["house:random"]))  # 4 asked this hour
            assert over_grpc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert over_grpc.value.details() == message

            declined = http.post(f"/api/challenges/{made[0].json()['id']}/decline",
                                 headers={"Authorization": f"Bearer {tokens['cy']}"})
            assert declined.status_code == 200, declined.text
            with pytest.raises(grpc.aio.AioRpcError) as hourly_grpc:
                calls.challenge("CreateChallenge", tokens["ann"], pb.CreateChallengeRequest(
                    game="six_nimmt", opponents=["cy"]))
            assert hourly_grpc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            hourly = _challenge(http, tokens["ann"], ["cy"])
            said = refused(hourly, 429, "hourly_quota")
            assert said.split("; try again in")[0] == \
                (hourly_grpc.value.details() or "").split("; try again in")[0]
            assert "4 challenges and practice matches asked for by this bot in the last " \
                   "hour (bullring serve --challenges-per-hour)" in (
                       hourly_grpc.value.details() or "")
            assert 3000 < int(hourly.headers["Retry-After"]) <= 3600
            assert _challenge(http, tokens["bob"], ["cy"]).status_code == 201
    finally:
        calls.close()


def _flood(store: Store, challenger: str, target: str, count: int) -> None:
    """``count`` pending challenges of ``target`` by ``challenger``, newer than any before,
    written in one transaction (as the server writes each)."""
    now = utcnow()
    with Session(store.engine) as session:
        for i in range(count):
            at = now + timedelta(milliseconds=i + 1)
            row = ChallengeRow(id=uuid.uuid4().hex[:12], game="six_nimmt",
                               challenger=challenger, opponents_json=json.dumps([target]),
                               answers_json=json.dumps({target: "pending"}), status="pending",
                               created_at=at, updated_at=at,
                               expires_at=at + timedelta(hours=1))
            session.add(row)
            session.flush()
            for bot in (challenger, target):
                session.add(ChallengeBotRow(challenge_id=row.id, bot=bot, created_at=at))
        session.commit()


def test_a_bots_challenges_are_listed_whatever_other_bots_asked_for(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """The finding: after one bot's 3,000 challenges, cy's ``GET /api/challenges`` no
    longer listed ann's real challenge (the list scanned the newest 2,000 rows of all
    bots). ann challenges cy, then 2,500 newer challenges of dee by bob are stored: cy's
    list (HTTP and gRPC) still holds ann's, and dee's holds its newest 100."""
    server = LadderServer(db_url(tmp_path), FAST).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in ("ann", "bob", "cy", "dee")}
    calls = Calls(server.address)
    try:
        with httpx.Client(base_url=server.http, timeout=30) as http:
            asked = _challenge(http, tokens["ann"], ["cy"])
            assert asked.status_code == 201, asked.text
            _flood(Store(server.db), "bob", "dee", 2500)
            listed = http.get("/api/challenges",
                              headers={"Authorization": f"Bearer {tokens['cy']}"}).json()
            assert [c["id"] for c in listed["challenges"]] == [asked.json()["id"]]
            seen = calls.challenge("ListChallenges", tokens["cy"], pb.ListChallengesRequest())
            assert [c.challenge_id for c in seen.challenges] == [asked.json()["id"]]
            flooded = http.get("/api/challenges",
                               headers={"Authorization": f"Bearer {tokens['dee']}"}).json()
            assert len(flooded["challenges"]) == 100
            assert {c["challenger"] for c in flooded["challenges"]} == {"bob"}
    finally:
        calls.close()


def test_challenges_over_are_deleted_after_their_retention(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """The finding: challenges over were never deleted. With ``--challenge-retention 2``,
    a declined challenge and a practice match played to its end are gone (404, and from the
    bots' lists and the database) once the server's housekeeping runs, and the match stays;
    a pending challenge not expired stays."""
    server = LadderServer(db_url(tmp_path), [*FAST, "--challenge-retention", "2"]).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in ("ann", "cy")}
    ann = LadderBot.start("ann", server.address, tokens["ann"], "six_nimmt", "house:greedy")
    stop_all.append(ann)
    ann.err.wait(lambda lines: any("waiting on the six_nimmt ladder" in ln for ln in lines),
                 60, "ann to wait on the ladder")

    def auth(name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {tokens[name]}"}

    with httpx.Client(base_url=server.http, timeout=30) as http:
        declined = _challenge(http, tokens["ann"], ["cy"]).json()["id"]
        assert http.post(f"/api/challenges/{declined}/decline",
                         headers=auth("cy")).status_code == 200
        waiting = _challenge(http, tokens["ann"], ["cy"]).json()["id"]
        practice = _challenge(http, tokens["ann"], ["house:random"]).json()["id"]
        wait_until(lambda: http.get(f"/api/challenges/{practice}", headers=auth("ann"))
                   .json().get("match_id") is not None, 60, "the practice match")
        match_id = http.get(f"/api/challenges/{practice}", headers=auth("ann")).json()[
            "match_id"]
        wait_until(lambda: http.get(f"/api/challenges/{practice}", headers=auth("ann"))
                   .status_code == 404, 60, "the practice challenge to be deleted")
        wait_until(lambda: http.get(f"/api/challenges/{declined}", headers=auth("ann"))
                   .status_code == 404, 30, "the declined challenge to be deleted")
        assert http.get(f"/api/challenges/{waiting}", headers=auth("cy")).json()["status"] \
            == "pending"
        listed = http.get("/api/challenges", headers=auth("ann")).json()["challenges"]
        assert [c["id"] for c in listed] == [waiting]
        assert http.get(f"/api/matches/{match_id}").status_code == 200
    with Session(Store(server.db).engine) as session:
        named = {row.challenge_id for row in session.exec(select(ChallengeBotRow)).all()}
    assert named == {waiting}
