"""Helpers for the starter kits' tests (client_sdk/<language>/): copy a kit out of the
repository as its README says, build it with the README's command, run its bot on a live
server's ladder, and check what the server stored about it."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from referee.replay import verify
from server.store import Store
from tests.ladder_helpers import LadderBot, LadderServer, Lines, wait_until
from tests.serving import ServerProcess, db_url

ROOT = Path(__file__).resolve().parent.parent

KIT_LADDERS = ["--house-bots", "greedy,greedy,random,threshold,never_take",
               "--table-size", "six_nimmt=3-5", "--table-size", "no_thanks=3-4",
               "--ladder-setting", "six_nimmt:rounds=1", "--house-rest", "0.2",
               "--ladder-setting", "six_nimmt:deadline_ms=3000",
               "--ladder-setting", "no_thanks:deadline_ms=3000"]
"""Both ladders, with house bots for every table and one-round 6 nimmt! matches. The
deadline is 3 s: a JVM's first decision (class loading, a cold JIT) took over 1 s on a
machine running a load of 30, and a timeout here must mean the kit failed, not the machine."""


@dataclass(frozen=True)
class Kit:
    """A starter kit: its folder under client_sdk/ and the tools its build needs."""

    folder: str
    tools: tuple[str, ...]
    def readme_commands(self) -> list[str]:
        """The three commands of the README's first ``sh`` block: install, build, run."""
        text = (ROOT / "client_sdk" / self.folder / "README.md").read_text(encoding="utf-8")
        block = re.search(r"```sh\n(.*?)```", text, re.S)
        assert block is not None, f"client_sdk/{self.folder}/README.md has no ```sh block"
        lines = [line for line in block.group(1).splitlines()
                 if line.strip() and not line.lstrip().startswith("#")]
        assert len(lines) == 3, f"the README's first block has {len(lines)} commands: {lines}"
        return lines

    def require(self) -> None:
        """Skip without the kit's tools, or fail under CI=true, where the kit must build."""
        missing = [tool for tool in self.tools if shutil.which(tool) is None]
        if missing:
            why = f"{', '.join(missing)} not on PATH (.ci/run installs them)"
            if os.environ.get("CI"):
                pytest.fail(f"the {self.folder} kit must build in CI, but {why}")
            pytest.skip(why)

    def copy_out(self, dest: Path) -> Path:
        """Copy the kit and the contract (proto/) to ``dest`` as the README says; return it."""
        kit = dest / self.folder
        shutil.copytree(ROOT / "client_sdk" / self.folder, kit, ignore=shutil.ignore_patterns(
            "build", "target", "Cargo.lock", "__pycache__", "bullring_messages.py",
            "node_modules", "dist", "generated"))
        shutil.copytree(ROOT / "proto", kit / "proto")
        return kit

    def build(self, kit: Path) -> None:
        """Run the README's build command in ``kit``."""
        command = self.readme_commands()[1]
        done = subprocess.run(command, shell=True, cwd=kit, capture_output=True, text=True,
                              timeout=900)
        assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"

    def variant(self, built: Path, dest: Path, bot_source: str, replacement: Path) -> Path:
        """A copy of the built kit ``built`` at ``dest`` (build outputs kept, so only the bot
        is compiled again) whose ``bot_source`` is ``replacement``, built by the README's
        command; return it."""
        shutil.copytree(built, dest, symlinks=True)
        shutil.copyfile(replacement, dest / bot_source)
        self.build(dest)
        return dest

    def check_install_line(self) -> None:
        """Every Debian package the README's install command names is installed by .ci/run."""
        install = self.readme_commands()[0].split()
        ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
        packages = install[install.index("-y") + 1:]
        assert packages and all(package in ci for package in packages), packages

    def start(self, kit: Path, name: str, server: ServerProcess, token: str, game: str,
              *args: str, env: dict[str, str] | None = None,
              command: str | None = None) -> LadderBot:
        """Start the README's run command (or ``command``, written the same way) in ``kit``
        for ``game``'s ladder."""
        words = {"HOST:PORT": server.address, "http://HOST:PORT": server.http,
                 "TOKEN": token, "six_nimmt": game}
        argv = [words.get(word, word)
                for word in shlex.split(command or self.readme_commands()[2])]
        proc = subprocess.Popen([*argv, *args], cwd=kit, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                env={**os.environ, **(env or {})})
        assert proc.stdout is not None and proc.stderr is not None
        return LadderBot(name, proc, Lines(proc.stdout), Lines(proc.stderr))


