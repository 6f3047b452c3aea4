"""Replays: the docs/replay-format.md shape, and a verifier that names the first mismatch."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from bullring.referee import replay as replay_module
from bullring.referee.registry import get_game
from bullring.referee.replay import (
    FROM_LOG,
    FROM_ROUNDS,
    ReplayError,
    answer_event,
    build_replay,
    verify,
)
from bullring.sdk.arena import ArenaConfig, play_game, seating
from bullring.sdk.house import house_bot
from bullring.server.cli.main import main


def make_replay(game: str = "six_nimmt", seats: int = 4, seed: int = 11,
                settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play one game between house bots and return its replay."""
    spec = get_game(game)
    state = spec.new_state(seats, settings, seed)
    names = seating(("greedy" if game == "six_nimmt" else "threshold",) + ("random",) *
                    (seats - 1), 0)
    players = [house_bot(n, spec.id, i) for i, n in enumerate(names)]
    log: list[dict[str, Any]] = []
    play_game(state, players, log)
    return build_replay(state, match_id="m1", seat_names=names, events=log)


def test_six_nimmt_replay_has_the_required_fields() -> None:
    """A 6 nimmt! replay carries every docs/replay-format.md field, JSON-clean."""
    r = json.loads(json.dumps(make_replay()))
    assert r["format"] == "bullring.replay/1"
    assert set(r) >= {"match_id", "game", "settings", "seed", "seats", "rounds", "totals",
                      "ranks", "termination", "events"}
    assert r["settings"]["end_threshold"] == 66
    first = r["rounds"][0]
    assert len(first["hands"]) == 4 and all(h == sorted(h) for h in first["hands"])
    assert len(first["rows"]) == 4 and len(first["tricks"]) == 10
    trick = first["tricks"][0]
    assert set(trick) == {"plays", "row_choice", "taken", "rows_after"}
    assert sum(r["rounds"][i]["penalties"][0] for i in range(len(r["rounds"]))) == r["totals"][0]


def test_no_thanks_replay_has_the_required_fields() -> None:
    """A No Thanks! replay carries the removed cards, deck order, turns, cards and scores."""
    r = json.loads(json.dumps(make_replay("no_thanks", seats=3)))
    first = r["rounds"][0]
    assert set(first) >= {"removed", "deck", "start_seat", "chips_start", "turns", "cards",
                          "chips", "scores"}
    assert len(first["removed"]) == 9 and len(first["deck"]) == 24


@pytest.mark.parametrize("game", ["six_nimmt", "no_thanks"])
def test_untouched_replays_verify(game: str) -> None:
    """A replay written from a match verifies."""
    verify(make_replay(game, seats=4))


def test_a_changed_placement_is_reported_with_its_path() -> None:
    """Editing one row after a trick is caught, and the message says where."""
    r = make_replay()
    r["rounds"][0]["tricks"][3]["rows_after"][0].append(1000)
    with pytest.raises(ReplayError, match=r"rounds\[0\]\.tricks\[3\]\.rows_after\[0\]"):
        verify(r)


def test_a_changed_total_or_rank_is_reported() -> None:
    """Totals and ranks must match what the answers produce."""
    r = make_replay()
    r["totals"][1] += 1
    with pytest.raises(ReplayError, match="totals"):
        verify(r)
    r = make_replay()
    r["ranks"] = [1] * 4
    with pytest.raises(ReplayError, match="ranks"):
        verify(r)


def test_a_changed_answer_is_reported() -> None:
    """An answer that was not legal at that point names its event."""
    r = make_replay()
    answers = [e for e in r["events"] if e["type"] == "answer"]
    answers[0]["action"] = 105
    with pytest.raises(ReplayError, match=r"events\[0\]"):
        verify(r)


