"""Every page of the web site in a real headless Chromium against a real server: a bot's page
charts its rating history; the replay viewer autoplays, links to a step that reopens it,
shows the hands, the rows before each trick with why a row was taken, answer times and
defaulted decisions; the live view shows whose turn it is and the clock; and every page works
at 390 px wide without scrolling sideways, passes axe-core with no serious or critical
violation and logs no console error. Screenshots of each page at 1280 and 390 px go to
$BULLRING_ARTIFACTS/screenshots."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser import launch_chromium, screenshot_dir
from tests.ladder_helpers import LadderServer
from tests.serving import ServerProcess, db_url, finish
from tests.web.test_web import HttpSeats, played

pytestmark = pytest.mark.timeout(300)

AXE = Path(__file__).resolve().parent / "deps" / "node_modules" / "axe-core" / "axe.min.js"
"""axe-core from npm (``npm ci --prefix tests/web/deps``, done by .ci/run)."""
WIDTHS = (1280, 390)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the module's tests."""
    yield from launch_chromium()


@pytest.fixture(scope="module")
def axe() -> str:
    """axe-core's script; fail under CI=true when it is missing, skip otherwise."""
    if not AXE.exists():
        message = f"{AXE} is missing: npm ci --prefix tests/web/deps"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return AXE.read_text()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page; a JavaScript error or a console error fails the test."""
    context = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield page
    context.close()
    assert not errors, errors


def check_page(page: Any, axe: str, folder: Path, name: str) -> None:
    """At each width: no sideways scrolling, no serious or critical axe-core violation, and
    a full-page screenshot."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_function(f"() => window.innerWidth === {width}")
        overflow = page.evaluate("""() => {
            const doc = document.documentElement;
            const wide = [...document.querySelectorAll('body *')]
              .filter(e => e.getBoundingClientRect().right > doc.clientWidth + 1)
              .slice(0, 5).map(e => e.outerHTML.slice(0, 120));
            return {scroll: doc.scrollWidth, client: doc.clientWidth, wide};
        }""")
        assert overflow["scroll"] <= overflow["client"], (name, width, overflow)
        if not page.evaluate("typeof window.axe === 'object'"):
            page.evaluate(axe)  # by DevTools: a <script> tag would break the page's CSP
        found = page.evaluate("""async () => {
            const result = await axe.run(document, {resultTypes: ['violations']});
            return result.violations.filter(v => ['serious', 'critical'].includes(v.impact))
              .map(v => ({id: v.id, impact: v.impact, help: v.help,
                          nodes: v.nodes.slice(0, 3).map(n => n.html)}));
        }""")
        assert not found, (name, width, found)
        page.screenshot(path=str(folder / f"{name}-{width}.png"), full_page=True)


def shots(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """This test's screenshot folder."""
    folder = screenshot_dir(tmp_path) / "pages" / str(request.node.name)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


LADDER = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
          "--table-size", "six_nimmt=3-3", "--house-bots", "greedy,greedy,random",
          "--house-rest", "0.2"]
"""Three house bots playing short rated 6 nimmt! matches, one after another."""

GAMES_SHOWN = """() => [...document.querySelectorAll('[data-testid=leaderboard-rows] tr[data-bot]')]
    .map(r => Number(r.children[3].textContent))"""


