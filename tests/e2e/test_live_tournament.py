"""Live tournaments end to end: a real ``bullring serve``, four registered bots in their own
``bullring bot --ladder`` processes, one killed mid-way; the admin starts the tournament
over HTTP and it plays to the end on the bots' ladder streams, stored and shown."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import grpc
import httpx
import pytest

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.replay import verify
from bullring.server.store import Store
from tests.ladder_helpers import LadderBot, LadderServer, Lines
from tests.serving import CLI, db_url

FAST = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
        "--ladder-setting", "six_nimmt:deadline_ms=300"]
"""Short 6 nimmt! matches: one round of ten tricks; an absent seat times out quickly."""

NAMES = ("ann", "bob", "cy", "dee")


def four_bots(url: str, stop_all: list[LadderBot | LadderServer]
              ) -> tuple[LadderServer, dict[str, LadderBot]]:
    """A server on the database ``url`` and the four bots of ``NAMES``, registered, each in
    its own ``bullring bot --ladder six_nimmt`` process waiting on the ladder."""
    server = LadderServer(url, FAST).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in NAMES}
    bots = {name: LadderBot.start(name, server.address, tokens[name], "six_nimmt",
                                  "house:greedy") for name in NAMES}
    stop_all.extend(bots.values())
    for bot in bots.values():
        bot.err.wait(lambda lines: any("waiting on the six_nimmt ladder" in ln for ln in lines),
                     30, "the bot to wait on the ladder")
    return server, bots


@pytest.mark.parametrize(("format", "seats", "games", "total"),
                         [("round-robin", 3, 2, 8), ("duplicate", 4, 8, 8)])
def test_a_live_tournament_among_four_remote_bots_survives_a_killed_bot(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer], format: str, seats: int,
        games: int, total: int) -> None:
    """dee is killed once the first game is over: its next games wait ``wait_s`` for it,
    are played with its seat on default actions, and after two absences it forfeits. The
    tournament finishes; every match is stored unrated and verifies; the standings (with
    intervals) are stored and served by the API."""
    server, bots = four_bots(db_url(tmp_path), stop_all)
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


def test_bullring_tournament_waits_through_a_server_killed_and_restarted(
        db: str, stop_all: list[LadderBot | LadderServer]) -> None:
    """``bullring tournament --server`` starts a round-robin among four remote bots and
    waits. The server is killed (kill -9) while a tournament match is in flight and started
    again on the same database: it aborts that match, plays its game again from the same
    deal, and the tournament finishes; the command prints the standings with intervals. On
    SQLite and on PostgreSQL."""
    server, _ = four_bots(db, stop_all)
    command = subprocess.Popen(
        [*CLI, "tournament", "--server", server.address, "--admin-token", server.admin_token(),
         "--format", "round-robin", "--bots", ",".join(NAMES), "--games", "3"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert command.stdout is not None and command.stderr is not None
    err, out = Lines(command.stderr), Lines(command.stdout)
    err.wait(lambda lines: any(ln.startswith("tournament ") for ln in lines), 30,
             "the tournament's id")
    tid = next(ln for ln in err.lines if ln.startswith("tournament ")).split()[1].rstrip(":")
    assert server.log is not None
    server.log.wait(lambda lines: any(f"tournament {tid} game 1:" in ln for ln in lines), 120,
                    "the second tournament game")
    killed = next(ln for ln in server.log.lines if f"tournament {tid} game 1:" in ln
                  ).split("match ")[1].split(",")[0]
    server.kill()
    err.wait(lambda lines: any("asking again" in ln for ln in lines), 60,
             "the command to find the server gone and keep asking")
    port = server.address.rsplit(":", 1)[1]
    again = LadderServer(server.db, [*FAST, "--port", port]).start()
    stop_all.append(again)
    out.wait(lambda lines: bool(lines) and lines[-1] == "", 300, "the command's end")
    assert command.wait(timeout=30) == 0, err.text()
    report = out.text()
    assert f"six_nimmt round-robin tournament {tid}: finished, 3 of 3 games played" in report
    assert all(name in report for name in NAMES) and "±" in report
    store = Store(server.db)
    row = store.tournament(tid)
    assert row is not None and row.status == "finished"
    games = json.loads(row.schedule_json)
    assert [g["status"] for g in games] == ["finished"] * 3
    assert games[1]["match_id"] != killed and games[1]["tries"] == 2
    assert store.match_page(match_id=killed)[0][0].status == "aborted"
    assert store.tournament_game_of(killed) == (tid, 1)
    assert {s["bot"] for s in json.loads(row.standings_json)} == set(NAMES)
    for game in games:
        verify(store.replay(game["match_id"]))


def test_a_tournament_is_cancelled_from_the_command_line(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """A tournament started on the database waits for bots that are not connected; cancelled
    over the server, its games are never played, the API says cancelled, ``--show`` prints
    it and exits 1, and cancelling it again is refused in one line."""
    server = LadderServer(db_url(tmp_path), FAST).start()
    stop_all.append(server)
    for name in NAMES:
        server.add_bot(name)
    admin = server.admin_token()
    made = subprocess.run([*CLI, "tournament", "--db", server.db, "--format", "duplicate",
                           "--bots", ",".join(NAMES), "--games", "4", "--seats", "2",
                           "--absent-wait", "3600", "--detach"],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    tid = made.stdout.strip()
    with httpx.Client(base_url=server.http, timeout=10) as http:
        assert http.get(f"/api/tournaments/{tid}").json()["status"] == "running"
        cancelled = subprocess.run([*CLI, "tournament", "--server", server.address,
                                    "--admin-token", admin, "--cancel", tid],
                                   capture_output=True, text=True, timeout=60)
        assert cancelled.returncode == 0, cancelled.stderr
        assert cancelled.stdout == f"tournament {tid} cancelled after 0 of 24 games\n"
        page = http.get(f"/api/tournaments/{tid}").json()
        assert page["status"] == "cancelled" and page["finished_at"] is not None
        assert {g["status"] for g in page["schedule"]} == {"cancelled"}
        again = http.post(f"/api/admin/tournaments/{tid}/cancel",
                          headers={"authorization": f"Bearer {admin}"})
        assert again.status_code == 409 and "is cancelled" in again.json()["error"]["message"]
    shown = subprocess.run([*CLI, "tournament", "--server", server.address, "--show", tid],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 1 and f"tournament {tid}: cancelled, 0 of 24" in shown.stdout
    twice = subprocess.run([*CLI, "tournament", "--db", server.db, "--cancel", tid],
                           capture_output=True, text=True, timeout=60)
    assert twice.returncode == 2 and twice.stderr.strip().endswith(f"tournament {tid} is "
                                                                   f"cancelled")
    assert len(twice.stderr.strip().splitlines()) == 1
    assert Store(server.db).match_page()[1] == 0  # nothing was seated


def test_a_paced_tournament_is_played_slowly_for_people_to_watch(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """A tournament created with ``--pace-ms 200`` (over gRPC, by ``bullring tournament``)
    says so in the API, and each decision point of its match opens no sooner than 200 ms
    after the last one: the match lasts at least (points - 1) x 200 ms, where a match at
    machine speed takes a few. A pace past a minute is refused over HTTP (422) and on the
    command line (usage)."""
    server, _ = four_bots(db_url(tmp_path), stop_all)
    admin = server.admin_token()
    started = subprocess.run(
        [*CLI, "tournament", "--server", server.address, "--admin-token", admin, "--format",
         "round-robin", "--bots", "ann,bob", "--games", "1", "--pace-ms", "200", "--detach"],
        capture_output=True, text=True, timeout=60)
    assert started.returncode == 0, started.stderr
    tid = started.stdout.strip()
    assert server.log is not None
    server.log.wait(lambda lines: any(f"tournament {tid} finished" in ln for ln in lines),
                    120, "the paced tournament's end")
    done = httpx.get(f"{server.http}/api/tournaments/{tid}", timeout=10).json()
    assert done["pace_ms"] == 200 and done["status"] == "finished"
    store = Store(server.db)
    match_id = done["schedule"][0]["match_id"]
    summary = store.match_page(match_id=match_id)[0][0]
    assert summary.finished_at is not None
    lasted = (summary.finished_at - summary.created_at).total_seconds()
    replay = store.replay(match_id)
    points = len({e["step"] for e in replay["events"] if e["type"] == "answer"})
    assert points >= 10 and lasted >= (points - 1) * 0.2, (points, lasted)

    refused = httpx.post(f"{server.http}/api/admin/tournaments", timeout=10,
                         headers={"authorization": f"Bearer {admin}"},
                         json={"game": "six_nimmt", "format": "round-robin",
                               "bots": ["ann", "bob"], "games": 1, "pace_ms": 60_001})
    assert refused.status_code == 422 and "pace_ms" in refused.text
    usage = subprocess.run(
        [*CLI, "tournament", "--server", server.address, "--admin-token", admin, "--format",
         "round-robin", "--bots", "ann,bob", "--games", "1", "--pace-ms", "60001"],
        capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "--pace-ms" in usage.stderr


def test_a_tournament_too_large_is_refused_and_its_schedule_is_served_in_pages(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """The finding: 16 bots at tables of 8 with 10 games scheduled 128,700 games, and the
    API's answer was 21 MB. Such a tournament is refused before its schedule is built, 400
    ``tournament_too_large`` naming its size and the server's cap, over HTTP and gRPC
    (INVALID_ARGUMENT), and nothing is stored. With ``--max-tournament-games 300``, 16 bots
    at tables of 2 with 2 games (240 games) are scheduled: its page holds 100 games unless
    another page is asked for (``offset``, ``limit``; gRPC ``schedule_offset``,
    ``schedule_limit``), and ``total`` counts all 240."""
    server = LadderServer(db_url(tmp_path), [*FAST, "--max-tournament-games", "300"]).start()
    stop_all.append(server)
    names = [f"bot{i:02}" for i in range(16)]
    for name in names:
        server.add_bot(name)
    admin = server.admin_token()
    huge = {"game": "six_nimmt", "format": "round-robin", "bots": names, "games": 10,
            "seats": 8, "wait_s": 3600}
    with httpx.Client(base_url=server.http, timeout=30,
                      headers={"Authorization": f"Bearer {admin}"}) as http:
        refused = http.post("/api/admin/tournaments", json=huge)
        assert refused.status_code == 400, refused.text
        error = refused.json()["error"]
        assert error["code"] == "tournament_too_large"
        assert "schedule 128,700 games (12,870 tables)" in error["message"]
        assert "at most 300 (bullring serve --max-tournament-games)" in error["message"]

        channel = grpc.insecure_channel(server.address)
        create = channel.unary_unary(
            f"/{wire.ADMIN_SERVICE}/CreateTournament",
            request_serializer=pb.CreateTournamentRequest.SerializeToString,
            response_deserializer=pb.CreateTournamentResponse.FromString)
        with pytest.raises(grpc.RpcError) as over_grpc:
            create(pb.CreateTournamentRequest(game="six_nimmt", format="round-robin",
                                              bots=names, games=10, seats=8, wait_s=3600),
                   metadata=(("authorization", f"Bearer {admin}"),), timeout=30)
        assert over_grpc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert over_grpc.value.details() == error["message"]
        assert Store(server.db).tournaments() == []

        made = http.post("/api/admin/tournaments", json={**huge, "seats": 2, "games": 2})
        assert made.status_code == 201, made.text
        tid = made.json()["tournament_id"]
        assert made.json()["total"] == 240 and len(made.json()["schedule"]) == 100
        page = http.get(f"/api/tournaments/{tid}", params={"offset": 200, "limit": 100}).json()
        assert (page["total"], page["schedule_offset"], len(page["schedule"])) == (240, 200, 40)
        whole = http.get(f"/api/tournaments/{tid}", params={"limit": 1000}).json()["schedule"]
        assert len(whole) == 240 and whole[200:] == page["schedule"]
        assert http.get(f"/api/tournaments/{tid}", params={"limit": 1001}).status_code == 422

        get = channel.unary_unary(f"/{wire.LADDER_SERVICE}/GetTournament",
                                  request_serializer=pb.GetTournamentRequest.SerializeToString,
                                  response_deserializer=pb.GetTournamentResponse.FromString)
        first = get(pb.GetTournamentRequest(tournament_id=tid), timeout=30).tournament
        assert (first.total, first.schedule_offset, len(first.schedule)) == (240, 0, 100)
        last = get(pb.GetTournamentRequest(tournament_id=tid, schedule_offset=230,
                                           schedule_limit=50), timeout=30).tournament
        assert [list(g.seats) for g in last.schedule] == [g["seats"] for g in whole[230:]]
        channel.close()
        assert http.post(f"/api/admin/tournaments/{tid}/cancel").status_code == 200
