"""Helpers for the starter kits' tests (client_sdk/<language>/): copy a kit out of the
repository as its README says, build it with the README's command, run its bot on a live
server's ladder, and check what the server stored about it."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from bullring.referee.replay import verify
from bullring.server.store import Store
from tests.ladder_helpers import YOU, LadderBot, LadderServer, Lines, wait_until
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


DEBIAN_FIRST = {**os.environ, "PATH": f"/usr/bin:{os.environ.get('PATH', '')}"}
"""The environment with Debian's tools first (a toolchain installed elsewhere, such as
rustup's cargo in ~/.cargo/bin, must not stand in for the packages the kits name)."""


@dataclass(frozen=True)
class Kit:
    """A starter kit: its folder under client_sdk/, the tools its build needs and the
    comments its starter bot gives its answers."""

    folder: str
    tools: tuple[str, ...]
    comments: frozenset[str]
    """Every comment the starter bot sends (each of its answers carries one of them)."""

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

    def build_once(self, kit: Path) -> None:
        """Build ``kit`` by the README's command, or, where ``BULLRING_KIT_CACHE`` names a
        folder, copy the build that an earlier test session in the same run made of the very
        same sources there (CI runs the suite twice, on the sources and on the compiled
        modules; the kits' builds do not depend on which)."""
        cache = os.environ.get("BULLRING_KIT_CACHE")
        if not cache:
            self.build(kit)
            return
        built = Path(cache) / f"{self.folder}-{self.source_digest()}"
        if not built.exists():
            self.build(kit)
            shutil.copytree(kit, built.with_suffix(".partial"), symlinks=True)
            built.with_suffix(".partial").rename(built)
            return
        shutil.rmtree(kit)
        shutil.copytree(built, kit, symlinks=True)

    def source_digest(self) -> str:
        """A digest of everything a build of this kit reads from the repository: the kit's
        files, the contract and the README's commands."""
        digest = hashlib.sha256("\n".join(self.readme_commands()).encode())
        for top in (ROOT / "client_sdk" / self.folder, ROOT / "proto"):
            for path in sorted(p for p in top.rglob("*") if p.is_file()):
                digest.update(str(path.relative_to(ROOT)).encode())
                digest.update(path.read_bytes())
        return digest.hexdigest()[:16]

    def build(self, kit: Path) -> None:
        """Run the README's build command in ``kit``."""
        command = self.readme_commands()[1]
        done = subprocess.run(command, shell=True, cwd=kit, capture_output=True, text=True,
                              timeout=900, env=DEBIAN_FIRST)
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
    kit.build_once(folder)
    server = LadderServer(db_url(tmp), KIT_LADDERS).start()
    try:
        yield KitRig(kit, folder, server)
    finally:
        server.stop()


def finished(bot: LadderBot, timeout: float = 120) -> int:
    """Wait until the bot's process has exited and its output is all read; its exit status."""
    def done() -> bool:
        return bot.proc.poll() is not None and all(
            lines.lines and lines.lines[-1] == "" for lines in (bot.out, bot.err))

    wait_until(done, timeout, f"{bot.name} to exit")
    code = bot.proc.returncode
    assert code is not None
    return code


def stop(bot: LadderBot) -> int:
    """SIGTERM the bot; its exit status once its output is all read."""
    bot.stop()
    return finished(bot)


def my_seat(replay: dict[str, Any], name: str) -> int:
    """The seat ``name`` played in the replay."""
    names = [seat["name"] for seat in replay["seats"]]
    return names.index(name)


def seat_events(replay: dict[str, Any], seat: int, kind: str) -> list[dict[str, Any]]:
    """The log events of one type for one seat."""
    return [e for e in replay["events"] if e["type"] == kind and e.get("seat") == seat]