def test_a_forged_default_action_is_reported() -> None:
    """An answer marked as a default must be the default the rules give."""
    spec = get_game("six_nimmt")
    state = spec.new_state(3, None, 5)
    log: list[dict[str, Any]] = []
    players = [house_bot("random", "six_nimmt", i) for i in range(3)]
    while not state.over:
        answers = {s: state.default_action(s) for s in state.pending}
        log.extend(answer_event(state, s, a, default=True) for s, a in answers.items())
        state.apply(answers)
    good = build_replay(state, match_id="d", seat_names=["a", "b", "c"], events=log)
    verify(good)
    bad = copy.deepcopy(good)
    first = bad["events"][0]
    hand = good["rounds"][0]["hands"][first["seat"]]
    first["action"] = next(c for c in hand if c != first["action"])
    with pytest.raises(ReplayError, match="default action"):
        verify(bad)
    assert players


def test_unknown_format_is_refused_clearly() -> None:
    """A reader rejects a format it does not know, naming it."""
    r = make_replay()
    r["format"] = "bullring.replay/9"
    with pytest.raises(ReplayError, match=r"bullring\.replay/9"):
        verify(r)
    del r["format"]
    with pytest.raises(ReplayError, match="unknown replay format"):
        verify(r)


def test_verify_command_reads_files_folders_and_json_lines(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`bullring replay verify` takes a file, a folder or a .jsonl file and reports each."""
    good, bad = make_replay(), make_replay(seed=12)
    bad["totals"][0] += 3
    (tmp_path / "good.json").write_text(json.dumps(good))
    lines = tmp_path / "many.jsonl"
    lines.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    assert main(["replay", "verify", str(tmp_path / "good.json")]) == 0
    assert main(["replay", "verify", str(lines)]) == 1
    out = capsys.readouterr().out
    assert "many.jsonl:2: MISMATCH totals" in out
    assert "2 replays checked, 1 verified, 1 failed" in out
    (tmp_path / "broken.json").write_text("{not json")
    assert main(["replay", "verify", str(tmp_path)]) == 1
    assert "not valid JSON" in capsys.readouterr().out


def test_arena_config_replays(tmp_path: Path) -> None:
    """ArenaConfig with replays writes files named after the match id."""
    from bullring.sdk.arena import play_one

    play_one(ArenaConfig("six_nimmt", ("random", "random"), 1, replays=tmp_path), 0)
    assert [p.name for p in tmp_path.iterdir()] == ["arena-0-000000.json"]


@pytest.mark.parametrize(("game", "settings"), [
    ("six_nimmt", {}), ("six_nimmt", {"variant": "professional", "rounds": 2}),
    ("no_thanks", {}), ("no_thanks", {"hidden_card": True, "rounds": 2}),
    ("no_thanks", {"tens_out": True})])
def test_a_replay_without_its_log_is_verified_from_its_rounds(
        game: str, settings: dict[str, Any]) -> None:
    """A replay with no answer in its log (recorded by another program) and a seed that does
    not deal it is checked from its rounds alone; a tampered answer in them is a mismatch."""
    replay = make_replay(game, seats=4, seed=5, settings=settings)
    replay["events"], replay["seed"] = [], 0
    assert verify(copy.deepcopy(replay)) == FROM_ROUNDS
    bad = copy.deepcopy(replay)
    if game == "six_nimmt":
        first = bad["rounds"][0]["tricks"][0]
        first["plays"][1] = next(c for c in range(1, 105) if c not in first["plays"])
        where = r"rounds\[0\]\.tricks\[0\]\.plays"
    else:
        turn = next(t for t in bad["rounds"][0]["turns"] if t["action"] in ("pass", "take"))
        turn["action"] = "take" if turn["action"] == "pass" else "pass"
        where = r"rounds\[0\]"
    with pytest.raises(ReplayError, match=where):
        verify(bad)


def test_a_game_that_cannot_replay_its_rounds_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """A game whose spec gives no way to read its rounds (the toy game's) verifies replays
    from their log; one without a log is refused, naming the game."""
    spec = dataclasses.replace(get_game("six_nimmt"), id="no_rounds",
                               replay_from_rounds=None)
    monkeypatch.setattr(replay_module, "get_game", lambda game_id: spec)
    replay = make_replay()
    assert verify(copy.deepcopy(replay)) == FROM_LOG
    replay["events"] = []
    with pytest.raises(ReplayError, match="no_rounds replays cannot be checked from their "
                                          "rounds alone"):
        verify(replay)
