"""The big screen (/tv) in a real headless Chromium against a real server: a 4-bot
tournament of 6 games played at machine speed by four ``bullring bot --ladder`` processes is
over in a few seconds, yet the screen shows it as a broadcast: each game to its end, one public
event a step at the configured pace, in schedule order, the standings after each game and the
final standings with the cross-table. Screenshots at 1920x1080, 1280x720 and 390 px go to
$BULLRING_ARTIFACTS/screenshots/tv."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser import screenshot_dir
from tests.ladder_helpers import LadderBot, LadderServer
from tests.serving import ServerProcess, db_url
from tests.web.test_web import HttpSeats, played
from tests.web.test_web_pages import axe, browser  # noqa: F401

pytestmark = pytest.mark.timeout(300)

FAST = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1"]
"""Short 6 nimmt! matches: one round of ten tricks."""
NAMES = ("ann", "bob", "cy", "dee")
PACE = 20
"""The broadcast's steps a second in the test: a game of about 25 public events in ~1.3 s."""
SIZES = ((1920, 1080), (1280, 720), (390, 844))

COLLECT = """
window.__tv = {log: [], steps: {}, ends: [], standings: [], final: null};
for (const name of ['game-start', 'step', 'game-end', 'standings', 'final']) {
  document.addEventListener('tv:' + name, (e) => {
    const d = e.detail;
    window.__tv.log.push([name, d.match || d.after]);
    if (name === 'step') (window.__tv.steps[d.match] = window.__tv.steps[d.match] || []).push(d);
    if (name === 'game-end') window.__tv.ends.push(d);
    if (name === 'standings') window.__tv.standings.push(d);
    if (name === 'final') window.__tv.final = d;
  });
}
"""
"""Collects what the page says it shows (its tv:* events), from before its own script runs."""

SETTLED = """() => document.querySelector('main#tv').dataset.paused === 'true'
    && !document.querySelector('.tvcard.enter, .tvcard.leave')"""
"""The broadcast is paused and no card is on the move."""


@pytest.fixture
def tv_page(browser: Any) -> Iterator[Any]:  # noqa: F811
    """A 1920x1080 page that collects the broadcast's events; a JavaScript or console
    error fails the test."""
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.add_init_script(COLLECT)
    yield page
    context.close()
    assert not errors, errors


def public_events(http: str, match_id: str) -> int:
    """How many public events the feed of a finished match holds."""
    with httpx.stream("GET", f"{http}/api/matches/{match_id}/feed", timeout=10) as response:
        assert response.status_code == 200
        return sum(line == "event: event" for line in response.iter_lines())


