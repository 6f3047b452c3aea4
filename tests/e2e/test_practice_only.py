"""A practice run never touches a rating: ``bullring bot --practice`` joins the ladder with
``Join.practice_only`` (over HTTP, ``practice_only=true``), so while it waits for a
registered opponent who is not on the ladder yet, no rated table seats it, however many
tables form around it. A real ``bullring serve`` with house bots, and registered bots in
their own ``bullring bot`` processes."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import grpc
import httpx

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.store import Store
from tests.e2e.challenge_rig import FAST, Calls, assert_unrated
from tests.ladder_helpers import LadderBot, LadderServer, wait_for_matches
from tests.seat_client import SeatClient
from tests.serving import CLI, db_url

HOUSE = ["--house-bots", "greedy,random,random", "--house-rest", "0"]
"""Three house bots: with any one registered bot they fill a rated table of four."""


def rating(store: Store, bot: str) -> tuple[int, float, float] | None:
    """``bot``'s 6 nimmt! leaderboard entry as (games, mu, sigma), or None."""
    found = [(e.games, e.mu, e.sigma) for e in store.leaderboard("six_nimmt") if e.bot == bot]
    return found[0] if found else None


def test_a_practice_run_waits_for_its_match_and_is_never_seated_at_a_rated_table(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """ann plays one rated match, then runs ``--practice --against bob`` (bob accepts every
    challenge but is not on the ladder), and dee joins over HTTP with practice_only=true.
    cy's rated tables with the three house bots (a seat each for ann and dee, were they
    seatable) play three matches around them: neither is seated, ann's leaderboard entry is
    as it was and dee has none. Once bob joins, ann plays the practice match against him,
    unrated, and leaves; its entry is still unchanged."""
    server = LadderServer(db_url(tmp_path), [*FAST, *HOUSE]).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in ("ann", "bob", "cy", "dee")}
    store = Store(server.db)
    rated = LadderBot.start("ann", server.address, tokens["ann"], "six_nimmt", "house:greedy",
                            "--matches", "1")
    stop_all.append(rated)
    assert rated.proc.wait(timeout=120) == 0, rated.err.text()[-3000:]
    [(first_match, _)] = rated.matches()
    before = rating(store, "ann")
    assert before is not None and before[0] == 1
    calls = Calls(server.address)
    try:
        calls.challenge("SetAutoAccept", tokens["bob"], pb.SetAutoAcceptRequest(
            auto_accept=True))
    finally:
        calls.close()

    ann = LadderBot.start("ann", server.address, tokens["ann"], "six_nimmt", "house:greedy",
                          "--practice", "--against", "bob")
    stop_all.append(ann)
    ann.err.wait(lambda lines: any("waiting on the six_nimmt ladder" in ln for ln in lines),
                 60, "ann to wait on the ladder")
    ann.out.wait(lambda lines: bool(lines), 10, "ann's challenge")
    asked = ann.out.lines[0]
    assert asked.endswith(" against bob, accepted\n"), asked
    challenge_id = asked.split("challenge ")[1].split()[0]
    with httpx.Client(base_url=server.http, timeout=10,
                      headers={"Authorization": f"Bearer {tokens['dee']}"}) as http:
        joined = http.get("/api/play/poll", params={"ladder": "six_nimmt",
                                                    "practice_only": "true", "wait_ms": 0})
        assert joined.status_code == 200, joined.text
        first = joined.json()["messages"]
        assert [m["seq"] for m in first] == [1] and "ladder_queued" in first[0]
        assert server.log is not None
        server.log.wait(lambda lines: sum("for its practice matches only" in ln
                                          for ln in lines) >= 2, 30, "both practice joins")

        cy = LadderBot.start("cy", server.address, tokens["cy"], "six_nimmt", "house:random")
        stop_all.append(cy)
        wait_for_matches([cy], 3, 120)
        later = http.get("/api/play/poll", params={"after": 1, "wait_ms": 0}).json()
        assert later == {"messages": [], "closed": False}
    assert ann.started() == [] and ann.matches() == []
    assert ann.proc.poll() is None
    assert rating(store, "ann") == before and rating(store, "dee") is None
    assert len(store.matches()) >= 4 and all(m.rated for m in store.matches())
    assert [m.id for m in store.matches(bot="ann")] == [first_match]
    assert store.matches(bot="dee") == []

    bob = LadderBot.start("bob", server.address, tokens["bob"], "six_nimmt", "house:greedy")
    stop_all.append(bob)
    assert ann.proc.wait(timeout=120) == 0, ann.err.text()[-2000:]
    challenge = store.challenge(challenge_id)
    assert challenge.status == "started" and challenge.match_id is not None
    assert [m for m, _ in ann.matches()] == ann.started() == [challenge.match_id]
    assert_unrated(store, challenge.match_id, ["ann", "bob"])
    assert [m.id for m in store.matches(bot="ann")] == [challenge.match_id, first_match]
    assert rating(store, "ann") == before and rating(store, "dee") is None


