"""What the big screen follows (``GET /api/tv``) and the standings it shows between games
(``GET /api/tournaments/{id}/standings?after=N``), on a real ``bullring serve`` with real
bot processes: nothing, then the latest finished match, then a match live here, then a
tournament on air from its first game; a tournament past its rewind is off air."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.e2e.test_live_tournament import FAST, NAMES
from tests.ladder_helpers import LadderBot, LadderServer
from tests.serving import db_url, finish
from tests.web.test_web import HttpSeats


def test_the_big_screen_follows_a_tournament_else_a_live_match_else_the_latest(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """The rule of /api/tv, step by step as a server fills up; and the standings after the
    first N games of a tournament count those games only."""
    server = LadderServer(db_url(tmp_path), FAST).start()
    stop_all.append(server)
    http = httpx.Client(base_url=server.http, timeout=10)
    assert http.get("/api/tv").json() == {"kind": "none", "tournament": None,
                                          "from_game": None, "match": None}

    old = server.create_match("no_thanks", 3)
    results = finish([server.bot(t, "house:random") for t in old.tokens])
    assert [code for code, _ in results] == [0, 0, 0]
    latest = http.get("/api/tv").json()
    assert latest["kind"] == "latest" and latest["match"]["id"] == old.match_id
    assert latest["match"]["live"] is False and latest["match"]["totals"] is not None

    held = server.create_match("six_nimmt", 2, "--deadline-ms", "60000")
    seats = HttpSeats(server.http, held.tokens)  # both join and never answer: it runs
    live = http.get("/api/tv").json()
    assert live["kind"] == "live" and live["match"]["id"] == held.match_id
    assert live["match"]["live"] is True and live["match"]["totals"] is None
    admin = {"authorization": f"Bearer {server.admin_token()}"}
    assert http.post(f"/api/admin/matches/{held.match_id}/abort", headers=admin).is_success
    seats.client.close()

    for name in NAMES:  # four bots on the ladder: they play rated matches, and the tournament
        bot = LadderBot.start(name, server.address, server.add_bot(name), "six_nimmt",
                              "house:greedy")
        stop_all.append(bot)
        bot.err.wait(lambda lines: any("waiting on the six_nimmt ladder" in ln
                                       for ln in lines), 30, "the bot to wait on the ladder")

    made = http.post("/api/admin/tournaments", headers=admin, json={
        "game": "six_nimmt", "format": "round-robin", "bots": list(NAMES), "games": 2,
        "seats": 4})
    assert made.status_code == 201, made.text
    tid = made.json()["tournament_id"]
    assert made.json()["pace_ms"] == 0
    assert server.log is not None
    server.log.wait(lambda lines: any(f"tournament {tid} finished" in ln for ln in lines),
                    120, "the tournament's end")
    on_air = http.get("/api/tv").json()
    assert on_air["kind"] == "tournament" and on_air["match"] is None
    assert on_air["tournament"]["tournament_id"] == tid
    assert on_air["tournament"]["status"] == "finished"
    assert on_air["from_game"] == 0  # over in a moment: its broadcast begins at game 1
    done = http.get(f"/api/tournaments/{tid}").json()
    off_air = http.get("/api/tv", params={"rewind": 0}).json()
    assert off_air["kind"] in ("live", "latest")  # the bots' ladder matches go on
    assert off_air["match"]["id"] != old.match_id
    assert http.get("/api/tv", params={"rewind": -1}).status_code == 422

    first = http.get(f"/api/tournaments/{tid}/standings", params={"after": 1}).json()
    assert first["after"] == 1 and first["forfeited"] == []
    assert sorted(s["bot"] for s in first["standings"]) == sorted(NAMES)
    assert all(s["games"] == 1 and s["win_share_ci95"] is None for s in first["standings"])
    ranks = dict(zip(done["schedule"][0]["seats"], done["schedule"][0]["ranks"], strict=True))
    assert [ranks[s["bot"]] for s in first["standings"]] == sorted(ranks.values())
    every = http.get(f"/api/tournaments/{tid}/standings").json()
    assert every["after"] == 2 and every["standings"] == done["standings"]
    assert http.get(f"/api/tournaments/{tid}/standings",
                    params={"after": 0}).json()["standings"] == []
    assert http.get("/api/tournaments/nope/standings").status_code == 404
    assert http.get(f"/api/tournaments/{tid}/standings",
                    params={"after": -1}).status_code == 422
    http.close()

