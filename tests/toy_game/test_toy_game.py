"""A game from a distribution of its own is served end to end, and nothing of Bullring but the
proto names it.

The toy game (this folder: its rules, its conformance hooks, its ``pyproject.toml`` with two
entry points) is installed by pip into a folder of its own, which the server's and the bots'
processes find on their ``PYTHONPATH``; the suite's own process never registers it. Then
``bullring games`` lists it, the engine conformance suite checks it, the server offers it
(its games, its settings' schema, a ladder), the web page draws its replay with the generic
view in a real Chromium, a gRPC seat (the SDK's runner with a bot written for it), an HTTP
seat (long-poll, JSON) and two spectators (gRPC Watch, the HTTP feed) play and watch a match
of it through, and a person plays it in the browser while a spectator's page follows it
live, with the generic view.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.registry import GAMES
from bullring.referee.replay import answer_event, build_replay
from bullring.server.store import Store
from tests.browser import launch_chromium
from tests.compiled import ROOT
from tests.serving import CLI, ServerProcess, db_url
from tests.toy_game.bullring_toy_game.engine import GAME_ID, new_state
from tests.toy_game.install import install, with_installed

pytestmark = pytest.mark.timeout(300)

BOT = f"{Path(__file__).resolve().parent / 'bot.py'}:HighestCard"
"""The gRPC seat's bot, a file of this folder run by ``bullring bot``."""

WATCH = "/bullring.v2.SpectatorService/Watch"
"""SpectatorService.Watch, called with the contract's generated messages."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy game pip-installed into a folder of its own."""
    return install(tmp_path_factory.mktemp("toy") / "site")


@pytest.fixture(scope="module")
def installed(site: Path) -> Iterator[Path]:
    """Every process this module starts (servers, commands, bots) finds the toy game."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", with_installed(site)["PYTHONPATH"])
        yield site


@pytest.fixture
def toy_server(installed: Path, tmp_path: Path) -> Iterator[ServerProcess]:
    """``bullring serve`` with the toy game installed, on a fresh database."""
    proc = ServerProcess(db_url(tmp_path), ["--start-timeout", "30"]).start()
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the module's tests."""
    yield from launch_chromium()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page; a JavaScript error fails the test."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, errors


def test_bullring_finds_the_game_by_its_entry_point_alone(site: Path) -> None:
    """``bullring games`` lists the toy game, from its own distribution, once it is installed
    and not before; this process, which did not install it, has not registered it."""
    listed = subprocess.run([*CLI, "games"], capture_output=True, text=True, check=True,
                            env=with_installed(site)).stdout
    assert f"{GAME_ID}/1  High card  (from bullring-toy-game)" in listed, listed
    assert "seats 2-4, ladder tables 2-4; web view: generic" in listed, listed
    assert "settings: rounds=2, deadline_ms=1000" in listed, listed
    without = subprocess.run([*CLI, "games"], capture_output=True, text=True,
                             check=True).stdout
    assert GAME_ID not in without and "six_nimmt/1" in without, without
    assert f"{GAME_ID}/1" not in GAMES