def http_replay(server: ServerProcess, match_id: str) -> dict[str, Any]:
    """The replay of an ended match as the HTTP API gives it to anyone."""
    response = httpx.get(f"{server.http}/api/matches/{match_id}/replay", timeout=30)
    response.raise_for_status()
    replay: dict[str, Any] = response.json()
    return replay


def check_ended_line(server: ServerProcess, bot: LadderBot, match_id: str, seat: int) -> None:
    """The line ``bot`` printed at ``match_id``'s end says what ``GET /api/matches/{id}``
    says: every seat's totals and ranks, then ``seat`` as its own (``; you (seat N): total T,
    rank R``, the Python SDK's words) with that seat's total and rank."""
    response = httpx.get(f"{server.http}/api/matches/{match_id}", timeout=30)
    response.raise_for_status()
    info = response.json()
    line = bot.line_of(match_id)
    assert f" ended: totals {info['totals']} ranks {info['ranks']} (" in line, (line, info)
    you = YOU.search(line)
    assert you is not None, line
    assert tuple(int(part) for part in you.groups()) == (
        seat, info["totals"][seat], info["ranks"][seat]), (line, info)


def check_commented(kit: Kit, replay: dict[str, Any], seat: int) -> None:
    """Every answer of ``seat`` in ``replay`` carries one of the starter bot's comments."""
    said = [answer.get("comment") for answer in seat_events(replay, seat, "answer")]
    assert said and all(comment in kit.comments for comment in said), (kit.comments, said)


def check_ladder_play(rig: KitRig, matches: int = 2) -> None:
    """The kit's starter bot plays ``matches`` rated matches of each game beside house bots;
    told to stop (SIGTERM) it exits 0; the matches finished normally, with every decision of
    its seat answered by the bot (no timeout, no default), their replays verify, and the bot
    is on both leaderboards. Each of its answers in the replays that the HTTP API serves
    carries the starter bot's comment."""
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
            replay = http_replay(rig.server, match_id)
            verify(replay)
            assert replay["game"] == game and replay["termination"] == "normal"
            seat = my_seat(replay, bot.name)
            check_ended_line(rig.server, bot, match_id, seat)
            assert not seat_events(replay, seat, "timeout"), f"{match_id}: a timeout\n{err}"
            answers = seat_events(replay, seat, "answer")
            assert answers and not any(a["default"] for a in answers)
            check_commented(rig.kit, replay, seat)
        board = [entry.bot for entry in store.leaderboard(game)]
        assert bot.name in board


def check_a_throw_falls_to_the_default(rig: KitRig, name: str, throwing: LadderBot,
                                       message: str) -> None:
    """A bot that throws on its third card (``throwing``, one 6 nimmt! ladder match) logs the
    exception with its trace (``message``); that decision gets the default action at the
    deadline and the bot answers every other decision itself, then exits 0. Its comments,
    201 characters long, are logged as left out, and its answers go without them."""
    code = finished(throwing)
    err = throwing.err.text()
    assert code == 0, err[-3000:]
    assert message in err, err[-3000:]
    [(match_id, termination)] = throwing.matches()
    assert termination == "normal"
    replay = Store(rig.server.db).replay(match_id)
    verify(replay)
    seat = my_seat(replay, name)
    check_ended_line(rig.server, throwing, match_id, seat)
    answers = [e for e in replay["events"]
               if e.get("seat") == seat and e["type"] in ("answer", "timeout")]
    kinds = [("timeout" if e["type"] == "timeout" else
              "default" if e["default"] else "own") for e in answers]
    assert kinds.count("timeout") == 1 and kinds.count("default") == 1, kinds
    thrown = kinds.index("timeout")
    assert kinds[thrown + 1] == "default" and thrown >= 2, kinds
    assert "own" in kinds[thrown + 2:], kinds
    assert "is left out: it has 201 characters; at most 200" in err, err[-3000:]
    assert not any("comment" in e for e in answers), answers


