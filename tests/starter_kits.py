"""What every starter kit (``client_sdk/<language>/``) is held to, for its test module.

A kit is copied out of the repository into a temporary folder (without any build output)
and built there by the second of the three commands in its README; its bot then plays by
the third command, on a live server's ladders beside house bots. The toolchain is checked
against the first command (every package it installs is installed: ``apt-get -s``).
Building once per test session serves every test of the kit.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from referee.replay import verify
from tests.ladder_helpers import ENDED, LadderServer, Lines
from tests.serving import CLI

ROOT = Path(__file__).resolve().parent.parent
KITS = ROOT / "client_sdk"
THROWING = Path(__file__).resolve().parent / "kits"
"""Bots that throw on one decision, one per kit (``throwing_bot.<ext>``)."""

LADDER_ARGS = ["--ladder", "six_nimmt,no_thanks", "--ladder-setting", "six_nimmt:rounds=1",
               "--table-size", "six_nimmt=4-4", "--table-size", "no_thanks=4-4",
               "--house-bots", "greedy,greedy,greedy,random,threshold,threshold,never_take",
               "--house-rest", "0.1"]
"""A server whose ladders seat a kit's bot at once: enough house bots for a table of each
game besides it, short 6 nimmt! matches."""

GAMES = ("six_nimmt", "no_thanks")


@dataclass(frozen=True)
class Kit:
    """One starter kit and what its tests need to know of it."""

    folder: str
    """Its folder under client_sdk/."""
    bot_source: str
    """The author's file, relative to the kit."""
    throwing_bot: str
    """The file in tests/kits/ that replaces ``bot_source`` to throw on one decision."""
    thrower: str
    """The method that throws, as the logged stack names it."""
    outputs: tuple[str, ...]
    """Build outputs and installed packages, never copied out of the tree."""
    tools: tuple[str, ...]
    """Commands the build needs."""

    @property
    def path(self) -> Path:
        """The kit in the repository."""
        return KITS / self.folder

    def commands(self) -> list[str]:
        """The README's three commands: install the toolchain, build, run."""
        readme = (self.path / "README.md").read_text()
        block = re.search(r"## Three commands\n.*?```sh\n(.*?)```", readme, re.S)
        assert block, f"{self.folder}/README.md has no '## Three commands' sh block"
        lines = [line for line in block.group(1).splitlines() if line.strip()]
        assert len(lines) == 3, lines
        return lines


