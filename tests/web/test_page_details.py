"""Details of the web page in a real headless Chromium against a real server: a status
badge and a match id never break inside a word at 1280 px, the replay viewer keeps the
result for its last step, the live view's scrolling list of what happened can be reached
from the keyboard, and every card keeps its bullhead marks inside it, on the web page and
on the big screen."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.ladder_helpers import LadderBot, LadderServer
from tests.serving import ServerProcess, db_url
from tests.vocabulary import LEADERBOARD_WORDS, STANDINGS_WORDS
from tests.web.test_web import HttpSeats, played
from tests.web.test_web_pages import axe, browser, page  # noqa: F401

pytestmark = pytest.mark.timeout(300)

HEADERS = """(body) => [...document.querySelector(body).closest('table')
    .querySelectorAll('thead th')].map((th) => th.textContent)"""
"""The column headers of the table whose body is ``body``."""

UNBROKEN = """(selector) => [...document.querySelectorAll(selector)]
    .filter(e => e.getClientRects().length > 1).map(e => e.textContent)"""
"""The elements of ``selector`` laid out on more than one line (an inline element broken
across lines has a box on each)."""


@pytest.fixture
def web(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server on a fresh database; a seat nobody joins is played by defaults after 30 s."""
    proc = ServerProcess(db_url(tmp_path), ["--start-timeout", "30"]).start()
    yield proc
    proc.stop()


def test_badges_and_match_ids_stay_whole_at_1280_px(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer],
        page: Any) -> None:  # noqa: F811
    """At 1280 px, on the match list and on a tournament's page (seven columns), no status
    badge ("finished") and no match id is broken across lines; the standings' columns say
    what ``bullring tournament`` says (score per round, vs field...)."""
    server = LadderServer(db_url(tmp_path), ["--ladder", "six_nimmt", "--ladder-setting",
                                             "six_nimmt:rounds=1"]).start()
    stop_all.append(server)
    names = ("ann-the-first", "bob-the-second", "cy-the-third", "dee-the-fourth")
    bots = [LadderBot.start(name, server.address, server.add_bot(name), "six_nimmt",
                            "house:greedy") for name in names]
    stop_all.extend(bots)
    for bot in bots:
        bot.err.wait(lambda lines: any("waiting on the six_nimmt ladder" in ln for ln in lines),
                     30, "the bot to wait on the ladder")


    made = httpx.post(f"{server.http}/api/admin/tournaments", timeout=10,
                      headers={"authorization": f"Bearer {server.admin_token()}"},
                      json={"game": "six_nimmt", "format": "round-robin",
                            "bots": list(names), "games": 2, "seats": 4})
    assert made.status_code == 201, made.text
    tid = made.json()["tournament_id"]
    assert server.log is not None
    server.log.wait(lambda lines: any(f"tournament {tid} finished" in ln for ln in lines),
                    120, "the tournament's end")
    page.set_viewport_size({"width": 1280, "height": 900})
    try:
        page.goto(f"{server.http}/?refresh=60000#/tournament/{tid}")
        page.wait_for_selector("[data-testid=tournament-games] tr[data-status=finished] "
                               "a[href^='#/match/']")
        assert page.evaluate(HEADERS, "[data-testid=standings]") == ["Place", "Bot",
                                                                     *STANDINGS_WORDS]
        assert page.evaluate(UNBROKEN, "[data-testid=status]") == []
        assert page.evaluate(UNBROKEN, "a[href^='#/match/']") == []
        page.goto(f"{server.http}/?refresh=60000#/")
        page.wait_for_selector("[data-testid=match-rows] tr[data-match]")
        assert page.evaluate(UNBROKEN, "[data-testid=status]") == []
        assert page.evaluate(UNBROKEN, "a[href^='#/match/']") == []
    finally:
        page.goto("about:blank")


def test_the_replay_keeps_the_result_for_its_last_step(
        web: ServerProcess, page: Any) -> None:  # noqa: F811
    """A replay opened at its first step says nothing of the final totals or ranks; at its
    last step it shows them."""
    match = played(web, "six_nimmt", ["house:greedy", "house:random"], "--setting",
                   "rounds=1", "--seed", "4")
    page.goto(f"{web.http}/#/match/{match.match_id}")
    page.wait_for_selector("[data-testid=replay]")
    assert "Final totals" not in page.inner_text("[data-testid=replay]")
    assert page.locator("[data-testid=final-totals]").count() == 0
    page.locator("h1").click()
    page.keyboard.press("End")
    page.wait_for_selector("[data-testid=final-totals]")
    text = page.inner_text("[data-testid=final-totals]")
    totals = page.evaluate(f"fetch('/api/matches/{match.match_id}').then(r => r.json())")
    assert "Final totals: " + " · ".join(map(str, totals["totals"])) in text
    page.keyboard.press("Home")
    assert page.locator("[data-testid=final-totals]").count() == 0


