"""A fair share for a bot that accepts every challenge, on a real ``bullring serve`` with a
real ladder: challenges take at most half of its matches while rated tables can seat it,
and one challenger's many challenges do not keep another's waiting. The challengers hold
practice-only event streams over HTTP and never answer a decision."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx

from bullring.server.store import Store
from tests.e2e.challenge_rig import FAST
from tests.ladder_helpers import ACTIVITY, LadderBot, LadderServer, wait_until
from tests.serving import db_url


class SilentStream:
    """A registered bot waiting on the 6 nimmt! ladder over ``/api/play/stream``,
    practice-only, that reads every message and never answers a decision."""

    def __init__(self, base: str, token: str) -> None:
        self.started = 0
        """How many of its matches started."""
        self._thread = threading.Thread(target=self._read, args=(base, token), daemon=True)
        self._thread.start()

    def _read(self, base: str, token: str) -> None:
        with httpx.Client(base_url=base, timeout=httpx.Timeout(10, read=None)) as http, \
                http.stream("GET", "/api/play/stream", params={
                    "ladder": "six_nimmt", "practice_only": "true"},
                    headers={"Authorization": f"Bearer {token}"}) as stream:
            try:
                for line in stream.iter_lines():
                    if line == "event: match_started":
                        with ACTIVITY:
                            self.started += 1
                            ACTIVITY.notify_all()
            except httpx.HTTPError:
                return  # the server stopped


def test_a_bot_that_accepts_every_challenge_keeps_half_its_matches_rated(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """The finding: vic auto-accepts; gri sent it 200 challenges and waited practice-only,
    never answering: vic played 0 rated and 24 unrated matches in 90 s (accepted challenges
    were seated before any rated table). Now with 12 of gri's challenges accepted and three
    house bots to fill rated tables, vic's matches alternate: at least half of its first 10
    are rated, and challenges are still played. hal's one challenge, made after gri's, is
    seated before gri's next ones: at most one of gri's starts in between."""
    server = LadderServer(db_url(tmp_path), [*FAST, "--house-bots", "greedy,random,random",
                                             "--house-rest", "0",
                                             "--challenges-open", "20"]).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in ("vic", "gri", "hal")}
    store = Store(server.db)

    def auth(name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {tokens[name]}"}

    def started(challenger: str) -> set[str]:
        return {c.id for c in store.challenges(challenger) if c.status == "started"
                and c.challenger == challenger}

    with httpx.Client(base_url=server.http, timeout=30) as http:
        assert http.put("/api/challenges/auto-accept", json={"auto_accept": True},
                        headers=auth("vic")).status_code == 200
        for _ in range(12):
            made = http.post("/api/challenges", json={"game": "six_nimmt",
                                                      "opponents": ["vic"]},
                             headers=auth("gri"))
            assert made.status_code == 201 and made.json()["status"] == "accepted", made.text
        gri = SilentStream(server.http, tokens["gri"])
        hal = SilentStream(server.http, tokens["hal"])
        vic = LadderBot.start("vic", server.address, tokens["vic"], "six_nimmt",
                              "house:greedy")
        stop_all.append(vic)
        wait_until(lambda: gri.started >= 2, 120, "two of gri's challenges to start")

        before = started("gri")
        asked = http.post("/api/challenges", json={"game": "six_nimmt", "opponents": ["vic"]},
                          headers=auth("hal")).json()
        assert asked["status"] == "accepted"
        wait_until(lambda: hal.started >= 1, 120, "hal's challenge to start")
        assert len(started("gri") - before) <= 1

        wait_until(lambda: len(vic.matches()) >= 10, 240, "vic's first 10 matches")
    ended = {match_id for match_id, _ in vic.matches()[:10]}
    rated = [m.rated for m in store.matches(bot="vic") if m.id in ended]
    assert len(rated) == 10
    assert sum(rated) >= 5, f"{sum(rated)} of vic's first 10 matches rated"
    assert 10 - sum(rated) >= 3, "the challenges were played too"
