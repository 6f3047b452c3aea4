"""The live tournament pages in a real headless Chromium: a tournament among four remote
bots (``bullring bot --ladder`` processes) on a real server, the page updating by itself
while it plays and showing the standings after."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.ladder_helpers import LadderBot, LadderServer
from tests.serving import db_url
from tests.web.test_web_pages import axe, browser, check_page, page, shots  # noqa: F401

pytestmark = pytest.mark.timeout(300)

FAST = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1"]
NAMES = ("ann", "bob", "cy", "dee")


def test_the_tournament_page_updates_live(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer], page: Any,  # noqa: F811
        axe: str, request: pytest.FixtureRequest) -> None:  # noqa: F811
    """Three bots wait on the ladder, the fourth is not there yet: the tournament waits
    for it and the page says none is played. Once dee connects the games are played and the
    open page follows (played count, games, standings with intervals) to the end."""
    server = LadderServer(db_url(tmp_path), FAST).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in NAMES}

    def connect(name: str) -> LadderBot:
        bot = LadderBot.start(name, server.address, tokens[name], "six_nimmt", "house:greedy")
        stop_all.append(bot)
        bot.err.wait(lambda lines: any("waiting on the six_nimmt ladder" in ln
                                       for ln in lines), 30, "the bot to wait on the ladder")
        return bot

    for name in NAMES[:3]:
        connect(name)
    made = httpx.post(f"{server.http}/api/admin/tournaments", timeout=10,
                      headers={"authorization": f"Bearer {server.admin_token()}"},
                      json={"game": "six_nimmt", "format": "duplicate", "bots": list(NAMES),
                            "games": 8, "seats": 4, "wait_s": 600})
    assert made.status_code == 201, made.text
    tid = made.json()["tournament_id"]
    folder = shots(request, tmp_path)

    page.goto(f"{server.http}/?refresh=300#/tournaments")
    page.wait_for_selector(f"[data-tournament='{tid}']")
    assert "0 / 8" in page.inner_text(f"[data-tournament='{tid}']")
    page.click(f"[data-tournament='{tid}'] a[href='#/tournament/{tid}']")
    page.wait_for_selector("[data-testid=tournament-played]")
    assert page.inner_text("[data-testid=tournament-played]") == "0 of 8 played"
    assert page.locator("[data-testid=tournament-games] tr[data-status=pending]").count() == 8
    check_page(page, axe, folder, "tournament-waiting")

    connect("dee")
    page.wait_for_function("() => document.querySelector('[data-testid=tournament-games] "
                           "tr[data-status=finished]') !== null", timeout=120_000)
    page.wait_for_function("() => document.querySelector('[data-testid=tournament-facts] "
                           "[data-testid=status]').textContent === 'finished'", timeout=240_000)
    assert page.inner_text("[data-testid=tournament-played]") == "8 of 8 played"
    rows = page.locator("[data-testid=standings] tr[data-bot]")
    assert sorted(rows.nth(i).get_attribute("data-bot") for i in range(4)) == sorted(NAMES)
    assert "±" in rows.nth(0).inner_text()
    links = page.locator("[data-testid=tournament-games] a[href^='#/match/']")
    assert links.count() == 8
    check_page(page, axe, folder, "tournament-finished")

    # eve is registered but never connects, so none of this tournament's games can start
    # before it is cancelled: every one of them shows as cancelled.
    server.add_bot("eve")
    admin = {"authorization": f"Bearer {server.admin_token()}"}
    again = httpx.post(f"{server.http}/api/admin/tournaments", timeout=10, headers=admin,
                       json={"game": "six_nimmt", "format": "round-robin",
                             "bots": [*NAMES[:3], "eve"], "games": 4, "seats": 4, "wait_s": 600})
    assert again.status_code == 201, again.text
    other = again.json()["tournament_id"]
    cancelled = httpx.post(f"{server.http}/api/admin/tournaments/{other}/cancel", timeout=10,
                           headers=admin)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    page.goto(f"{server.http}/?refresh=300#/tournament/{other}")
    page.wait_for_function("() => document.querySelector('[data-testid=tournament-facts] "
                           "[data-testid=status]')?.textContent === 'cancelled'",
                           timeout=30_000)
    assert page.locator("[data-testid=tournament-games] tr[data-status=cancelled]").count() == 4
    check_page(page, axe, folder, "tournament-cancelled")