def axe_serious(page: Any, axe: str) -> list[dict[str, Any]]:  # noqa: F811
    """axe-core's serious and critical violations on the page as it is."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(axe)  # by DevTools: a <script> tag would break the page's CSP
    found: list[dict[str, Any]] = page.evaluate("""async () => {
        const result = await axe.run(document, {resultTypes: ['violations']});
        return result.violations.filter(v => ['serious', 'critical'].includes(v.impact))
          .map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(n => n.html)}));
    }""")
    return found


def look(page: Any, axe: str, folder: Path, name: str) -> None:  # noqa: F811
    """At each of ``SIZES``: nothing wider than the screen, on a projector (1920x1080,
    1280x720) nothing taller either, no serious axe-core violation, and a screenshot (of a
    phone's, the whole page)."""
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_function(f"() => window.innerWidth === {width}")
        page.wait_for_function(SETTLED)
        overflow = page.evaluate("""() => {
            const doc = document.documentElement;
            return {scroll: doc.scrollWidth, client: doc.clientWidth,
                    wide: [...document.querySelectorAll('body *')]
                      .filter(e => e.getBoundingClientRect().right > doc.clientWidth + 1)
                      .slice(0, 5).map(e => e.outerHTML.slice(0, 120))};
        }""")
        assert overflow["scroll"] <= overflow["client"], (name, width, overflow)
        if width >= 1000:
            tall = page.evaluate("document.documentElement.scrollHeight")
            assert tall <= height, (name, width, tall)
        found = axe_serious(page, axe)
        assert not found, (name, width, found)
        page.screenshot(path=str(folder / f"{name}-{width}x{height}.png"),
                        full_page=width < 1000)
    page.set_viewport_size({"width": 1920, "height": 1080})


def test_the_big_screen_shows_a_machine_speed_tournament_game_by_game(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer], tv_page: Any,
        axe: str) -> None:  # noqa: F811
    """Four bots play a round-robin of 6 games at one table at machine speed; /tv shows
    every game in schedule order, each to its end (as many steps as its feed has public
    events), no two steps closer than 1 / pace, then the standings as they stood after that
    game (ranks moved as the page says), and at the end the final standings in the API's
    order with a cross-table whose every pair adds up to the games they shared."""
    server = LadderServer(db_url(tmp_path), FAST).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in NAMES}
    bots = [LadderBot.start(name, server.address, tokens[name], "six_nimmt", "house:greedy")
            for name in NAMES]
    stop_all.extend(bots)
    for bot in bots:
        bot.err.wait(lambda lines: any("waiting on the six_nimmt ladder" in ln for ln in lines),
                     30, "the bot to wait on the ladder")
    made = httpx.post(f"{server.http}/api/admin/tournaments", timeout=10,
                      headers={"authorization": f"Bearer {server.admin_token()}"},
                      json={"game": "six_nimmt", "format": "round-robin", "bots": list(NAMES),
                            "games": 6, "seats": 4})
    assert made.status_code == 201, made.text
    tid = made.json()["tournament_id"]
    folder = screenshot_dir(tmp_path) / "tv"
    folder.mkdir(parents=True, exist_ok=True)

    page = tv_page
    page.goto(f"{server.http}/tv?pace={PACE}&hold=600")
    page.wait_for_function(
        f"() => document.querySelector('main#tv').dataset.tournament === '{tid}'")
    page.wait_for_function("() => Object.values(window.__tv.steps).some(s => s.length >= 12)")
    page.keyboard.press(" ")  # pause mid-game: the live state, still
    look(page, axe, folder, "game")
    assert page.locator("[data-testid=tv-row] .tvcard").count() >= 4
    page.keyboard.press(" ")
    page.wait_for_function("() => window.__tv.final !== null", timeout=120_000)
    page.keyboard.press(" ")
    look(page, axe, folder, "final")

    done = httpx.get(f"{server.http}/api/tournaments/{tid}").json()
    assert done["status"] == "finished" and done["played"] == 6
    order = [g["match_id"] for g in done["schedule"]]
    tv = page.evaluate("window.__tv")
    assert [e["match"] for e in tv["ends"]] == order
    assert all(e["termination"] == "TERMINATION_NORMAL" for e in tv["ends"])
    expected = [["game-start", m] for m in order]
    seen = [entry for entry in tv["log"] if entry[0] == "game-start"]
    assert seen == expected
    for index, match_id in enumerate(order):  # each game shown whole, then its standings
        start = tv["log"].index(["game-start", match_id])
        end = tv["log"].index(["game-end", match_id])
        after = tv["log"].index(["final" if index == 5 else "standings", index + 1])
        assert start < end < after
        assert index == 5 or after < tv["log"].index(["game-start", order[index + 1]])
        steps = tv["steps"][match_id]
        assert [s["step"] for s in steps] == list(range(1, public_events(server.http, match_id)
                                                        + 1))
        assert steps[-1]["type"] == "GameEnded"
        gaps = [b["at"] - a["at"] for a, b in itertools.pairwise(steps)]
        assert min(gaps) >= 1000 / PACE - 0.5, (match_id, min(gaps))

    for shown in [*tv["standings"], tv["final"]]:
        assert sorted(shown["standings"]) == sorted(NAMES)
    assert [s["after"] for s in tv["standings"]] == [1, 2, 3, 4, 5]
    assert tv["final"]["after"] == 6
    assert tv["final"]["standings"] == [s["bot"] for s in done["standings"]]
    rows = page.locator("[data-testid=tv-standings] tr[data-bot]")
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.bot)") == tv["final"]["standings"]
    before = {m["bot"]: m["rank"] for m in tv["standings"][-1]["moves"]}
    now = {m["bot"]: m["rank"] for m in tv["final"]["moves"]}
    moves = rows.evaluate_all("rs => rs.map(r => [r.dataset.bot, +r.dataset.move])")
    assert moves == [[bot, before[bot] - now[bot]] for bot, _ in moves]
    cells = page.locator("[data-testid=tv-cross] td[data-against]").evaluate_all(
        "cs => cs.map(c => c.dataset.score.split(',').map(Number))")
    assert len(cells) == 12 and all(sum(c) == 6 for c in cells)  # each pair met 6 times
    assert page.get_attribute("main#tv", "data-phase") == "final"


def no_thanks_table(events: list[dict[str, Any]], seats: int) -> dict[str, Any]:
    """What a No Thanks! table shows after ``events`` (public events in proto JSON): the
    card on offer, the chips on it and each seat's cards, sorted."""
    offer: int | None = None
    pot = 0
    cards: list[list[int]] = [[] for _ in range(seats)]
    for event in events:
        (kind, data), = event["no_thanks"].items()
        if kind == "round_started":
            offer, pot, cards = None, 0, [[] for _ in range(seats)]
        elif kind == "card_turned_up":
            offer, pot = data["card"], 0
        elif kind == "passed":
            pot = data["pot"]
        elif kind == "took":
            offer, pot = None, 0
            cards[data["seat"]].append(data["card"])
        elif kind == "hidden_revealed":
            cards[data["seat"]].append(data["card"])
    return {"offer": offer, "pot": pot if offer is not None else 0,
            "cards": [sorted(c) for c in cards]}


