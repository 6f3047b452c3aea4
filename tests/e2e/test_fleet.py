"""One ladder across a fleet: three ``bullring serve --broker`` processes on one PostgreSQL
database, linked by the NATS broker on 127.0.0.1:4222, each bot connected to exactly one of
them (several bots per process, each on the SDK's runner: ``tests/fleet_bots.py``)."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import httpx
import pytest

from bullring.referee.replay import verify
from bullring.server.store import Store
from tests.brokers import BROKER, LINKED, require_broker
from tests.databases import fresh_postgres
from tests.ladder_helpers import ACTIVITY, LadderBot, LadderServer, Lines, wait_until

FLEET = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
         "--ladder-setting", "six_nimmt:deadline_ms=1000", "--broker", BROKER]
"""Short 6 nimmt! ladder matches (one round of ten tricks) on servers linked by the broker."""
SERVERS = 3
BOTS_PER_SERVER = 10
MATCHES = 1000
"""Finished matches the ladder test waits for."""


@pytest.fixture(autouse=True)
def broker() -> None:
    """The NATS server on 127.0.0.1:4222 (skipped when unreachable, failed with CI=true)."""
    require_broker()


@dataclass
class BotHost:
    """A process playing several registered bots through one server."""

    proc: subprocess.Popen[str]
    out: Lines

    @classmethod
    def start(cls, address: str, tokens: dict[str, str]) -> BotHost:
        """Start ``tests.fleet_bots`` for ``tokens`` (name: token) on ``address``."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fleet_bots", "--server", address, "--ladder",
             "six_nimmt", *(f"{name}={token}" for name, token in tokens.items())],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert proc.stdout is not None
        host = cls(proc, Lines(proc.stdout))
        host.out.wait(lambda lines: "ready\n" in lines, 60, "the bots to start")
        return host

    def stop(self) -> str:
        """SIGTERM it and wait; what it printed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.finish()
        return self.out.text()


class PollingBot:
    """A registered bot on a ladder over HTTP long-poll (``/api/play/poll``), in a thread of
    the test: it answers each decision with its first legal action (``POST
    /api/play/answer``) and joins again when its connection ends. With ``hold`` set, it
    holds the next decision unanswered (``held`` names its match) until ``release``."""

    def __init__(self, base: str, token: str) -> None:
        self.verdicts: Counter[str] = Counter()
        """Its answers' verdicts: accepted, rejected."""
        self.matches: set[str] = set()
        """The matches it was seated in."""
        self.error: BaseException | None = None
        """What ended its thread, if anything did before ``stop``."""
        self.hold = threading.Event()
        self.release = threading.Event()
        self.held: str | None = None
        """The match of the decision it holds, once it holds one."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._play, args=(base, token), daemon=True)
        self._thread.start()

    def _play(self, base: str, token: str) -> None:
        try:
            self._poll(base, token)
        except BaseException as exc:
            self.error = exc

    def _poll(self, base: str, token: str) -> None:
        after: int | None = None
        with httpx.Client(base_url=base, timeout=30,
                          headers={"Authorization": f"Bearer {token}"}) as http:
            while not self._stop.is_set():
                params: dict[str, str | int] = {"ladder": "six_nimmt", "wait_ms": 500}
                if after is not None:
                    params["after"] = after
                try:
                    polled = http.get("/api/play/poll", params=params).json()
                    for message in polled["messages"]:
                        after = message["seq"]
                        if "match_started" in message:
                            self.matches.add(message["match_started"]["match_id"])
                        if "decision" in message:
                            decision = message["decision"]
                            if self.hold.is_set():
                                self._wait_for_release(decision["decision_id"].split(":")[0])
                            verdict = http.post("/api/play/answer", json={
                                "decision_id": decision["decision_id"],
                                "action": decision["legal"][0]}).json()
                            self.verdicts.update(verdict.keys())
                except httpx.HTTPError:
                    polled = {"closed": True}  # the server stopped: join again, or stop
                if polled["closed"]:
                    after = None

    def _wait_for_release(self, match_id: str) -> None:
        with ACTIVITY:
            self.held = match_id
            ACTIVITY.notify_all()
        self.release.wait(30)
        self.hold.clear()
        self.release.clear()
        self.held = None

    def stop(self) -> None:
        """Stop after the poll in progress."""
        self._stop.set()
        self.release.set()
        self._thread.join(30)


@pytest.fixture
def hosts() -> Iterator[list[BotHost]]:
    """Bot processes to stop when the test ends, whatever happens."""
    started: list[BotHost] = []
    yield started
    for host in started:
        host.stop()


def test_bots_of_three_servers_share_one_ladder(
        stop_all: list[LadderBot | LadderServer], hosts: list[BotHost]) -> None:
    """Thirty bots, ten connected to each of three servers linked by the broker (on each,
    two answering by SubmitAnswer beside a Subscribe stream and the others on Play streams,
    but for one on the first server over HTTP long-poll), play ``MATCHES`` one-round
    matches. The HTTP bot plays matches run on every server, its answers accepted. Tables
    mix bots of different servers (most of them: some deals seat one server's bots
    together), every pair of bots is seated together at least once, each server runs a
    third of the matches (within 5 points: the servers take turns), and only matches one
    of whose bots is connected to it (none relays every seat); no bot sits in two matches
    at once, and every match is recorded and rated exactly once, its replay verifying."""
    with fresh_postgres() as url:
        servers = [LadderServer(url, FLEET).start() for _ in range(SERVERS)]
        stop_all.extend(servers)
        home: dict[str, int] = {}
        polling: dict[str, PollingBot] = {}
        for number, server in enumerate(servers):
            tokens = {}
            for i in range(BOTS_PER_SERVER):
                name = f"s{number}b{i}"
                home[name] = number
                token = server.add_bot(name)
                if i == 0 and number == 0:  # one bot over HTTP: slower, it plays fewer
                    polling[name] = PollingBot(server.http, token)
                else:
                    tokens[name] = token + ("@unary" if i in (1, 2) else "")
            hosts.append(BotHost.start(server.address, tokens))
        store = Store(url)
        began = time.monotonic()
        try:
            wait_until(lambda: store.count("finished") >= MATCHES, 600,
                       f"{MATCHES} finished matches")
        finally:
            for bot in polling.values():
                bot.stop()
        took = time.monotonic() - began
        for host in hosts:
            output = host.stop()
            assert "failed" not in output, output
        logs = [server.stop() for server in servers]
        number_of = {m.group(1): number for number, log in enumerate(logs)
                     if (m := LINKED.search(log))}
        for log in logs:
            assert " ERROR " not in log and "Traceback" not in log, log[-5000:]

        matches = {m.id: m for m in store.matches()}
        finished = [m for m in matches.values() if m.status == "finished"]
        seats = store.seats(list(matches))
        print(f"{len(finished)} finished matches in {took:.0f} s "
              f"({len(finished) / took * 60:.0f}/min); statuses "
              f"{dict(Counter(m.status for m in matches.values()))}")
        instances = sorted({str(m.instance) for m in finished})
        shares = Counter(str(m.instance) for m in finished)
        print("shares", {i: f"{shares[i] / len(finished):.3f}" for i in instances})
        assert len(instances) == SERVERS
        assert all(abs(shares[i] / len(finished) - 1 / SERVERS) <= 0.05 for i in instances), \
            shares

        mixed = [m for m in finished
                 if len({home[str(row.bot)] for row in seats[m.id]}) > 1]
        print(f"{len(mixed)} of {len(finished)} tables mix bots of different servers")
        together: Counter[tuple[str, str]] = Counter()
        for match in finished:
            names = sorted(str(row.bot) for row in seats[match.id])
            together.update(itertools.combinations(names, 2))
        pairs = list(itertools.combinations(sorted(home), 2))
        apart = [pair for pair in pairs if not together[pair]]
        print(f"pairs seated together: {len(pairs) - len(apart)} of {len(pairs)}; "
              f"least often {min(together[p] for p in pairs)}")
        played = Counter(str(row.bot) for m in finished for row in seats[m.id])
        print("matches per bot", sorted(played.values()))
        for name, bot in polling.items():
            print(name, len(bot.matches), "matches", dict(bot.verdicts))
        assert len(mixed) >= len(finished) / 2
        for match in finished:  # run where one of its bots is connected: not every seat relayed
            assert number_of[str(match.instance)] in {home[str(row.bot)]
                                                      for row in seats[match.id]}, match.id
        assert not apart, apart[:20]

        for name, bot in polling.items():  # HTTP both ways: relayed to and from its server
            assert bot.error is None and bot.verdicts["accepted"] > 0, (name, bot.error)
            ran = {str(matches[m].instance) for m in bot.matches if m in matches}
            assert len(ran) == SERVERS, (name, ran)

        spans: dict[str, list[tuple[datetime, datetime, str]]] = defaultdict(list)
        for match_id, rows in seats.items():
            match = matches[match_id]
            assert match.finished_at is not None, (match, logs[0][-3000:])
            for row in rows:
                spans[str(row.bot)].append((match.created_at, match.finished_at, match_id))
        for name, held in spans.items():
            held.sort()
            for (_, end, one), (start, _, other) in itertools.pairwise(held):
                assert end <= start, f"{name} sat in {one} and {other} at once"
        changes = Counter(c.match_id for c in store.rating_changes())
        for match in finished:
            assert changes[match.id] == match.seat_count
            verify(store.replay(match.id))
        assert all(changes[m.id] == 0 for m in matches.values() if m.status != "finished")



def test_a_bot_joining_one_server_is_seated_with_house_bots_only_another_runs(
        stop_all: list[LadderBot | LadderServer], hosts: list[BotHost]) -> None:
    """Three house bots wait on one server, which alone can seat them (a house bot is
    seated by the servers that run it), and nothing else happens in the fleet. A bot that
    joins the other server wakes the first, which seats it with them and relays its seat:
    it plays at once, not once something else wakes that server."""
    with fresh_postgres() as url:
        near = LadderServer(url, [*FLEET, "--house-bots", "random,random,random",
                                  "--house-rest", "0"]).start()
        far = LadderServer(url, FLEET).start()
        stop_all += [near, far]
        store = Store(url)
        hosts.append(BotHost.start(far.address, {"newcomer": far.add_bot("newcomer")}))
        wait_until(lambda: store.count("finished") >= 3, 30, "three matches of the newcomer")
        for host in hosts:
            output = host.stop()
            assert "failed" not in output, output
        for log in (near.stop(), far.stop()):
            assert " ERROR " not in log and "Traceback" not in log, log[-5000:]
        finished = store.matches(status="finished")
        seats = store.seats([m.id for m in finished])
        assert len({str(m.instance) for m in finished}) == 1  # the house bots' server
        assert all("newcomer" in {str(row.bot) for row in seats[m.id]} for m in finished)

class Partition:
    """A TCP proxy between one server and the broker, which the test can cut: while cut,
    nothing passes either way and no connection is closed (a network partition, which only
    silence reveals); mended, the connections from before are closed and new ones pass."""

    def __init__(self, target: tuple[str, int] = ("127.0.0.1", 4222)) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"nats://127.0.0.1:{self.listener.getsockname()[1]}"
        """Where the server behind it finds the broker."""
        self.cut = False
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                near, _ = self.listener.accept()
            except OSError:
                return  # closed
            far = socket.create_connection(self.target)
            with self._lock:
                self._open += [near, far]
            for source, sink in ((near, far), (far, near)):
                threading.Thread(target=self._pass, args=(source, sink), daemon=True).start()

    def _pass(self, source: socket.socket, sink: socket.socket) -> None:
        while True:
            try:
                data = source.recv(65536)
                if not data:
                    break
                if not self.cut:
                    sink.sendall(data)
            except OSError:
                break
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def mend(self) -> None:
        """Let messages pass again, on new connections."""
        with self._lock:
            stale, self._open = self._open, []
            self.cut = False
        for sock in stale:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def close(self) -> None:
        """Stop accepting and close every connection."""
        self.listener.close()
        self.mend()


def test_a_server_cut_off_from_the_broker_ends_its_shared_matches_aborted_and_unrated(
        stop_all: list[LadderBot | LadderServer], hosts: list[BotHost]) -> None:
    """Two servers share four bots each; one reaches the broker through a link the test
    cuts (nothing passes, nothing is closed: only silence tells) while a match mixing their
    bots waits for the answer of a bot connected there, over HTTP, that holds it. That match
    ends aborted within seconds (the cut server's client notices its own silence, the other
    server the cut one's), unrated and stored once, and so does every other match in flight
    at the cut that its game's end did not beat; both servers seat their own bots while cut;
    once the link is mended, tables mix bots of both servers again. Every finished match is
    rated once, every aborted one not at all."""
    partition = Partition()
    try:
        with fresh_postgres() as url:
            near = LadderServer(url, FLEET).start()
            far = LadderServer(url, [*FLEET[:-1], partition.url]).start()
            stop_all += [near, far]
            home = {f"n{i}": "n" for i in range(4)} | {f"f{i}": "f" for i in range(4)}
            hosts.append(BotHost.start(near.address, {
                name: near.add_bot(name) for name in ("n0", "n1", "n2", "n3")}))
            holder = PollingBot(far.http, far.add_bot("f0"))
            hosts.append(BotHost.start(far.address, {
                name: far.add_bot(name) for name in ("f1", "f2", "f3")}))
            store = Store(url)

            def mixed(match_ids: list[str]) -> set[str]:
                return {match_id for match_id, rows in store.seats(match_ids).items()
                        if len({home[str(row.bot)] for row in rows}) > 1}

            try:
                wait_until(lambda: store.count("finished") >= 10, 120, "ten finished matches")
                while True:  # hold a decision of f0 in a match mixing both servers' bots
                    holder.hold.set()
                    wait_until(lambda: holder.held is not None, 60, "f0 to hold a decision")
                    if mixed([str(holder.held)]):
                        break
                    holder.release.set()
                    wait_until(lambda: holder.held is None, 10, "f0 to answer")
                held = str(holder.held)
                partition.cut = True
                cut_at = time.monotonic()
                in_flight = mixed([m.id for m in store.matches(status="running")])
                holder.release.set()
                wait_until(lambda: store.match_states([held])[held][0] == "aborted", 20,
                           "the held match to be aborted")
                print(f"the held match aborted {time.monotonic() - cut_at:.1f} s after the cut")
                wait_until(lambda: "running" not in {state[0] for state in store.match_states(
                    list(in_flight)).values()}, 20, "every shared match in flight to end")
                cut = {m.id for m in store.matches()}

                def played_apart() -> bool:
                    new = [m for m in store.matches(status="finished") if m.id not in cut]
                    seats = store.seats([m.id for m in new])
                    ran = {(str(m.instance), home[str(seats[m.id][0].bot)]) for m in new
                           if len({home[str(row.bot)] for row in seats[m.id]}) == 1}
                    return len(ran) == 2
                wait_until(played_apart, 60, "each server to seat its own bots while cut")
                partition.mend()
                mended = {m.id for m in store.matches()}
                wait_until(lambda: bool(mixed([m.id for m in store.matches(status="finished")
                                               if m.id not in mended])), 60,
                           "a table mixing both servers' bots again")
            finally:
                holder.stop()
            for host in hosts:
                output = host.stop()
                assert "failed" not in output, output
            for log in (near.stop(), far.stop()):
                assert " ERROR " not in log and "Traceback" not in log, log[-5000:]
            assert holder.error is None, holder.error

            matches = store.matches()
            changes = Counter(c.match_id for c in store.rating_changes())
            for match in matches:
                assert changes[match.id] == (match.seat_count if match.status == "finished"
                                             else 0), match
                if match.status == "finished":
                    verify(store.replay(match.id))
            statuses = {m.id: m.status for m in matches}
            print(f"in flight at the cut: {len(in_flight)} shared matches, "
                  f"{dict(Counter(statuses[m] for m in in_flight))}")
            assert statuses[held] == "aborted"
    finally:
        partition.close()
