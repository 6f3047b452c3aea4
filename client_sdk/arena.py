"""The local arena: many full games in-process, the same engine and observations as the server.

Game ``i`` of a run with root seed ``S`` is seeded from ``(S, i)`` alone and seats its bots
rotated by ``i``, so results do not depend on how games are spread over worker processes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

from client_sdk.bot import Bot
from client_sdk.house import UnknownBotError
from referee.core import derive_seed
from referee.registry import GameState, get_game
from referee.replay import answer_event, build_replay, dumps

T = TypeVar("T")
"""What one game of a run gives back."""


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """One finished arena game: who sat where, and what each seat scored."""

    index: int
    bots: tuple[str, ...]
    """Bot name by seat."""
    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    round_scores: tuple[tuple[int, ...], ...]
    """Per round, each seat's penalty (6 nimmt!) or score (No Thanks!)."""


@dataclass(frozen=True, slots=True)
class ArenaConfig:
    """What an arena run plays: the game, the bots in seat order, the settings and seed."""

    game: str
    bots: tuple[str, ...]
    games: int
    seed: int = 0
    settings: Mapping[str, Any] = field(default_factory=dict)
    replays: Path | None = None


def seating(bots: Sequence[str], index: int) -> tuple[str, ...]:
    """Bot names by seat for game ``index``: the lineup rotated by one seat per game."""
    shift = index % len(bots)
    return (*bots[shift:], *bots[:shift])


def play_game(state: GameState, players: Sequence[Bot],
              log: list[dict[str, Any]] | None = None) -> GameState:
    """Play ``state`` to its end, asking ``players[seat]`` for every decision."""
    observe = state.observation
    apply = state.apply
    decide = [player.decide for player in players]
    if log is None:
        while not state.over:
            answers = {}
            for seat in state.pending:
                answers[seat] = decide[seat](observe(seat))
            apply(answers)
        return state
    while not state.over:
        answers = {seat: decide[seat](observe(seat)) for seat in state.pending}
        log.extend(answer_event(state, s, a) for s, a in answers.items())
        apply(answers)
    return state


def make_bot(name: str, game: str, seed: int = 0) -> Bot:
    """A bot for ``game``: the house bot ``name`` (``greedy``), or the bot of a runner spec
    (``house:NAME``, ``package.module:ClassName``, ``path/to/file.py:ClassName``), so an
    author's own bot plays in the arena exactly as it does over the wire (resolved as the
    tournament resolves its entrants)."""
    maker = _makers.get((name, game))
    if maker is None:
        from client_sdk.tournament import TournamentError, bot_maker

        try:
            maker = _makers[name, game] = bot_maker(name, game)
        except TournamentError as exc:
            raise UnknownBotError(str(exc)) from exc
    return maker(seed)


_makers: dict[tuple[str, str], Callable[[int], Bot]] = {}
"""Bot makers already resolved, by (name, game): the arena makes four or five a game."""


def play_one(config: ArenaConfig, index: int) -> GameOutcome:
    """Play game ``index`` of ``config`` and return its outcome (writing its replay if asked)."""
    spec = get_game(config.game)
    names = seating(config.bots, index)
    players = [make_bot(name, spec.id, derive_seed(config.seed, "bot", index, seat))
               for seat, name in enumerate(names)]
    return play_seated(spec.id, names, players, config.settings,
                       derive_seed(config.seed, "game", index), index,
                       config.replays, f"arena-{config.seed}-{index:06d}")


def play_seated(game: str, names: tuple[str, ...], players: Sequence[Bot],
                settings: Mapping[str, Any], game_seed: int, index: int,
                replays: Path | None = None, match_id: str = "") -> GameOutcome:
    """Play one game of ``game`` seeded ``game_seed``, ``players[seat]`` named ``names[seat]``.

    The arena and the tournament both play through here; ``replays`` (a folder) gets
    ``MATCH_ID.json`` when given.
    """
    state = get_game(game).new_state(len(names), settings, game_seed)
    log: list[dict[str, Any]] | None = [] if replays is not None else None
    play_game(state, players, log)
    totals, ranks = state.result()
    if replays is not None and log is not None:
        replay = build_replay(state, match_id=match_id, seat_names=names, events=log)
        replays.mkdir(parents=True, exist_ok=True)
        (replays / f"{replay['match_id']}.json").write_text(dumps(replay))
    return GameOutcome(index, names, totals, ranks, _round_scores(state))


def _round_scores(state: GameState) -> tuple[tuple[int, ...], ...]:
    return tuple(state.round_scores())


def _play_range(args: tuple[ArenaConfig, int, int]) -> list[GameOutcome]:
    config, start, stop = args
    return [play_one(config, i) for i in range(start, stop)]


