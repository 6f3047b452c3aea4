"""``bullring challenge`` and ``bullring bot --practice`` end to end, over a server and on
its database, and challenges that expire: a real ``bullring serve`` and registered bots in
their own processes (``challenge_rig.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.server.cli import main as server_cli
from bullring.server.store import Store
from tests.e2e.challenge_rig import (  # the ladder fixture: tests/e2e/conftest.py
    FAST,
    Calls,
    assert_unrated,
    ended,
)
from tests.ladder_helpers import LadderBot, LadderServer, Lines, wait_until
from tests.serving import CLI, db_url


def bullring(*args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``bullring ARGS`` (with ``--token`` when given)."""
    extra = ["--token", token] if token is not None else []
    return subprocess.run([*CLI, *args, *extra], capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if k != "BULLRING_TOKEN"})


def test_bullring_challenge_over_the_server(
        ladder: tuple[LadderServer, dict[str, str], dict[str, LadderBot], Calls]) -> None:
    """``bullring challenge`` with --server: a practice match is accepted when made and
    played unrated; bob turns auto-accept on and ann's challenge is played; cy declines one
    and ``show`` tells ann who declined and why (exit 1). Bad calls exit with one line."""
    server, tokens, bots, _ = ladder
    where = ["--server", server.address]
    made = bullring("challenge", "create", "--game", "six_nimmt", "--against",
                    "house:greedy,house:random", *where, "--json", token=tokens["ann"])
    assert made.returncode == 0, made.stderr
    practice = json.loads(made.stdout)
    assert practice["status"] == "accepted"

    def match_of(challenge_id: str) -> str | None:
        shown = bullring("challenge", "show", challenge_id, *where, "--json",
                         token=tokens["ann"])
        found: str | None = json.loads(shown.stdout)["match_id"]
        return found

    wait_until(lambda: match_of(practice["id"]) is not None, 30, "the practice match")
    first = match_of(practice["id"])
    assert first is not None
    wait_until(lambda: ended(bots["ann"], first), 60, "the practice match's end")

    turned = bullring("challenge", "auto-accept", "on", *where, token=tokens["bob"])
    assert (turned.returncode, turned.stdout) == (0, "auto-accept on\n")
    asked = bullring("challenge", "create", "--game", "six_nimmt", "--against", "bob", *where,
                     token=tokens["ann"])
    assert asked.returncode == 0 and ": accepted; answers: bob accepted" in asked.stdout
    challenge_id = asked.stdout.split()[1]
    wait_until(lambda: match_of(challenge_id) is not None, 30, "the challenge match")
    second = match_of(challenge_id)
    assert second is not None
    wait_until(lambda: ended(bots["ann"], second) and ended(bots["bob"], second), 60,
               "the challenge match's end")

    asked = bullring("challenge", "create", "--game", "six_nimmt", "--against", "cy", *where,
                     token=tokens["ann"])
    declined_id = asked.stdout.split()[1]
    listed = bullring("challenge", "list", *where, token=tokens["cy"])
    assert listed.returncode == 0 and f"challenge {declined_id} " in listed.stdout
    declined = bullring("challenge", "decline", declined_id, "--reason", "busy", *where,
                        token=tokens["cy"])
    assert declined.returncode == 0 and "declined by cy: busy" in declined.stdout
    shown = bullring("challenge", "show", declined_id, *where, token=tokens["ann"])
    assert shown.returncode == 1
    assert shown.stdout.strip().endswith(": declined; answers: cy declined; declined by cy: busy")

    missing = bullring("challenge", "list", *where)
    assert missing.returncode == 2 and "--token" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    wrong = bullring("challenge", "list", *where, token="bot_wrong")
    assert wrong.returncode == 3 and len(wrong.stderr.strip().splitlines()) == 1
    unknown = bullring("challenge", "create", "--game", "six_nimmt", "--against", "zed",
                       *where, token=tokens["ann"])
    assert unknown.returncode == 7 and "no bot named 'zed'" in unknown.stderr
    late = bullring("challenge", "accept", declined_id, *where, token=tokens["cy"])
    assert late.returncode == 2 and "is declined" in late.stderr

    store = Store(server.db)
    assert {m.id for m in store.matches()} == {first, second}
    assert not any(m.rated for m in store.matches()) and store.leaderboard("six_nimmt") == []