def test_bot_page_charts_its_rating_and_links_its_opponents(
        tmp_path: Path, page: Any, axe: str, request: pytest.FixtureRequest) -> None:
    """Once a ladder has rated a few matches, the home page links each bot; a bot's page
    charts one point per rated match (and its start), lists its recent matches and its
    record against each opponent, whose name leads to that opponent's page. The match
    filters by bot, status and date narrow the list."""
    server = LadderServer(db_url(tmp_path), LADDER).start()
    folder = shots(request, tmp_path)
    try:
        page.goto(server.http + "/?refresh=300")
        page.wait_for_function(f"() => ({GAMES_SHOWN})().length === 3 && "
                               f"Math.min(...({GAMES_SHOWN})()) >= 3", timeout=120_000)
        check_page(page, axe, folder, "home")

        page.click("[data-testid=leaderboard-rows] a[data-bot-link=house-greedy]")
        page.wait_for_selector("[data-testid=rating-chart]")
        api = httpx.get(server.http + "/api/bots/house-greedy").json()
        assert api["bot"]["name"] == "house-greedy"
        shown = int(page.get_attribute("[data-testid=rating-line]", "data-points"))
        drawn = page.get_attribute("[data-testid=rating-line]", "points").split()
        assert len(drawn) == shown >= 4  # the start and at least three rated matches
        assert all(len(p.split(",")) == 2 for p in drawn)
        label = page.get_attribute("[data-testid=rating-chart]", "aria-label")
        assert "house-greedy" in label and "rated match" in label
        opponents = page.locator("[data-testid=head-to-head] tr[data-opponent]")
        assert sorted(opponents.evaluate_all("rs => rs.map(r => r.dataset.opponent)")) == \
            ["house-greedy-2", "house-random"]
        for row in api["head_to_head"]:
            assert row["wins"] + row["draws"] + row["losses"] == row["matches"] >= 3
        page.wait_for_selector("[data-testid=bot-matches] tr[data-match]")
        assert "unrated" not in page.inner_text("[data-testid=bot-matches]")  # ladder matches
        check_page(page, axe, folder, "bot")

        page.click("[data-testid=head-to-head] a[data-bot-link=house-random]")
        page.wait_for_function("() => document.querySelector('[data-testid=bot-name]')"
                               "?.textContent === 'house-random'")

        page.goto(server.http + "/?refresh=300#/?bot=house-random&status=finished")
        page.wait_for_selector("[data-testid=match-rows] tr[data-match]")
        seats = page.locator("[data-testid=match-rows] tr[data-match]").evaluate_all(
            "rs => rs.map(r => r.children[3].textContent + '|' + r.children[2].textContent)")
        assert seats and all("house-random" in s and "finished" in s for s in seats)
        page.fill("[data-testid=until]", "2000-01-01")
        page.dispatch_event("[data-testid=until]", "change")
        page.wait_for_function("() => document.querySelector('[data-testid=match-rows]')"
                               ".textContent.includes('No matches.')")
        assert "until=2000-01-01" in page.evaluate("location.hash")
    finally:
        page.goto("about:blank")  # stop the page's refreshes before its server goes
        server.stop()