def check_replaced(rig: KitRig) -> None:
    """A second process on the same token takes the bot's place: the first is told it was
    replaced and exits 5 without reconnecting; the second goes on until SIGTERM (exit 0)."""
    name = f"{rig.kit.folder.replace('-', '')}-twice"
    token = rig.server.add_bot(name)
    first = rig.kit.start(rig.folder, name, rig.server, token, "no_thanks")
    second: LadderBot | None = None
    try:
        first.err.wait(lambda lines: any("waiting on the no_thanks ladder" in line
                                         for line in lines), 60, "the first to join")
        second = rig.kit.start(rig.folder, name, rig.server, token, "no_thanks")
        assert finished(first, 60) == 5, first.err.text()[-3000:]
        assert "REPLACED" in first.err.text()
        assert second.proc.poll() is None, second.err.text()[-3000:]
    finally:
        first.stop()
        if second is not None:
            assert stop(second) == 0, second.err.text()[-3000:]


SEAT_MATCHES = {"six_nimmt": (["--setting", "rounds=1"], ["greedy", "random"]),
                "no_thanks": ([], ["threshold", "random"])}
"""Three-seat matches beside two house bots, for kits that play one seat by a seat token:
each game's settings and its house bots, in seat order."""


def seat_match_args(game: str, seat: int) -> list[str]:
    """``bullring match create`` arguments of a three-seat ``SEAT_MATCHES`` match of ``game``
    whose house bots sit at every seat but ``seat``."""
    settings, house = SEAT_MATCHES[game]
    others = [other for other in range(3) if other != seat]
    return [*settings, *(arg for other, name in zip(others, house, strict=True)
                         for arg in ("--house", f"{other}={name}"))]


def seat_command(kit: Kit) -> str:
    """The README's run command for one seat: the same, without ``--ladder six_nimmt``."""
    return kit.readme_commands()[2].replace(" --ladder six_nimmt", "")


def check_seat_play(rig: KitRig, matches: int = 2) -> None:
    """The kit's starter bot plays ``matches`` matches of each game by seat tokens, on seat 0
    and seat 2 in turn: each run exits 0 at its match's end, which finished normally with
    every decision of its seat answered by the bot (no timeout, no default) with the starter
    bot's comment and verifies as a replay, and its line marks the token's seat as its own
    (``check_ended_line``); a run waiting for its match to start exits 0 on SIGTERM."""
    for game in SEAT_MATCHES:
        for number in range(matches):
            seat = 2 * (number % 2)
            match = rig.server.create_match(game, 3, "--seed", str(number),
                                            *seat_match_args(game, seat))
            token = match.tokens[seat]
            assert token is not None
            bot = rig.kit.start(rig.folder, f"seat{seat}-{game}-{number}", rig.server,
                                token, game, command=seat_command(rig.kit))
            code = finished(bot)
            assert code == 0, bot.err.text()[-3000:]
            assert bot.matches() == [(match.match_id, "normal")], bot.out.text()
            check_ended_line(rig.server, bot, match.match_id, seat)
            replay = http_replay(rig.server, match.match_id)
            verify(replay)
            assert replay["termination"] == "normal"
            assert not seat_events(replay, seat, "timeout"), bot.err.text()[-3000:]
            answers = seat_events(replay, seat, "answer")
            assert answers and not any(a["default"] for a in answers)
            check_commented(rig.kit, replay, seat)
    waiting = rig.server.create_match("six_nimmt", 2)
    assert waiting.tokens[0] is not None
    bot = rig.kit.start(rig.folder, "waiting", rig.server, waiting.tokens[0], "six_nimmt",
                        command=seat_command(rig.kit))
    bot.err.wait(lambda lines: any("connecting to" in line for line in lines), 60,
                 "the bot to connect")
    assert stop(bot) == 0, bot.err.text()[-3000:]


