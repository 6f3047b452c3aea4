"""The command line at the door: every option of every command, found by walking the parsers
themselves, refuses a bad value in at most three lines that name it, with no traceback;
read-only commands never create a database; ``--help`` lists the exit statuses."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from bullring import commandline as cli
from bullring.sdk.cli import arena as arena_cli
from bullring.sdk.cli import bot as runner_cli
from bullring.sdk.cli import tournament as tournament_cli
from bullring.server.cli import main as server_cli
from tests.serving import CLI

Main = Callable[[Sequence[str] | None], int]

SCRIPTS: dict[str, tuple[Callable[[], argparse.ArgumentParser], Main]] = {
    "bullring": (server_cli.build_parser, server_cli.main),
    "bullring-bot": (runner_cli.build_parser, runner_cli.main),
    "bullring-arena": (arena_cli.build_parser, arena_cli.main),
    "bullring-tournament": (tournament_cli.build_parser, tournament_cli.main),
}
"""Every console script: the full install's ``bullring`` and the SDK's scripts."""


def leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
           ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command and sub-command that runs something, with the words that name it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from leaves(sub, (*path, name))
            return
    yield path, parser


def options_of(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's options and arguments, but --help and --version."""
    return [a for a in parser._actions
            if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)
            and "--version" not in a.option_strings]


def label(action: argparse.Action) -> str:
    """How an error names the option: its longest flag, or a positional's metavar."""
    if action.option_strings:
        return max(action.option_strings, key=len)
    return str(action.metavar or action.dest)


def good(action: argparse.Action) -> str:
    """A value the option takes."""
    if action.choices is not None:
        return str(next(iter(action.choices)))
    assert isinstance(action.type, cli.ArgType), f"{label(action)} has no checked type"
    return action.type.good


def bad_values(action: argparse.Action) -> list[str]:
    """Values the option refuses, from its type (or its choices)."""
    if action.choices is not None:
        return ["no-such-choice"]
    assert isinstance(action.type, cli.ArgType), \
        f"{label(action)} is not checked when parsed: give it a bullring.commandline type"
    assert action.type.bad, f"{label(action)}'s type lists no bad value"
    return list(action.type.bad)


def argv_with(parser: argparse.ArgumentParser, target: argparse.Action, value: str
              ) -> list[str]:
    """Arguments that fill every required option with a good value and give ``target``
    the (bad) ``value``."""
    argv: list[str] = []
    positionals: list[str] = []
    for action in options_of(parser):
        if action is target:
            if not action.option_strings:
                positionals.append(value)
            elif action.nargs == 0:
                argv.append(f"{label(action)}=x")  # a flag takes no value
            else:
                argv.append(f"{label(action)}={value}")
        elif not action.option_strings:
            if action.nargs not in ("?", "*"):
                positionals.append(good(action))
        elif action.required:
            argv += [label(action), good(action)]
    return [*argv, *positionals]


def cases() -> Iterator[tuple[str, str, list[str], str]]:
    """(script, command, argv, what the error must name) for every bad value of every
    option of every command of every script."""
    for script, (build, _) in SCRIPTS.items():
        for path, parser in leaves(build()):
            for action in options_of(parser):
                values = [""] if action.nargs == 0 else bad_values(action)
                for value in values:
                    yield (script, " ".join((script, *path)),
                           [*path, *argv_with(parser, action, value)], label(action))


CASES = list(cases())


def test_the_walk_covers_every_command() -> None:
    """The walk reaches every command of ``bullring --help`` and the SDK's scripts, with
    more than one bad value per option on average."""
    commands = {command for _, command, _, _ in CASES}
    for name in ("serve", "bot", "bots add", "bots list", "leaderboard", "matches",
                 "match create", "admin rotate-token", "replay export", "replay verify",
                 "arena", "tournament", "health"):
        assert f"bullring {name}" in commands
    assert {"bullring-bot", "bullring-arena", "bullring-tournament"} <= commands
    assert len(CASES) > 200