@pytest.fixture
def web(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server on a fresh database; a seat nobody joins is played by defaults after 2 s."""
    proc = ServerProcess(db_url(tmp_path), ["--start-timeout", "2"]).start()
    yield proc
    proc.stop()


def step_label(page: Any) -> int:
    """The replay viewer's step number."""
    return int(page.inner_text("[data-testid=step-label]").split()[1])


def test_replay_viewer_autoplays_links_a_step_and_marks_answers(
        web: ServerProcess, page: Any, browser: Any, axe: str,
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """A 6 nimmt! match where seat 1 never connects: the viewer shows the hands, the rows
    before the trick, where each card went and why, seat 0's answer times and seat 1's
    defaulted decisions; it autoplays; its step link opens the same step in a new page;
    arrow keys on the focused slider step once; Home and End jump; the download button
    serves the replay."""
    match = web.create_match("six_nimmt", 2, "--setting", "rounds=1", "--seed", "3")
    results = finish([web.bot(match.tokens[0], "house:greedy")])
    assert results[0][0] == 0, results
    replay = json.loads(web.replay(match.match_id))
    folder = shots(request, tmp_path)
    page.goto(f"{web.http}/#/match/{match.match_id}")
    page.wait_for_selector("[data-testid=replay]")
    assert step_label(page) == 1
    page.click("[data-testid=next]")
    round0, trick = replay["rounds"][0], replay["rounds"][0]["tricks"][0]
    before = page.locator("[data-testid=rows-before] .row")
    assert [before.nth(i).locator(".card").evaluate_all("cs => cs.map(c => +c.dataset.card)")
            for i in range(4)] == round0["rows"]
    hands = page.locator("[data-testid=seats] [data-testid=hand]")
    for seat in range(2):
        cards = hands.nth(seat).locator(".card").evaluate_all("cs => cs.map(c => +c.dataset.card)")
        assert cards == [c for c in round0["hands"][seat] if c != trick["plays"][seat]]
    placed = page.locator("[data-testid=placements] li")
    assert placed.count() == 2
    assert placed.evaluate_all("ls => ls.map(l => l.dataset.why)")[0] in (
        "follows", "sixth", "lowest")
    answers = page.locator("[data-testid=seats] tbody tr")
    assert "ms" in answers.nth(0).inner_text()
    assert "default (disconnected)" in answers.nth(1).inner_text()
    assert page.locator("[data-testid=defaulted]").count() >= 1
    for number, resolved in enumerate(round0["tricks"], 1):  # why each card went where it did
        if number > 1:
            page.click("[data-testid=next]")
        assert f"trick {number} of" in page.inner_text("[data-testid=where]")
        why = page.locator("[data-testid=placements] li").evaluate_all(
            "ls => ls.map(l => l.dataset.why)")
        takers = [s for s, cards in enumerate(resolved["taken"]) if cards]
        assert why.count("lowest") == (resolved["row_choice"] is not None)
        assert why.count("lowest") + why.count("sixth") == len(takers)
    assert any(cards for t in round0["tricks"] for cards in t["taken"])  # a row was taken
    page.click("[data-testid=first]")
    page.click("[data-testid=next]")
    page.click("details.answers summary")
    defaults = page.locator("[data-testid=answer-summary] [data-testid=defaults]")
    assert defaults.nth(0).inner_text() == "0"
    seat1 = [e for e in replay["events"] if e["type"] == "answer" and e["seat"] == 1]
    assert seat1 and all(e["default"] for e in seat1)
    assert defaults.nth(1).inner_text() == f"⚠ {len(seat1)} (disconnected)"
    check_page(page, axe, folder, "replay-six-nimmt")

    page.select_option("[data-testid=speed]", "4")
    page.click("[data-testid=play]")
    assert page.get_attribute("[data-testid=play]", "aria-pressed") == "true"
    page.wait_for_function("() => Number(document.querySelector('[data-testid=step-label]')"
                           ".textContent.split(' ')[1]) >= 5")
    page.evaluate("""() => {  // pause, unless the last step already paused it
        const play = document.querySelector('[data-testid=play]');
        if (play.getAttribute('aria-pressed') === 'true') play.click();
    }""")
    assert page.get_attribute("[data-testid=play]", "aria-pressed") == "false"
    shown = step_label(page)
    where = page.inner_text("[data-testid=where]")
    link = page.get_attribute("[data-testid=step-link]", "href")
    assert link == f"#/match/{match.match_id}/step/{shown}"
    assert page.evaluate("location.hash") == link

    other = browser.new_page()
    try:
        other.goto(f"{web.http}/{link}")
        other.wait_for_selector("[data-testid=replay]")
        assert step_label(other) == shown
        assert other.inner_text("[data-testid=where]") == where
    finally:
        other.close()

    page.focus("[data-testid=slider]")
    page.keyboard.press("ArrowRight")
    assert step_label(page) == shown + 1
    page.locator("h1").click()
    page.keyboard.press("End")
    assert step_label(page) == 1 + len(round0["tricks"])  # the deal, then each trick
    page.keyboard.press("Home")
    assert step_label(page) == 1
    href = page.get_attribute("[data-testid=download]", "href")
    assert page.get_attribute("[data-testid=download]", "download") == f"{match.match_id}.json"
    assert httpx.get(web.http + href).json()["match_id"] == match.match_id


def test_no_thanks_replay_page_at_both_widths(
        web: ServerProcess, page: Any, axe: str, request: pytest.FixtureRequest,
        tmp_path: Path) -> None:
    """The No Thanks! viewer with the hidden card shows each seat's hidden card and the
    answer times, at both widths."""
    match = played(web, "no_thanks", ["house:threshold", "house:random", "house:never_take"],
                   "--seed", "5", "--setting", "hidden_card=true")
    replay = json.loads(web.replay(match.match_id))
    page.goto(f"{web.http}/#/match/{match.match_id}/step/2")
    page.wait_for_selector("[data-testid=replay]")
    assert step_label(page) == 2
    seats = page.locator("[data-testid=seats] tbody tr")
    hidden = replay["rounds"][0]["hidden"]
    for seat in range(3):
        assert str(hidden[seat]) in seats.nth(seat).locator("td").nth(5).inner_text()
    assert page.locator("[data-testid=answer-ms]").count() >= 1
    check_page(page, axe, shots(request, tmp_path), "replay-no-thanks")


def test_live_view_shows_whose_turn_and_the_clock(
        web: ServerProcess, page: Any, axe: str, request: pytest.FixtureRequest,
        tmp_path: Path) -> None:
    """A live 6 nimmt! match: both seats' clocks count down while they choose; once seat 0
    answers only seat 1 is waited for (and what seat 0 chose is shown nowhere); at the end
    the match's badge says it ended."""
    match = web.create_match("six_nimmt", 2, "--deadline-ms", "30000", "--setting",
                             "rounds=1", "--seed", "9")
    seats = HttpSeats(web.http, match.tokens)
    folder = shots(request, tmp_path)
    page.goto(f"{web.http}/#/match/{match.match_id}")
    page.wait_for_selector("[data-testid=live]")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=clocks] li').length === 2")
    assert "Every seat is choosing" in page.inner_text("[data-testid=turn]")
    first = float(page.inner_text("[data-testid=clock] >> nth=0").split()[0])
    assert 0 < first <= 30
    page.wait_for_function("s => parseFloat(document.querySelector('[data-testid=clock]')"
                           ".textContent) < s", arg=first)
    assert page.locator("[data-testid=status]").inner_text() == "running"
    check_page(page, axe, folder, "live")

    decision = seats.decisions(0, wait_ms=5000)[0]
    card = decision["legal"][0]
    verdict = seats.client.post("/api/play/answer", json={
        "decision_id": decision["decision_id"], "action": card},
        headers={"Authorization": f"Bearer {seats.tokens[0]}"}).json()
    assert "accepted" in verdict
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=clocks] li').length === 1")
    waiting = page.locator("[data-testid=clocks] li")
    assert waiting.get_attribute("data-seat") == "1"
    assert page.locator(f"[data-testid=live] [data-card='{card['card']}']").count() == 0
    turn = httpx.get(f"{web.http}/api/matches/{match.match_id}/turn").json()
    assert [w["seat"] for w in turn["waiting"]] == [1] and turn["running"] is True
    assert set(turn) == {"match_id", "running", "deadline_ms", "waiting"}
    assert set(turn["waiting"][0]) == {"seat", "name", "ms_left", "bank_ms"}
    assert turn["waiting"][0]["bank_ms"] is None  # no time bank in this match

    aborted = httpx.post(f"{web.http}/api/admin/matches/{match.match_id}/abort",
                         headers={"Authorization": f"Bearer {web.admin_token()}"})
    assert aborted.status_code == 200, aborted.text
    page.wait_for_selector("[data-testid=live-ended]")
    assert page.locator("[data-testid=status]").inner_text() == "aborted"
    assert page.locator("[data-testid=clocks] li").count() == 0
    ended = httpx.get(f"{web.http}/api/matches/{match.match_id}/turn").json()
    assert ended == {"match_id": match.match_id, "running": False, "deadline_ms": None,
                     "waiting": []}


