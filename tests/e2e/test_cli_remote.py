"""One command line, local or remote: every ladder command gives the same answer on the
database (``--db``) and on a running server (``--server``, gRPC), against a real server
process that played a rated ladder match and a created match with a real bot process."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bullring.server.cli import main as server_cli
from tests.ladder_helpers import LadderServer
from tests.serving import db_url, finish
from tests.unit.test_cli import leaves
from tests.vocabulary import LEADERBOARD_WORDS, RETIRED_WORDS, interval

ONE_MATCH = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
             "--table-size", "six_nimmt=4", "--house-bots", "random,random,greedy,random",
             "--house-rest", "3600"]
"""Four house bots that play one short rated ladder match, then rest for an hour."""


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LadderServer, str]]:
    """A server (and its admin token) whose database holds one finished ladder match and
    one finished created match played by a ``bullring bot`` process."""
    server = LadderServer(db_url(tmp_path_factory.mktemp("remote")), ONE_MATCH).start()
    try:
        admin = server.first_admin_token()
        assert server.log is not None
        server.log.wait(lambda lines: any(": totals " in line for line in lines), 120,
                        "the ladder match")
        match = server.create_match("six_nimmt", 4, "--house", "1=random", "--house",
                                    "2=greedy", "--house", "3=random", "--setting", "rounds=1")
        [(status, out)] = finish([server.bot(match.tokens[0], "house:random")])
        assert status == 0, out
        server.log.wait(lambda lines: sum(": totals " in line for line in lines) >= 2, 60,
                        "the created match to be stored")
        yield server, admin
    finally:
        server.stop()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``bullring ARGV`` in this process: (status, stdout, stderr)."""
    status = server_cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def both(capsys: pytest.CaptureFixture[str], server: LadderServer, admin: str,
         *argv: str) -> tuple[str, str]:
    """The output of ``bullring ARGV`` with ``--db`` and with ``--server``; both succeed."""
    local = run(capsys, *argv, "--db", server.db)
    remote = run(capsys, *argv, "--server", server.address, "--admin-token", admin) \
        if _takes_admin_token(argv) else run(capsys, *argv, "--server", server.address)
    assert local[0] == 0 and remote[0] == 0, (local, remote)
    return local[1], remote[1]


def _takes_admin_token(argv: tuple[str, ...]) -> bool:
    return argv[0] in ("bots", "match", "admin") and argv[1] != "list"


LOCATED = {("bots", "add"), ("bots", "version"), ("bots", "disable"), ("bots", "enable"),
           ("bots", "rotate-token"), ("bots", "list"), ("leaderboard",), ("matches",),
           ("match", "create"), ("admin", "rotate-token"), ("replay", "export")}
"""The commands that read or change the ladder, each exercised below both ways."""
CHALLENGE = {("challenge", name) for name in ("create", "list", "show", "accept", "decline",
                                              "auto-accept")}
"""``bullring challenge``, exercised both ways in tests/e2e/test_challenges.py."""
LIVE = {("tournament",)}
"""``bullring tournament``, live with --server or --db (in-process without either), both ways
in tests/e2e/test_live_tournament.py."""


def test_every_ladder_command_takes_db_and_server() -> None:
    """Every command with --db also takes --server, and the other way round, but for the
    server itself (serve: --db), and those that talk only to a server (bot, mcp, health);
    the list of such commands is the one this module exercises."""
    found = set()
    for path, parser in leaves(server_cli.build_parser()):
        flags = {flag for action in parser._actions for flag in action.option_strings}
        if "--db" in flags and "--server" in flags:
            found.add(path)
        else:
            assert path in {("serve",), ("bot",), ("mcp",), ("health",)} or not (
                {"--db", "--server"} & flags), path
    assert found == LOCATED | CHALLENGE | LIVE


def test_reads_agree_local_and_remote(capsys: pytest.CaptureFixture[str],
                                      played: tuple[LadderServer, str],
                                      tmp_path: Path) -> None:
    """bots list, leaderboard, matches (with filters) and replay export (one match, and
    --all) print the same thing from the database and from the server; the leaderboard's
    columns and numbers are the web page's (rating, skill interval ``43.15 ± 11.70``)."""
    server, admin = played
    local, remote = both(capsys, server, admin, "leaderboard", "--game", "six_nimmt", "--json")
    board = json.loads(local)
    assert board == json.loads(remote) and len(board) == 4
    assert {row["bot"] for row in board} == {"house-random", "house-random-2",
                                             "house-random-3", "house-greedy"}
    assert all(row["games"] == 1 for row in board)
    local, remote = both(capsys, server, admin, "leaderboard", "--game", "six_nimmt")
    assert local == remote and "house-greedy" in local
    header, *lines = local.splitlines()[1:]
    assert all(word.lower() in header for word in LEADERBOARD_WORDS), header
    assert not any(word in local for word in RETIRED_WORDS), local
    for row, line in zip(board, lines, strict=True):  # the page's numbers, as the page writes them
        assert line.endswith(f" {row['ordinal']:.2f} {interval(row['mu'], row['sigma']):>24}")
    local, remote = both(capsys, server, admin, "bots", "list", "--json")
    assert local == remote and len(json.loads(local)) == 4
    local, remote = both(capsys, server, admin, "matches", "--json")
    rows = json.loads(local)
    assert rows == json.loads(remote) and len(rows) == 2
    assert all(row["status"] == "finished" and len(row["totals"]) == 4 for row in rows)
    assert [row["humans"] for row in rows] == [[], []]  # bots in every seat
    assert [row["rated"] for row in rows] == [False, True]  # newest first: created, ladder
    for filters in (["--bot", "house-greedy"], ["--status", "running"], ["--since", "1h"],
                    ["--until", "1h"], ["--game", "no_thanks"], ["--limit", "1"]):
        local, remote = both(capsys, server, admin, "matches", *filters)
        assert local == remote, filters
    assert len(both(capsys, server, admin, "matches", "--limit", "1")[0].splitlines()) == 1
    assert both(capsys, server, admin, "matches", "--until", "1h")[0] == ""
    match_id = rows[0]["match_id"]
    local, remote = both(capsys, server, admin, "replay", "export", match_id)
    assert local == remote and json.loads(local)["match_id"] == match_id
    for where in ("--db", "--server"):
        folder = tmp_path / where.strip("-")
        status, out, _ = run(capsys, "replay", "export", "--all", str(folder), where,
                             server.db if where == "--db" else server.address)
        assert status == 0 and "wrote 2 replays" in out
    assert sorted(os.listdir(tmp_path / "db")) == sorted(os.listdir(tmp_path / "server")) == \
        sorted(f"{row['match_id']}.json" for row in rows)


