"""Tournaments: the schedule of each format, the report, reproducibility, entrants, errors."""

from __future__ import annotations

import json
import math
import os
import pty
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from bullring.referee import replay
from bullring.sdk import standings as stats
from bullring.sdk import tournament
from bullring.sdk.tournament import TournamentConfig
from bullring.server.cli.main import main
from tests.vocabulary import RETIRED_WORDS, STANDINGS_WORDS

ROOT = Path(__file__).resolve().parents[2]


def _report(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["tournament", *args, "--json"]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_round_robin_plays_every_table_with_seats_rotated() -> None:
    """Round-robin seats every table of the table size drawn from the entrants, N games
    each, the lineup rotated by one seat per game, every game on its own deal."""
    config = TournamentConfig("six_nimmt", "round-robin",
                              ("greedy", "random", "random", "random"), 6, seats=3, seed=2)
    lineups = tournament.tables(config)
    assert len(lineups) == 4  # 4 entrants choose 3
    assert ("greedy", "random", "random#2") in lineups
    played = tournament.run(config)
    assert len(played) == 4 * 6
    for t, lineup in enumerate(lineups):
        games = [g for g in played if g.table == t]
        seats = Counter((bot, seat) for g in games for seat, bot in enumerate(g.outcome.bots))
        assert seats == Counter({(bot, seat): 2 for bot in lineup for seat in range(3)})
    assert len({g.outcome.round_scores for g in played}) == len(played)


def test_all_entrants_sit_at_one_table_when_they_fit() -> None:
    """With --seats at least the number of entrants (or unset) there is a single table."""
    config = TournamentConfig("no_thanks", "round-robin", ("threshold", "never_take", "random"),
                              3, seats=5)
    assert tournament.tables(config) == [("threshold", "never_take", "random")]
    assert tournament.table_size(config) == 3


def test_duplicate_replays_each_deal_in_every_rotation(tmp_path: Path) -> None:
    """Duplicate plays each deal once per rotation: the same hands by seat in every rotation
    (docs/rules.md §3), each bot holding each seat's hand once; the replays verify."""
    config = TournamentConfig("six_nimmt", "duplicate", ("greedy", "random", "random"), 5,
                              seed=4, replays=tmp_path)
    played = tournament.run(config)
    assert tournament.deals_per_table(config) == 2  # 5 games round up to 2 deals x 3
    assert len(played) == 6
    hands_by_deal = []
    for deal in (0, 1):
        files = sorted(tmp_path.glob(f"tournament-4-t000-d{deal:05d}-r*.json"))
        replays = [json.loads(f.read_text()) for f in files]
        assert len(replays) == 3
        for one in replays:
            replay.verify(one)
        first_hands = {json.dumps(r["rounds"][0]["hands"]) for r in replays}
        assert len(first_hands) == 1
        holders = {tuple(s["name"] for s in r["seats"]) for r in replays}
        assert {names.index("greedy") for names in holders} == {0, 1, 2}
        hands_by_deal.append(first_hands)
    assert hands_by_deal[0] != hands_by_deal[1]


def test_identical_bots_come_out_exactly_even_in_duplicate() -> None:
    """Duplicate removes the luck of the deal: two copies of one bot, each holding every
    hand, end with a difference of exactly 0 ± 0, where independent deals leave noise."""
    dup = stats.standings(tournament.run(
        TournamentConfig("six_nimmt", "duplicate", ("greedy", "greedy"), 40, seed=1)))
    assert [(s.vs_field, s.vs_field_ci95) for s in dup] == [(0.0, 0.0), (0.0, 0.0)]
    rr = stats.standings(tournament.run(
        TournamentConfig("six_nimmt", "round-robin", ("greedy", "greedy"), 40, seed=1)))
    assert all(s.vs_field_ci95 > 1.0 for s in rr)


def test_duplicate_narrows_the_interval_between_close_bots() -> None:
    """Duplicate pays off where it matters, between close bots: greedy against a variant
    that only takes rows differently gets a 95% interval of their difference far narrower
    from the same number of duplicate games than from independent deals, both read from
    the tournament's paired "vs field" (and narrower than the unpaired one)."""
    bots = ("greedy", "tests.bots.greedy_variants:ShortestRow")
    widths = {}
    for fmt in ("round-robin", "duplicate"):
        played = tournament.run(TournamentConfig("six_nimmt", fmt, bots, 120, seed=11))
        assert len(played) == 120
        widths[fmt] = next(s.vs_field_ci95 for s in stats.standings(played)
                           if s.bot == "greedy")
        scores: dict[str, list[float]] = {b: [] for b in bots}
        for g in played:
            for seat, bot in enumerate(g.outcome.bots):
                scores[bot].append(stats.per_round(g.outcome, seat))
        widths[f"{fmt} unpaired"] = math.hypot(*(stats.mean_ci(v)[1]
                                                 for v in scores.values()))
    assert widths["duplicate"] < 0.5 * widths["round-robin"], widths
    assert widths["duplicate"] < 0.5 * widths["round-robin unpaired"], widths


def test_cli_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    """The report prints as an aligned table (one row per bot, columns under the header, in
    the web page's words: score per round, vs field...) and as JSON with the plan and each
    bot's figures and intervals; greedy ranks first."""
    args = ["--game", "six_nimmt", "--format", "duplicate", "--games", "40", "--seed", "3",
            "greedy", "random", "random"]
    assert main(["tournament", *args]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("6 nimmt! duplicate tournament, seed 3: 1 table(s) of 3, "
                             "14 deals x 3 rotations at each, 42 games in all")
    header, rule, *rows = out[2:]
    assert set(rule) == {"-"} and len(rule) == len(header)
    assert rows[0].split()[0] == "greedy"
    assert sorted(r.split()[0] for r in rows) == ["greedy", "random", "random#2"]
    assert all(word.lower() in header for word in STANDINGS_WORDS), header
    assert not any(word in "\n".join(out) for word in RETIRED_WORDS), out
    for column in ("games", "win share", "score per round ±", "vs field ±", "mean rank"):
        end = header.index(column) + len(column)
        assert all(r[end - 1] != " " and (len(r) == end or r[end] == " ") for r in rows)
    data = _report(capsys, *args)
    assert data["format"] == "duplicate" and data["games"] == 42
    assert data["tables"] == [["greedy", "random", "random#2"]]
    standings = data["standings"]
    assert isinstance(standings, list)
    best = standings[0]
    assert best["bot"] == "greedy" and best["games"] == 42 and best["units"] == 14
    assert best["vs_field"] + best["vs_field_ci95"] < 0  # surely better than its field
    assert {"win_share", "win_share_ci95", "mean_score", "mean_score_ci95",
            "mean_rank"} <= set(best)
    one_deal = _report(capsys, *args[:5], "2", "greedy", "random")
    assert [s["vs_field_ci95"] for s in one_deal["standings"]] == [None, None]  # type: ignore[attr-defined]


def test_same_seed_same_report_and_workers_agree(capsys: pytest.CaptureFixture[str]) -> None:
    """The same seed gives the same report, whether one process plays or two; another seed
    gives another."""
    for fmt in ("round-robin", "duplicate"):
        args = ["--game", "six_nimmt", "--format", fmt, "--games", "12", "--seats", "3",
                "--seed", "5", "greedy", "random", "random", "random"]
        one = _report(capsys, *args)
        assert _report(capsys, *args) == one
        assert _report(capsys, *args, "--workers", "2") == one
        assert _report(capsys, *args[:-5], "6", *args[-4:]) != one


def test_module_class_entrants(capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``module:Class`` entrant (a Bot subclass, as ``bullring bot`` loads it) plays beside
    house bots, also in worker processes, and is named by its spec in the report."""
    monkeypatch.chdir(ROOT)
    args = ["--game", "six_nimmt", "--format", "round-robin", "--games", "6", "--seed", "1",
            "tests.bots.low_card:LowCard", "random", "tests/bots/low_card.py:LowCard"]
    data = _report(capsys, *args)
    assert _report(capsys, *args, "--workers", "2") == data
    bots = {s["bot"]: s for s in data["standings"]}  # type: ignore[attr-defined]
    assert set(bots) == {"tests.bots.low_card:LowCard", "random",
                         "tests/bots/low_card.py:LowCard"}
    assert all(s["games"] == 6 for s in bots.values())


@pytest.mark.parametrize("args,message", [
    (["--game", "six_nimmt", "greedy", "nobody"], "unknown bot 'nobody'"),
    (["--game", "six_nimmt", "greedy", "no_such_module:Bot"], "cannot import 'no_such_module'"),
    (["--game", "six_nimmt", "greedy", "tests.bots.low_card:Nope"], "has no 'Nope'"),
    (["--game", "no_thanks", "greedy", "random", "random"], "house bot 'greedy' plays six_nimmt"),
    (["--game", "chess", "random", "random"], "unknown game 'chess'"),
    (["--game", "six_nimmt", "--setting", "speed=3", "greedy", "random"],
     "unknown setting 'speed'"),
    (["--game", "six_nimmt", "--setting", "rounds=many", "greedy", "random"], "'rounds'"),
    (["--game", "six_nimmt", "--setting", "rounds", "greedy", "random"], "KEY=VALUE"),
    (["--game", "no_thanks", "random", "threshold"], "3 to 7 seats"),
    (["--game", "six_nimmt", "--seats", "1", "greedy", "random"], "--seats: must be at least 2"),
    (["--game", "six_nimmt", "--games", "0", "greedy", "random"], "--games: must be at least 1"),
    (["--game", "six_nimmt", "--workers", "0", "greedy", "random"], "--workers"),
    (["--game", "six_nimmt", "greedy"], "at least 2 entrants"),
    (["--game", "no_thanks", *["random"] * 8], "8 entrants do not fit one No Thanks! table"),
])
def test_bad_input_is_named_with_exit_status_2(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        args: list[str], message: str) -> None:
    """Unknown bots, games and settings, and impossible plans, get a clear error, status 2."""
    monkeypatch.chdir(ROOT)
    argv = ["tournament", "--format", "round-robin", "--games", "2", *args]
    if "--games" in args:
        argv = ["tournament", "--format", "round-robin", *args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("bot,message", [
    ("tests.bots.faulty:Raises", "bot 'tests.bots.faulty:Raises' (seat 1) raised in 6 nimmt! "
                                 "game 0: RuntimeError: out of ideas"),
    ("tests.bots.faulty:Illegal", "bot 'tests.bots.faulty:Illegal' (seat 1) answered illegally "
                                  "in 6 nimmt! game 0"),
])
def test_a_failing_entrant_is_named(capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch, bot: str,
                                    message: str) -> None:
    """An entrant that raises or answers illegally stops the tournament with exit status 6
    and a line naming it, its seat, the table and the game; one that raised is followed by
    the traceback of its own code."""
    monkeypatch.chdir(ROOT)
    assert main(["tournament", "--game", "six_nimmt", "--format", "duplicate", "--games", "2",
                 "random", bot]) == 6
    first, *rest = capsys.readouterr().err.splitlines()
    assert first.startswith(f"bullring tournament: table 0: {message}"), first
    if "Raises" in bot:
        assert "tests/bots/faulty.py\", line 18, in play_card" in rest[1], rest
    else:
        assert rest == []


def test_progress_bar_on_a_terminal() -> None:
    """On a TTY the command draws a progress bar on stderr that ends at every game."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "120"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "bullring.server.cli", "tournament", "--game", "six_nimmt",
         "--format",
         "round-robin", "--games", "4", "--seats", "2", "greedy", "random", "random"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closes with the process
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert b"] 12/12 games" in drawn
    assert b"round-robin tournament" in out