def test_a_bot_that_cannot_load_asks_the_server_for_nothing(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """A bot file with a syntax error: ``bullring bot``, with ``--practice`` or without,
    exits 2 with one line naming the file and the line, before any challenge is made (a
    challenge made first stayed accepted, and the next run played that stale match)."""
    server = LadderServer(db_url(tmp_path), [*FAST, *HOUSE]).start()
    stop_all.append(server)
    token = server.add_bot("ann")
    bot = tmp_path / "broken.py"
    bot.write_text("from bullring.sdk.bot import Bot\n\n\nclass Broken(Bot):\n"
                   "    def decide(self, observation)\n        return 1\n", encoding="utf-8")
    for extra in (["--practice", "--against", "house:random"], []):
        done = subprocess.run([*CLI, "bot", "--server", server.address, "--token", token,
                               "--ladder", "six_nimmt", *extra, "broken.py:Broken"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        assert done.stderr == (f"bullring bot: bad bot spec 'broken.py:Broken': {bot}, line 5: "
                               f"SyntaxError: expected ':'\n")
        assert done.stdout == ""
    assert Store(server.db).challenges("ann") == []


def test_a_practice_run_beside_a_running_bot_waits_for_it_instead_of_replacing_it(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """ann's ladder runner plays rated matches; ``bullring bot --practice`` with ann's
    token, as the README says, joins beside it: the runner is never told it was replaced,
    the practice match is played by the practice run (unrated, against a house bot) once
    ann is between rated matches, and the runner goes on playing rated matches after."""
    server = LadderServer(db_url(tmp_path), [*FAST, *HOUSE]).start()
    stop_all.append(server)
    token = server.add_bot("ann")
    store = Store(server.db)
    runner = LadderBot.start("ann", server.address, token, "six_nimmt", "house:greedy")
    stop_all.append(runner)
    wait_for_matches([runner], 1, 120)

    practice = LadderBot.start("ann", server.address, token, "six_nimmt", "house:random",
                               "--practice", "--against", "house:random")
    stop_all.append(practice)
    assert practice.proc.wait(timeout=120) == 0, practice.err.text()[-3000:]
    [(practice_match, termination)] = practice.matches()
    assert termination == "normal"
    seats = list(store.match_page(match_id=practice_match)[0][0].seat_names)
    assert_unrated(store, practice_match, seats)
    assert seats[0] == "ann" and practice_match not in runner.started()

    after = len(runner.matches())
    wait_for_matches([runner], after + 2, 120)  # the runner plays on, rated
    assert runner.proc.poll() is None
    assert "replaced" not in runner.err.text()
    rated = [m for m, _ in runner.matches()]
    assert all(store.match_page(match_id=m)[0][0].rated for m in rated)
    assert server.log is not None
    assert any("beside its rated connection" in line for line in server.log.lines)


def test_a_practice_run_takes_its_match_from_the_bots_rated_stream_without_ending_it(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """ann's rated stream waits alone on the ladder when ann asks for a practice match: the
    server seats it there. A practice-only stream of ann's then joins and takes that seat
    (the match goes on with it); the rated stream lets go of the seat but is not ended:
    ann's next practice match, once the first has ended, is seated on it."""
    server = LadderServer(db_url(tmp_path), FAST).start()
    stop_all.append(server)
    token = server.add_bot("ann")
    ask = pb.CreateChallengeRequest(game="six_nimmt", opponents=["house:random"])

    async def play() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            challenges = wire.challenge_stub(channel)
            metadata = (("authorization", f"Bearer {token}"),)
            rated = SeatClient(channel, token)
            rated.send(pb.PlayRequest(join=pb.Join(client="rated", ladder="six_nimmt")))
            await rated.next("ladder_queued")
            await challenges["CreateChallenge"](ask, metadata=metadata, timeout=10)
            first = await rated.next("match_started")

            practice = SeatClient(channel, token)
            practice.send(pb.PlayRequest(join=pb.Join(client="practice", ladder="six_nimmt",
                                                      practice_only=True, matches=1)))
            taken = await practice.next("match_started")
            assert taken.match_id == first.match_id
            while (message := await practice.read()) is not None:  # play it to its end
                if message.WhichOneof("body") == "decision":
                    practice.answer(message.decision.decision_id, message.decision.legal[0])
            assert [m.WhichOneof("body") for m in practice.seen].count("match_ended") == 1

            await challenges["CreateChallenge"](ask, metadata=metadata, timeout=10)
            second = await rated.next("match_started")
            assert second.match_id != first.match_id
            assert not any(m.WhichOneof("body") == "closed" for m in rated.seen)
            rated.close()
            practice.close()

    asyncio.run(play())