def test_the_engine_conformance_suite_checks_it(site: Path) -> None:
    """Installed, the toy game is one more game of the engine conformance suite
    (tests/unit/test_conformance.py): its five tests run for it, with the hooks its
    distribution gives, and pass."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
         "-k", GAME_ID, "tests/unit/test_conformance.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=with_installed(site))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    ran = [line for line in done.stdout.splitlines() if " passed" in line]
    assert ran and ran[-1].startswith("5 passed"), done.stdout[-2000:]


def finished_match(server: ServerProcess, seed: int) -> tuple[str, dict[str, Any]]:
    """A toy match played by its rules here (seat 0 its highest card, seat 1 its middle one,
    three rounds) and stored as a finished match of ``server``'s database, as the server
    stores one; its id and replay."""
    state = new_state(2, {"rounds": 3}, seed)
    events: list[dict[str, Any]] = []
    while not state.over:
        answers = {0: max(state.hands[0]), 1: sorted(state.hands[1])[1]}
        events += [answer_event(state, seat, card) for seat, card in answers.items()]
        state.apply(answers)
    store = Store(server.db)
    match_id, _ = store.create_match(GAME_ID, state.settings, seed, ["ann", "bob"], {})
    replay = build_replay(state, match_id=match_id, seat_names=["ann", "bob"], events=events)
    assert store.finish_match(match_id, replay)
    store.engine.dispose()
    return match_id, replay


def test_the_server_offers_the_game_and_the_page_draws_its_replay_generically(
        toy_server: ServerProcess, page: Any) -> None:
    """The server lists the toy game with its seats and no view of its own (a built-in game's
    view is its own package's file), takes its settings by their declared bounds in the API's
    schema, and the web page, in Chromium, draws a finished match of it with the generic
    replay viewer: one step per decision point, each seat's answers there and so far, the
    rounds as recorded and the final totals at the last step."""
    games = {g["id"]: g for g in httpx.get(f"{toy_server.http}/api/games").json()}
    assert games[GAME_ID] == {"id": GAME_ID, "title": "High card", "min_seats": 2,
                              "max_seats": 4, "opponents": [], "view": None}
    assert games["six_nimmt"]["view"] == "/games/six_nimmt/view.js"
    own = httpx.get(f"{toy_server.http}/games/six_nimmt/view.js")
    assert own.status_code == 200 and own.headers["content-type"].startswith("text/javascript")
    assert 'registerGameView("six_nimmt"' in own.text
    none = httpx.get(f"{toy_server.http}/games/{GAME_ID}/view.js")
    assert none.status_code == 404 and none.json()["error"]["code"] == "unknown_game"
    schema = httpx.get(f"{toy_server.http}/openapi.json").json()["components"]["schemas"]
    branch = next(b for b in schema["CreateMatchIn"]["oneOf"] if b["title"] == f"{GAME_ID} at 3")
    assert branch["properties"]["settings"]["properties"]["rounds"]["pattern"] == "^([1-5])$"

    match_id, replay = finished_match(toy_server, seed=7)
    rounds = replay["rounds"]
    page.goto(f"{toy_server.http}/#/match/{match_id}")
    page.wait_for_selector("[data-testid=replay]")
    assert page.inner_text("h1").startswith("High card · match ")
    assert page.inner_text("[data-testid=step-label]") == "step 1 of 4"
    assert page.inner_text("[data-testid=where]") == "The start · 3 decision points to come"
    page.click("[data-testid=next]")
    assert page.inner_text("[data-testid=where]") == "Decision point 1 of 3"
    first = rounds[0]["plays"]
    assert page.locator("[data-testid=action]").all_inner_texts() == \
        [f"play card: {card}" for card in first]
    page.click("[data-testid=last]")
    assert page.inner_text("[data-testid=where]") == "Decision point 3 of 3"
    assert page.locator("[data-testid=played]").all_inner_texts() == \
        [" · ".join(str(r["plays"][s]) for r in rounds) for s in range(2)]
    assert page.inner_text("[data-testid=final-totals]").startswith(
        f"Final totals: {' · '.join(map(str, replay['totals']))} · ranks")
    recorded = page.inner_text("[data-testid=rounds]")
    assert all(" · ".join(map(str, hand)) in recorded for r in rounds for hand in r["hands"])
    page.goto(f"{toy_server.http}/#/")
    page.wait_for_selector("[data-testid=game] option", state="attached")
    assert "High card" in page.locator("[data-testid=game] option").all_inner_texts()


def watch(address: str, match_id: str, seen: list[pb.WatchResponse]) -> None:
    """Follow ``match_id`` as a gRPC spectator to its end, each message into ``seen``."""
    with grpc.insecure_channel(address) as channel:
        call = channel.unary_stream(WATCH, request_serializer=pb.WatchRequest.SerializeToString,
                                    response_deserializer=pb.WatchResponse.FromString)
        for message in call(pb.WatchRequest(match_id=match_id), timeout=60):
            seen.append(message)
            if message.WhichOneof("body") == "match_ended":
                return


def http_seat(base: str, token: str, decisions: list[dict[str, Any]],
              started: threading.Event) -> None:
    """Play a seat over HTTP long-poll to the match's end, each decision with the middle
    card of the hand, each decision into ``decisions``; set ``started`` once the match
    has."""
    after: int | None = None
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base, timeout=60) as client:
        while True:
            params = {"wait_ms": 20_000, **({} if after is None else {"after": after})}
            body = client.get("/api/play/poll", params=params, headers=headers).json()
            for message in body["messages"]:
                after = message["seq"]
                if "match_started" in message:
                    started.set()
                elif "decision" in message:
                    decision = message["decision"]
                    decisions.append(decision)
                    card = sorted(decision[GAME_ID]["hand"])[1]
                    verdict = client.post("/api/play/answer", headers=headers, json={
                        "decision_id": decision["decision_id"], "action": {"card": card}})
                    assert "accepted" in verdict.json(), verdict.text
                elif "match_ended" in message:
                    return


def test_a_grpc_seat_an_http_seat_and_spectators_play_and_watch_it_through(
        toy_server: ServerProcess, page: Any) -> None:
    """A match of the toy game between a gRPC seat (``bullring bot`` with a bot file written
    for it: its highest card) and an HTTP seat (long-poll: its middle card) ends normally,
    every answer the seat's own (the default is the lowest card); each HTTP decision holds
    the seat's hand as its legal cards; the gRPC spectator and the HTTP feed see every
    round's cards revealed together and the end with the replay's totals; the web page draws
    the played match's replay."""
    match = toy_server.create_match(GAME_ID, 2, "--setting", "rounds=3", "--seed", "5",
                                    "--deadline-ms", "10000")
    assert match.tokens[0] is not None and match.tokens[1] is not None
    bot = toy_server.bot(match.tokens[0], BOT)
    decisions: list[dict[str, Any]] = []
    started = threading.Event()
    seat = threading.Thread(target=http_seat, args=(toy_server.http, match.tokens[1],
                                                    decisions, started), daemon=True)
    seat.start()
    assert started.wait(60), "the match did not start"
    seen: list[pb.WatchResponse] = []
    watch(toy_server.address, match.match_id, seen)  # from the match's start to its end
    out, err = bot.communicate(timeout=120)
    seat.join(120)
    assert bot.returncode == 0, out + err
    assert not seat.is_alive()
    replay = json.loads(toy_server.replay(match.match_id))
    assert replay["termination"] == "normal" and len(replay["rounds"]) == 3
    answers = [e for e in replay["events"] if e["type"] == "answer"]
    assert len(answers) == 6 and not any(a["default"] for a in answers)
    for record in replay["rounds"]:
        hands = record["hands"]
        assert record["plays"] == [max(hands[0]), sorted(hands[1])[1]]
    assert [sorted(d[GAME_ID]["hand"]) for d in decisions] == [r["hands"][1]
                                                              for r in replay["rounds"]]
    assert all([a["card"] for a in d["legal"]] == d[GAME_ID]["hand"] for d in decisions)

    revealed = [m.event.toy_high_card.revealed for m in seen
                if m.WhichOneof("body") == "event"
                and m.event.toy_high_card.WhichOneof("event") == "revealed"]
    assert [(r.round, list(r.plays)) for r in revealed] == \
        [(n, r["plays"]) for n, r in enumerate(replay["rounds"])]
    assert seen[-1].WhichOneof("body") == "match_ended"
    assert list(seen[-1].match_ended.totals) == replay["totals"]
    with httpx.stream("GET", f"{toy_server.http}/api/matches/{match.match_id}/feed",
                      timeout=60) as feed:
        data = [json.loads(line[5:]) for line in feed.iter_lines() if line.startswith("data:")]
    fed = [d["event"][GAME_ID] for d in data if "event" in d]
    assert [e["revealed"]["plays"] for e in fed if "revealed" in e] == \
        [r["plays"] for r in replay["rounds"]]
    assert data[-1]["match_ended"]["totals"] == replay["totals"]

    page.goto(f"{toy_server.http}/#/match/{match.match_id}/step/4")
    page.wait_for_selector("[data-testid=final-totals]")
    assert page.inner_text("[data-testid=where]") == "Decision point 3 of 3"
    assert page.locator("[data-testid=action]").all_inner_texts() == \
        [f"play card: {card}" for card in replay["rounds"][2]["plays"]]


STATE = "document.body.dataset.state"
NEXT = f"""(prev) => {STATE} === 'ended' ||
    ({STATE} === 'deciding' && document.body.dataset.decision !== prev)"""
"""True once the match is over or a decision other than ``prev`` waits for the person."""


def test_a_person_plays_it_in_the_browser_while_a_spectator_watches_it_live(
        toy_server: ServerProcess, browser: Any, page: Any) -> None:
    """In Chromium, a person plays a seat of the toy game on the play page with the generic
    view (its observation as data, a button per legal card: the middle one each time) against
    the gRPC bot, while a spectator's page follows it live with the generic view (every
    event in words) to its end; the replay holds the person's own answers."""
    match = toy_server.create_match(GAME_ID, 2, "--human", "1", "--setting", "rounds=2",
                                    "--seed", "3", "--deadline-ms", "20000")
    bot = toy_server.bot(match.tokens[0], BOT)
    page.goto(f"{toy_server.http}/play/{match.match_id}#{match.tokens[1]}")
    page.wait_for_function(NEXT, arg="")
    watcher = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
    watcher.goto(f"{toy_server.http}/#/match/{match.match_id}")
    watcher.wait_for_selector("[data-testid=live]")  # following the match live
    hands = []
    while page.evaluate(STATE) != "ended":
        decision = page.evaluate("document.body.dataset.decision")
        hand = page.inner_text("[data-testid=observation] [data-field=hand]")
        hands.append([int(card) for card in hand.split(" · ")])
        buttons = page.locator("[data-testid=choices] button")
        assert buttons.all_inner_texts() == [f"card {card}" for card in hands[-1]]
        buttons.nth(1).click()
        page.wait_for_function(NEXT, arg=decision)
    out, err = bot.communicate(timeout=120)
    assert bot.returncode == 0, out + err
    replay = json.loads(toy_server.replay(match.match_id))
    assert hands == [r["hands"][1] for r in replay["rounds"]]
    assert [r["plays"][1] for r in replay["rounds"]] == [sorted(h)[1] for h in hands]
    assert not any(e["default"] for e in replay["events"] if e["type"] == "answer")
    assert page.inner_text("[data-testid=result]").startswith(
        f"Match finished: you placed {replay['ranks'][1]} of 2 with {replay['totals'][1]}")
    watcher.wait_for_selector("[data-testid=live-ended]")
    log = watcher.locator("[data-testid=live-log] li").all_inner_texts()
    revealed = [line for line in log if line.startswith("Revealed: ")]  # newest first
    assert [f"plays [{', '.join(map(str, r['plays']))}]" in line
            for line, r in zip(revealed[::-1], replay["rounds"], strict=True)] == [True, True]
    assert log[0] == (f"GameEnded: totals [{', '.join(map(str, replay['totals']))}], "
                      f"ranks [{', '.join(map(str, replay['ranks']))}].")
    assert watcher.locator("[data-testid=total]").all_inner_texts() == \
        [str(total) for total in replay["totals"]]
    watcher.context.close()
