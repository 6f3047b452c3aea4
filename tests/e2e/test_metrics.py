"""The metrics a real server serves at /metrics count exactly what happened, in bounded
labels that carry no secret, for whom ``--metrics`` lets in; ``--log-format json`` writes
one JSON object per log line."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.core import DecisionKind
from bullring.referee.registry import GAMES
from bullring.referee.replay import verify
from bullring.server.cli.main import METRICS_ACCESS
from bullring.server.metrics import ACCESS
from bullring.server.store import Store
from tests.seat_client import SeatClient
from tests.serving import ServerProcess, db_url, finish

HTTP_BOT = str(Path(__file__).resolve().parents[1] / "bots" / "http_only.py")
OPERATIONS = Path(__file__).resolve().parents[2] / "docs/operations.md"

Key = tuple[str, tuple[tuple[str, str], ...]]
"""A sample: its name and its labels, sorted."""

LABELS = {"game", "kind", "verdict", "termination", "cause", "why", "transport", "call", "le",
          "instance", "worker"}
"""Every label a Bullring metric may have: each a bounded set (``instance`` and ``worker``
name the process, one value each)."""


def scrape(base: str, headers: dict[str, str] | None = None) -> tuple[dict[Key, float], str]:
    """The samples of ``base``'s /metrics (which must answer 200), and the page itself."""
    response = httpx.get(base + "/metrics", headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    samples: dict[Key, float] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples, response.text


def key(name: str, **labels: str) -> Key:
    """The sample ``name`` with ``labels``."""
    return name, tuple(sorted(labels.items()))


def moved(before: dict[Key, float], after: dict[Key, float], prefix: str
          ) -> dict[Key, float]:
    """How much every sample whose name starts with ``prefix`` moved (those that did)."""
    names = {k for k in (*before, *after) if k[0].startswith(prefix)}
    changes = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in names}
    return {k: v for k, v in changes.items() if v}


def wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 30.0) -> None:
    """Poll ``condition`` until it holds (failing after ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def http_bot(server: ServerProcess, token: str | None, *args: str) -> subprocess.Popen[str]:
    """The stdlib-only HTTP bot for one seat, in its own process."""
    assert token is not None
    return subprocess.Popen([sys.executable, "-I", HTTP_BOT, server.http, token, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def expected_counts(replay: dict[str, Any]) -> Counter[Key]:
    """What a match's stored log says the counters moved by: its start and end, each bot's
    answer taken (with its latency bucket), each rejection and each default; requests are
    the answers and defaults of the seats played over the network."""
    game = replay["game"]
    counts: Counter[Key] = Counter()
    counts[key("bullring_matches_started_total", game=game)] += 1
    counts[key("bullring_matches_finished_total", game=game,
               termination=replay["termination"])] += 1
    kinds = {(e["step"], e["seat"]): e["kind"] for e in replay["events"]
             if e["type"] == "answer"}
    for event in replay["events"]:
        if event["type"] == "answer" and "ms" in event:
            counts[key("bullring_decisions_requested_total", game=game,
                       kind=event["kind"])] += 1
            counts[key("bullring_answers_total", game=game, kind=event["kind"],
                       verdict="accepted")] += 1
            seconds = event["ms"] / 1000
            counts[key("bullring_decision_seconds_count", game=game)] += 1
            for bound in ("0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25",
                          "0.5", "1.0", "2.5", "5.0", "10.0", "30.0"):
                if seconds <= float(bound):
                    counts[key("bullring_decision_seconds_bucket", game=game, le=bound)] += 1
            counts[key("bullring_decision_seconds_bucket", game=game, le="+Inf")] += 1
        elif event["type"] == "answer" and event["default"]:
            counts[key("bullring_decisions_requested_total", game=game,
                       kind=event["kind"])] += 1
            counts[key("bullring_defaults_total", game=game, why=event["why"])] += 1
        elif event["type"] == "reject":
            verdict = event["reason"].removeprefix("REJECT_REASON_").lower()
            kind = "none" if verdict == "not_pending" else \
                kinds[(event["step"], event["seat"])]
            counts[key("bullring_answers_total", game=game, kind=kind, verdict=verdict)] += 1
        elif event["type"] == "timeout":
            counts[key("bullring_timeouts_total", game=game,
                       cause="server" if event["server_late_ms"] else "bot")] += 1
    return counts


def test_the_counters_move_by_exactly_the_three_matches_played(server: ServerProcess) -> None:
    """Three matches over gRPC streams, gRPC unary calls, HTTP long-polls and two
    hand-driven streams (an illegal, a malformed, a stale and a repeated answer; the match
    aborted with a decision pending): every
    match, decision, verdict, default, timeout (none: the bots answer at once) and latency
    bucket moves by exactly what their stored logs hold; each end is stored in one try; the
    streams, spectators and live matches are counted while they last and are back to 0
    after; no label is outside its bounded set and no seat token, match id or decision id is
    anywhere in the page."""
    before, _ = scrape(server.http)
    admin = {"Authorization": f"Bearer {server.admin_token()}"}
    slow = ("--deadline-ms", "10000")  # the bots answer at once: no timeout, even loaded
    first = server.create_match("six_nimmt", 2, "--house", "1=greedy", "--setting",
                                "rounds=1", *slow)
    second = server.create_match("no_thanks", 3, "--house", "2=random", *slow)
    results = finish([server.bot(first.tokens[0], "house:random"),
                      http_bot(server, second.tokens[0], "--transport", "poll"),
                      server.bot(second.tokens[1], "house:random", "--transport", "unary")])
    assert [code for code, _ in results] == [0, 0, 0], [out[-1500:] for _, out in results]

    third = server.create_match("six_nimmt", 2, *slow)  # both seats driven here
    during: dict[Key, float] = {}
    pending_kinds: list[str] = []

    async def hand_driven() -> None:
        nonlocal during
        async with grpc.aio.insecure_channel(server.address) as channel:
            seats = [SeatClient(channel, str(token)) for token in third.tokens]
            for seat in seats:
                seat.join()
                await seat.next("match_started")
            requests: list[pb.DecisionRequest] = [await s.next("decision") for s in seats]
            me, other = seats
            decision = wire.observation_from_request(requests[0]).decision
            card = next(c for c in range(1, 105) if c not in decision.legal)
            me.answer(requests[0].decision_id, pb.Action(card=card))  # not in the hand
            me.answer(requests[0].decision_id, pb.Action(row=0))  # a row for a card
            me.answer(f"{third.match_id}:99:0", pb.Action(card=int(decision.legal[0])))
            for _ in range(2):  # the answer, then the same again while the point is open
                me.answer(requests[0].decision_id, pb.Action(card=int(decision.legal[0])))
            verdicts = [await me.next(kind) for kind in ("rejected",) * 3]
            assert [v.reason for v in verdicts] == [pb.REJECT_REASON_ILLEGAL_ACTION,
                                                    pb.REJECT_REASON_MALFORMED_ACTION,
                                                    pb.REJECT_REASON_NOT_PENDING]
            await me.next("accepted")
            await me.next("accepted")
            theirs = wire.observation_from_request(requests[1]).decision
            other.answer(requests[1].decision_id, pb.Action(card=int(theirs.legal[0])))
            await other.next("accepted")  # the point is resolved, the next one open
            turn = (await asyncio.to_thread(
                httpx.get, f"{server.http}/api/matches/{third.match_id}/turn")).json()
            waiting = [w["seat"] for w in turn["waiting"]]
            assert waiting
            for seat in waiting:
                following: pb.DecisionRequest = await seats[seat].next("decision")
                pending_kinds.append(
                    str(wire.observation_from_request(following).decision.kind))
            watch = wire.watch_stub(channel)(pb.WatchRequest(match_id=third.match_id))
            last = await watch.read()
            assert last.WhichOneof("body") == "event"
            during, _ = await asyncio.to_thread(scrape, server.http)
            aborted = await asyncio.to_thread(
                httpx.post, f"{server.http}/api/admin/matches/{third.match_id}/abort",
                headers=admin)
            assert aborted.status_code == 200, aborted.text
            for seat in seats:
                ended: pb.MatchEnded = await seat.next("match_ended")
                assert ended.termination == pb.TERMINATION_ABORTED
                seat.close()
            while (watched := await watch.read()) is not grpc.aio.EOF:  # to the end
                last = watched
            assert last.WhichOneof("body") == "match_ended"

    asyncio.run(hand_driven())
    assert during[key("bullring_streams", transport="grpc_play")] == 2
    assert during[key("bullring_streams", transport="grpc_watch")] == 1
    assert during[key("bullring_matches_live", game="six_nimmt")] == 1

    def settled() -> bool:
        now, _ = scrape(server.http)
        return all(v == 0 for k, v in now.items()
                   if k[0] in ("bullring_streams", "bullring_matches_live"))
    wait_for(settled, "every stream and match to end")
    after, page = scrape(server.http)

    replays = [json.loads(server.replay(m.match_id)) for m in (first, second, third)]
    for replay in replays:
        verify(replay)
    assert [r["termination"] for r in replays] == ["normal", "normal", "aborted"]
    expected: Counter[Key] = Counter()
    for replay in replays:
        expected.update(expected_counts(replay))
    for kind in pending_kinds:  # asked, never answered: the match was aborted
        expected[key("bullring_decisions_requested_total", game="six_nimmt", kind=kind)] += 1
    expected[key("bullring_answers_total", game="six_nimmt", kind="PLAY_CARD",
                 verdict="duplicate")] += 1  # given again, taken once: not in the log
    counted = ("bullring_matches_", "bullring_decisions_", "bullring_answers_",
               "bullring_timeouts_", "bullring_defaults_", "bullring_decision_seconds_bucket",
               "bullring_decision_seconds_count")
    changes = {k: v for prefix in counted for k, v in moved(before, after, prefix).items()}
    assert changes == {k: float(v) for k, v in expected.items()}
    assert sum(v for k, v in expected.items() if k[0] == "bullring_answers_total"
               and dict(k[1])["verdict"] in ("illegal_action", "malformed_action",
                                             "not_pending")) == 3
    assert not [k for k in expected if k[0] in ("bullring_timeouts_total",
                                                "bullring_defaults_total")]
    latency_sum = sum(e["ms"] / 1000 for r in replays for e in r["events"]
                      if e["type"] == "answer" and "ms" in e)
    total = sum(moved(before, after, "bullring_decision_seconds_sum").values())
    assert total == pytest.approx(latency_sum, rel=1e-9, abs=1e-9)
    db = moved(before, after, "bullring_db_")
    assert db[key("bullring_db_transaction_seconds_count", call="finish_match")] == 3
    assert not [k for k in db if k[0] in ("bullring_db_retries_total",
                                          "bullring_db_unavailable_total")]

    games = {spec.id for spec in GAMES.values()}
    kinds = {str(kind) for kind in DecisionKind} | {"none"}
    for name, labels in after:
        if name.startswith("bullring_"):
            assert {label for label, _ in labels} <= LABELS, name
            values = dict(labels)
            assert values.get("game", "six_nimmt") in games, name
            assert values.get("kind", "none") in kinds, name
    for match in (first, second, third):
        assert match.match_id not in page
        for token in match.tokens:
            assert token is None or token not in page
    assert admin["Authorization"].split()[1] not in page
    assert not re.search(r"\bbr_|\bbot_|\badmin_", page)


def test_a_bot_waiting_on_a_ladder_is_in_its_queue(server: ServerProcess) -> None:
    """A registered bot alone on the 6 nimmt! ladder (a table needs four) is counted as
    connected and waiting there, with its stream, until it leaves."""
    token = Store(server.db).add_bot("lonely", owner="tests")
    bot = server.bot(token, "house:random", "--ladder", "six_nimmt")
    try:
        def queued() -> bool:
            now, _ = scrape(server.http)
            return now[key("bullring_ladder_waiting", game="six_nimmt")] == 1
        wait_for(queued, "the bot to wait on the ladder")
        now, page = scrape(server.http)
        assert now[key("bullring_ladder_connected", game="six_nimmt")] == 1
        assert now[key("bullring_ladder_waiting", game="no_thanks")] == 0
        assert now[key("bullring_streams", transport="grpc_play")] == 1
        assert token not in page
    finally:
        bot.terminate()
        bot.communicate(timeout=30)

    def left() -> bool:
        now, _ = scrape(server.http)
        return now[key("bullring_ladder_waiting", game="six_nimmt")] == 0 and \
            now[key("bullring_streams", transport="grpc_play")] == 0
    wait_for(left, "the bot to leave the ladder")


def outward_address() -> str | None:
    """This machine's address towards its network (not loopback), or None without one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("198.51.100.1", 9))  # a documentation address: nothing is sent
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if ipaddress.ip_address(address).is_loopback else address


