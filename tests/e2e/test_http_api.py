"""The HTTP API of a real server: the page at the address it prints, match pages and
filters, replays only after the end, the feed of an ended match, and JSON errors with the
right status from the framework too (404, 405, 422)."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from tests.serving import CLI, ServerProcess, db_url, finish


def test_serve_prints_the_page_address_and_serves_it(server: ServerProcess) -> None:
    """The address `bullring serve` prints serves the web page, its script and the OpenAPI
    document listing every API path."""
    page = httpx.get(server.http + "/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "/static/app.js" in page.text
    assert httpx.get(server.http + "/static/app.js").status_code == 200
    document = httpx.get(server.http + "/openapi.json").json()
    assert {"/api/leaderboard", "/api/bots", "/api/matches", "/api/matches/{match_id}/replay",
            "/api/matches/{match_id}/feed", "/api/play/poll", "/api/play/stream",
            "/api/play/answer", "/api/admin/matches"} <= set(document["paths"])


def test_errors_are_json_with_stable_codes(server: ServerProcess) -> None:
    """Unknown paths, wrong methods, bad parameters and unknown ids are JSON errors with the
    matching 4xx status and a stable code."""
    cases = [("GET", "/nope", 404, "not_found"), ("GET", "/static/nope.js", 404, "not_found"),
             ("DELETE", "/api/matches", 405, "method_not_allowed"),
             ("GET", "/api/matches?limit=1000", 422, "invalid_request"),
             ("GET", "/api/matches?since=yesterday", 422, "invalid_request"),
             ("GET", "/api/matches/abc", 404, "match_not_found"),
             ("GET", "/api/matches/abc/replay", 404, "match_not_found"),
             ("GET", "/api/matches/abc/feed", 404, "match_not_found"),
             ("GET", "/api/leaderboard?game=chess", 404, "unknown_game"),
             ("POST", "/api/admin/matches", 401, "unauthorized")]
    for method, path, status, code in cases:
        response = httpx.request(method, server.http + path)
        assert response.status_code == status, (path, response.text)
        assert response.headers["content-type"] == "application/json"
        assert response.json()["error"]["code"] == code, path
        assert response.json()["error"]["message"]
    wrong = httpx.post(server.http + "/api/admin/matches", json={"game": "no_thanks", "seats": 3},
                       headers={"Authorization": "Bearer admin_nope"})
    assert wrong.status_code == 403 and wrong.json()["error"]["code"] == "forbidden"


def test_matches_filter_page_and_end(server: ServerProcess) -> None:
    """Matches are listed newest first, filtered by game, status, seat name and time, one
    page at a time; a finished match has its totals and replay, a created one has neither."""
    played = server.create_match("six_nimmt", 2, "--house", "1=greedy", "--setting",
                                 "rounds=1")
    results = finish([server.bot(played.tokens[0], "house:random")])
    assert results[0][0] == 0
    waiting = [server.create_match("no_thanks", 3).match_id for _ in range(3)]
    base = server.http + "/api/matches"
    everything = httpx.get(base).json()
    assert everything["total"] == 4
    assert [m["id"] for m in everything["matches"]] == [*reversed(waiting), played.match_id]
    page = httpx.get(base, params={"limit": 2, "offset": 1}).json()
    assert [m["id"] for m in page["matches"]] == [waiting[1], waiting[0]]
    finished = httpx.get(base, params={"status": "finished", "game": "six_nimmt"}).json()
    assert [m["id"] for m in finished["matches"]] == [played.match_id]
    assert finished["matches"][0]["seats"] == ["seat0", "greedy"]
    assert httpx.get(base, params={"bot": "greedy"}).json()["total"] == 1
    future = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    assert httpx.get(base, params={"since": future}).json()["total"] == 0
    assert httpx.get(base, params={"until": future}).json()["total"] == 4

    replay = httpx.get(f"{base}/{played.match_id}/replay").json()
    exported = json.loads(server.replay(played.match_id))
    assert replay == exported
    summary = httpx.get(f"{base}/{played.match_id}").json()
    assert summary["totals"] == exported["totals"] and summary["live"] is False
    not_yet = httpx.get(f"{base}/{waiting[0]}/replay")
    assert not_yet.status_code == 409
    assert not_yet.json()["error"]["code"] == "match_not_finished"
    assert httpx.get(f"{base}/{waiting[0]}/feed").json()["error"]["code"] == \
        "match_not_started"
    feed = httpx.get(f"{base}/{played.match_id}/feed").text.strip().splitlines()
    assert feed[-2] == "event: match_ended"
    assert json.loads(feed[-1].removeprefix("data:")) == {"match_ended": {
        "totals": exported["totals"], "ranks": exported["ranks"],
        "termination": "TERMINATION_NORMAL"}}


def test_a_taken_http_port_is_a_clear_error(server: ServerProcess, tmp_path: Path) -> None:
    """A second server asked for a port already in use exits 2 and says so."""
    port = server.http.rsplit(":", 1)[1]
    (tmp_path / "other").mkdir()
    result = subprocess.run([*CLI, "serve", "--port", "0", "--http-port", port, "--db",
                             db_url(tmp_path / "other")], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert "cannot listen" in result.stderr and "in use" in result.stderr


def test_admin_manages_the_bot_registry_over_http(server: ServerProcess) -> None:
    """With the admin token, HTTP registers a bot (its token shown once), versions, disables,
    enables and rotates it, with 404/409 for unknown and taken names; /api/bots lists it
    without any token."""
    from bullring.server.store import Store

    admin = {"Authorization": f"Bearer {server.admin_token()}"}
    base = server.http + "/api/admin/bots"
    added = httpx.post(base, json={"name": "webbot", "owner": "team 7"}, headers=admin)
    assert added.status_code == 201, added.text
    token = added.json()["token"]
    store = Store(server.db)
    found = store.bot_for_token(token)
    assert found is not None and found.name == "webbot" and found.owner == "team 7"
    taken = httpx.post(base, json={"name": "webbot"}, headers=admin)
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "bot_exists"
    assert httpx.post(f"{base}/webbot/version", headers=admin).json() == {
        "name": "webbot", "version": 2}
    assert httpx.post(f"{base}/webbot/disable", headers=admin).json()["enabled"] is False
    assert not store.bot("webbot").enabled
    assert httpx.post(f"{base}/webbot/enable", headers=admin).json()["enabled"] is True
    rotated = httpx.post(f"{base}/webbot/rotate-token", headers=admin).json()["token"]
    assert store.bot_for_token(token) is None and store.bot_for_token(rotated) is not None
    unknown = httpx.post(f"{base}/nobody/version", headers=admin)
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "bot_not_found"
    assert httpx.post(f"{base}/webbot/version").status_code == 401
    listed = httpx.get(server.http + "/api/bots").json()
    assert [b for b in listed if b["name"] == "webbot"] == [
        {"name": "webbot", "owner": "team 7", "version": 2, "enabled": True, "house": None,
         "games": {}}]
    assert rotated not in json.dumps(listed) and "token" not in json.dumps(listed)


def test_bodies_take_both_proto3_json_names_and_answers_keep_proto_names(
        server: ServerProcess) -> None:
    """A JSON body's field may be given by its proto field name or its lowerCamelCase JSON
    name, as the proto3 JSON mapping allows; both at once, or a misspelled one, is refused;
    every answer names its fields by their proto names."""
    match = server.create_match("no_thanks", 3)
    seat = {"Authorization": f"Bearer {match.tokens[0]}"}
    answers = [httpx.post(server.http + "/api/play/answer", headers=seat, timeout=10, json={
        name: "no-such-decision", "action": {"word": "take"}})
        for name in ("decision_id", "decisionId")]
    for answer in answers:
        assert answer.status_code == 200, answer.text
        assert answer.json()["rejected"]["decision_id"] == "no-such-decision", answer.text
        assert "decisionId" not in answer.json()["rejected"]
    for body in ({"decision_id": "x", "decisionId": "x", "action": {"word": "take"}},
                 {"DecisionId": "x", "action": {"word": "take"}}):
        refused = httpx.post(server.http + "/api/play/answer", headers=seat, json=body,
                             timeout=10)
        assert refused.status_code == 422, (body, refused.text)
    person = httpx.post(server.http + "/api/human-matches", timeout=10,
                        json={"game": "no_thanks", "deadlineMs": 2000})
    assert person.status_code == 201, person.text
    assert person.json()["deadline_ms"] == 2000 and "deadlineMs" not in person.json()


def test_a_wrong_method_is_told_every_method_of_its_path(server: ServerProcess) -> None:
    """A 405 answer's Allow header lists every method the path serves, though two routes
    serve them (GET and POST /api/challenges)."""
    response = httpx.request("OPTIONS", server.http + "/api/challenges",
                             headers={"Authorization": "Bearer bot_x"})
    assert response.status_code == 405, response.text
    allowed = set(response.headers["allow"].replace(" ", "").split(","))
    assert {"GET", "POST"} <= allowed <= {"GET", "HEAD", "POST"}, allowed
