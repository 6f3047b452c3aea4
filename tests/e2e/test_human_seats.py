"""A person's seat is part of the typed contract, on a real server: gRPC CreateMatch and the
HTTP admin API mark seats as a person's (``humans``), name them ``human`` (``humanN`` when
several are), hand back each one's play page with its token, and only there; the match is
unrated and shown as a person's in the match list, over gRPC and in the replay. A house seat
or a seat beyond the table cannot be a person's."""

from __future__ import annotations

import json

import grpc
import httpx
import pytest

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee import replay as replays
from tests.serving import ServerProcess, finish


def bearer(token: str) -> list[tuple[str, str]]:
    """gRPC metadata carrying ``token``."""
    return [("authorization", f"Bearer {token}")]


def public_http(server: ServerProcess, match_id: str) -> list[str]:
    """Every public HTTP answer about ``match_id`` once it has ended, its live feed included."""
    texts = [httpx.get(server.http + path).text for path in (
        "/api/matches", f"/api/matches/{match_id}", f"/api/matches/{match_id}/turn",
        f"/api/matches/{match_id}/replay", "/api/leaderboard?game=six_nimmt", "/api/bots",
        "/", f"/play/{match_id}")]
    with httpx.stream("GET", f"{server.http}/api/matches/{match_id}/feed", timeout=30) as feed:
        lines = []
        for line in feed.iter_lines():
            lines.append(line)
            if "match_ended" in line:
                break
    return [*texts, "\n".join(lines)]


def test_a_person_seat_made_over_grpc_is_named_so_unrated_and_its_token_stays_private(
        server: ServerProcess) -> None:
    """CreateMatch with ``humans: [0]`` names seat 0 ``human``, gives the person's match the
    deadline for people (30 s), and answers with the seat's play page, /play/ID#TOKEN (empty
    for the house seat). Played to its end, the match is listed over gRPC and HTTP with
    ``humans == [0]`` and unrated, its replay marks seat 0 as a person's and verifies, the
    leaderboard stays empty, and no public answer (gRPC or HTTP) nor the server's log holds
    the token."""
    admin = server.admin_token()
    with grpc.insecure_channel(server.address) as channel:
        made = wire.admin_stub(channel)["CreateMatch"](pb.CreateMatchRequest(
            game="six_nimmt", seats=2, settings={"rounds": "1"}, house={1: "greedy"},
            humans=[0]), metadata=bearer(admin))
        match_id, token = made.match_id, made.tokens[0]
        assert list(made.seat_names) == ["human", "greedy"]
        assert list(made.play) == [f"/play/{match_id}#{token}", ""]
        assert list(made.tokens)[1] == ""
        code, out = finish([server.bot(token, "house:random")])[0]
        assert code == 0, out[-2000:]

        ladder = wire.ladder_stub(channel)
        listed = ladder["ListMatches"](pb.ListMatchesRequest()).matches
        assert [(m.match_id, list(m.humans), m.rated) for m in listed] == [(match_id, [0], False)]
        replay = json.loads(ladder["GetReplay"](pb.GetReplayRequest(match_id=match_id)).replay)
        board = ladder["GetLeaderboard"](pb.GetLeaderboardRequest(game="six_nimmt"))
        grpc_answers = [str(listed), replay, str(board)]
    assert replay["seats"] == [{"name": "human", "human": True}, {"name": "greedy"}]
    assert replay["rated"] is False and replay["settings"]["deadline_ms"] == 30_000
    assert replays.verify(replay) == replays.FROM_LOG
    assert not board.entries
    info = httpx.get(f"{server.http}/api/matches/{match_id}").json()
    assert (info["seats"], info["humans"], info["rated"]) == (["human", "greedy"], [0], False)
    assert httpx.get(f"{server.http}/api/leaderboard?game=six_nimmt").json()["entries"] == []
    for answer in [*map(str, grpc_answers), *public_http(server, match_id)]:
        assert token not in answer
    assert token not in server.stop()


def test_the_admin_api_names_several_people_and_refuses_a_house_seat(
        server: ServerProcess) -> None:
    """POST /api/admin/matches with ``humans: [1, 2]``: seats ``human1`` and ``human2``, each
    marked and with its play page, the house seat with neither; the match info lists them.
    A person in a house seat or beyond the table is refused, over HTTP (400 invalid_match)
    and gRPC (INVALID_ARGUMENT)."""
    admin = server.admin_token()
    url = f"{server.http}/api/admin/matches"
    headers = {"Authorization": f"Bearer {admin}"}
    made = httpx.post(url, headers=headers, json={
        "game": "no_thanks", "seats": 3, "house": {"0": "random"}, "humans": [1, 2]})
    assert made.status_code == 201, made.text
    body = made.json()
    match_id = body["match_id"]
    seats = body["seats"]
    assert [(s["name"], s["human"]) for s in seats] == [
        ("random", False), ("human1", True), ("human2", True)]
    assert seats[0]["play"] is None and seats[0]["token"] is None
    for seat in seats[1:]:
        assert seat["play"] == f"/play/{match_id}#{seat['token']}"
    info = httpx.get(f"{server.http}/api/matches/{match_id}").json()
    assert info["humans"] == [1, 2] and info["rated"] is False
    assert all(seat["token"] not in str(info) for seat in seats[1:])

    for wrong in ({"house": {"0": "random"}, "humans": [0]}, {"humans": [3]}):
        refused = httpx.post(url, headers=headers, json={"game": "no_thanks", "seats": 3,
                                                         **wrong})
        assert refused.status_code == 400, (wrong, refused.text)
        assert refused.json()["error"]["code"] == "invalid_match"
    with grpc.insecure_channel(server.address) as channel, \
            pytest.raises(grpc.RpcError) as refused_rpc:
        wire.admin_stub(channel)["CreateMatch"](pb.CreateMatchRequest(
            game="no_thanks", seats=3, humans=[-1]), metadata=bearer(admin))
    assert refused_rpc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "person's seat -1" in str(refused_rpc.value.details())
