"""Connection rules against real servers: the newest connection of a token takes over and
the older one is told so (in-band, then by its status), a bot of another game is refused
before it takes a seat, and a rotated token or a disabled bot stops playing at once."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import httpx

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.store import Store
from tests.ladder_helpers import LadderBot, LadderServer, Lines, wait_until
from tests.seat_client import SeatClient
from tests.serving import CLI, ServerProcess, db_url

HTTP_BOT = str(Path(__file__).resolve().parents[1] / "bots" / "http_only.py")
FAST = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
        "--ladder-setting", "six_nimmt:deadline_ms=1000"]
"""Short 6 nimmt! ladder matches: one round of ten tricks."""


async def closed_of(seat: SeatClient) -> pb.Closed:
    """Read ``seat``'s stream to its end: its last message must be Closed."""
    last: pb.PlayResponse | None = None
    try:
        while (message := await seat.read()) is not None:
            last = message
    except grpc.aio.AioRpcError:
        pass  # the status that follows the message (checked by the caller)
    assert last is not None and last.WhichOneof("body") == "closed", last
    return last.closed


def poll(client: httpx.Client, token: str, after: int | None = None, wait_ms: int = 10_000,
         **query: Any) -> dict[str, Any]:
    """One long-poll; the decoded answer (200 only)."""
    params: dict[str, Any] = {"wait_ms": wait_ms, **query}
    if after is not None:
        params["after"] = after
    response = client.get("/api/play/poll", params=params,
                          headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_the_newest_connection_takes_the_seat_and_the_older_is_told(
        server: ServerProcess) -> None:
    """A second gRPC stream on a seat's token takes the seat: the first gets a last Closed
    message (REPLACED, naming the new stream's transport and peer) and ends ABORTED with the
    same words. Across transports too: an HTTP long-poll takes over from gRPC, and a gRPC
    stream from the long-poll, whose next poll says so (``closed: true``)."""
    match = server.create_match("six_nimmt", 2, "--house", "1=random", "--deadline-ms",
                                "60000")
    token = str(match.tokens[0])

    async def body() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            first = SeatClient(channel, token)
            first.join()
            await first.next("decision")
            second = SeatClient(channel, token)
            second.join()
            await second.next("decision")  # the pending decision comes again
            closed = await closed_of(first)
            assert closed.reason == pb.CLOSE_REASON_REPLACED
            assert closed.message.startswith("replaced by a newer connection with the same "
                                             "token (gRPC Play from ipv4:127.0.0.1:")
            assert await first.call.code() == grpc.StatusCode.ABORTED
            assert await first.call.details() == closed.message

            with httpx.Client(base_url=server.http, timeout=30) as client:
                joined = poll(client, token)
                kinds = [next(k for k in m if k != "seq") for m in joined["messages"]]
                assert kinds[:2] == ["match_started", "decision"]
                closed = await closed_of(second)
                assert closed.reason == pb.CLOSE_REASON_REPLACED
                assert "(HTTP long-poll from 127.0.0.1:" in closed.message

                third = SeatClient(channel, token)
                third.join()
                await third.next("decision")
                seq = joined["messages"][-1]["seq"]
                ended = poll(client, token, seq)
                assert ended["closed"] is True
                last = ended["messages"][-1]["closed"]
                assert last["reason"] == "CLOSE_REASON_REPLACED"
                assert "(gRPC Play from ipv4:127.0.0.1:" in last["message"]
                assert poll(client, token, seq - 1)["closed"] is True  # still the old one
                third.close()

    asyncio.run(body())


def test_two_runners_on_one_token_leave_one_playing(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """Two ``bullring bot`` processes on one registered bot's token: the second takes over,
    the first exits non-zero within 5 s saying it was replaced (and by whom), and does not
    come back; the second plays on and finishes its matches."""
    server = LadderServer(db_url(tmp_path), [*FAST, "--table-size", "six_nimmt=2-2",
                                              "--house-bots", "random", "--house-rest", "0"])
    stop_all.append(server.start())
    token = server.add_bot("twice")
    first = LadderBot.start("twice", server.address, token, "six_nimmt", "house:greedy")
    stop_all.append(first)
    first.err.wait(lambda lines: any(" started: " in line for line in lines), 60,
                   "the first runner's match")
    second = LadderBot.start("twice", server.address, token, "six_nimmt", "house:greedy",
                             "--matches", "3")
    stop_all.append(second)
    second.err.wait(lambda lines: any("connected to" in line for line in lines), 60,
                    "the second runner's connection")
    connected = time.monotonic()
    code = first.proc.wait(timeout=30)
    took = time.monotonic() - connected
    assert code == 1 and took < 5, (code, took)
    first.err.wait(lambda lines: bool(lines) and lines[-1] == "", 10, "the first's output")
    said = first.err.text()
    assert "replaced by a newer connection with the same token (gRPC Play from ipv4:" in said
    assert said.count("connected to") == 1  # it never reconnected
    assert second.proc.wait(timeout=120) == 0, second.err.text()[-3000:]
    assert "replaced" not in second.err.text()
    assert len(second.matches()) == 3


def test_a_bot_of_another_game_is_refused_and_the_seat_stays_free(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """A bot that plays only No Thanks! is refused at Join for a 6 nimmt! seat, naming both
    games, over gRPC and HTTP; the match does not even start, and the right bot then plays
    the seat from its first decision. The same on a ladder: the bot is never queued."""
    server = LadderServer(db_url(tmp_path), ["--ladder", "six_nimmt"]).start()
    stop_all.append(server)
    match = server.create_match("six_nimmt", 2, "--house", "1=greedy", "--setting", "rounds=1")
    token = str(match.tokens[0])
    wrong = subprocess.run([*CLI, "bot", "--server", server.address, "--token", token,
                            "house:never_take"], capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 1, wrong.stderr
    assert (f"FAILED_PRECONDITION: this bot plays no_thanks, not six_nimmt: seat 0 of match "
            f"{match.match_id} stays free") in wrong.stderr
    with httpx.Client(base_url=server.http, timeout=30) as client:
        refused = client.get("/api/play/poll", params={"games": "no_thanks"},
                             headers={"Authorization": f"Bearer {token}"})
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "game_mismatch"
        assert "no_thanks, not six_nimmt" in refused.json()["error"]["message"]
    assert Store(server.db).match_page(match_id=match.match_id)[0][0].status == "created"

    right = subprocess.run([*CLI, "bot", "--server", server.address, "--token", token,
                            "house:greedy"], capture_output=True, text=True, timeout=120)
    assert right.returncode == 0, right.stderr
    replay = json.loads(server.replay(match.match_id))
    connects = [e for e in replay["events"] if e["type"] in ("connect", "reconnect")
                and e["seat"] == 0]
    assert len(connects) == 1  # the refused bots never took the seat
    assert not any(e["type"] == "answer" and e["seat"] == 0 and e.get("default")
                   for e in replay["events"])

    bot_token = server.add_bot("nothanks")
    ladder = subprocess.run([*CLI, "bot", "--server", server.address, "--token", bot_token,
                             "--ladder", "six_nimmt", "house:never_take"],
                            capture_output=True, text=True, timeout=60)
    assert ladder.returncode == 1
    assert "this bot plays no_thanks, not six_nimmt: bot 'nothanks' was not queued on the " \
           "six_nimmt ladder" in ladder.stderr
    with httpx.Client(base_url=server.http, timeout=30) as client:
        refused = client.get("/api/play/poll", params={"ladder": "six_nimmt",
                                                       "games": "no_thanks"},
                             headers={"Authorization": f"Bearer {bot_token}"})
        assert refused.status_code == 409 and refused.json()["error"]["code"] == \
            "game_mismatch"
    assert server.log is not None
    assert "bot nothanks joined" not in server.log.text()


def test_a_rotated_token_and_a_disabled_bot_stop_within_a_second(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """Three registered bots play the ladder beside house bots: one over gRPC whose token is
    rotated by gRPC AdminService, one over HTTP long-poll disabled by the HTTP admin API,
    and one over gRPC disabled by ``bullring bots disable`` writing the database (another
    process: the server notices it by itself). Each connection ends within 1 s, with a
    last message saying why, and none of them is seated in any later match."""
    server = LadderServer(db_url(tmp_path), [*FAST, "--house-bots",
                                              "greedy,random,random,greedy",
                                              "--house-rest", "0"]).start()
    stop_all.append(server)
    admin = server.first_admin_token()
    rotated = LadderBot.start("rotated", server.address, server.add_bot("rotated"),
                              "six_nimmt", "house:greedy")
    elsewhere = LadderBot.start("elsewhere", server.address, server.add_bot("elsewhere"),
                                "six_nimmt", "house:random")
    http_token = server.add_bot("viahttp")
    proc = subprocess.Popen([sys.executable, "-I", HTTP_BOT, server.http, http_token,
                             "--ladder", "six_nimmt"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    viahttp = LadderBot("viahttp", proc, Lines(proc.stdout), Lines(proc.stderr))
    bots = [rotated, elsewhere, viahttp]
    stop_all.extend(bots)
    wait_until(lambda: all(bot.matches() for bot in bots), 120, "a match of each bot")
    store = Store(server.db)

    def stopped(bot: LadderBot, lines: Lines, said: str) -> float:
        """Seconds from now until ``lines`` shows ``said``."""
        began = time.monotonic()
        lines.wait(lambda seen: any(said in line for line in seen), 30, said)
        return time.monotonic() - began

    grpc_admin = subprocess.run(
        [*CLI, "bots", "rotate-token", "rotated", "--server", server.address,
         "--admin-token", admin], capture_output=True, text=True, timeout=60)
    assert grpc_admin.returncode == 0, grpc_admin.stderr
    took = {"rotated": stopped(rotated, rotated.err, "the server ended the connection")}
    with httpx.Client(base_url=server.http, timeout=30) as client:
        disabled = client.post("/api/admin/bots/viahttp/disable",
                               headers={"Authorization": f"Bearer {admin}"})
        assert disabled.status_code == 200, disabled.text
        took["viahttp"] = stopped(viahttp, viahttp.out, "closed: CLOSE_REASON_BOT_DISABLED")
    subprocess.run([*CLI, "bots", "disable", "elsewhere", "--db", server.db], check=True,
                   capture_output=True, timeout=60)
    took["elsewhere"] = stopped(elsewhere, elsewhere.err, "the server ended the connection")
    assert all(seconds < 1 for seconds in took.values()), took

    assert rotated.proc.wait(timeout=30) == 3
    assert "the token of bot 'rotated' was rotated" in rotated.err.text()
    assert elsewhere.proc.wait(timeout=30) == 3
    assert "bot 'elsewhere' was disabled" in elsewhere.err.text()
    assert viahttp.proc.wait(timeout=30) == 1
    assert "bot 'viahttp' was disabled" in viahttp.out.text()
    seated = {b.name: {m.id for m in store.matches(bot=b.name)} for b in bots}
    assert server.log is not None
    log = server.log
    count = log.text().count("ladder match ")
    log.wait(lambda lines: sum("ladder match " in line for line in lines) >= count + 3, 120,
             "three more ladder matches")
    assert {b.name: {m.id for m in store.matches(bot=b.name)} for b in bots} == seated