def test_the_live_list_of_what_happened_is_reachable_by_keyboard(
        web: ServerProcess, page: Any, axe: str) -> None:  # noqa: F811
    """The live view's "What happened" list, once longer than its box and scrolling, takes
    the keyboard's focus (Tab reaches it) and axe-core's scrollable-region-focusable rule
    passes on it."""
    match = web.create_match("six_nimmt", 2, "--setting", "rounds=3", "--seed", "2",
                             "--deadline-ms", "30000")
    seats = HttpSeats(web.http, match.tokens)
    page.goto(f"{web.http}/#/match/{match.match_id}")
    page.wait_for_selector("[data-testid=live]")
    while not page.locator("[data-testid=live-ended]").count():  # play it to its end
        for seat, token in enumerate(seats.tokens):
            for decision in seats.decisions(seat, wait_ms=50):
                seats.client.post("/api/play/answer", json={
                    "decision_id": decision["decision_id"], "action": decision["legal"][0]},
                    headers={"Authorization": f"Bearer {token}"})
    seats.client.close()
    log = page.locator("[data-testid=live-log]")
    assert log.evaluate("l => l.scrollHeight > l.clientHeight")  # it scrolls
    assert log.get_attribute("tabindex") == "0"
    log.focus()
    assert page.evaluate("document.activeElement.dataset.testid") == "live-log"
    page.evaluate(axe)  # by DevTools: a <script> tag would break the page's CSP
    found = page.evaluate("""async () => (await axe.run(document, {runOnly:
        ['scrollable-region-focusable']})).violations.map(v => v.nodes.length)""")
    assert found == []


SPILLED = """([cards, marks]) => {
    const found = [...document.querySelectorAll(cards)];
    const spilled = found.flatMap((card) => {
        const box = card.getBoundingClientRect();
        const left = box.left + card.clientLeft, top = box.top + card.clientTop;
        const right = left + card.clientWidth, bottom = top + card.clientHeight;
        const range = document.createRange();
        range.selectNodeContents(card.querySelector(marks));
        return [...range.getClientRects()].some((r) => r.left < left - 0.01 ||
            r.right > right + 0.01 || r.top < top - 0.01 || r.bottom > bottom + 0.01)
            ? [Number(card.dataset.card)] : [];
    });
    return {cards: found.map((c) => [Number(c.dataset.card),
                                     c.querySelector(marks).textContent.length]),
            spilled};
}"""
"""The cards of ``cards`` whose bullhead marks (the text of ``marks`` in each) reach outside
the card's inside (its box within its border), and each card's number and count of marks."""

EVERY_CARD = list(range(1, 105))


def every_card_fits(shown: Any, cards: str, marks: str) -> None:
    """Each card of 6 nimmt! is on the page once per place it is shown, with its bullheads
    (55 has seven) all inside it, at 390 and 1280 px."""
    for width in (390, 1280):
        shown.set_viewport_size({"width": width, "height": 900})
        shown.wait_for_function(f"() => window.innerWidth === {width}")
        found = shown.evaluate(SPILLED, [cards, marks])
        numbers = sorted({card for card, _ in found["cards"]})
        assert numbers == EVERY_CARD, numbers
        assert dict(found["cards"])[55] == 7
        assert found["spilled"] == [], (width, found["spilled"])