def test_a_match_aborted_before_it_started_says_so(
        web: ServerProcess, page: Any) -> None:
    """A match aborted before any bot joined shows that it has no replay, not "Loading…"."""
    match = web.create_match("no_thanks", 3)
    aborted = httpx.post(f"{web.http}/api/admin/matches/{match.match_id}/abort",
                         headers={"Authorization": f"Bearer {web.admin_token()}"})
    assert aborted.status_code == 200, aborted.text
    page.goto(f"{web.http}/#/match/{match.match_id}")
    page.wait_for_selector("[data-testid=no-replay]")
    assert "Loading" not in page.inner_text("main")
    assert page.locator("[data-testid=status]").inner_text() == "aborted"


def test_api_docs_come_from_the_server_itself(
        web: ServerProcess, page: Any, axe: str, request: pytest.FixtureRequest,
        tmp_path: Path) -> None:
    """/api/docs draws every operation of /openapi.json, loading nothing from another
    site; the new read endpoints are there with their descriptions."""
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    page.goto(f"{web.http}/api/docs")
    page.wait_for_selector("#schemas")
    spec = httpx.get(f"{web.http}/openapi.json").json()
    operations = sum(len(methods) for methods in spec["paths"].values())
    assert page.locator("section h3 code.verb").count() == operations
    for path in ("/api/bots/{name}", "/api/matches/{match_id}/turn"):
        assert spec["paths"][path]["get"]["description"]
        assert path in page.inner_text("main")
    assert asked and all(url.startswith(web.http) for url in asked), asked
    check_page(page, axe, shots(request, tmp_path), "api-docs")