@dataclass
class Built:
    """A kit copied out of the repository and built there."""

    kit: Kit
    folder: Path
    seconds: float
    """How long the build command took."""

    def variant(self, folder: Path, bot_source: Path) -> Built:
        """A copy of this build (its outputs kept, so only the bot recompiles) with another
        bot source, built by the README's build command."""
        shutil.copytree(self.folder, folder, symlinks=True, dirs_exist_ok=True)
        shutil.copyfile(bot_source, folder / self.kit.bot_source)
        return build(self.kit, folder)

    def start(self, server: str, token: str, game: str | None, *extra: str) -> KitBot:
        """Start the bot by the README's run command, on ``game``'s ladder (None: without
        the ladder option, for a match seat's token)."""
        run = self.kit.commands()[2].replace("HOST:PORT", server).replace("TOKEN", token)
        args = shlex.split(run)
        at = args.index("six_nimmt")
        args[at - 1:at + 1] = [] if game is None else [args[at - 1], game]
        proc = subprocess.Popen([*args, *extra], cwd=self.folder, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stderr is not None
        return KitBot(proc, Lines(proc.stdout), Lines(proc.stderr))


@dataclass
class KitBot:
    """A running kit bot, its output followed line by line."""

    proc: subprocess.Popen[str]
    out: Lines
    err: Lines

    def ended(self) -> list[tuple[str, str]]:
        """(match id, termination) of every match it printed as ended."""
        return [(m.group(1), m.group(2)) for line in list(self.out.lines)
                if (m := ENDED.match(line))]

    def wait(self, timeout: float = 180) -> int:
        """Wait for the process to exit; its status."""
        try:
            status = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the bot did not exit; its log:\n{self.log()}") from None
        for lines in (self.out, self.err):
            lines.wait(lambda got: bool(got) and got[-1] == "", 10, "the end of its output")
        return status

    def stop(self) -> int:
        """SIGTERM it; its exit status."""
        self.proc.send_signal(signal.SIGTERM)
        return self.wait(30)

    def log(self) -> str:
        """Everything it wrote, stderr then stdout."""
        return self.err.text()[-6000:] + self.out.text()[-2000:]


def require_tools(kit: Kit) -> None:
    """Skip (fail under CI=true, where kits must be tested) when the toolchain is missing."""
    missing = [tool for tool in kit.tools if shutil.which(tool) is None]
    if missing:
        why = f"the {kit.folder} kit needs {', '.join(missing)}: see .ci/run"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


def build_copy(kit: Kit, folder: Path) -> Built:
    """Copy ``kit`` (without build outputs) to ``folder`` and build it there by the README's
    build command."""
    require_tools(kit)
    shutil.copytree(kit.path, folder, ignore=shutil.ignore_patterns(*kit.outputs),
                    dirs_exist_ok=True)
    return build(kit, folder)


def build(kit: Kit, folder: Path) -> Built:
    """Run the README's build command in ``folder``."""
    began = time.monotonic()
    done = subprocess.run(kit.commands()[1], shell=True, cwd=folder, capture_output=True,
                          text=True, timeout=1200)
    seconds = time.monotonic() - began
    assert done.returncode == 0, f"{kit.commands()[1]!r} failed:\n{done.stdout[-3000:]}" \
                                 f"\n{done.stderr[-5000:]}"
    print(f"{kit.folder} kit built in {seconds:.1f} s")
    return Built(kit, folder, seconds)


def check_toolchain_line(kit: Kit) -> None:
    """The README's first command installs Debian packages, each of them installed here (or
    provided by an installed package, as another build of Node.js provides npm)."""
    words = shlex.split(kit.commands()[0])
    assert words[:4] == ["sudo", "apt-get", "install", "-y"], words
    fields = "${db:Status-Abbrev}|${Package}|${Provides}\n"
    listed = subprocess.run(["dpkg-query", "-W", "-f", fields], capture_output=True, text=True,
                            check=True).stdout
    installed: set[str] = set()
    for line in listed.splitlines():
        status, package, provides = line.split("|")
        if status.startswith("ii"):
            installed.add(package.split(":")[0])
            installed.update(p.split()[0] for p in provides.split(",") if p.strip())
    missing = [p for p in words[4:] if p not in installed]
    assert not missing, f"not installed: {missing}"


@pytest.fixture
def ladder(tmp_path: Path) -> Iterator[LadderServer]:
    """A live server running both ladders with house bots."""
    server = LadderServer(f"sqlite:///{tmp_path / 'bullring.db'}", LADDER_ARGS).start()
    try:
        yield server
    finally:
        server.stop()


def replay_of(server: LadderServer, match_id: str) -> dict[str, Any]:
    """The stored replay, checked through the engine."""
    replay: dict[str, Any] = json.loads(server.replay(match_id))
    verify(replay)
    return replay


def seat_of(replay: dict[str, Any], name: str) -> int:
    """The seat ``name`` played."""
    return [s["name"] for s in replay["seats"]].index(name)


def leaderboard(server: LadderServer, game: str) -> list[str]:
    """The bots on ``game``'s leaderboard."""
    out = subprocess.run([*CLI, "leaderboard", "--game", game, "--json", "--db", server.db],
                         check=True, capture_output=True, text=True).stdout
    return [e["bot"] for e in json.loads(out)]


def check_plays_both_ladders(built: Built, server: LadderServer) -> None:
    """The starter bot plays two rated matches on each ladder: `--matches 2` of 6 nimmt!
    ends with status 0, No Thanks! until SIGTERM, which also exits 0. Every match it played
    finished normally, its replay verifies, the bot answered every decision itself (no
    timeout, no default), and it is on both leaderboards."""
    name = f"{built.kit.folder}-starter"
    token = server.add_bot(name)
    six = built.start(server.address, token, "six_nimmt", "--matches", "2")
    assert six.wait() == 0, six.log()
    nt = built.start(server.address, token, "no_thanks")
    nt.out.wait(lambda lines: len([x for x in lines if ENDED.match(x)]) >= 2, 180,
                "two No Thanks! matches")
    assert nt.stop() == 0, nt.log()
    assert "SIGTERM" in nt.err.text()
    played = {game: 0 for game in GAMES}
    for match_id, termination in six.ended() + nt.ended():
        assert termination == "normal", match_id
        replay = replay_of(server, match_id)
        assert replay["termination"] == "normal"
        seat = seat_of(replay, name)
        mine = [e for e in replay["events"] if e.get("seat") == seat
                and e["type"] in ("answer", "timeout")]
        assert mine and all(e["type"] == "answer" and not e["default"] for e in mine), mine
        played[replay["game"]] += 1
    assert played["six_nimmt"] == 2 and played["no_thanks"] >= 2, played
    for game in GAMES:
        assert name in leaderboard(server, game)


def check_exception_falls_to_default(built: Built, server: LadderServer) -> None:
    """The author's code throws on its third 6 nimmt! card: the runner logs the error with
    the stack naming the method, leaves that decision to the server's default action, and
    the bot answers every other decision itself to the end of both matches."""
    name = f"{built.kit.folder}-thrower"
    token = server.add_bot(name)
    bot = built.start(server.address, token, "six_nimmt", "--matches", "2")
    assert bot.wait() == 0, bot.log()
    log = bot.err.text()
    assert "the bot raised on decision" in log and "not answered" in log, log[-4000:]
    assert "thrown on purpose" in log and built.kit.thrower in log, log[-4000:]
    defaults = 0
    own = 0
    for match_id, termination in bot.ended():
        assert termination == "normal"
        replay = replay_of(server, match_id)
        seat = seat_of(replay, name)
        answers = [e for e in replay["events"] if e["type"] == "answer" and e["seat"] == seat]
        defaults += sum(e["default"] for e in answers)
        own += sum(not e["default"] for e in answers)
        for e in answers:
            if e["default"]:
                assert (e["kind"], e["why"]) == ("PLAY_CARD", "timeout"), e
    assert len(bot.ended()) == 2
    assert defaults == 1 and own > 10, (defaults, own)