def test_bullring_challenge_on_the_database(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``bullring challenge`` with --db does the same on the database: a challenge made,
    listed, declined and shown declined (exit 1); a read never creates a database. The
    command runs in this process (ten starts of the CLI, each opening the database, took
    half a minute on a loaded machine; the test over the server runs the real command)."""
    monkeypatch.delenv("BULLRING_TOKEN", raising=False)

    def bullring(*args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
        status = server_cli.main([*args, *(["--token", token] if token is not None else [])])
        out = capsys.readouterr()
        return subprocess.CompletedProcess(args, status, out.out, out.err)

    db = db_url(tmp_path)
    tokens = {name: Store(db).add_bot(name) for name in ("ann", "cy")}
    made = bullring("challenge", "create", "--game", "six_nimmt", "--against", "cy,house:greedy",
                    "--db", db, "--json", token=tokens["ann"])
    assert made.returncode == 0, made.stderr
    challenge = json.loads(made.stdout)
    assert (challenge["status"], challenge["opponents"]) == ("pending", ["cy", "house:greedy"])
    listed = bullring("challenge", "list", "--db", db, "--json", token=tokens["cy"])
    assert [c["id"] for c in json.loads(listed.stdout)] == [challenge["id"]]
    assert bullring("challenge", "decline", challenge["id"], "--db", db,
                    token=tokens["cy"]).returncode == 0
    shown = bullring("challenge", "show", challenge["id"], "--db", db, token=tokens["ann"])
    assert shown.returncode == 1 and "declined by cy" in shown.stdout
    again = json.loads(bullring("challenge", "create", "--game", "six_nimmt", "--against", "cy",
                                "--db", db, "--json", token=tokens["ann"]).stdout)
    accepted = bullring("challenge", "accept", again["id"], "--db", db, token=tokens["cy"])
    assert accepted.returncode == 0 and ": accepted; answers: cy accepted" in accepted.stdout
    assert bullring("challenge", "auto-accept", "on", "--db", db,
                    token=tokens["cy"]).returncode == 0
    auto = bullring("challenge", "create", "--game", "six_nimmt", "--against", "cy", "--db",
                    db, token=tokens["ann"])
    assert ": accepted; answers: cy accepted" in auto.stdout
    table = bullring("challenge", "create", "--game", "no_thanks", "--against", "house:greedy",
                     "--db", db, token=tokens["ann"])
    assert table.returncode == 2 and "house bot 'greedy' does not play no_thanks" in \
        table.stderr
    assert len(table.stderr.strip().splitlines()) == 1
    nowhere = tmp_path / "none.db"
    absent = bullring("challenge", "list", "--db", f"sqlite:///{nowhere}", token=tokens["ann"])
    assert absent.returncode == 2 and not nowhere.exists()


def test_a_challenge_not_answered_in_time_expires(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """With ``serve --challenge-expiry 0.5``, ann's challenge to cy is pending when made;
    unanswered, ann then reads it as expired, naming who did not answer (``bullring
    challenge show`` exits 1 saying so), and cy can no longer accept it."""
    server = LadderServer(db_url(tmp_path), [*FAST, "--challenge-expiry", "0.5"]).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in ("ann", "cy")}
    calls = Calls(server.address)
    try:
        asked = calls.challenge("CreateChallenge", tokens["ann"], pb.CreateChallengeRequest(
            game="six_nimmt", opponents=["cy"])).challenge
        assert asked.status == "pending"
        request = pb.GetChallengeRequest(challenge_id=asked.challenge_id)
        seen = asked
        for _ in range(10_000):  # each call waits on the server's answer
            seen = calls.challenge("GetChallenge", tokens["ann"], request).challenge
            if seen.status != "pending":
                break
        assert (seen.status, seen.message) == ("expired", "expired: cy did not answer within "
                                                          "0.5 s")
        with pytest.raises(grpc.aio.AioRpcError) as late:
            calls.challenge("AnswerChallenge", tokens["cy"], pb.AnswerChallengeRequest(
                challenge_id=asked.challenge_id, accept=True))
        assert late.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "is expired" in (late.value.details() or "")
    finally:
        calls.close()
    shown = bullring("challenge", "show", asked.challenge_id, "--server", server.address,
                     token=tokens["ann"])
    assert shown.returncode == 1 and "expired: cy did not answer" in shown.stdout
    assert Store(server.db).challenge(asked.challenge_id).status == "expired"


def test_bullring_bot_practice_plays_one_unrated_match(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """``bullring bot --practice`` (three house bots by default) and the SDK's
    ``bullring-bot --practice --against`` ask the server for a practice match, play it to
    the end on the ladder and leave; each match is the challenge's, stored unrated. A
    challenge to a registered bot that declines ends the command with status 1."""
    server = LadderServer(db_url(tmp_path), FAST).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in ("ann", "bob")}
    sdk = [sys.executable, "-m", "bullring.sdk.cli.bot"]
    runs = [([*CLI, "bot"], []), (sdk, ["--against", "house:random,house:greedy"])]
    store = Store(server.db)
    for command, extra in runs:
        done = subprocess.run([*command, "--server", server.address, "--token", tokens["ann"],
                               "--ladder", "six_nimmt", "--practice", *extra, "house:greedy"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        asked, ended = done.stdout.splitlines()
        challenge_id = asked.split("challenge ")[1].split()[0]
        assert asked.endswith(", accepted")
        match_id = ended.split()[1]
        assert ended.startswith(f"match {match_id} ended: totals ")
        challenge = store.challenge(challenge_id)
        assert challenge.status == "started" and challenge.match_id == match_id
        seats = ["ann", *(extra[1].split(",") if extra else
                          ["house:greedy", "house:random", "house:greedy-2"])]
        assert_unrated(store, match_id, seats)

    declined = subprocess.Popen([*CLI, "bot", "--server", server.address, "--token",
                                 tokens["ann"], "--ladder", "six_nimmt", "--practice",
                                 "--against", "bob", "house:greedy"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert declined.stdout is not None
    out = Lines(declined.stdout)
    out.wait(lambda lines: any("waiting for bob to accept" in ln for ln in lines), 60,
             "the command to wait for bob")
    challenge_id = out.lines[0].split("challenge ")[1].split()[0]
    refused = bullring("challenge", "decline", challenge_id, "--reason", "busy", "--server",
                       server.address, token=tokens["bob"])
    assert refused.returncode == 0, refused.stderr
    _, err = declined.communicate(timeout=60)
    assert declined.returncode == 1
    assert err.strip().splitlines()[-1].endswith(f"challenge {challenge_id} is declined: "
                                                 f"declined by bob: busy")
