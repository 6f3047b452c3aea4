"""The local arena: seat rotation, reproducibility, workers, replays, and bot strength."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from bullring.referee import replay
from bullring.referee.registry import get_game
from bullring.sdk import arena
from bullring.sdk.arena import ArenaConfig
from bullring.server.cli.main import main


def test_seats_rotate_between_games() -> None:
    """Game i seats the lineup rotated by i seats, so every bot sits everywhere."""
    lineup = ("greedy", "random", "random", "random")
    assert arena.seating(lineup, 0) == lineup
    assert arena.seating(lineup, 1) == ("random", "random", "random", "greedy")
    assert {arena.seating(lineup, i).index("greedy") for i in range(4)} == {0, 1, 2, 3}


def test_same_seed_same_results_and_workers_agree() -> None:
    """The same seed gives the same outcomes, whether one process plays or two."""
    config = ArenaConfig("six_nimmt", ("greedy", "random", "random"), 24, seed=7)
    one = arena.run(config)
    again = arena.run(config)
    two = arena.run(config, workers=2)
    assert one == again == two
    other = arena.run(ArenaConfig("six_nimmt", config.bots, 24, seed=8))
    assert other != one


def test_greedy_beats_random_at_six_nimmt() -> None:
    """A 1-ply greedy bot wins far more than its fair 25% against three random seats."""
    config = ArenaConfig("six_nimmt", ("greedy", "random", "random", "random"), 200, seed=1)
    table = {s.bot: s for s in arena.standings(arena.run(config))}
    assert table["greedy"].win_share > 0.6
    assert table["greedy"].mean_round_score < table["random"].mean_round_score


def test_never_take_beats_random_at_no_thanks() -> None:
    """Passing until out of chips beats taking at random."""
    config = ArenaConfig("no_thanks", ("never_take", "random", "random", "random"), 200, seed=1)
    table = {s.bot: s for s in arena.standings(arena.run(config))}
    assert table["never_take"].win_share > 0.25
    assert table["never_take"].mean_round_score < table["random"].mean_round_score


@pytest.mark.parametrize("lineup", [("threshold", "never_take", "random", "random"),
                                    ("threshold", "never_take", "never_take")])
def test_threshold_beats_never_take_at_no_thanks(lineup: tuple[str, ...]) -> None:
    """Taking a card once the pot pays for it (more readily as chips run out) wins more than
    its fair share and more than never_take, beside random seats and against two never_takes."""
    config = ArenaConfig("no_thanks", lineup, 300, seed=1)
    table = {s.bot: s for s in arena.standings(arena.run(config))}
    assert table["threshold"].win_share > 1.5 / len(lineup)
    assert table["threshold"].win_share > table["never_take"].win_share
    assert table["threshold"].mean_round_score < table["never_take"].mean_round_score


def test_win_share_splits_ties() -> None:
    """Two seats tied for first each get half a win."""
    outcome = arena.GameOutcome(0, ("a", "b", "c"), (5, 5, 9), (1, 1, 3), ((5, 5, 9),))
    table = {s.bot: s for s in arena.standings([outcome])}
    assert table["a"].win_share == table["b"].win_share == 0.5
    assert table["c"].win_share == 0


@pytest.mark.parametrize("game,bots,settings", [
    ("six_nimmt", "greedy,random,random,random", []),
    ("six_nimmt", "greedy,random,random", ["variant=professional", "rounds=2"]),
    ("no_thanks", "threshold,never_take,random", []),
    ("no_thanks", "threshold,random,random,random", ["hidden_card=true", "rounds=2"]),
])
def test_arena_replays_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str], game: str,
                              bots: str, settings: list[str]) -> None:
    """Every replay the arena writes names its seats after their bots and verifies."""
    args = ["arena", "--game", game, "--bots", bots, "--games", "6", "--seed", "3",
            "--replays", str(tmp_path)]
    for setting in settings:
        args += ["--setting", setting]
    assert main(args) == 0
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 6
    first = json.loads(files[0].read_text())
    assert [s["name"] for s in first["seats"]] == bots.split(",")
    for file in files:
        replay.verify(json.loads(file.read_text()))
    assert main(["replay", "verify", str(tmp_path)]) == 0
    assert "6 replays checked, 6 verified, 0 failed" in capsys.readouterr().out


def test_arena_rejects_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    """Unknown bots, games and settings are named in a clear error, exit status 2."""
    assert main(["arena", "--game", "six_nimmt", "--bots", "random,nobody"]) == 2
    assert "nobody" in capsys.readouterr().err
    assert main(["arena", "--game", "chess", "--bots", "random,random"]) == 2
    assert "chess" in capsys.readouterr().err
    assert main(["arena", "--game", "six_nimmt", "--bots", "random,random",
                 "--setting", "end_threshold=0"]) == 2
    assert "end_threshold" in capsys.readouterr().err
    assert main(["arena", "--game", "no_thanks", "--bots", "greedy,random,random"]) == 2
    assert "greedy" in capsys.readouterr().err


def test_an_authors_bot_plays_in_the_arena_by_spec(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A bot named by a runner spec (file.py:Class, module:Class) plays arena games like a
    house bot, over worker processes too; a spec that names nothing is a clear error (2)."""
    example = (Path(__file__).resolve().parents[2] / "client_sdk" / "python" / "sdk" / "examples"
               / "careful.py")
    spec = f"{example}:Careful"
    args = ["arena", "--game", "six_nimmt", "--bots", f"{spec},house:greedy,random",
            "--games", "6", "--seed", "2", "--replays", str(tmp_path), "--json"]
    assert main([*args, "--workers", "2"]) == 0
    rows = {row["bot"]: row for row in json.loads(capsys.readouterr().out)}
    assert set(rows) == {spec, "house:greedy", "random"}
    assert rows[spec]["games"] == 6
    assert main(["replay", "verify", str(tmp_path)]) == 0
    assert main(["arena", "--game", "no_thanks", "--bots",
                 "tests.bots.low_card:LowCard,random,random"]) == 2
    assert "plays six_nimmt, not 'no_thanks'" in capsys.readouterr().err
    assert main(["arena", "--game", "six_nimmt", "--bots", f"{tmp_path}/none.py:X,random"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_a_bot_that_raises_in_the_arena_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    """A bot whose method raises ends the arena run with exit status 6, a line naming the
    bot, its seat, the game and the decision, then the traceback of the bot's own code (its
    file and line), not the arena's."""
    assert main(["arena", "--game", "six_nimmt", "--bots",
                 "random,tests.bots.faulty:Raises", "--games", "2"]) == 6
    err = capsys.readouterr().err
    first, *rest = err.splitlines()
    assert first.startswith("bullring arena: bot 'tests.bots.faulty:Raises' (seat 1) raised "
                            "in 6 nimmt! game 0: RuntimeError: out of ideas"), first
    faulty = str(Path(__file__).resolve().parents[1] / "bots" / "faulty.py")
    assert rest[0] == "Traceback (the bot's code):"
    assert f'File "{faulty}", line 18, in play_card' in rest[1]
    assert rest[-1] == "RuntimeError: out of ideas"
    assert "arena.py" not in err and "tournament.py" not in err


def test_an_illegal_answer_in_the_arena_names_the_bot(
        capsys: pytest.CaptureFixture[str]) -> None:
    """An illegal answer ends the run with exit status 6 and one line naming the bot, its
    seat and the game, over worker processes too."""
    for workers in ("1", "2"):
        assert main(["arena", "--game", "six_nimmt", "--bots",
                     "tests.bots.faulty:Illegal,random", "--games", "4",
                     "--workers", workers]) == 6
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(
            "bullring arena: bot 'tests.bots.faulty:Illegal' (seat 0) answered illegally in "
            "6 nimmt! game 0"), err


def test_a_decision_only_bot_plays_the_same_games_without_observations() -> None:
    """``random`` answers from its decision alone (``decide_on``, no observation built): the
    arena's games are exactly those it plays when asked through ``decide``, in both games."""
    from bullring.sdk.house.random_bot import RandomBot

    class Observing(RandomBot):
        decision_only = False

    for game, seats in (("six_nimmt", 4), ("no_thanks", 3)):
        spec = get_game(game)
        for index in range(5):
            fast = spec.new_state(seats, {}, index)
            slow = spec.new_state(seats, {}, index)
            arena.play_game(fast, [RandomBot(index + s) for s in range(seats)])
            arena.play_game(slow, [Observing(index + s) for s in range(seats)])
            assert fast.replay_rounds() == slow.replay_rounds()
            assert fast.result() == slow.result()


def test_a_bot_that_never_draws_makes_no_random_stream() -> None:
    """``self.rng`` is made, seeded with the bot's seed, when first read: ``greedy`` never
    draws, so its four arena games a second pay no seeding; a runner may still assign it."""
    import random

    from bullring.sdk.house.greedy import GreedyBot

    bots = [GreedyBot(seed) for seed in range(4)]
    arena.play_game(get_game("six_nimmt").new_state(4, {}, 1), bots)
    assert all("rng" not in vars(bot) for bot in bots)
    assert bots[3].rng.random() == random.Random(3).random()
    stream = random.Random(9)
    bots[0].rng = stream
    assert bots[0].rng is stream


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_forked_and_spawned_workers_play_the_same_games(method: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers play the games of one process whether they are forked or spawned."""
    config = ArenaConfig("six_nimmt", ("greedy", "random", "random"), 12, seed=3)
    expected = arena.run(config)
    monkeypatch.setattr(arena, "worker_context", lambda: multiprocessing.get_context(method))
    assert arena.run(config, workers=2) == expected
