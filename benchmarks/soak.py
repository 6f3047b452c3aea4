"""Soak: the ladder runs for minutes while its bots crash, stall, reconnect and send garbage.

Run: python benchmarks/soak.py --minutes 30 [--db sqlite|postgresql|URL] [--deadline-ms 200]

A real ``bullring serve`` (both ladders, short deadlines, two house bots) on a fresh SQLite
file (or a fresh PostgreSQL database, dropped afterwards) and eight registered bots, each a
``bullring bot --ladder GAME house:NAME`` process. A chaos driver, at random intervals:

- crash: kill -9 a bot process and start it again (it reconnects with the same token);
- stall: SIGSTOP a bot for longer than the deadline, then SIGCONT it;
- version: kill -9 a bot, wait until its match is over, ``new_version`` it, start it again;
- garbage: a raw gRPC client sends random bytes (valid, invalid and no token), joins the
  ladder with a registered "garbage" bot and answers with malformed actions and wrong ids,
  or drops its stream mid-match.

At the end the server gets SIGTERM and the script checks, printing a summary:
1. no lost match: every match row is finished or aborted, and aborted only if it was in
   flight at shutdown; every finished replay verifies; every match a bot saw end is stored
   finished with the same ranks; every finished ladder match is rated once per seat;
2. no server error: no ERROR / Traceback / exception line in the server's log, and no
   UNKNOWN or INTERNAL status answered to the garbage client. One INTERNAL is not the
   server's: grpc.aio's own write losing the status of a call the server refused before
   reading it (grpc/grpc#36066, ``wire.lost_to_own_write``). The same call is then asked
   again with grpc's sync client, and the status the server sends it is what is judged
   (and counted, as "INTERNAL lost to the client's write ..., server sent CODE");
3. ratings recomputed from the stored matches (their ranks through ``server.ratings`` in
   match order from the initial rating, widened at each new bot version) equal the stored
   ratings within 1e-9.
The exit status is 0 only when every check holds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from client_sdk import wire  # noqa: E402
from client_sdk.generated.bullring.v2 import referee_pb2 as pb  # noqa: E402
from referee.core import RefereeError  # noqa: E402
from referee.replay import verify  # noqa: E402
from server import ratings  # noqa: E402
from server.ratings import Skill  # noqa: E402
from server.store import Store  # noqa: E402

CLI = [sys.executable, "-m", "server.cli"]
PG = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=3"
TOLERANCE = 1e-9
"""The largest rating difference (mu or sigma) the recomputation may show."""
BOTS: dict[str, tuple[str, str]] = {
    "nimmt-greedy-1": ("six_nimmt", "house:greedy"),
    "nimmt-greedy-2": ("six_nimmt", "house:greedy"),
    "nimmt-random-1": ("six_nimmt", "house:random"),
    "nimmt-random-2": ("six_nimmt", "house:random"),
    "thanks-threshold-1": ("no_thanks", "house:threshold"),
    "thanks-threshold-2": ("no_thanks", "house:threshold"),
    "thanks-never-1": ("no_thanks", "house:never_take"),
    "thanks-random-1": ("no_thanks", "house:random"),
}
"""The registered bots: name -> (ladder, bot spec)."""
HOUSE = "random,greedy"
"""House bots the server plays, so tables still form while a bot is down."""
ERROR_LINE = re.compile(r"\bERROR\b|Traceback|[Ee]xception")
ENDED = re.compile(r"^match (\w+) ended: totals \[[^\]]*\] ranks \[([^\]]*)\] \((\w+)\)")
BAD_CODES = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL}
"""Status codes that would mean the server failed on garbage."""


def utc_now() -> datetime:
    """Now, UTC (as the store stamps its rows)."""
    return datetime.now(UTC)


# --------------------------------------------------------------------------- processes


LAST_S = 20 * 60
"""The window the memory figure covers: how much the server's RSS grew over the soak's last
20 minutes (past its warm-up)."""


@dataclass
class Server:
    """``bullring serve`` with its log in a file; its stdout drained to another."""

    db: str
    folder: Path
    deadline_ms: int
    proc: subprocess.Popen[str] | None = None
    address: str = ""
    rss_kb: list[int] = field(default_factory=list)
    rss_at: list[float] = field(default_factory=list)
    """When each RSS sample was taken (monotonic seconds)."""

    @property
    def log(self) -> Path:
        """The server's stderr."""
        return self.folder / "server.log"

    def start(self) -> Server:
        """Start it and wait for the line saying where it listens."""
        settings = []
        for game in ("six_nimmt", "no_thanks"):
            settings += ["--ladder-setting", f"{game}:deadline_ms={self.deadline_ms}"]
        settings += ["--ladder-setting", "six_nimmt:rounds=1"]
        self.proc = subprocess.Popen(
            [*CLI, "serve", "--port", "0", "--db", self.db, "--ladder", "six_nimmt,no_thanks",
             *settings, "--house-bots", HOUSE, "--house-rest", "0.2", "--http-port", "-1"],
            stdout=subprocess.PIPE, stderr=self.log.open("w"), text=True, cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            raise RuntimeError(f"the server did not start: {line!r}; see {self.log}")
        self.address = line.split("listening on ")[1].split()[0]
        drain(self.proc.stdout, self.folder / "server.out")
        return self

    def sample_rss(self) -> None:
        """Remember the server's resident memory now."""
        assert self.proc is not None
        self.rss_kb.append(proc_status(self.proc.pid, "VmRSS"))
        self.rss_at.append(time.monotonic())

    def growth_kb(self, last_s: float) -> tuple[int, int]:
        """How much the RSS grew over the last ``last_s`` seconds of samples (last sample
        less the first one inside that window), and how many samples that window holds."""
        start = self.rss_at[-1] - last_s
        window = [kb for kb, at in zip(self.rss_kb, self.rss_at, strict=True) if at >= start]
        return window[-1] - window[0], len(window)

    def peak_rss_kb(self) -> int:
        """The server's peak resident memory so far (VmHWM)."""
        assert self.proc is not None
        return proc_status(self.proc.pid, "VmHWM")

    def stop(self) -> int:
        """SIGTERM it and wait; its exit status."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)


def proc_status(pid: int, key: str) -> int:
    """A kB figure from /proc/PID/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def drain(stream: IO[str], path: Path) -> None:
    """Copy ``stream`` into ``path`` in a thread, so the pipe never fills."""
    def copy() -> None:
        with path.open("a") as out:
            for line in stream:
                out.write(line)
                out.flush()
    threading.Thread(target=copy, daemon=True).start()


@dataclass
class Bot:
    """One registered bot and its current ``bullring bot --ladder`` process."""

    name: str
    game: str
    spec: str
    token: str
    folder: Path
    proc: subprocess.Popen[bytes] | None = None
    stopped: bool = False
    starts: int = 0
    exits: list[int] = field(default_factory=list)
    """Exit codes of processes that ended on their own (not killed by the driver)."""

    def start(self, address: str) -> None:
        """Start (again): output appends to the bot's files."""
        self.starts += 1
        out = (self.folder / f"{self.name}.out").open("ab")
        err = (self.folder / f"{self.name}.err").open("ab")
        self.proc = subprocess.Popen(
            [*CLI, "bot", "--server", address, "--token", self.token, "--ladder", self.game,
             "--give-up-after", "300", "--seed", str(self.starts), self.spec],
            stdout=out, stderr=err, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        out.close()
        err.close()

    def check(self, address: str) -> None:
        """Restart the process if it ended on its own, remembering its exit code."""
        if self.proc is not None and not self.stopped and self.proc.poll() is not None:
            self.exits.append(self.proc.returncode)
            self.start(address)

    def kill(self) -> None:
        """kill -9 and reap."""
        assert self.proc is not None
        if self.stopped:
            self.cont()
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        """SIGSTOP."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)
        self.stopped = True

    def cont(self) -> None:
        """SIGCONT."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)
        self.stopped = False

    def seen(self) -> dict[str, tuple[list[int], str]]:
        """Every match this bot's processes saw end: id -> (ranks, termination)."""
        seen = {}
        text = (self.folder / f"{self.name}.out").read_text(errors="replace")
        for line in text.splitlines():
            m = ENDED.match(line)
            if m:
                ranks = [int(r) for r in m.group(2).split(",") if r.strip()]
                seen[m.group(1)] = (ranks, m.group(3))
        return seen


# --------------------------------------------------------------------------- garbage


class Garbage:
    """A client that sends the server garbage on raw gRPC streams, in its own thread."""

    def __init__(self, address: str, tokens: list[str], garbage_token: str,
                 rng: random.Random) -> None:
        self.address = address
        self.tokens = tokens
        self.garbage_token = garbage_token
        self.rng = rng
        self.events: Counter[str] = Counter()
        self.codes: Counter[str] = Counter()
        self.bad: list[str] = []
        self._last_bytes: tuple[bytes, str | None] = (b"", None)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    def start(self) -> None:
        """Start sending."""
        self._thread.start()

    def stop(self) -> None:
        """Stop sending and wait for the thread."""
        self._stop.set()
        self._thread.join(timeout=60)

    def _noise(self) -> bytes:
        return self.rng.randbytes(self.rng.randrange(0, 200))

    def _note(self, kind: str, error: grpc.aio.AioRpcError | None) -> None:
        self.events[kind] += 1
        code = "OK" if error is None else error.code().name
        if error is not None and kind == "bytes" and wire.lost_to_own_write(error):
            # grpc/grpc#36066: the server refused the call before reading it and our client's
            # write lost the server's status. Ask the same call again with grpc's sync client
            # (which reports the status the server sent); only that status is judged.
            sent = self._ask_sync(*self._last_bytes)
            code = f"INTERNAL lost to the client's write (grpc#36066), server sent {sent.name}"
            if sent in BAD_CODES:
                self.bad.append(f"{kind}: {code}: {error.details()}")
        elif error is not None and error.code() in BAD_CODES:
            self.bad.append(f"{kind}: {error.code().name}: {error.details()}: "
                            f"{error.debug_error_string()}")
        self.codes[code] += 1

    def _ask_sync(self, body: bytes, token: str | None) -> grpc.StatusCode:
        """The status the server answers ``body`` on Play with, asked by grpc's sync client."""
        with grpc.insecure_channel(self.address) as channel:
            play: Any = channel.stream_stream(wire.PLAY)
            try:
                for _ in play(iter([body]), metadata=self._metadata(token), timeout=30):
                    pass
            except grpc.RpcError as exc:
                return exc.code()
        return grpc.StatusCode.OK

    async def _run(self) -> None:
        async with grpc.aio.insecure_channel(self.address) as channel:
            while not self._stop.is_set():
                kind = self.rng.choice(["bytes", "bytes", "submit", "badtoken", "join",
                                        "join", "badgame"])
                try:
                    await asyncio.wait_for(getattr(self, f"_{kind}")(channel), 30)
                    self._note(kind, None)
                except grpc.aio.AioRpcError as exc:
                    self._note(kind, exc)
                except TimeoutError:
                    self.events[kind + "-timeout"] += 1
                await asyncio.sleep(self.rng.uniform(0.2, 2.0))

    def _metadata(self, token: str | None) -> list[tuple[str, str]]:
        return [] if token is None else [("authorization", f"Bearer {token}")]

    async def _bytes(self, channel: grpc.aio.Channel) -> None:
        """Random bytes as the first message of a Play stream, with any token or none."""
        token = self.rng.choice([*self.tokens, self.garbage_token, "bot_nonsense", None])
        body = self._noise() + b"\xff\xff\xff"
        self._last_bytes = (body, token)
        play: Any = channel.stream_stream(wire.PLAY)  # no serializers: raw bytes
        call = play(iter([body]), metadata=self._metadata(token))
        async for _ in call:
            pass

    async def _submit(self, channel: grpc.aio.Channel) -> None:
        """SubmitAnswer with random bytes or a malformed answer."""
        token = self.rng.choice([self.garbage_token, "bot_nonsense"])
        body = self._noise() if self.rng.random() < 0.5 else pb.SubmitAnswerRequest(
            answer=pb.Answer(decision_id=self.rng.choice(["", "x", "0" * 50]),
                             action=self._action())).SerializeToString()
        submit: Any = channel.unary_unary(wire.SUBMIT_ANSWER)  # raw bytes
        await submit(body, metadata=self._metadata(token))

    async def _badtoken(self, channel: grpc.aio.Channel) -> None:
        """A well-formed ladder Join with a token nobody holds."""
        await self._session(channel, "bot_" + uuid.uuid4().hex, 1.0)

    async def _badgame(self, channel: grpc.aio.Channel) -> None:
        """A Join with the garbage bot's token for a game with no ladder."""
        await self._session(channel, self.garbage_token, 1.0,
                            game=self.rng.choice(["chess", "", "six_nimmt/99"]))

    async def _join(self, channel: grpc.aio.Channel) -> None:
        """Join a ladder with the garbage bot, answer whatever comes with garbage for a
        while, then drop the stream (sometimes mid-match)."""
        await self._session(channel, self.garbage_token, self.rng.uniform(1, 15))

    def _action(self) -> pb.Action:
        pick = self.rng.randrange(4)
        if pick == 0:
            return pb.Action(card=self.rng.randrange(-(2**31), 2**31))
        if pick == 1:
            return pb.Action(row=self.rng.randrange(-3, 8))
        if pick == 2:
            return pb.Action(word=self.rng.choice(["take", "pass", "reveal", "", "\u2603" * 9]))
        return pb.Action()

    async def _session(self, channel: grpc.aio.Channel, token: str, seconds: float,
                       game: str | None = None) -> None:
        game = game if game is not None else self.rng.choice(["six_nimmt", "no_thanks"])
        call = channel.stream_stream(
            wire.PLAY, request_serializer=pb.PlayRequest.SerializeToString,
            response_deserializer=pb.PlayResponse.FromString)(metadata=self._metadata(token))
        await call.write(pb.PlayRequest(join=pb.Join(client="soak-garbage", ladder=game)))
        ends = time.monotonic() + seconds
        try:
            while (left := ends - time.monotonic()) > 0 and not self._stop.is_set():
                try:
                    message: Any = await asyncio.wait_for(call.read(), left)
                except TimeoutError:
                    break
                if message is grpc.aio.EOF:
                    break
                if message.WhichOneof("body") != "decision":
                    continue
                decision = message.decision
                answer = self.rng.random()
                if answer < 0.3:
                    await call.write(pb.PlayRequest(answer=pb.Answer(
                        decision_id=decision.decision_id, action=self._action())))
                elif answer < 0.5:
                    await call.write(pb.PlayRequest(answer=pb.Answer(
                        decision_id=uuid.uuid4().hex, action=self._action())))
                elif answer < 0.6:
                    await call.write(pb.PlayRequest(join=pb.Join(ladder=game)))
                elif answer < 0.7:
                    await call.write(pb.PlayRequest())
                elif answer < 0.8 and decision.legal:  # a legal answer, twice
                    legal = pb.Answer(decision_id=decision.decision_id,
                                      action=self.rng.choice(list(decision.legal)))
                    await call.write(pb.PlayRequest(answer=legal))
                    await call.write(pb.PlayRequest(answer=legal))
                # else: stay silent past the deadline
        finally:
            call.cancel()
        code = await call.code()
        if code not in (grpc.StatusCode.OK, grpc.StatusCode.CANCELLED):
            raise grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(),
                                       await call.details())


# --------------------------------------------------------------------------- chaos


class Chaos:
    """Crashes, stalls and new versions of the bots, at random intervals."""

    def __init__(self, bots: list[Bot], server: Server, store: Store, deadline_ms: int,
                 rng: random.Random) -> None:
        self.bots = bots
        self.server = server
        self.store = store
        self.deadline_s = deadline_ms / 1000
        self.rng = rng
        self.events: Counter[str] = Counter()
        self.versions: list[tuple[str, int]] = []
        self._pending: list[tuple[float, str, Bot]] = []
        """(when, what, bot): a restart or a SIGCONT due."""

    def busy(self, bot: Bot) -> bool:
        """The bot has a restart or SIGCONT pending."""
        return any(b is bot for _, _, b in self._pending)

    def tick(self, now: float) -> None:
        """Do whatever is due at ``now``."""
        for item in [p for p in self._pending if p[0] <= now]:
            self._pending.remove(item)
            _, what, bot = item
            if what == "restart":
                bot.start(self.server.address)
            elif what == "cont":
                bot.cont()
        for bot in self.bots:
            if not self.busy(bot):
                bot.check(self.server.address)

    def strike(self) -> None:
        """One chaos event on a bot that is not already down."""
        idle = [b for b in self.bots if not self.busy(b)]
        if not idle:
            return
        bot = self.rng.choice(idle)
        kind = self.rng.choices(["crash", "stall", "version"], weights=[4, 4, 1])[0]
        now = time.monotonic()
        if kind == "crash":
            bot.kill()
            self._pending.append((now + self.rng.uniform(0, 3), "restart", bot))
        elif kind == "stall":
            bot.stop()
            pause = self.rng.uniform(2 * self.deadline_s, 20 * self.deadline_s)
            self._pending.append((now + pause, "cont", bot))
        else:
            bot.kill()
            marker = (float("inf"), "version", bot)
            self._pending.append(marker)
            # Disabled (so the server, which may not have seen the kill yet, cannot seat it
            # again) and waiting for its match to end, the version starts between matches:
            # every rated match then names the version whose rating it started from.
            self.store.set_enabled(bot.name, False)
            waited = time.monotonic() + 120
            while self.store.bot(bot.name).current_match is not None:
                if time.monotonic() > waited:
                    raise RuntimeError(f"{bot.name}'s match did not end within 120 s")
                time.sleep(0.05)
                self.tick(time.monotonic())
            self._pending.remove(marker)
            self.versions.append((bot.name, self.store.new_version(bot.name)))
            self.store.set_enabled(bot.name, True)
            bot.start(self.server.address)
        self.events[kind] += 1

    def settle(self) -> None:
        """Finish every pending restart and SIGCONT now."""
        for _, what, bot in self._pending:
            if what == "restart":
                bot.start(self.server.address)
            elif what == "cont":
                bot.cont()
        self._pending.clear()


# --------------------------------------------------------------------------- checks


@contextmanager
def database(kind: str, folder: Path) -> Iterator[str]:
    """A fresh database URL: a SQLite file in ``folder``, a new PostgreSQL database (dropped
    afterwards), or the URL given."""
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'soak.db'}"
    elif kind == "postgresql":
        import psycopg

        name = f"bullring_soak_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(PG, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
        finally:
            with psycopg.connect(PG, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    else:
        yield kind


Recomputed = tuple[dict[tuple[str, str], Skill], dict[tuple[str, str], int],
                   dict[tuple[str, str], Skill]]


def recompute(store: Store) -> Recomputed:
    """Every (bot, game) rating and match count, from the stored finished ladder matches'
    ranks in match order, starting from ``ratings.NEW`` and widened once per new version;
    and the rating each (match, bot) started from."""
    current = {b.name: b.version for b in store.bots()}
    started: dict[tuple[str, str], Skill] = {}
    skills: dict[tuple[str, str], Skill] = {}
    versions: dict[tuple[str, str], int] = {}
    games: dict[tuple[str, str], int] = Counter()
    finished = sorted((m for m in store.matches(status="finished") if m.ladder),
                      key=lambda m: (m.created_at, m.id))
    seats = store.seats([m.id for m in finished])
    for match in finished:
        rows = seats[match.id]
        keys = [(str(s.bot), match.game) for s in rows]
        before = []
        for key, row in zip(keys, rows, strict=True):
            version = row.bot_version or 1
            skill = skills.get(key)
            if skill is None:
                skill = ratings.NEW
            else:
                for _ in range(version - versions[key]):
                    skill = ratings.widen(skill)
            versions[key] = version
            before.append(skill)
            started[(match.id, key[0])] = skill
        ranks = [int(r) for r in json.loads(match.replay_json or "{}")["ranks"]]
        for key, skill in zip(keys, ratings.rate(before, ranks), strict=True):
            skills[key] = skill
            games[key] += 1
    for key, skill in list(skills.items()):  # versions started after the last match
        for _ in range(current[key[0]] - versions[key]):
            skill = ratings.widen(skill)
        skills[key] = skill
    return skills, dict(games), started


def first_divergence(store: Store, bot: str, started: dict[tuple[str, str], Skill]) -> str:
    """Where ``bot``'s stored rating changes first start from another rating than the
    recomputation's."""
    for change in store.rating_changes(bot=bot):
        skill = started.get((change.match_id, bot))
        if skill is None:
            return f"match {change.match_id} is rated but not finished"
        if max(abs(skill.mu - change.mu_before), abs(skill.sigma - change.sigma_before)) \
                > TOLERANCE:
            return (f"first in match {change.match_id} (version {change.version}, recorded "
                    f"{change.recorded_at}): stored before {change.mu_before:.6f} "
                    f"{change.sigma_before:.6f}, recomputed {skill.mu:.6f} {skill.sigma:.6f}")
    return "every stored change starts where the recomputation does"


def check(store: Store, bots: list[Bot], stopped_at: datetime, log: Path,
          garbage: Garbage) -> dict[str, Any]:
    """Run the three checks; return the figures and the problems found."""
    problems: list[str] = []
    matches = store.matches()
    status = Counter(m.status for m in matches)
    for m in matches:
        if m.status not in ("finished", "aborted"):
            problems.append(f"match {m.id} is left {m.status}")
        elif m.status == "aborted" and (m.finished_at is None or
                                        m.finished_at.replace(tzinfo=UTC) < stopped_at):
            problems.append(f"match {m.id} was aborted before shutdown ({m.finished_at})")
    finished = {m.id: m for m in matches if m.status == "finished"}
    for m in finished.values():
        replay = json.loads(m.replay_json or "{}")
        try:
            verify(replay)
        except (RefereeError, KeyError, ValueError) as exc:
            problems.append(f"match {m.id}'s replay does not verify: {exc}")
        if m.ladder and len(store.rating_changes(match_id=m.id)) != m.seat_count:
            problems.append(f"match {m.id} is not rated once per seat")
    seen: dict[str, tuple[list[int], str]] = {}
    for bot in bots:
        seen.update(bot.seen())
    for match_id, (ranks, termination) in seen.items():
        stored = finished.get(match_id)
        status_of = next((m.status for m in matches if m.id == match_id), "nowhere")
        if termination != "normal":
            if status_of != "aborted":
                problems.append(f"a bot saw match {match_id} end {termination}; it is "
                                f"stored {status_of}")
        elif stored is None:
            problems.append(f"a bot saw match {match_id} end; it is stored {status_of}")
        elif json.loads(stored.replay_json or "{}")["ranks"] != ranks:
            problems.append(f"match {match_id}: the bots saw ranks {ranks}, stored differ")
    registered = {b.name for b in bots}
    with_a_bot = {mid for mid, rows in store.seats(list(finished)).items()
                  if any(s.bot in registered for s in rows)}
    unseen = with_a_bot - set(seen)

    errors = [line for line in log.read_text(errors="replace").splitlines()
              if ERROR_LINE.search(line)]
    problems += [f"server log: {line}" for line in errors[:20]]
    problems += [f"garbage client got {bad}" for bad in garbage.bad[:20]]

    skills, games, started = recompute(store)
    gap = 0.0
    compared = 0
    for game in ("six_nimmt", "no_thanks"):
        board = {e.bot: e for e in store.leaderboard(game)}
        for (name, g), skill in skills.items():
            if g != game:
                continue
            entry = board.get(name)
            if entry is None:
                problems.append(f"{name} has no stored {game} rating")
                continue
            compared += 1
            off = max(abs(entry.mu - skill.mu), abs(entry.sigma - skill.sigma))
            gap = max(gap, off)
            if off > TOLERANCE:
                problems.append(f"{name} {game}: stored mu {entry.mu:.9f} sigma "
                                f"{entry.sigma:.9f}, recomputed {skill.mu:.9f} "
                                f"{skill.sigma:.9f}; {first_divergence(store, name, started)}")
            if entry.games != games[(name, g)]:
                problems.append(f"{name} {game}: {entry.games} games stored, "
                                f"{games[(name, g)]} recomputed")
        for name in set(board) - {n for n, g in skills if g == game}:
            problems.append(f"{name} has a stored {game} rating but no rated match")
    if gap > TOLERANCE:
        problems.append(f"recomputed ratings differ from the stored ones by up to {gap:.3g}")
    return {"matches": dict(status), "finished_seen_by_bots": len(set(seen) & set(finished)),
            "finished_with_a_bot_unseen": len(unseen), "server_error_lines": len(errors),
            "ratings_compared": compared, "max_rating_gap": gap, "problems": problems}


# --------------------------------------------------------------------------- main


def main() -> int:
    """Run the soak and print its summary; 0 when every check holds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--db", default="sqlite", help="sqlite, postgresql (a fresh "
                                                      "database, dropped after) or a URL")
    parser.add_argument("--deadline-ms", type=int, default=200)
    parser.add_argument("--chaos-every", type=float, default=4.0, metavar="SECONDS",
                        help="mean seconds between chaos events on the bots (default: 4)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep the logs and the SQLite file in DIR")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    command = "python benchmarks/soak.py " + " ".join(sys.argv[1:])
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bullring-soak-"))
    folder.mkdir(parents=True, exist_ok=True)

    with database(args.db, folder) as url:
        server = Server(url, folder, args.deadline_ms).start()
        store = Store(url)
        bots = [Bot(name, game, spec, store.add_bot(name, owner="soak"), folder)
                for name, (game, spec) in BOTS.items()]
        garbage = Garbage(server.address, [b.token for b in bots],
                          store.add_bot("soak-garbage", owner="soak"), random.Random(rng.random()))
        for bot in bots:
            bot.start(server.address)
        garbage.start()
        chaos = Chaos(bots, server, store, args.deadline_ms, rng)
        began = time.monotonic()
        ends = began + args.minutes * 60
        next_strike = began + rng.expovariate(1 / args.chaos_every)
        next_sample = began
        try:
            while (now := time.monotonic()) < ends:
                if now >= next_sample:
                    server.sample_rss()
                    next_sample = now + 30
                    print(f"[{(now - began) / 60:5.1f} min] {store.count('finished')} finished, "
                          f"chaos {dict(chaos.events)}, garbage {sum(garbage.events.values())},"
                          f" server RSS {server.rss_kb[-1] / 1024:.0f} MiB", flush=True)
                if now >= next_strike:
                    chaos.strike()
                    next_strike = time.monotonic() + rng.expovariate(1 / args.chaos_every)
                chaos.tick(time.monotonic())
                if server.proc is not None and server.proc.poll() is not None:
                    raise RuntimeError(f"the server exited ({server.proc.returncode}); "
                                       f"see {server.log}")
                time.sleep(0.05)
        finally:
            garbage.stop()
            chaos.settle()
            server.sample_rss()
            peak = server.peak_rss_kb() if server.proc and server.proc.poll() is None else 0
            stopped_at = utc_now()
            code = server.stop()
            for bot in bots:
                if bot.proc is not None and bot.proc.poll() is None:
                    bot.proc.send_signal(signal.SIGTERM)
            for bot in bots:
                if bot.proc is not None:
                    try:
                        bot.proc.wait(timeout=15)
                    except subprocess.TimeoutExpired:
                        bot.proc.kill()
                        bot.proc.wait()
        elapsed = (time.monotonic() - began) / 60
        result = check(store, bots, stopped_at, server.log, garbage)
        if code != 0:
            result["problems"].append(f"the server exited with status {code} on SIGTERM")
        exits = [f"{b.name}: {b.exits}" for b in bots if b.exits]
        store.engine.dispose()

    matches = result["matches"]
    print()
    print(f"$ {command}")
    print(f"soak on {args.db}: {elapsed:.1f} minutes, deadline {args.deadline_ms} ms, "
          f"{len(bots)} registered bots + house {HOUSE}; folder {folder}")
    other = sum(v for k, v in matches.items() if k not in ("finished", "aborted"))
    print(f"matches: {matches.get('finished', 0)} finished, {matches.get('aborted', 0)} "
          f"aborted (in flight at shutdown), {other} left in another state")
    print(f"  seen ending by the bots: {result['finished_seen_by_bots']}; finished with a "
          f"registered bot but seen by none (all its bots down at the end): "
          f"{result['finished_with_a_bot_unseen']}")
    print(f"chaos events: {dict(sorted(chaos.events.items()))}; bot processes started "
          f"{sum(b.starts for b in bots)} times; exits on their own: {exits or 'none'}")
    print(f"garbage requests: {sum(garbage.events.values())} "
          f"{dict(sorted(garbage.events.items()))}; "
          f"status codes {dict(sorted(garbage.codes.items()))}")
    print(f"server errors in the log: {result['server_error_lines']}; exit status on "
          f"SIGTERM: {code}")
    print(f"ratings: {result['ratings_compared']} recomputed from the stored matches, max "
          f"|difference| {result['max_rating_gap']:.3g} (tolerance {TOLERANCE:g})")
    rss = server.rss_kb
    grown, window = server.growth_kb(min(LAST_S, elapsed * 60))
    print(f"server memory: peak RSS {peak / 1024:.0f} MiB; RSS first {rss[0] / 1024:.0f} MiB, "
          f"last {rss[-1] / 1024:.0f} MiB ({len(rss)} samples); over the last "
          f"{min(LAST_S, elapsed * 60) / 60:.0f} minutes it grew {grown / 1024:.1f} MiB "
          f"({window} samples)")
    (folder / "summary.json").write_text(json.dumps({
        "command": command, "minutes": round(elapsed, 2), "db": args.db,
        "deadline_ms": args.deadline_ms, "chaos": dict(chaos.events),
        "garbage": dict(garbage.events), "garbage_codes": dict(garbage.codes),
        "peak_rss_kb": peak, "rss_kb": rss, "rss_growth_last_kb": grown, **result}, indent=2))
    if result["problems"]:
        print(f"FAILED: {len(result['problems'])} problems")
        for problem in result["problems"][:40]:
            print(f"  - {problem}")
        return 1
    print("OK: no lost match, no server error, ratings recomputed equal the stored ones")
    return 0


if __name__ == "__main__":
    sys.exit(main())