def run(config: ArenaConfig, workers: int = 1,
        progress: Callable[[int, int], None] | None = None) -> list[GameOutcome]:
    """Play every game of ``config``, over ``workers`` processes; outcomes in game order."""
    spec = get_game(config.game)
    for name in config.bots:
        make_bot(name, spec.id)
    chunk = max(1, min(250, config.games // (workers * 8) or 1))
    ranges = [(config, s, min(s + chunk, config.games)) for s in range(0, config.games, chunk)]
    return run_ranges(_play_range, ranges, config.games, workers, progress)


def run_ranges(play_range: Callable[[Any], list[T]], ranges: Sequence[Any], total: int,
               workers: int, progress: Callable[[int, int], None] | None) -> list[T]:
    """Play each range of games with ``play_range``, here or over ``workers`` processes,
    keeping their order and reporting progress after each; return every result."""
    results: list[T] = []
    with contextlib.ExitStack() as stack:
        if workers <= 1:
            batches: Iterable[list[T]] = map(play_range, ranges)
        else:
            pool = stack.enter_context(multiprocessing.get_context("spawn").Pool(workers))
            batches = pool.imap(play_range, ranges)
        for batch in batches:
            results.extend(batch)
            if progress:
                progress(len(results), total)
    return results


@dataclass(frozen=True, slots=True)
class BotStanding:
    """One bot's results over an arena run."""

    bot: str
    games: int
    win_share: float
    """Wins over games, a tie for first split between the tied seats."""
    mean_round_score: float
    ci95: float
    """Half-width of the 95% interval of ``mean_round_score``."""
    mean_rank: float


def standings(outcomes: Sequence[GameOutcome]) -> list[BotStanding]:
    """Aggregate outcomes per bot name, best win share first."""
    wins: dict[str, float] = {}
    games: dict[str, int] = {}
    ranks: dict[str, int] = {}
    scores: dict[str, list[int]] = {}
    for outcome in outcomes:
        winners = outcome.ranks.count(1)
        for seat, bot in enumerate(outcome.bots):
            games[bot] = games.get(bot, 0) + 1
            ranks[bot] = ranks.get(bot, 0) + outcome.ranks[seat]
            wins[bot] = wins.get(bot, 0.0) + (1 / winners if outcome.ranks[seat] == 1 else 0)
            scores.setdefault(bot, []).extend(r[seat] for r in outcome.round_scores)
    table = []
    for bot, n in games.items():
        values = scores[bot]
        mean = sum(values) / len(values)
        var = sum((v - mean) ** 2 for v in values) / max(1, len(values) - 1)
        table.append(BotStanding(bot, n, wins[bot] / n, mean,
                                 1.96 * math.sqrt(var / len(values)), ranks[bot] / n))
    return sorted(table, key=lambda s: (-s.win_share, s.mean_rank, s.bot))


def format_table(table: Sequence[BotStanding], score_name: str) -> str:
    """Return the standings as an aligned text table."""
    width = max([14, *(len(s.bot) + 2 for s in table)])
    header = f"{'bot':<{width}}{'games':>7}{'win share':>11}{score_name:>24}{'mean rank':>11}"
    lines = [header, "-" * len(header)]
    for s in table:
        score = f"{s.mean_round_score:.2f} ± {s.ci95:.2f}"
        lines.append(f"{s.bot:<{width}}{s.games:>7}{s.win_share:>10.1%}{score:>24}"
                     f"{s.mean_rank:>11.2f}")
    return "\n".join(lines)


def progress_bar(stream: TextIO = sys.stderr) -> Callable[[int, int], None]:
    """Return a callback drawing a one-line progress bar on ``stream``."""
    def draw(done: int, total: int) -> None:
        filled = int(30 * done / total)
        stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} games")
        if done == total:
            stream.write("\n")
        stream.flush()
    return draw


# --------------------------------------------------------------------------- command line


def settings_from_pairs(pairs: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` strings as a settings mapping; a malformed pair exits with a message."""
    settings: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"bullring: --setting wants KEY=VALUE, not {pair!r}")
        settings[key] = value
    return settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``bullring arena`` options to ``parser``."""
    parser.add_argument("--game", required=True, help="six_nimmt or no_thanks (or id/version)")
    parser.add_argument("--bots", required=True,
                        help="bots in seat order, comma separated: house bot names or specs "
                             "(house:NAME, module:Class, path/to/file.py:Class)")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--setting", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--replays", type=Path, metavar="DIR", help="write one replay per game")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")


def run_from_args(args: argparse.Namespace) -> int:
    """Run ``bullring arena``: play the games, print the standings; return the exit status."""
    from client_sdk.tournament import TournamentError
    from referee.core import RefereeError

    bots = tuple(b.strip() for b in args.bots.split(",") if b.strip())
    config = ArenaConfig(args.game, bots, args.games, args.seed,
                         settings_from_pairs(args.setting), args.replays)
    if os.getcwd() not in sys.path:  # `module:Class` finds modules in the current folder
        sys.path.insert(0, os.getcwd())
    try:
        spec = get_game(args.game)
        spec.new_state(len(bots), config.settings, 0)
        show = sys.stderr.isatty() and args.games >= 100
        outcomes = run(config, args.workers, progress_bar() if show else None)
    except (RefereeError, UnknownBotError, TournamentError) as exc:  # a bot that raised, too
        print(f"bullring arena: {exc}", file=sys.stderr)
        return 2
    table = standings(outcomes)
    score_name = "penalty/round ± 95%" if spec.id == "six_nimmt" else "score/round ± 95%"
    if args.json:
        print(json.dumps([{k: getattr(s, k) for k in s.__slots__} for s in table], indent=2))
    else:
        print(f"{spec.title} — {args.games} games, seed {args.seed}, seats: {', '.join(bots)}")
        print(format_table(table, score_name))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``bullring-arena``: the arena alone, as the bot SDK installs it."""
    parser = argparse.ArgumentParser(prog="bullring-arena", description=__doc__)
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))