def test_bot_api_errors_and_turn_of_a_finished_match(web: ServerProcess) -> None:
    """An unknown bot is a 404 with its code; a finished match has nobody to wait for."""
    missing = httpx.get(f"{web.http}/api/bots/nobody")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "bot_not_found"
    assert httpx.get(f"{web.http}/api/matches/nope/turn").status_code == 404
    match = played(web, "six_nimmt", ["house:random", "house:random"], "--setting", "rounds=1")
    turn = httpx.get(f"{web.http}/api/matches/{match.match_id}/turn").json()
    assert turn["running"] is False and turn["waiting"] == []
    info = httpx.get(f"{web.http}/api/matches/{match.match_id}").json()
    assert info["bots"] == [None, None]  # seats that no registered bot plays
    assert info["rated"] is False  # a match made with seat tokens


def test_pages_work_under_their_content_security_policy(
        web: ServerProcess, browser: Any) -> None:
    """Every page comes with a Content-Security-Policy that runs no inline script or handler
    and lets no other site frame it, and works under it: the home page, the tournaments and
    the API reference log no violation (no console error at all). The skip link, whose
    handler was inline, moves the focus to the content and leaves the address (the page's
    route) alone. The policy is enforced: a script injected into the page does not run, and
    its violation is the only console error."""
    context = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    try:
        for path, ready in (("/api/docs", "#schemas"), ("/#/tournaments", "main h1"),
                            ("/", "[data-testid=leaderboard-rows]")):
            response = page.goto(web.http + path)
            assert response is not None
            policy = response.headers["content-security-policy"]
            assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
            assert "unsafe-inline" not in policy
            page.wait_for_selector(ready)
        page.goto(web.http + "/#/tournaments")
        page.wait_for_selector("main h1")
        page.keyboard.press("Tab")  # the skip link comes first
        assert page.evaluate("document.activeElement.className") == "skip"
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "view"
        assert page.evaluate("location.hash") == "#/tournaments"
        assert not errors, errors
        with page.expect_console_message(lambda m: m.type == "error") as refused:
            page.evaluate("""() => {
                const injected = document.createElement('script');
                injected.textContent = 'window.injected = true';
                document.head.append(injected);
            }""")
        assert "Content Security Policy" in refused.value.text
        assert page.evaluate("window.injected === undefined")
        assert errors == [refused.value.text], errors
    finally:
        context.close()