def test_every_card_holds_its_bullheads(web: ServerProcess, page: Any) -> None:  # noqa: F811
    """Every card of 6 nimmt!, 1 to 104, keeps its bullhead marks within its own box at 390
    and 1280 px: on the web page in the rows and in a table's cell (the replay's and live
    view's places for cards), and on the big screen in a row and in a seat's played slot."""
    page.goto(f"{web.http}/?refresh=60000#/")
    page.wait_for_selector("[data-testid=leaderboard-rows] tr")
    page.evaluate("""(cards) => {
        const rows = [];
        for (let i = 0; i < cards.length; i += 5) rows.push(cards.slice(i, i + 5));
        const cols = [["Seat"], ["Took"]];
        const six = VIEWS.six_nimmt;  // the game's own view (referee/six_nimmt/view.js)
        document.getElementById("view").prepend(six.rowsView(rows, null, new Set([55])),
          table("every card", cols, [tr({}, cols, ["all", cardList(cards, six.nimmtCard)])]));
    }""", EVERY_CARD)
    every_card_fits(page, ".card", "small")

    match = played(web, "six_nimmt", ["house:greedy", "house:random"], "--setting",
                   "rounds=1", "--seed", "4")
    page.goto(f"{web.http}/tv?pace=40")
    page.wait_for_function(f"() => document.querySelector('main#tv').dataset.match === "
                           f"'{match.match_id}'")
    page.wait_for_selector(".played .slot .tvcard")
    page.keyboard.press(" ")  # pause: the broadcast draws nothing more
    page.wait_for_function("""() => document.querySelector('main#tv').dataset.paused === 'true'
        && !document.querySelector('.tvcard.enter, .tvcard.leave')""")
    page.evaluate("""(cards) => {
        for (const box of [document.querySelector('.rows .row .cards'),
                           document.querySelector('.played .slot')]) {
            box.replaceChildren(...cards.map((card) => bigCard(card, 'six_nimmt')));
        }
    }""", EVERY_CARD)
    every_card_fits(page, ".tvcard", ".heads")


EIGHT = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
         "--table-size", "six_nimmt=4-4", "--house-rest", "0.2",
         "--house-bots", "greedy,greedy,greedy,greedy,random,random,random,random"]
"""Eight house bots playing short rated 6 nimmt! matches, two tables at a time."""

BOARD_LINES = """() => [...document.querySelectorAll('[data-testid=leaderboard-rows] tr[data-bot]')]
    .map((row) => {
        const line = parseFloat(getComputedStyle(row).lineHeight);
        const tops = [];
        const texts = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
        while (texts.nextNode()) {
            if (!texts.currentNode.textContent.trim()) continue;
            const range = document.createRange();
            range.selectNodeContents(texts.currentNode);
            for (const r of range.getClientRects()) {
                if (!tops.some((t) => Math.abs(t - r.top) < line / 2)) tops.push(r.top);
            }
        }
        const box = row.getBoundingClientRect();
        return {bot: row.dataset.bot, lines: tops.length, top: box.top, bottom: box.bottom,
                cells: [...row.children].filter((td) => td.getClientRects().length &&
                                                        td.textContent.trim()).length};
    })"""
"""Each leaderboard row: its bot, how many lines of text it takes, where it is, and how many
of its cells show something."""


def test_the_leaderboard_takes_two_lines_a_bot_on_a_phone(
        tmp_path: Path, page: Any) -> None:  # noqa: F811
    """On a 390 x 844 phone a leaderboard row takes at most two lines, with all six of its
    facts shown (place, bot, version, games, rating, skill interval), so eight bots fit on
    one screen; at 1280 px it stays a table, one line a bot, whose columns say what
    ``bullring leaderboard`` says (rating, skill interval ``43.15 ± 11.70``)."""
    server = LadderServer(db_url(tmp_path), EIGHT).start()
    try:
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(server.http + "/?refresh=300")
        page.wait_for_function(f"() => ({BOARD_LINES})().length === 8", timeout=120_000)
        rows = page.evaluate(BOARD_LINES)
        assert all(r["lines"] <= 2 and r["cells"] == 6 for r in rows), rows
        assert rows[-1]["bottom"] - rows[0]["top"] <= 844, rows
        page.evaluate("document.querySelector('[data-testid=leaderboard-rows] tr')"
                      ".scrollIntoView()")
        shown = page.evaluate(f"() => ({BOARD_LINES})().filter((r) => r.top >= -1 && "
                              f"r.bottom <= window.innerHeight + 1).length")
        assert shown >= 8
        page.set_viewport_size({"width": 1280, "height": 900})
        page.wait_for_function("() => window.innerWidth === 1280")
        assert all(r["lines"] == 1 for r in page.evaluate(BOARD_LINES))
        assert page.evaluate(HEADERS, "[data-testid=leaderboard-rows]") == ["#", "Bot",
                                                                            *LEADERBOARD_WORDS]
        intervals = page.evaluate("() => [...document.querySelectorAll("
                                  "'[data-testid=leaderboard-rows] tr[data-bot]')]"
                                  ".map((r) => r.lastChild.textContent)")
        assert all(re.fullmatch(r"-?\d+\.\d\d ± \d+\.\d\d", i) for i in intervals), intervals
    finally:
        page.goto("about:blank")  # stop the page's refreshes before its server goes
        server.stop()