def test_changes_work_local_and_remote(capsys: pytest.CaptureFixture[str],
                                       played: tuple[LadderServer, str]) -> None:
    """bots add/version/disable/enable/rotate-token, match create (seat 1 a person's: the
    match log's ``humans`` says so) and admin rotate-token work on the database and on the
    server, with the admin token over the network."""
    server, admin = played
    for where, name in (("--db", "local"), ("--server", "remote")):
        target = [where, server.db if where == "--db" else server.address]
        if where == "--server":
            target += ["--admin-token", admin]
        status, out, err = run(capsys, "bots", "add", name, "--owner", "team 7", *target)
        assert status == 0 and out.splitlines()[-1].startswith("bot_"), err
        assert run(capsys, "bots", "version", name, *target)[1].startswith(
            f"bot {name} is now version 2")
        assert run(capsys, "bots", "disable", name, *target)[1] == f"bot {name} disabled\n"
        assert run(capsys, "bots", "enable", name, *target)[1] == f"bot {name} enabled\n"
        old = out.splitlines()[-1]
        new = run(capsys, "bots", "rotate-token", name, *target)[1].splitlines()[-1]
        assert new.startswith("bot_") and new != old
        status, out, err = run(capsys, "match", "create", "--game", "no_thanks", "--seats", "3",
                               "--house", "2=threshold", "--human", "1", "--deadline-ms",
                               "500", *target)
        assert status == 0, err
        lines = out.splitlines()
        assert lines[0].startswith("match ") and lines[3] == "seat 2 house:threshold"
        assert lines[1].startswith("seat 0 token br_") and " play: " in lines[2]
        status, out, _ = run(capsys, "matches", "--status", "created", "--json", where,
                             target[1])
        created = {row["match_id"]: row for row in json.loads(out)}
        assert created[lines[0].split()[1]]["humans"] == [1]
        assert created[lines[0].split()[1]]["rated"] is False  # seat tokens: never rated
    listed = json.loads(run(capsys, "bots", "list", "--json", "--server", server.address)[1])
    mine = {row["name"]: row for row in listed if row["owner"] == "team 7"}
    assert set(mine) == {"local", "remote"} and all(r["version"] == 2 for r in mine.values())

    status, out, _ = run(capsys, "admin", "rotate-token", "--server", server.address,
                         "--admin-token", admin)
    assert status == 0
    rotated = out.splitlines()[-1]
    refused = run(capsys, "bots", "version", "remote", "--server", server.address,
                  "--admin-token", admin)
    assert refused[0] == 3 and "refused the admin token" in refused[2]
    status, out, _ = run(capsys, "admin", "rotate-token", "--db", server.db)
    assert status == 0 and out.splitlines()[-1] != rotated


def test_remote_errors_are_one_line(capsys: pytest.CaptureFixture[str],
                                    played: tuple[LadderServer, str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the network: no admin token (2), an unknown match or bot (7), a replay of a match
    not played yet (2), --db with --server (2) and a server that is not there (4) are each one
    line on stderr naming the problem."""
    server, _ = played
    monkeypatch.delenv("BULLRING_ADMIN_TOKEN", raising=False)
    cases = [
        (["bots", "add", "x", "--server", server.address], 2, "admin token"),
        (["replay", "export", "nosuchmatch", "--server", server.address], 7,
         "no match 'nosuchmatch'"),
        (["replay", "export", "nosuchmatch", "--db", server.db], 7, "no match 'nosuchmatch'"),
        (["bots", "list", "--db", server.db, "--server", server.address], 2,
         "not allowed with"),
        (["leaderboard", "--game", "six_nimmt", "--server", "127.0.0.1:1"], 4,
         "no answer from 127.0.0.1:1"),
    ]
    created = json.loads(run(capsys, "matches", "--status", "created", "--json", "--server",
                             server.address)[1])
    if created:
        cases.append((["replay", "export", created[0]["match_id"], "--server",
                       server.address], 2, "exists once it ends"))
    for argv, code, message in cases:
        status, out, err = run(capsys, *argv)
        assert status == code and message in err and len(err.strip().splitlines()) == 1, \
            (argv, status, err)
        assert "Traceback" not in err and out == ""