@dataclass
class KitRig:
    """A built copy of a kit and a ladder server for it."""

    kit: Kit
    folder: Path
    server: LadderServer


def kit_rig(kit: Kit, tmp: Path) -> Iterator[KitRig]:
    """Copy ``kit`` out of the repository, build it by its README, start a ladder server."""
    kit.require()
    folder = kit.copy_out(tmp / "copy")
    kit.build(folder)
    server = LadderServer(db_url(tmp), KIT_LADDERS).start()
    try:
        yield KitRig(kit, folder, server)
    finally:
        server.stop()


def stop(bot: LadderBot) -> int:
    """SIGTERM the bot and return its exit status."""
    bot.stop()
    code = bot.proc.returncode
    assert code is not None
    return code


def my_seat(replay: dict[str, Any], name: str) -> int:
    """The seat ``name`` played in the replay."""
    names = [seat["name"] for seat in replay["seats"]]
    return names.index(name)


def seat_events(replay: dict[str, Any], seat: int, kind: str) -> list[dict[str, Any]]:
    """The log events of one type for one seat."""
    return [e for e in replay["events"] if e["type"] == kind and e.get("seat") == seat]


def check_ladder_play(rig: KitRig, matches: int = 2) -> None:
    """The kit's starter bot plays ``matches`` rated matches of each game beside house bots;
    told to stop (SIGTERM) it exits 0; the matches finished normally, with every decision of
    its seat answered by the bot (no timeout, no default), their replays verify, and the bot
    is on both leaderboards."""
    prefix = rig.kit.folder.replace("-", "")
    games = {"six_nimmt": f"{prefix}-6nimmt", "no_thanks": f"{prefix}-nothanks"}
    bots = {game: rig.kit.start(rig.folder, name, rig.server, rig.server.add_bot(name), game)
            for game, name in games.items()}
    try:
        def played() -> bool:
            return all(len(b.matches()) >= matches or b.proc.poll() is not None
                       for b in bots.values())

        wait_until(played, 240, f"both bots to play {matches} matches")
    finally:
        codes = {game: stop(bot) for game, bot in bots.items()}
    for game, bot in bots.items():
        err = bot.err.text()
        assert codes[game] == 0, f"{bot.name} exited {codes[game]}:\n{err[-3000:]}"
        ended = bot.matches()
        assert len(ended) >= matches, err[-3000:]
        store = Store(rig.server.db)
        for match_id, termination in ended[:matches]:
            assert termination == "normal"
            replay = store.replay(match_id)
            verify(replay)
            assert replay["game"] == game and replay["termination"] == "normal"
            seat = my_seat(replay, bot.name)
            assert not seat_events(replay, seat, "timeout"), f"{match_id}: a timeout\n{err}"
            answers = seat_events(replay, seat, "answer")
            assert answers and not any(a["default"] for a in answers)
        board = [entry.bot for entry in store.leaderboard(game)]
        assert bot.name in board


def check_a_throw_falls_to_the_default(rig: KitRig, name: str, throwing: LadderBot,
                                       message: str) -> None:
    """A bot that throws on its third card (``throwing``, one 6 nimmt! ladder match) logs the
    exception with its trace (``message``); that decision gets the default action at the
    deadline and the bot answers every other decision itself, then exits 0."""
    wait_until(lambda: throwing.proc.poll() is not None, 120, f"{name} to end its match")
    err = throwing.err.text()
    assert throwing.proc.returncode == 0, err[-3000:]
    assert message in err, err[-3000:]
    [(match_id, termination)] = throwing.matches()
    assert termination == "normal"
    replay = Store(rig.server.db).replay(match_id)
    verify(replay)
    seat = my_seat(replay, name)
    answers = [e for e in replay["events"]
               if e.get("seat") == seat and e["type"] in ("answer", "timeout")]
    kinds = [("timeout" if e["type"] == "timeout" else
              "default" if e["default"] else "own") for e in answers]
    assert kinds.count("timeout") == 1 and kinds.count("default") == 1, kinds
    thrown = kinds.index("timeout")
    assert kinds[thrown + 1] == "default" and thrown >= 2, kinds
    assert "own" in kinds[thrown + 2:], kinds