@pytest.mark.timeout(300)
def test_every_bad_value_of_every_option_is_one_line_naming_it(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """Each command refuses each bad value within 10 s, with exit status 2, at most three
    lines on stderr naming the option, no traceback, and nothing written to the folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BULLRING_ADMIN_TOKEN", raising=False)
    failures = []
    for script, command, argv, name in CASES:
        main = SCRIPTS[script][1]
        started = time.monotonic()
        status = main(argv)
        took = time.monotonic() - started
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        if (status != 2 or took > 10 or not 1 <= len(lines) <= 3 or name not in captured.err
                or "Traceback" in captured.err or captured.out):
            failures.append(f"{command} {argv}: status {status} in {took:.1f} s: "
                            f"{captured.err!r} {captured.out[:200]!r}")
    assert not failures, "\n".join(failures)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("script", list(SCRIPTS))
def test_help_lists_the_exit_statuses_and_version(
        capsys: pytest.CaptureFixture[str], script: str) -> None:
    """``--help`` ends with the exit statuses and speaks plainly (no raw ``double
    backticks``, nothing promised for later); ``--version`` prints the version."""
    main = SCRIPTS[script][1]
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "exit status:" in text and "5    the database could not be opened" in text
    assert "``" not in text and "(later)" not in text
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith(f"{script} 0.")
    for path, parser in leaves(SCRIPTS[script][0]()):
        help_text = parser.format_help()
        assert "``" not in help_text, path
        assert "exit status:" in help_text, path


READ_COMMANDS = [["bots", "list"], ["leaderboard", "--game", "six_nimmt"], ["matches"],
                 ["replay", "export", "abc123"], ["replay", "export", "--all", "out"],
                 ["challenge", "list", "--token", "t"], ["challenge", "show", "c1", "--token", "t"]]
"""The commands that only read the ladder."""
WRITE_COMMANDS = [["bots", "add", "x"], ["bots", "version", "x"], ["bots", "disable", "x"],
                  ["bots", "enable", "x"], ["bots", "rotate-token", "x"],
                  ["match", "create", "--game", "six_nimmt", "--seats", "2"],
                  ["admin", "rotate-token"],
                  ["challenge", "create", "--game", "six_nimmt", "--against", "house:greedy",
                   "--token", "t"],
                  ["challenge", "accept", "c1", "--token", "t"],
                  ["challenge", "decline", "c1", "--token", "t"],
                  ["challenge", "auto-accept", "on", "--token", "t"]]
"""The commands that change the ladder on the database (``bullring tournament`` too, below)."""


def test_the_lists_hold_every_command_with_db_but_serve() -> None:
    """READ_COMMANDS and WRITE_COMMANDS (and tournament) name every command that opens the
    database."""
    with_db = {path for path, parser in leaves(server_cli.build_parser())
               if any("--db" in action.option_strings for action in parser._actions)}
    assert with_db >= {("serve",), ("tournament",)}
    assert {path for path in with_db - {("serve",), ("tournament",)}
            if not any(argv[:len(path)] == list(path)
                       for argv in READ_COMMANDS + WRITE_COMMANDS)} == set()


@pytest.mark.parametrize("argv", [*READ_COMMANDS, *WRITE_COMMANDS], ids=" ".join)
def test_no_command_but_serve_creates_a_database(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        argv: list[str]) -> None:
    """In a folder without the database, every command but ``serve``, reading or writing,
    with the default database or --db naming a file that is not there, says in one line
    that there is none, naming the file's whole path, and creates nothing (``bots add`` run
    in another folder made a new, empty ladder, and the bot's token was unknown to the
    server)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BULLRING_TOKEN", raising=False)
    for extra, path in (([], tmp_path / "bullring.db"),
                        (["--db", f"sqlite:///{tmp_path / 'none.db'}"], tmp_path / "none.db")):
        assert server_cli.main([*argv, *extra]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        assert f"--db: no database at '{path}': only `bullring serve` creates one" in err, err
    assert list(tmp_path.iterdir()) == []
    missing = f"sqlite:///{tmp_path / 'none.db'}"
    assert server_cli.main(["tournament", "--db", missing, "--bots", "a,b", "--format",
                            "round-robin", "--games", "1"]) == 2
    assert "no database at" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_serve_refuses_a_bad_start_in_one_line_leaving_nothing(tmp_path: Path) -> None:
    """``bullring serve`` with a bad ladder setting, a bad port, a port in use or a database
    it cannot reach exits non-zero with one line on stderr, before it listens, and leaves
    the folder as it found it (no database file)."""
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = str(taken.getsockname()[1])
    cases = {
        "rounds": (["--ladder-setting", "six_nimmt:rounds=abc"], 2),
        "bogus": (["--ladder-setting", "six_nimmt:bogus=1"], 2),
        "--port": (["--port", "99999"], 2),
        "in use": (["--port", port, "--http-port", "0"], 2),
        "--http-port": (["--port", "0", "--http-port", port], 2),
        "the database failed": (["--port", "0", "--http-port", "0", "--db",
                                 "postgresql+psycopg://nobody@127.0.0.1:1/none"], 5),
        "--db": (["--db", "sqlite:////proc/no-such-folder/bullring.db"], 2),
    }
    try:
        procs = {name: subprocess.Popen([*CLI, "serve", *argv], cwd=tmp_path, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for name, (argv, _) in cases.items()}
        for name, proc in procs.items():
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == cases[name][1], (name, err)
            assert len(err.strip().splitlines()) == 1 and name in err, (name, err)
            assert err.startswith("bullring serve: ") and "listening" not in out, (name, out)
    finally:
        taken.close()
    assert list(tmp_path.iterdir()) == []


def test_a_closed_output_is_one_line(tmp_path: Path) -> None:
    """``bullring arena --json | head -0``: nobody reads the output any more; the command
    says so in one line (exit status 8), without a traceback."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the command writes anything
    try:
        proc = subprocess.run([*CLI, "arena", "--game", "six_nimmt", "--bots",
                               "random,random,random", "--games", "3", "--json"], cwd=tmp_path,
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write)
    assert proc.returncode == 8
    assert proc.stderr.strip() == \
        "bullring arena: the output was closed before it was all written"


ISSUE_CASES = [
    (["arena", "--game", "six_nimmt", "--bots", "random,random", "--games", "-5"], 2,
     "--games: must be at least 1"),
    (["arena", "--game", "six_nimmt", "--bots", "random,random", "--workers", "0"], 2,
     "--workers: must be at least 1"),
    (["arena", "--game", "six_nimmt", "--bots", "random,random", "--replays", "/proc/nope"], 2,
     "--replays: cannot write in '/proc/nope'"),
    (["leaderboard", "--game", "chess"], 2, "--game: unknown game 'chess'; known: six_nimmt"),
    (["leaderboard", "--game", "six_nimmt"], 2, "--db: no database at '/"),
    (["replay", "export", "1f2e3d4c5b6a"], 2, "--db: no database at '/"),
    (["bots", "list", "--server", "127.0.0.1:1"], 4, "no answer from 127.0.0.1:1"),
    (["bots", "add", "x", "--db", "postgresql+psycopg://nobody@127.0.0.1:1/none"], 5,
     "the database failed: connection failed"),
    (["serve", "--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=abc"], 2,
     "--ladder-setting: setting 'rounds' must be an integer, not 'abc'"),
    (["serve", "--ladder-setting", "six_nimmt:bogus=1"], 2, "unknown setting 'bogus'"),
    (["arena", "--game", "six_nimmt", "--bots", "tests.bots.faulty:Illegal,random"], 6,
     "bot 'tests.bots.faulty:Illegal' (seat 0) answered illegally in 6 nimmt! game 0"),
]
"""The bad invocations the issues name, with the status and line each gives."""


@pytest.mark.parametrize("argv,status,message", ISSUE_CASES,
                         ids=[" ".join(argv) for argv, _, _ in ISSUE_CASES])
def test_each_bad_invocation_is_one_line(capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                         argv: list[str], status: int, message: str) -> None:
    """Each exits with its class's status and one line naming the problem, in an empty
    folder that stays empty."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2]))
    assert server_cli.main(argv) == status
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err, err
    assert list(tmp_path.iterdir()) == []


def test_serve_defaults_are_the_server_options_own() -> None:
    """``bullring serve`` with no option gives exactly the options ``ServerOptions()``
    holds by default (limits, quotas, caps, ladder, metrics...): a default changed in one
    place and not the other fails here."""
    from bullring.server.app import ServerOptions
    from bullring.server.cli import options

    args = server_cli.build_parser().parse_args(["serve"])
    assert server_cli.serve_options(args) == ServerOptions(db=options.db_url(args))
