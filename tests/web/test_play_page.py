"""A person plays a seat in a real headless Chromium against a real server's house bots: a
full 6 nimmt! match by clicks, with a row choice the deal forces; a clock that runs out and
the referee's default action, shown on the page and in the match log; and the web page's
"play against the bots" button, then a No Thanks! match by keys; two seats of one house bot
under two names; the result alone once the match is over. The seat token never shows:
not in the address bar after the page opens, not in any public answer, not in the server's
log. Each play page works at 390 px wide without scrolling sideways, passes axe-core with no
serious or critical violation and logs no console error; screenshots at 1280 and 390 px go
to $BULLRING_ARTIFACTS/screenshots."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bullring.referee import replay as replays
from bullring.referee.registry import get_game
from tests.serving import CLI, ServerProcess, db_url
from tests.web.test_web_pages import axe, browser, check_page, page, shots  # noqa: F401

pytestmark = pytest.mark.timeout(300)

HOUSE = ["--house", "1=greedy", "--house", "2=greedy", "--house", "3=random"]
"""Three house bots in seats 1 to 3; the person plays seat 0."""

STATE = "document.body.dataset.state"
NEXT = f"""prev => {STATE} === 'ended' ||
    ({STATE} === 'deciding' && document.body.dataset.decision !== prev)"""
"""True once the match is over or a decision other than ``prev`` waits for the person."""


@pytest.fixture
def web(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server on a fresh database (a test may stop it first, to read its log)."""
    proc = ServerProcess(db_url(tmp_path)).start()
    yield proc
    if proc.proc is not None and proc.proc.returncode is None:
        proc.stop()


def forced_row_choice_seed() -> tuple[int, int]:
    """A seed (and seat 0's lowest card) of a one-round, four-seat 6 nimmt! deal where seat
    0's lowest card is below every row's end and below every other seat's cards: played in
    the first trick, it is the trick's lowest card whatever the bots play, so seat 0 must
    choose a row (rule 4)."""
    game = get_game("six_nimmt")
    for seed in range(10_000):
        state: Any = game.new_state(4, {"rounds": "1"}, seed)
        low = min(state.hands[0])
        if low < min(row[-1] for row in state.rows) and \
                all(low < min(hand) for hand in state.hands[1:]):
            return seed, low
    raise AssertionError("no deal forces a row choice")