def feed_events(http: str, match_id: str) -> list[dict[str, Any]]:
    """The public events of a finished match's feed, in proto JSON."""
    with httpx.stream("GET", f"{http}/api/matches/{match_id}/feed", timeout=10) as response:
        lines = list(response.iter_lines())
    return [json.loads(line[len("data: "):])["event"]
            for previous, line in itertools.pairwise(lines)
            if previous == "event: event" and line.startswith("data: ")]


SHOWN_TABLE = """() => ({
    offer: [...document.querySelectorAll('[data-testid=tv-offer] .tvcard:not(.leave)')]
      .map(c => +c.dataset.card)[0] ?? null,
    pot: +document.querySelector('[data-testid=tv-pot]').textContent,
    cards: [...document.querySelectorAll('[data-testid=tv-seat-cards] li')].map(li =>
      [...li.querySelectorAll('.tvcard:not(.leave)')].map(c => +c.dataset.card)),
    steps: +document.querySelector('main#tv').dataset.steps})"""


def test_the_big_screen_shows_the_latest_match_then_a_live_one_with_its_clocks(
        tmp_path: Path, tv_page: Any, axe: str) -> None:  # noqa: F811
    """With nothing live, /tv shows the latest finished match (No Thanks!) to its end: the
    card on offer, the chips on it and each seat's cards as its public events say at the
    step shown, and the final totals and ranks. A match then running here is shown next, and
    once the broadcast has caught up with it, the clock of each seat it awaits."""
    server = ServerProcess(db_url(tmp_path), ["--start-timeout", "30"]).start()
    page = tv_page
    try:
        old = played(server, "no_thanks", ["house:threshold", "house:random",
                                           "house:never_take"], "--seed", "5")
        events = feed_events(server.http, old.match_id)
        folder = screenshot_dir(tmp_path) / "tv"
        folder.mkdir(parents=True, exist_ok=True)

        page.goto(f"{server.http}/tv?pace=40")
        page.wait_for_function(f"() => document.querySelector('main#tv').dataset.match === "
                               f"'{old.match_id}'")
        page.wait_for_function("() => +document.querySelector('main#tv').dataset.steps >= 20")
        page.keyboard.press(" ")
        look(page, axe, folder, "no-thanks")
        shown = page.evaluate(SHOWN_TABLE)
        assert {k: shown[k] for k in ("offer", "pot", "cards")} == \
            no_thanks_table(events[:shown["steps"]], 3)
        page.keyboard.press(" ")
        page.wait_for_function("() => window.__tv.ends.length === 1")
        end = page.evaluate("window.__tv.ends[0]")
        info = httpx.get(f"{server.http}/api/matches/{old.match_id}").json()
        assert end["steps"] == len(events) and end["ranks"] == info["ranks"]
        scores = page.locator("[data-testid=tv-scores] li")
        assert scores.evaluate_all("ls => ls.map(l => +l.querySelector('.total').textContent)") \
            == info["totals"]
        assert scores.evaluate_all("ls => ls.map(l => +l.dataset.rank)") == info["ranks"]
        assert page.evaluate(SHOWN_TABLE)["cards"] == no_thanks_table(events, 3)["cards"]

        live = server.create_match("six_nimmt", 2, "--deadline-ms", "60000")
        seats = HttpSeats(server.http, live.tokens)
        page.wait_for_function(f"() => document.querySelector('main#tv').dataset.match === "
                               f"'{live.match_id}'", timeout=30_000)
        page.wait_for_function("() => document.querySelectorAll('[data-testid=tv-clock]').length "
                               "=== 2")
        first = float(page.inner_text("[data-testid=tv-clock] >> nth=0").split()[0])
        assert 0 < first <= 60
        decision = seats.decisions(0, wait_ms=5000)[0]
        verdict = seats.client.post("/api/play/answer", json={
            "decision_id": decision["decision_id"], "action": decision["legal"][0]},
            headers={"Authorization": f"Bearer {seats.tokens[0]}"}).json()
        assert "accepted" in verdict
        page.wait_for_function("() => document.querySelectorAll('[data-testid=tv-clock]').length "
                               "=== 1")
        assert page.get_attribute("[data-testid=tv-awaited] li", "data-seat") == "1"
        assert page.locator(f"[data-card='{decision['legal'][0]['card']}']").count() == 0
        aborted = httpx.post(f"{server.http}/api/admin/matches/{live.match_id}/abort",
                             headers={"Authorization": f"Bearer {server.admin_token()}"})
        assert aborted.status_code == 200, aborted.text
        page.wait_for_function("() => window.__tv.ends.length === 2")
        assert page.evaluate("window.__tv.ends[1]")["termination"] == "TERMINATION_ABORTED"
        seats.client.close()
    finally:
        page.goto("about:blank")
        server.stop()