@pytest.mark.parametrize("access,outward", [("admin", True), ("token", False),
                                            ("public", True), ("off", False)])
def test_metrics_answer_whom_the_metrics_option_lets_in(
        tmp_path: Path, access: str, outward: bool) -> None:
    """By default (admin) a request from an address other than loopback needs the admin
    token: 401 without a token, 403 with another one (loopback is let in: the test above);
    ``--metrics token`` asks it of loopback too, ``public`` of nobody, and ``off`` serves no
    /metrics (404) even to the admin token."""
    assert tuple(ACCESS) == METRICS_ACCESS
    extra = ["--metrics", access]
    if outward:
        host = outward_address()
        if host is None:
            pytest.skip("this machine has no address but loopback")
        extra += ["--host", host]
    server = ServerProcess(db_url(tmp_path), extra).start()
    try:
        url = server.http + "/metrics"
        admin = {"Authorization": f"Bearer {server.admin_token()}"}
        anonymous = httpx.get(url)
        wrong = httpx.get(url, headers={"Authorization": "Bearer admin_nope"})
        with_token = httpx.get(url, headers=admin)
        if access == "public":
            assert anonymous.status_code == wrong.status_code == with_token.status_code == 200
            assert "bullring_matches_started_total" in anonymous.text
        elif access == "off":
            for response in (anonymous, with_token):
                assert response.status_code == 404
                assert response.json()["error"]["code"] == "not_found"
        else:
            assert anonymous.status_code == 401, anonymous.text
            assert anonymous.json()["error"]["code"] == "unauthorized"
            assert "--metrics" in anonymous.json()["error"]["message"]
            assert wrong.status_code == 403 and wrong.json()["error"]["code"] == "forbidden"
            assert with_token.status_code == 200
            assert "bullring_matches_started_total" in with_token.text
    finally:
        server.stop()


