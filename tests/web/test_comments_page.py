"""The bots' comments on the pages, in a real headless Chromium against a real server: the
replay viewer shows each comment beside its move (the card played, the row chosen), and /tv
shows an ended match's comments beside the moves as it replays them; both as text, never as
markup (a comment is the bot's own, untrusted)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.bots.commenting import ROW_COMMENT, play_comment
from tests.serving import ServerProcess
from tests.web.test_web import browser, page, played, shots, web  # noqa: F401

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def commented(web: ServerProcess) -> Iterator[tuple[ServerProcess, dict[str, Any]]]:  # noqa: F811
    """A one-round 6 nimmt! match the commenting bot (seat 0) played against a house bot,
    and its replay."""
    match = played(web, "six_nimmt", ["tests.bots.commenting:Commenting", "house:greedy"],
                   "--seed", "3", "--setting", "rounds=1")
    yield web, json.loads(web.replay(match.match_id))


def test_the_replay_viewer_shows_each_comment_beside_its_move(
        commented: tuple[ServerProcess, dict[str, Any]], page: Any,  # noqa: F811
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """At each trick, seat 0's row shows the comment it gave with the card it played, as
    text; the house bot's row shows none; a row choice shows its comment on its placement."""
    server, replay = commented
    folder = shots(request, tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    tricks = replay["rounds"][0]["tricks"]
    chose = next((i for i, t in enumerate(tricks) if t["row_choice"]
                  and t["row_choice"]["seat"] == 0), None)
    for number in sorted({0, 1, 9} | ({chose} if chose is not None else set())):
        page.goto(f"{server.http}/#/match/{replay['match_id']}/step/{number + 2}")
        page.wait_for_selector("[data-testid=replay]")
        assert page.inner_text("[data-testid=where]").endswith(f"trick {number + 1} of 10")
        seat0 = page.locator("[data-testid=seats] tr[data-seat='0']")
        card = tricks[number]["plays"][0]
        assert seat0.locator("[data-testid=comment]").inner_text() == play_comment(card)
        assert page.locator("[data-testid=seats] tr[data-seat='1'] "
                            "[data-testid=comment]").count() == 0
        if number == chose:
            line = page.locator("[data-testid=placements] li[data-why=lowest]")
            assert line.locator("[data-testid=comment]").inner_text() == ROW_COMMENT
    assert page.locator("[data-testid=replay] img, [data-testid=replay] b").count() == 0
    page.screenshot(path=str(folder / "comments.png"), full_page=True)


SAID_AT_REVEALS = """
window.__said = [];
document.addEventListener('tv:step', (e) => {
  if (e.detail.type !== 'CardsRevealed') return;
  window.__said.push([0, 1].map((s) => document.querySelector(
    `[data-testid=tv-played] li[data-seat='${s}'] [data-testid=tv-comment]`).textContent));
});
"""
"""Collects, at each trick's reveal on /tv, what each seat's slot says."""


def test_the_big_screen_shows_an_ended_matchs_comments_beside_its_moves(
        commented: tuple[ServerProcess, dict[str, Any]], page: Any) -> None:  # noqa: F811
    """/tv replays the ended match (the latest, nothing else on air): at each trick's reveal,
    seat 0's slot shows the comment on the card it played, as text, and seat 1's none."""
    server, replay = commented
    plays = [t["plays"][0] for t in replay["rounds"][0]["tricks"]]
    page.add_init_script(SAID_AT_REVEALS)
    page.goto(f"{server.http}/tv?pace=40")
    page.wait_for_function(f"() => document.querySelector('main#tv').dataset.match === "
                           f"'{replay['match_id']}'")
    page.wait_for_function("() => document.querySelector('main#tv').dataset.ended === 'true'",
                           timeout=60_000)
    assert page.evaluate("window.__said") == [[play_comment(card), ""] for card in plays]
    said = page.locator("[data-testid=tv-played] li[data-seat='0'] [data-testid=tv-comment]")
    assert said.inner_text() in (play_comment(plays[-1]), ROW_COMMENT)
    assert page.locator("[data-testid=tv-played] li[data-seat='1'] "
                        "[data-testid=tv-comment]").inner_text() == ""
    assert page.locator("[data-testid=tv-stage] img, [data-testid=tv-stage] b").count() == 0
