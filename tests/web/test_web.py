"""The web page in a real headless Chromium against a real server: the leaderboard and match
list refresh by themselves, the replay viewer steps through 6 nimmt! and No Thanks! matches
to the replay's totals, and a live match updates without a reload."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser import launch_chromium, screenshot_dir
from tests.ladder_helpers import LadderServer
from tests.serving import Match, ServerProcess, db_url, finish

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the module's tests."""
    yield from launch_chromium()


@pytest.fixture
def web(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server on a fresh database."""
    proc = ServerProcess(db_url(tmp_path), ["--start-timeout", "30"]).start()
    yield proc
    proc.stop()


@pytest.fixture
def page(browser: Any, tmp_path: Path) -> Iterator[Any]:
    """A fresh page; JavaScript errors fail the test."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, errors


def shots(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """This test's screenshot folder."""
    return screenshot_dir(tmp_path) / str(request.node.name)


def played(server: ServerProcess, game: str, bots: list[str], *args: str) -> Match:
    """A match played to its end by bot processes."""
    match = server.create_match(game, len(bots), *args)
    results = finish([server.bot(t, b) for t, b in zip(match.tokens, bots, strict=True)])
    assert [code for code, _ in results] == [0] * len(bots)
    return match


LADDER = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
          "--table-size", "six_nimmt=4-4", "--house-bots", "greedy,greedy,random,random",
          "--house-rest", "4"]
"""A real ladder: four house bots playing short rated 6 nimmt! matches unattended, resting
4 s between matches (so the leaderboard holds still long enough to compare)."""

SHOWN_ROWS = """() => [...document.querySelectorAll('[data-testid=leaderboard-rows] tr[data-bot]')]
    .map(r => [...r.children].map(td => td.textContent))"""


def test_leaderboard_shows_a_ladder_run_and_refreshes_by_itself(
        tmp_path: Path, page: Any, request: pytest.FixtureRequest) -> None:
    """While a real ladder plays, the leaderboard shows its rated bots in the API's order
    with their games and ratings, and the games played go up without a reload."""
    server = LadderServer(db_url(tmp_path), LADDER).start()
    try:
        page.goto(server.http + "/?refresh=500")
        page.wait_for_function(f"() => ({SHOWN_ROWS})().length === 4", timeout=90_000)
        page.evaluate("window.loadedOnce = true")
        games_at_first = sum(int(row[3]) for row in page.evaluate(SHOWN_ROWS))
        page.wait_for_function(f"() => ({SHOWN_ROWS})().reduce((n, r) => n + Number(r[3]), 0) > "
                               f"{games_at_first}", timeout=90_000)
        assert page.evaluate("window.loadedOnce") is True
        for _ in range(10):  # compare with the API between two of its answers that agree
            before = httpx.get(server.http + "/api/leaderboard").json()["entries"]
            stamp = page.inner_text("[data-testid=leaderboard-updated]")
            page.wait_for_function("s => document.querySelector("
                                   "'[data-testid=leaderboard-updated]').textContent !== s",
                                   arg=stamp, timeout=20_000)
            shown = page.evaluate(SHOWN_ROWS)
            after = httpx.get(server.http + "/api/leaderboard").json()["entries"]
            if before == after:
                break
        else:
            pytest.fail("the ladder never paused long enough to compare")
        assert [row[1] for row in shown] == [e["bot"] for e in after]
        assert {row[1] for row in shown} == {"house-greedy", "house-greedy-2", "house-random",
                                             "house-random-2"}
        assert [int(row[3]) for row in shown] == [e["games"] for e in after]
        assert [row[4] for row in shown] == [f"{e['ordinal']:.2f}" for e in after]
        page.screenshot(path=str(shots(request, tmp_path) / "ladder.png"), full_page=True)
    finally:
        server.stop()


def test_home_lists_real_matches_and_refreshes_by_itself(
        web: ServerProcess, page: Any, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """The home page shows the finished matches with their totals; a match finished after
    the page loaded appears without a reload."""
    first = played(web, "six_nimmt", ["house:greedy", "house:random", "house:random"],
                   "--setting", "rounds=1")
    page.goto(web.http + "/")
    page.wait_for_selector(f"[data-match='{first.match_id}']")
    page.evaluate("window.loadedOnce = true")
    board = httpx.get(web.http + "/api/leaderboard?game=six_nimmt").json()
    shown = page.locator("[data-testid=leaderboard-rows] tr[data-bot]")
    assert shown.evaluate_all("rows => rows.map(r => r.dataset.bot)") == \
        [e["bot"] for e in board["entries"]]
    replay = json.loads(web.replay(first.match_id))
    row = page.locator(f"[data-match='{first.match_id}']")
    assert " · ".join(map(str, replay["totals"])) in row.inner_text()

    second = played(web, "six_nimmt", ["house:random", "house:greedy"], "--setting", "rounds=1")
    page.wait_for_selector(f"[data-match='{second.match_id}'] .status.finished",
                           timeout=20_000)
    assert page.evaluate("window.loadedOnce") is True  # no reload happened
    folder = shots(request, tmp_path)
    page.screenshot(path=str(folder / "home.png"), full_page=True)


def totals_shown(page: Any) -> list[int]:
    """The running totals column of the replay viewer or live view, by seat."""
    return [int(t) for t in page.locator("[data-testid=total]").all_inner_texts()]


def test_six_nimmt_replay_viewer_steps_to_the_replays_totals(
        web: ServerProcess, page: Any, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Stepping through a 6 nimmt! replay shows each trick's revealed cards and rows after;
    at the last trick the running totals are the replay file's totals."""
    match = played(web, "six_nimmt", ["house:greedy", "house:random", "house:random",
                                      "house:greedy"], "--seed", "7")
    replay = json.loads(web.replay(match.match_id))
    folder = shots(request, tmp_path)
    page.goto(f"{web.http}/#/match/{match.match_id}")
    page.wait_for_selector("[data-testid=replay]")
    round0 = replay["rounds"][0]
    rows = page.locator("[data-testid=rows] .row")
    assert [[int(c) for c in rows.nth(i).locator(".card").evaluate_all(
        "cs => cs.map(c => c.dataset.card)")] for i in range(4)] == round0["rows"]
    page.click("[data-testid=next]")
    trick = round0["tricks"][0]
    assert "trick 1 of 10" in page.inner_text("[data-testid=where]")
    revealed = page.locator("[data-testid=revealed] .card").evaluate_all(
        "cs => cs.map(c => Number(c.dataset.card))")
    assert revealed == sorted(trick["plays"])
    after = page.locator("[data-testid=rows] .row")
    assert [[int(c) for c in after.nth(i).locator(".card").evaluate_all(
        "cs => cs.map(c => c.dataset.card)")] for i in range(4)] == trick["rows_after"]
    page.screenshot(path=str(folder / "trick-1.png"), full_page=True)
    page.click("[data-testid=last]")
    assert f"Round {len(replay['rounds'])} of {len(replay['rounds'])} · trick 10 of 10" in \
        page.inner_text("[data-testid=where]")
    assert totals_shown(page) == replay["totals"]
    page.screenshot(path=str(folder / "last-trick.png"), full_page=True)
    page.keyboard.press("ArrowLeft")
    assert "trick 9 of 10" in page.inner_text("[data-testid=where]")


def test_no_thanks_replay_viewer_shows_card_pot_cards_and_scores(
        web: ServerProcess, page: Any, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Stepping through a No Thanks! replay shows the card and the pot of each turn and each
    seat's cards, chips and score; at the last turn they equal the replay's round record and
    its totals."""
    match = played(web, "no_thanks", ["house:threshold", "house:random", "house:never_take",
                                      "house:random"], "--seed", "4", "--setting", "rounds=2")
    replay = json.loads(web.replay(match.match_id))
    folder = shots(request, tmp_path)
    page.goto(f"{web.http}/#/match/{match.match_id}")
    page.wait_for_selector("[data-testid=replay]")
    first_turn = replay["rounds"][0]["turns"][0]
    page.click("[data-testid=next]")
    assert f"passed on {first_turn['card']}" in page.inner_text("[data-testid=what]") or \
        f"took {first_turn['card']}" in page.inner_text("[data-testid=what]")
    page.screenshot(path=str(folder / "turn-1.png"), full_page=True)
    page.click("[data-testid=last]")
    last_round = replay["rounds"][-1]
    seats = page.locator("[data-testid=seats] tbody tr")
    for seat in range(4):
        cells = seats.nth(seat).locator("td")
        cards = cells.nth(1).locator(".card").evaluate_all(
            "cs => cs.map(c => Number(c.dataset.card))")
        assert cards == last_round["cards"][seat]
        assert int(cells.nth(2).inner_text()) == last_round["chips"][seat]
        assert int(cells.nth(3).inner_text()) == last_round["scores"][seat]
    assert totals_shown(page) == replay["totals"]
    page.screenshot(path=str(folder / "last-turn.png"), full_page=True)


class HttpSeats:
    """Test-driven seats over HTTP play: each call answers one decision per seat."""

    def __init__(self, base: str, tokens: list[str | None]) -> None:
        self.client = httpx.Client(base_url=base, timeout=30)
        self.tokens = [str(t) for t in tokens]
        self.after: list[int | None] = [None] * len(tokens)
        for seat, token in enumerate(self.tokens):  # join every seat, so the match starts
            joined = self.client.get("/api/play/poll", params={"wait_ms": 0}, headers={
                "Authorization": f"Bearer {token}"}).json()
            self.after[seat] = joined["messages"][-1]["seq"]

    def decisions(self, seat: int, wait_ms: int) -> list[dict[str, Any]]:
        """Long-poll ``seat`` once; the decisions it got."""
        params: dict[str, int] = {"wait_ms": wait_ms, "after": int(self.after[seat] or 0)}
        result = self.client.get("/api/play/poll", params=params, headers={
            "Authorization": f"Bearer {self.tokens[seat]}"}).json()
        found = []
        for message in result["messages"]:
            self.after[seat] = message["seq"]
            if "decision" in message:
                found.append(message["decision"])
        return found

    def play_trick(self) -> None:
        """Answer every decision with the first legal action until every seat has played a
        card (a row choice on the way is answered too)."""
        played: set[int] = set()
        while len(played) < len(self.tokens):
            for seat, token in enumerate(self.tokens):
                for decision in self.decisions(seat, wait_ms=100):
                    verdict = self.client.post("/api/play/answer", json={
                        "decision_id": decision["decision_id"], "action": decision["legal"][0]},
                        headers={"Authorization": f"Bearer {token}"}).json()
                    assert "accepted" in verdict, verdict
                    if decision["kind"] == "DECISION_KIND_PLAY_CARD":
                        played.add(seat)


def test_a_live_match_updates_without_a_reload(
        web: ServerProcess, page: Any, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """A spectator's page of a running match shows each new trick as it is played, with no
    reload, and then the end of the match."""
    match = web.create_match("six_nimmt", 2, "--deadline-ms", "30000", "--setting",
                             "rounds=1", "--seed", "9")
    seats = HttpSeats(web.http, match.tokens)
    folder = shots(request, tmp_path)
    seats.play_trick()
    page.goto(f"{web.http}/#/match/{match.match_id}")
    page.wait_for_selector("[data-testid=live]")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=where]').textContent.includes('trick 1')")
    page.evaluate("window.loadedOnce = true")
    page.screenshot(path=str(folder / "live-trick-1.png"), full_page=True)
    seats.play_trick()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=where]').textContent.includes('trick 2')")
    seats.play_trick()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=where]').textContent.includes('trick 3')")
    assert page.evaluate("window.loadedOnce") is True
    replay_now = httpx.get(f"{web.http}/api/matches/{match.match_id}/replay")
    assert replay_now.status_code == 409
    page.screenshot(path=str(folder / "live-trick-3.png"), full_page=True)
    aborted = httpx.post(f"{web.http}/api/admin/matches/{match.match_id}/abort",
                         headers={"Authorization": f"Bearer {web.admin_token()}"})
    assert aborted.status_code == 200, aborted.text
    page.wait_for_selector("[data-testid=live-ended]")
    assert "aborted" in page.inner_text("[data-testid=live-ended]")
    assert page.evaluate("window.loadedOnce") is True
    page.screenshot(path=str(folder / "live-ended.png"), full_page=True)
