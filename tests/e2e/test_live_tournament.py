"""Live tournaments end to end: a real ``bullring serve``, four registered bots in their own
``bullring bot --ladder`` processes, one killed mid-way; the admin starts the tournament
over HTTP and it plays to the end on the bots' ladder streams, stored and shown."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from referee.replay import verify
from server.store import Store
from tests.ladder_helpers import LadderBot, LadderServer
from tests.serving import db_url

FAST = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
        "--ladder-setting", "six_nimmt:deadline_ms=300"]
"""Short 6 nimmt! matches: one round of ten tricks; an absent seat times out quickly."""

NAMES = ("ann", "bob", "cy", "dee")


@pytest.mark.parametrize(("format", "seats", "games", "total"),
                         [("round-robin", 3, 2, 8), ("duplicate", 4, 8, 8)])
def test_a_live_tournament_among_four_remote_bots_survives_a_killed_bot(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer], format: str, seats: int,
        games: int, total: int) -> None:
    """dee is killed once the first game is over: its next games wait ``wait_s`` for it,
    are played with its seat on default actions, and after two absences it forfeits. The
    tournament finishes; every match is stored unrated and verifies; the standings (with
    intervals) are stored and served by the API."""
    server = LadderServer(db_url(tmp_path), FAST).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in NAMES}
    bots = {name: LadderBot.start(name, server.address, tokens[name], "six_nimmt",
                                  "house:greedy") for name in NAMES}
    stop_all.extend(bots.values())
    for bot in bots.values():
        bot.err.wait(lambda lines: any("waiting on the six_nimmt ladder" in ln for ln in lines),
                     30, "the bot to wait on the ladder")
    admin = {"authorization": f"Bearer {server.admin_token()}"}
    body = {"game": "six_nimmt", "format": format, "bots": list(NAMES), "games": games,
            "seats": seats, "wait_s": 0.5}
    with httpx.Client(base_url=server.http, timeout=10) as http:
        refused = http.post("/api/admin/tournaments", json=body)
        assert refused.status_code == 401
        bad = http.post("/api/admin/tournaments", headers=admin,
                        json={**body, "bots": ["ann", "bob", "cy", "nobody"]})
        assert bad.status_code == 404 and "nobody" in bad.json()["error"]["message"]
        made = http.post("/api/admin/tournaments", json=body, headers=admin)
        assert made.status_code == 201, made.text
        page = made.json()
        tid = page["tournament_id"]
        assert page["status"] == "running" and page["total"] == total
        assert all("seed" not in g for g in page["schedule"])  # unplayed: seeds stay secret
        assert server.log is not None
        server.log.wait(lambda lines: any(f"tournament {tid} game 1:" in ln for ln in lines),
                        120, "the second tournament game")
        bots["dee"].proc.kill()
        bots["dee"].proc.wait()
        server.log.wait(lambda lines: any(f"tournament {tid} finished" in ln for ln in lines),
                        300, "the tournament's end")
        listed = http.get("/api/tournaments").json()["tournaments"]
        assert [t["tournament_id"] for t in listed] == [tid]
        assert listed[0]["status"] == "finished" and listed[0]["played"] == total
        done = http.get(f"/api/tournaments/{tid}").json()
        assert http.get("/api/tournaments/nope").status_code == 404
    assert "dee" in done["forfeited"]
    assert any("dee" in g["absent"] for g in done["schedule"])
    standings = {s["bot"]: s for s in done["standings"]}
    assert set(standings) == set(NAMES)
    assert standings["dee"]["forfeited"] and not standings["ann"]["forfeited"]
    assert all(s["win_share_ci95"] is not None and s["units"] >= 2 for s in standings.values())
    assert sum(s["games"] for s in standings.values()) == total * seats
    store = Store(server.db)
    for game in done["schedule"]:
        assert game["status"] == "finished" and isinstance(game["seed"], int)
        summary = store.match_page(match_id=game["match_id"])[0][0]
        assert summary.status == "finished" and not summary.rated
        assert list(summary.seat_names) == game["seats"]
        assert list(summary.ranks or ()) == game["ranks"]
        verify(store.replay(game["match_id"]))
        assert store.rating_changes(match_id=game["match_id"]) == []
