"""The replay viewer and the live view show the time bank and a person's seat, in a real
headless Chromium against a real server: a match made over gRPC CreateMatch with a person's
seat (played here by a bot that answers 0.5 s into a 300 ms deadline, so a 5 s time bank pays
for each answer) shows, live, what is left of the waiting seat's bank; its replay marks the
seat as a person's, says at each step what each seat has left of its bank and what a late
answer spent, and sums it up per seat. The page passes axe-core with no serious or critical
violation and works at 390 px wide."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee import replay as replays
from tests.serving import ServerProcess, finish
from tests.web.test_play_page import web  # noqa: F401
from tests.web.test_web_pages import axe, browser, check_page, page, shots  # noqa: F401

pytestmark = pytest.mark.timeout(300)

BANK_MS = 5000
"""The 6 nimmt! match's time bank per seat."""
HOUSE = {"six_nimmt": "greedy", "no_thanks": "threshold"}
"""The house bot in seat 1, by game."""


def person_match(web: ServerProcess, game: str = "six_nimmt",  # noqa: F811
                 settings: dict[str, str] | None = None) -> tuple[str, str]:
    """A two-seat match made over gRPC: a person in seat 0 against a house bot (HOUSE); its
    id and the person's token. Unless ``settings`` say otherwise, a one-round 6 nimmt! match with
    300 ms per decision and a 5 s time bank."""
    admin = web.admin_token()
    with grpc.insecure_channel(web.address) as channel:
        reply = wire.admin_stub(channel)["CreateMatch"](pb.CreateMatchRequest(
            game=game, seats=2, seed=7, house={1: HOUSE[game]}, humans=[0],
            settings=settings or {"rounds": "1", "deadline_ms": "300",
                                  "time_bank_ms": str(BANK_MS)}),
            metadata=[("authorization", f"Bearer {admin}")])
    assert list(reply.seat_names) == ["human", HOUSE[game]]
    return reply.match_id, reply.tokens[0]


def seconds(ms: float) -> str:
    """``ms`` as the page writes it: seconds with one decimal."""
    return f"{ms / 1000:.1f} s"