def test_json_logs_say_what_the_text_lines_say(tmp_path: Path) -> None:
    """With ``--log-format json`` every line the server logs is one JSON object with its
    time, level, logger and message: the result of a match is the text line's message."""
    server = ServerProcess(db_url(tmp_path), ["--log-format", "json"]).start()
    try:
        match = server.create_match("six_nimmt", 2, "--house", "1=greedy", "--setting",
                                    "rounds=1")
        results = finish([server.bot(match.tokens[0], "house:random")])
        assert results[0][0] == 0, results[0][1][-1500:]
    finally:
        log = server.stop()
    lines = [json.loads(line) for line in log.splitlines()]
    assert lines and all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", line["time"])
               for line in lines)
    replay = json.loads(server.replay(match.match_id))
    assert {"level": "INFO", "logger": "bullring.hub",
            "message": f"match {match.match_id} normal: totals {replay['totals']}"} in [
        {k: line[k] for k in ("level", "logger", "message")} for line in lines]


def test_every_metric_served_is_in_the_operations_guide(server: ServerProcess) -> None:
    """docs/operations.md lists exactly the metric families a server serves."""
    _, page = scrape(server.http)
    served = {f"{family.name}_total" if family.type == "counter" else family.name
              for family in text_string_to_metric_families(page)}
    documented = set(re.findall(r"^\| `((?:bullring|process)_[a-z_]+)` \| (?:counter|gauge|"
                                r"histogram) \|", OPERATIONS.read_text(), re.MULTILINE))
    assert served == documented