def human_match(web: ServerProcess, *args: str) -> tuple[str, str, str]:
    """``bullring match create --human 0`` against three house bots: the match id, the
    person's seat token and the link the command prints for the person."""
    out = subprocess.run([*CLI, "match", "create", "--game", "six_nimmt", "--seats", "4",
                          "--db", web.db, "--human", "0", "--web", web.http, *HOUSE, *args],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    match_id = out[0].split()[1]
    seat0 = out[1].split()
    assert seat0[:3] == ["seat", "0", "token"] and seat0[4] == "play:", out
    return match_id, seat0[3], seat0[5]


def cards_on_page(shown: Any) -> set[int]:
    """Every card the page shows anywhere."""
    return set(shown.locator("[data-card]").evaluate_all(
        "cs => cs.map(c => Number(c.dataset.card))"))


def no_token_in_public_answers(web: ServerProcess, match_id: str, token: str) -> None:
    """The public API never holds the seat token."""
    for path in ("/api/matches", f"/api/matches/{match_id}", f"/api/matches/{match_id}/turn",
                 f"/api/matches/{match_id}/replay", "/", f"/play/{match_id}"):
        assert token not in httpx.get(web.http + path).text, path


def public_feed(web: ServerProcess, match_id: str) -> str:
    """The live feed of a finished match, read to its end."""
    lines = []
    with httpx.stream("GET", f"{web.http}/api/matches/{match_id}/feed", timeout=30) as feed:
        for line in feed.iter_lines():
            lines.append(line)
            if line.startswith("data:") and "match_ended" in line:
                break
    return "\n".join(lines)


def test_a_person_plays_a_full_six_nimmt_match_by_clicks(
        web: ServerProcess, page: Any, browser: Any, axe: str,  # noqa: F811
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """The link from ``match create --human 0`` opens the seat: the page shows the seat's
    own hand and the rows, nothing else; the token leaves the address bar. The person plays
    the lowest card, must then choose a row (the deal forces it) and does, plays the next
    trick with the keyboard (→, Enter) and clicks a card each trick to the end. A
    spectator's page meanwhile shows none of the person's cards and no token. The match is
    finished, unrated (the leaderboard stays empty), none of the person's answers was a
    default, the replay verifies, and no public answer nor the server's log holds the
    token."""
    seed, low = forced_row_choice_seed()
    match_id, token, link = human_match(web, "--seed", str(seed), "--setting", "rounds=1")
    assert link == f"{web.http}/play/{match_id}#{token}"
    settings = httpx.get(f"{web.http}/api/matches/{match_id}").json()
    assert settings["rated"] is False
    dealt: Any = get_game("six_nimmt").new_state(4, {"rounds": "1"}, seed)
    folder = shots(request, tmp_path)

    page.goto(link)
    page.wait_for_selector("body[data-state=deciding]")
    assert token not in page.url and page.url.endswith(f"/play/{match_id}")
    hand = page.locator("[data-testid=hand] button").evaluate_all(
        "bs => bs.map(b => Number(b.dataset.play))")
    assert hand == list(dealt.hands[0])
    rows = {card for row in dealt.rows for card in row}
    assert cards_on_page(page) == rows | set(hand)  # its own hand and the rows, no more
    clock = float(page.inner_text("[data-testid=clock]").split()[0])
    assert 20 < clock <= 30  # 30 s for people
    page.wait_for_function("s => parseFloat(document.querySelector('[data-testid=clock]')"
                           ".textContent) < s", arg=clock)  # it counts down
    assert httpx.get(f"{web.http}/api/matches/{match_id}/replay").status_code == 409
    no_token_in_public_answers(web, match_id, token)
    spectator = browser.new_page()
    try:
        spectator.goto(f"{web.http}/#/match/{match_id}")
        spectator.wait_for_selector("[data-testid=live] [data-testid=rows] [data-card]")
        assert cards_on_page(spectator) == rows  # the rows only: no card of any hand
        assert token not in spectator.content()
    finally:
        spectator.close()
    check_page(page, axe, folder, "play-card")

    first = page.evaluate("document.body.dataset.decision")
    page.click(f"[data-testid=hand] button[data-play='{low}']")
    page.wait_for_function(NEXT, arg=first)
    assert page.locator("[data-testid=row-button]:not([disabled])").count() == 4
    assert "choose the row" in page.inner_text("[data-testid=prompt]")
    check_page(page, axe, folder, "play-row-choice")
    chosen = page.locator("[data-testid=row-button]").nth(2)
    taken = chosen.locator("[data-card]").evaluate_all("cs => cs.map(c => Number(c.dataset.card))")
    decision = page.evaluate("document.body.dataset.decision")
    chosen.click()

    by_keys = None  # the second trick's card, played with → and Enter
    while page.evaluate(STATE) != "ended":
        page.wait_for_function(NEXT, arg=decision)
        if page.evaluate(STATE) == "ended":
            break
        decision = page.evaluate("document.body.dataset.decision")
        rows_asked = page.locator("[data-testid=row-button]:not([disabled])")
        if by_keys is None and not rows_asked.count():
            page.wait_for_function("() => document.activeElement?.dataset.play !== undefined")
            page.keyboard.press("ArrowRight")
            by_keys = int(page.evaluate("document.activeElement.dataset.play"))
            page.keyboard.press("Enter")
            continue
        target = rows_asked if rows_asked.count() else \
            page.locator("[data-testid=hand] button:not([disabled])")
        target.first.click()
    page.wait_for_selector("[data-testid=result]")
    assert page.locator("[data-testid=defaulted]").count() == 0
    assert page.get_attribute("[data-testid=replay-link]", "href") == f"/#/match/{match_id}"
    check_page(page, axe, folder, "play-ended")

    info = httpx.get(f"{web.http}/api/matches/{match_id}").json()
    assert info["status"] == "finished" and info["rated"] is False
    assert httpx.get(f"{web.http}/api/leaderboard?game=six_nimmt").json()["entries"] == []
    text = httpx.get(f"{web.http}/api/matches/{match_id}/replay").text
    replay = replays.loads(text)[0]
    replays.verify(replay)
    trick = replay["rounds"][0]["tricks"][0]
    assert trick["plays"][0] == low and trick["row_choice"] == {"seat": 0, "row": 2}
    assert trick["taken"][0] == taken
    assert by_keys == sorted(set(hand) - {low})[1]  # → went from the first card to the next
    assert replay["rounds"][0]["tricks"][1]["plays"][0] == by_keys
    mine = [e for e in replay["events"] if e["type"] == "answer" and e["seat"] == 0]
    assert len(mine) >= 11 and not any(e["default"] for e in mine)
    no_token_in_public_answers(web, match_id, token)
    feed = public_feed(web, match_id)
    assert "match_ended" in feed and token not in feed
    assert token not in web.stop()


def test_the_clock_runs_out_and_the_default_is_applied(
        web: ServerProcess, page: Any, axe: str, request: pytest.FixtureRequest,  # noqa: F811
        tmp_path: Path) -> None:
    """A person who does not answer within a 2 s deadline and a 1 s time bank: the clock
    shows the deadline, then counts the bank down, then the page says the referee played a
    card for them, and the match log holds that very card as the seat's default answer
    after a timeout."""
    match_id, _, link = human_match(web, "--deadline-ms", "2000", "--setting", "rounds=1",
                                    "--setting", "time_bank_ms=1000")
    page.goto(link)
    page.wait_for_selector("body[data-state=deciding]")
    hand = set(page.locator("[data-testid=hand] button").evaluate_all(
        "bs => bs.map(b => Number(b.dataset.play))"))
    assert float(page.inner_text("[data-testid=clock]").split()[0]) <= 2
    assert "of 2 s for each decision, and a time bank of 1 s for the match" in \
        page.inner_text("[data-testid=status]")
    page.wait_for_function("() => document.querySelector('[data-testid=clock]')"
                           ".textContent.includes('time bank')")
    notice = page.wait_for_selector("[data-testid=defaulted]")
    said = notice.inner_text()
    assert said.startswith("Time ran out: the referee played ")
    played = int(said.split("played ")[1].split()[0])
    assert played in hand
    check_page(page, axe, shots(request, tmp_path), "play-default")

    page.wait_for_selector("[data-testid=result]", timeout=60_000)
    replay = replays.loads(httpx.get(f"{web.http}/api/matches/{match_id}/replay").text)[0]
    replays.verify(replay)
    first = next(e for e in replay["events"] if e["type"] == "answer" and e["seat"] == 0)
    assert first["default"] is True and first["why"] == "timeout"
    assert first["action"] == played or first["action"] == {"card": played}
    assert replay["rounds"][0]["tricks"][0]["plays"][0] == played
    assert any(e["type"] == "timeout" and e["seat"] == 0 for e in replay["events"])


def test_the_play_button_seats_a_person_at_no_thanks_played_by_keys(
        web: ServerProcess, page: Any, axe: str, request: pytest.FixtureRequest,  # noqa: F811
        tmp_path: Path) -> None:
    """The home page's "play against the bots" button for No Thanks! opens a play page for
    a new unrated match against three house bots, its seat named "human"; the person plays
    it to the end with the keyboard alone (P passes, T takes) and is never defaulted."""
    page.goto(web.http + "/")
    page.click("[data-testid=play-button][data-game=no_thanks]")
    page.wait_for_url("**/play/*")
    match_id = page.url.rsplit("/", 1)[1]
    assert "#" not in page.url
    info = httpx.get(f"{web.http}/api/matches/{match_id}").json()
    assert info["seats"] == ["human", "threshold", "random", "never_take"]
    assert info["rated"] is False
    decision = ""
    presses = 0
    while True:
        page.wait_for_function(NEXT, arg=decision)
        if page.evaluate(STATE) == "ended":
            break
        decision = page.evaluate("document.body.dataset.decision")
        if presses == 0:
            assert page.locator("[data-word=pass]").is_enabled()
            check_page(page, axe, shots(request, tmp_path), "play-no-thanks")
        can_pass = page.locator("[data-word=pass]").is_enabled()
        page.keyboard.press("p" if can_pass and presses % 3 else "t")
        presses += 1
    assert presses >= 2
    assert page.locator("[data-testid=defaulted]").count() == 0
    replay = replays.loads(httpx.get(f"{web.http}/api/matches/{match_id}/replay").text)[0]
    replays.verify(replay)
    mine = [e for e in replay["events"] if e["type"] == "answer" and e["seat"] == 0]
    assert len(mine) == presses and not any(e["default"] for e in mine)


def click_to_the_end(shown: Any) -> list[str]:
    """Answer each decision with its first choice (a row, else a card) until the match is
    over; return what the page said of each answer once the next decision came."""
    said: list[str] = []
    decision = ""
    while True:
        shown.wait_for_function(NEXT, arg=decision)
        if shown.evaluate(STATE) == "ended":
            return said
        notice = shown.locator("[data-testid=notice]")
        if notice.count():
            said.append(notice.inner_text())
        decision = shown.evaluate("document.body.dataset.decision")
        rows = shown.locator("[data-testid=row-button]:not([disabled])")
        (rows if rows.count() else
         shown.locator("[data-testid=hand] button:not([disabled])")).first.click()


SEAT_NAMES = """() => [...document.querySelectorAll('[data-testid=seats] tbody tr')]
    .map((r) => r.children[0].textContent)"""
"""The names in the first column of the page's seats table."""


def test_two_seats_of_one_house_bot_have_two_names(
        web: ServerProcess, page: Any, browser: Any) -> None:  # noqa: F811
    """The play button's 6 nimmt! match seats two greedy house bots: they are ``greedy``
    and ``greedy-2`` in the API, on the play page, in the live view, in the result and in
    the replay, never two seats of one name."""
    page.goto(web.http + "/")
    page.click("[data-testid=play-button][data-game=six_nimmt]")
    page.wait_for_url("**/play/*")
    match_id = page.url.rsplit("/", 1)[1]
    names = ["human", "greedy", "greedy-2", "random"]
    assert httpx.get(f"{web.http}/api/matches/{match_id}").json()["seats"] == names
    page.wait_for_selector("body[data-state=deciding]")
    assert page.evaluate(SEAT_NAMES) == ["you", *names[1:]]
    spectator = browser.new_page()
    try:
        spectator.goto(f"{web.http}/#/match/{match_id}")
        spectator.wait_for_selector("[data-testid=live] [data-testid=seats] tbody tr")
        assert spectator.evaluate(SEAT_NAMES) == ["human (person)", *names[1:]]
        assert "greedy, greedy-2, random" in spectator.inner_text("main")
    finally:
        spectator.close()
    click_to_the_end(page)
    result = page.inner_text("[data-testid=result]")
    assert all(f"{name} " in result for name in ["you", *names[1:]]), result
    replay = replays.loads(httpx.get(f"{web.http}/api/matches/{match_id}/replay").text)[0]
    assert [seat["name"] for seat in replay["seats"]] == names
    page.goto(f"{web.http}/#/match/{match_id}")
    page.wait_for_selector("[data-testid=replay] [data-testid=seats] tbody tr")
    assert page.evaluate(SEAT_NAMES) == ["human (person)", *names[1:]]


def test_the_result_replaces_the_prompt_when_the_match_ends(
        web: ServerProcess, page: Any) -> None:  # noqa: F811
    """While the match runs, the page confirms each answer ("You played 12.", "You chose
    row 3."); once it has ended, the page shows the result in their place: no prompt, no
    clock and no word on the last answer is left standing."""
    seed, _ = forced_row_choice_seed()
    _, _, link = human_match(web, "--seed", str(seed), "--setting", "rounds=1")
    page.goto(link)
    said = click_to_the_end(page)
    assert said and all(s.startswith("You ") for s in said), said
    assert any(s.startswith("You chose row ") for s in said), said
    page.wait_for_selector("[data-testid=result]")
    for gone in ("prompt", "notice", "clock", "status"):
        assert page.locator(f"[data-testid={gone}]").count() == 0, gone
    text = page.inner_text("main")
    assert "You played" not in text and "You chose" not in text and "Waiting" not in text
    assert "Match finished: you placed " in page.inner_text("[data-testid=result]")