def test_the_viewer_shows_the_time_bank_and_the_person(
        web: ServerProcess, page: Any, axe: str,  # noqa: F811
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Live, the waiting person's clock shows its bank; once the match is over, the replay's
    first trick shows what seat 0's late card spent of its bank and what is left after it, the
    summary counts its late answers and the bank left at the end (the house bot's untouched),
    and the seat is shown as a person's, the house bot's not."""
    folder = shots(request, tmp_path)
    match_id, token = person_match(web)
    page.goto(f"{web.http}/#/match/{match_id}")
    page.wait_for_selector("[data-testid=waiting]")
    bot = web.bot(token, "tests.bots.late:Late")
    try:
        clock = page.wait_for_selector("[data-testid=clock-bank]:text-matches('time bank: ')",
                                       timeout=60_000)
        assert clock is not None
        assert page.locator("[data-testid=clocks] li[data-seat='0']").count() == 1
        page.wait_for_selector("[data-testid=live-ended]", timeout=120_000)
    finally:
        results = finish([bot])
    assert results[0][0] == 0, results[0][1][-2000:]

    replay = httpx.get(f"{web.http}/api/matches/{match_id}/replay").json()
    replays.verify(replay)
    assert replay["seats"] == [{"name": "human", "human": True}, {"name": "greedy"}]
    cards = [e for e in replay["events"] if e["type"] == "answer" and e["seat"] == 0]
    late = [e for e in cards if e.get("bank_spent_ms")]
    assert len(late) == len(cards) and not any(e["default"] for e in cards)
    first = cards[0]
    assert first["kind"] == "PLAY_CARD" and 0 < first["bank_left_ms"] < BANK_MS
    second = next(i for i, e in enumerate(cards) if i and e["kind"] == "PLAY_CARD")
    after_trick = cards[second - 1]["bank_left_ms"]  # its card, and a row it chose, if any

    page.goto(f"{web.http}/#/match/{match_id}/step/2")  # the first trick
    page.wait_for_selector("[data-testid=replay]")
    assert page.locator("[data-testid=where]").inner_text().endswith("trick 1 of 10")
    assert "Time bank: 5.0 s per seat" in page.locator("[data-testid=time-bank]").inner_text()
    seat0 = page.locator("[data-testid=seats] tr[data-seat='0']")
    assert seat0.locator("[data-testid=bank-spent]").inner_text() == \
        f" · +{seconds(first['bank_spent_ms'])} from the time bank"
    assert seat0.locator("[data-testid=bank-left]").inner_text() == seconds(after_trick)
    assert seat0.locator("[data-testid=human-seat]").inner_text() == "human (person)"
    seat1 = page.locator("[data-testid=seats] tr[data-seat='1']")
    assert seat1.locator("[data-testid=bank-left]").inner_text() == seconds(BANK_MS)
    assert seat1.locator("[data-testid=human-seat]").count() == 0

    page.locator("details.answers summary").click()
    summary = page.locator("[data-testid=answer-summary]")
    spent = sum(e["bank_spent_ms"] for e in late)
    assert summary.locator("tr[data-seat='0'] [data-testid=bank-late]").inner_text() == \
        f"{len(late)} ({seconds(spent)})"
    assert summary.locator("tr[data-seat='0'] [data-testid=bank-end]").inner_text() == \
        seconds(cards[-1]["bank_left_ms"])
    assert summary.locator("tr[data-seat='1'] [data-testid=bank-end]").inner_text() == \
        seconds(BANK_MS)
    check_page(page, axe, folder, "replay-time-bank")


def test_the_no_thanks_viewer_shows_a_timeout_emptying_the_bank(
        web: ServerProcess, page: Any, axe: str,  # noqa: F811
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """No Thanks!, 1 s per decision and a 1 s bank: the person's seat answers its first
    decision 1.5 s in (the bank pays about 0.5 s) and misses its second (the timeout spends
    the rest, and the referee plays its default). Stepping through the replay, seat 0's bank
    drops first at its late answer, by what the log says it spent, then to 0.0 s at the
    default, which says what the timeout took from the bank."""
    folder = shots(request, tmp_path)
    match_id, token = person_match(web, "no_thanks", {"two_seats": "true", "deadline_ms": "1000",
                                                      "time_bank_ms": "1000"})
    code, out = finish([web.bot(token, "tests.bots.late:SpendsItsBank")])[0]
    assert code == 0, out[-2000:]
    replay = httpx.get(f"{web.http}/api/matches/{match_id}/replay").json()
    replays.verify(replay)
    mine = [e for e in replay["events"] if e.get("seat") == 0 and "bank_left_ms" in e]
    late, timeout = mine[0], mine[1]
    assert late["type"] == "answer" and 0 < late["bank_spent_ms"] < 1000
    assert timeout["type"] == "timeout" and timeout["bank_left_ms"] == 0
    assert timeout["bank_spent_ms"] == late["bank_left_ms"]

    page.goto(f"{web.http}/#/match/{match_id}")
    page.wait_for_selector("[data-testid=replay]")
    seat0 = page.locator("[data-testid=seats] tr[data-seat='0']")
    shown: list[tuple[str, str]] = []  # (bank left, answer) at each step where it changes
    while True:
        left = seat0.locator("[data-testid=bank-left]").inner_text()
        if not shown or left != shown[-1][0]:
            shown.append((left, seat0.locator("td[data-label=Answer]").inner_text()))
        if page.locator("[data-testid=next]").is_disabled():
            break
        label = page.locator("[data-testid=step-label]").inner_text()
        page.locator("[data-testid=next]").click()
        page.wait_for_function(f"() => document.querySelector('[data-testid=step-label]')"
                               f".textContent !== {label!r}")
    assert [left for left, _ in shown] == ["1.0 s", seconds(late["bank_left_ms"]), "0.0 s"]
    assert shown[1][1].endswith(f" · +{seconds(late['bank_spent_ms'])} from the time bank")
    assert shown[2][1] == (f"⚠ default (timeout) · +{seconds(timeout['bank_spent_ms'])} "
                           "from the time bank")
    check_page(page, axe, folder, "replay-no-thanks-time-bank")
