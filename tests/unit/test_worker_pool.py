"""The arena's worker processes: ranges of games, progress in order, errors, stopping."""

from __future__ import annotations

import gc
import multiprocessing

import pytest

from bullring.sdk import arena
from bullring.sdk.arena import ArenaConfig
from bullring.server.cli.main import main


def test_ranges_cover_every_game_and_shrink_at_the_end() -> None:
    """Ranges tile the games in order, hold at most 250, and over several workers the last
    ones shrink so the workers finish together; one worker gets equal ranges."""
    for games, workers in ((8000, 2), (10_000, 3), (24, 2), (7, 3), (1, 2), (8000, 1)):
        bounds = arena.game_ranges(games, workers)
        assert [start for start, _ in bounds] == [0, *(stop for _, stop in bounds[:-1])]
        assert bounds[-1][1] == games
        sizes = [stop - start for start, stop in bounds]
        assert max(sizes) <= 250 and sizes == sorted(sizes, reverse=True)
    sizes = [stop - start for start, stop in arena.game_ranges(8000, 2)]
    assert sizes[0] == 250 and sizes[-1] <= 4
    assert {stop - start for start, stop in arena.game_ranges(8000, 1)} == {250}


def test_workers_report_progress_after_each_range_in_game_order() -> None:
    """Over two workers, progress comes after each range, in game order, and the outcomes
    are one worker's."""
    config = ArenaConfig("six_nimmt", ("greedy", "random", "random", "random"), 400, seed=5)
    seen: list[tuple[int, int]] = []
    outcomes = arena.run(config, 2, lambda done, total: seen.append((done, total)))
    assert seen == [(stop, 400) for _, stop in arena.game_ranges(400, 2)]
    assert [outcome.index for outcome in outcomes] == list(range(400))
    assert outcomes == arena.run(config)


def test_a_worker_that_exits_ends_the_run_with_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A bot that exits its worker process ends the run with exit status 6 and one line
    saying so, and leaves no worker behind."""
    assert main(["arena", "--game", "six_nimmt", "--bots", "tests.bots.faulty:Exits,random",
                 "--games", "4", "--workers", "2"]) == 6
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "bullring arena: a worker process ended (exit status 3) before sending back its "
        "games"), err
    assert not multiprocessing.active_children()


def test_a_run_stopped_early_stops_its_workers() -> None:
    """A run that stops early (here its progress callback raises, as Ctrl-C would) stops
    its workers before the exception leaves ``run``."""
    config = ArenaConfig("six_nimmt", ("random",) * 4, 2000, seed=1)

    def interrupt(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as stopped:
        arena.run(config, 2, interrupt)
    assert not multiprocessing.active_children()
    # ``stopped`` holds the run's frames, whose generators would stop the workers once freed
    assert stopped.traceback


def test_forked_workers_run_with_the_parents_objects_frozen(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """While forked workers play, the arena's older objects sit outside the collector's
    generations (no collection on either side copies the pages they share); afterwards they
    are back, and a caller's own freeze is left as it was."""
    monkeypatch.setattr(arena, "worker_context", lambda: multiprocessing.get_context("fork"))
    config = ArenaConfig("six_nimmt", ("random",) * 4, 40, seed=2)
    frozen: list[int] = []
    arena.run(config, 2, lambda done, total: frozen.append(gc.get_freeze_count()))
    assert min(frozen) > 0 and gc.get_freeze_count() == 0
    gc.freeze()
    try:
        mine = gc.get_freeze_count()
        arena.run(config, 2)
        assert gc.get_freeze_count() == mine
    finally:
        gc.unfreeze()
