"""Readers of an ended match cost one encoding, not one each, on a real ``bullring serve``:
its feed (Server-Sent Events) and its replay are built once, kept in a bounded cache and
shared by every reader."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from tests.serving import ServerProcess, db_url, finish

READERS = 40
"""Concurrent readers of each of the feed and the replay."""


def _rss_kb(pid: int) -> int:
    """A process's resident memory now (VmRSS, KiB)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_forty_readers_of_the_largest_anonymous_match_share_one_encoding(
        tmp_path: Path) -> None:
    """The finding: one read of the feed of a 10,000-trick match cost the server 8.45 s,
    and 40 concurrent readers took it from 229 MB to 1,304 MB, stalling every other request.
    The largest match an anonymous client may make (10 seats, 10 rounds, at every cap) is
    played to its end; then 40 readers read its feed and 40 its replay at once: every
    answer is whole and the same, the server's memory grows by less than 15 MB (the
    encoded answers are shared, not built per reader: 27-37 MB when each reader re-played
    the match and re-encoded its replay), and a request made meanwhile is answered within
    3 s (3.1 and 5.4 s then) on this shared machine."""
    # 80 readers from one address: past the default per-address connection cap, which
    # tests/e2e/test_hardening.py holds; here the readers' cost is measured.
    server = ServerProcess(db_url(tmp_path), ["--max-connections-per-address", "0"]).start()
    assert server.proc is not None
    try:
        made = httpx.post(f"{server.http}/api/human-matches", timeout=30, json={
            "game": "six_nimmt", "bots": ["random"] * 9, "deadline_ms": 1000,
            "settings": {"rounds": "10", "max_timeouts": "5", "time_bank_ms": "60000"}})
        assert made.status_code == 201, made.text
        match_id, token = made.json()["match_id"], made.json()["play"].split("#")[1]
        assert finish([server.bot(token, "house:random")])[0][0] == 0

        before = _rss_kb(server.proc.pid)
        peak = [before]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.02):
                peak[0] = max(peak[0], _rss_kb(server.proc.pid))  # type: ignore[union-attr]

        def read(path: str) -> bytes:
            with httpx.Client(base_url=server.http, timeout=120) as http:
                answer = http.get(path)
                assert answer.status_code == 200, answer.text
                return answer.content

        def other() -> float:
            started = time.monotonic()
            assert httpx.get(f"{server.http}/api/games", timeout=60).status_code == 200
            return time.monotonic() - started

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        with ThreadPoolExecutor(2 * READERS + 1) as pool:
            feeds = [pool.submit(read, f"/api/matches/{match_id}/feed") for _ in range(READERS)]
            replays = [pool.submit(read, f"/api/matches/{match_id}/replay")
                       for _ in range(READERS)]
            meanwhile = pool.submit(other)
            feed_bodies = {f.result() for f in feeds}
            replay_bodies = {r.result() for r in replays}
            waited = meanwhile.result()
        done.set()
        sampler.join()

        assert len(feed_bodies) == 1 and len(replay_bodies) == 1
        feed = feed_bodies.pop().decode()
        assert feed.count("event: event\n") > 100 and feed.rstrip().splitlines()[-2] == \
            "event: match_ended", feed[-300:]
        assert b'"rounds":10' in replay_bodies.pop()
        grown_mb = (peak[0] - before) / 1024
        print(f"{READERS} readers each of feed and replay: +{grown_mb:.1f} MB, another "
              f"request {waited:.2f} s")
        assert grown_mb < 15, f"the server grew by {grown_mb:.1f} MB for {READERS} readers"
        assert waited < 3, f"another request waited {waited:.2f} s"
    finally:
        server.stop()
