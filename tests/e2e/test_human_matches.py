"""Seats for people, over HTTP and the command line, on a real server: a person's match gets
a deadline for people (30 s unless given), unrated, with the person's link holding the seat
token; the web page's route is capped (429 past ``--human-matches``, 403 when it is 0) and
refuses an unknown game or house bot."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx

from tests.serving import CLI, ServerProcess, db_url


def started(server: ServerProcess, token: str) -> dict[str, object]:
    """Join the seat over HTTP long-poll; its match_started message."""
    reply = httpx.get(f"{server.http}/api/play/poll", headers={
        "Authorization": f"Bearer {token}"}, timeout=30).json()
    found: dict[str, object] = reply["messages"][0]["match_started"]
    return found


def abort(server: ServerProcess, match_id: str, admin: str) -> None:
    """Abort ``match_id`` with the admin token."""
    done = httpx.post(f"{server.http}/api/admin/matches/{match_id}/abort",
                      headers={"Authorization": f"Bearer {admin}"})
    assert done.status_code == 200, done.text


def test_the_play_route_makes_unrated_matches_with_a_deadline_for_people(
        tmp_path: Path) -> None:
    """One open match allowed: the first request makes it (seat 0 "human" against the
    game's three house bots, 30 s per decision, unrated, the link /play/ID#TOKEN), the
    second is 429 until it is aborted; an unknown game or house bot is 400 and a deadline
    below 1 s is 422."""
    server = ServerProcess(db_url(tmp_path), ["--human-matches", "1"]).start()
    try:
        admin = server.admin_token()
        url = f"{server.http}/api/human-matches"
        made = httpx.post(url, json={"game": "no_thanks"})
        assert made.status_code == 201, made.text
        body = made.json()
        match_id = body["match_id"]
        path, token = body["play"].split("#")
        assert path == f"/play/{match_id}" and token.startswith("br_")
        assert body["seat_names"] == ["human", "threshold", "random", "never_take"]
        assert body["deadline_ms"] == 30_000
        info = httpx.get(f"{server.http}/api/matches/{match_id}").json()
        assert info["rated"] is False and token not in str(info)
        start = started(server, token)
        assert start["settings"]["deadline_ms"] == 30_000  # type: ignore[index]
        assert start["rated"] is False and start["seat"] == 0

        again = httpx.post(url, json={"game": "six_nimmt"})
        assert again.status_code == 429 and again.json()["error"]["code"] == "too_many_matches"
        abort(server, match_id, admin)
        other = httpx.post(url, json={"game": "six_nimmt", "bots": ["random"],
                                      "deadline_ms": 5000, "settings": {"rounds": "1"}})
        assert other.status_code == 201, other.text
        assert other.json()["seat_names"] == ["human", "random"]
        assert other.json()["deadline_ms"] == 5000
        abort(server, other.json()["match_id"], admin)

        for wrong in ({"game": "chess"}, {"game": "six_nimmt", "bots": ["never_take"]},
                      {"game": "six_nimmt", "settings": {"rounds": "many"}}):
            refused = httpx.post(url, json=wrong)
            assert refused.status_code == 400, (wrong, refused.text)
            assert refused.json()["error"]["code"] == "invalid_match"
        assert httpx.post(url, json={"game": "six_nimmt", "deadline_ms": 10}).status_code == 422
    finally:
        server.stop()


def test_no_play_route_when_the_server_makes_no_matches_for_people(tmp_path: Path) -> None:
    """``--human-matches 0``: the route answers 403 human_matches_off."""
    server = ServerProcess(db_url(tmp_path), ["--human-matches", "0"]).start()
    try:
        refused = httpx.post(f"{server.http}/api/human-matches", json={"game": "six_nimmt"})
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "human_matches_off"
    finally:
        server.stop()


def test_match_create_human_prints_the_link_and_sets_the_deadline(server: ServerProcess
                                                                  ) -> None:
    """``--human SEAT`` names the seat ``human``, marks it as a person's, ends its line with
    its link (on --web's address) and gives the match 30 s per decision; --deadline-ms still
    wins; a house seat or a seat beyond the table cannot be a person's."""
    def create(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, "match", "create", "--game", "six_nimmt", "--seats", "2",
                               "--db", server.db, "--house", "1=greedy", *args],
                              capture_output=True, text=True)

    made = create("--human", "0", "--web", "http://bullring.example:8080/")
    assert made.returncode == 0, made.stderr
    match_id = made.stdout.split()[1]
    line = made.stdout.splitlines()[1].split()
    token = line[3]
    assert line[4:] == ["play:", f"http://bullring.example:8080/play/{match_id}#{token}"]
    start = started(server, token)
    assert start["settings"]["deadline_ms"] == 30_000  # type: ignore[index]
    assert start["seat_names"] == ["human", "greedy"]
    info = httpx.get(f"{server.http}/api/matches/{match_id}").json()
    assert (info["seats"], info["humans"], info["rated"]) == (["human", "greedy"], [0], False)

    quick = create("--human", "0", "--deadline-ms", "2000")
    assert quick.returncode == 0, quick.stderr
    token = quick.stdout.splitlines()[1].split()[3]
    assert started(server, token)["settings"]["deadline_ms"] == 2000  # type: ignore[index]
    plain = create()
    assert "play:" not in plain.stdout

    for seat in ("1", "2"):
        refused = create("--human", seat)
        assert refused.returncode == 2 and "--human" in refused.stderr, refused.stderr