def start_throwing_on_a_seat(rig: KitRig, command: str, env: dict[str, str] | None = None
                             ) -> tuple[str, LadderBot]:
    """Start ``command`` (a throwing bot, written as the README's run command) on seat 0 of a
    6 nimmt! match beside house bots; return the seat's name and the process."""
    match = rig.server.create_match("six_nimmt", 3, *seat_match_args("six_nimmt", 0))
    assert match.tokens[0] is not None
    command = command.replace(" --ladder six_nimmt", "")
    return "seat0", rig.kit.start(rig.folder, "seat0", rig.server, match.tokens[0],
                                  "six_nimmt", env=env, command=command)


class KitTests:
    """The tests every starter kit passes. A kit's test module subclasses this as
    ``Test<Language>Kit``, sets ``KIT`` and ``THROWN_AT``, and says in ``start_throwing`` how
    its author would build and start a bot that throws; kits that also play one match seat
    by a seat token subclass ``SeatKitTests``."""

    KIT: ClassVar[Kit]
    THROWN_AT: ClassVar[str]
    """What the throwing bot's logged trace must show: the author's function, or the header
    of the language's trace."""
    THROWN: ClassVar[str] = "thrown on purpose at the third card"
    """The throwing bot's message."""

    @pytest.fixture(scope="class")
    @classmethod
    def rig(cls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KitRig]:
        """The kit built in a folder of its own, and a ladder server."""
        yield from kit_rig(cls.KIT, tmp_path_factory.mktemp(cls.KIT.folder))

    def start_throwing(self, rig: KitRig, tmp_path: Path, name: str) -> LadderBot:
        """Build a bot that throws on its third card beside the built kit and start it for
        one match of the 6 nimmt! ladder as bot ``name``."""
        raise NotImplementedError

    def test_readme_installs_what_ci_installs(self) -> None:
        """Every Debian package the README's install command names is installed by .ci/run."""
        self.KIT.check_install_line()

    def test_the_starter_bot_plays_both_ladders(self, rig: KitRig) -> None:
        """The starter bot plays two rated matches of each game on the ladder by the README's
        run command and stops on SIGTERM with status 0 (``check_ladder_play``)."""
        check_ladder_play(rig)

    def test_a_throwing_bot_falls_to_the_default_and_plays_on(self, rig: KitRig,
                                                             tmp_path: Path) -> None:
        """A bot that throws once is logged with its trace, that decision gets the default
        action, and the bot plays the rest of its match."""
        name = f"{self.KIT.folder.replace('-', '')}throws"
        bot = self.start_throwing(rig, tmp_path, name)
        try:
            check_a_throw_falls_to_the_default(rig, name, bot, self.THROWN)
            assert self.THROWN_AT in bot.err.text()
        finally:
            bot.stop()

    def test_a_second_process_on_the_token_replaces_the_first(self, rig: KitRig) -> None:
        """The runner stops for good (exit 5) when another process takes its token's place
        (``check_replaced``)."""
        check_replaced(rig)


class SeatKitTests(KitTests):
    """``KitTests`` and the match-seat tests, for kits that play one seat by a seat token."""

    def test_the_starter_bot_plays_match_seats(self, rig: KitRig) -> None:
        """See ``check_seat_play``."""
        check_seat_play(rig)


class VariantKitTests(SeatKitTests):
    """``SeatKitTests`` for kits whose throwing bot replaces the starter bot's source file
    (``BOT_SOURCE``, by ``THROWING_SOURCE``) in a copy of the built kit."""

    BOT_SOURCE: ClassVar[str]
    THROWING_SOURCE: ClassVar[Path]

    def start_throwing(self, rig: KitRig, tmp_path: Path, name: str) -> LadderBot:
        """The copy with the throwing source built by the README's command, started."""
        folder = self.KIT.variant(rig.folder, tmp_path / self.KIT.folder, self.BOT_SOURCE,
                                  self.THROWING_SOURCE)
        return self.KIT.start(folder, name, rig.server, rig.server.add_bot(name), "six_nimmt",
                              "--matches", "1")
