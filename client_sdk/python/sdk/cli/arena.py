"""``bullring arena`` and ``bullring-arena``: play many local games between bots, in-process
on the same engine, observations and default actions as the server.

Game i of a run with root seed S is seeded from (S, i) alone and seats its bots rotated by i,
so --workers K gives exactly the results of one worker.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from bullring import commandline as cli

# The engines (and gRPC) are imported inside run_from_args, so that --help starts fast.


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``bullring arena`` options to ``parser``."""
    parser.add_argument("--game", required=True, type=cli.GameName(),
                        help="six_nimmt or no_thanks (or id/version)")
    parser.add_argument("--bots", required=True, type=cli.BotSpecList(),
                        help="bots in seat order, comma separated: house bot names or specs "
                             "(house:NAME, module:Class, path/to/file.py:Class)")
    parser.add_argument("--games", type=cli.positive(), default=100,
                        help="games to play (default: 100)")
    parser.add_argument("--seed", type=cli.Integer(), default=0, help="the root seed")
    parser.add_argument("--setting", action="append", default=[], type=cli.SettingPair(),
                        metavar="KEY=VALUE", help="a setting of every game")
    parser.add_argument("--replays", type=cli.WritableDir(), metavar="DIR",
                        help="write one replay per game")
    parser.add_argument("--workers", type=cli.Integer(1, 256), default=1,
                        help="worker processes (default: 1)")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    cli.command(parser, run_from_args)


def run_from_args(args: argparse.Namespace) -> int:
    """Run ``bullring arena``: play the games, print the standings; return the exit status."""
    from bullring.referee.registry import get_game
    from bullring.sdk import arena
    from bullring.sdk.standings import SCORE_LABEL

    settings = cli.game_settings(args.game, args.setting)
    bots = tuple(args.bots)
    config = arena.ArenaConfig(args.game, bots, args.games, args.seed, settings, args.replays)
    if os.getcwd() not in sys.path:  # `module:Class` finds modules in the current folder
        sys.path.insert(0, os.getcwd())
    arena.check_bots(args.game, bots, settings)
    spec = get_game(args.game)
    show = sys.stderr.isatty() and args.games >= 100
    outcomes = arena.run(config, args.workers, arena.progress_bar() if show else None)
    table = arena.standings(outcomes)
    score_name = f"{SCORE_LABEL} ± 95%"
    if args.json:
        print(json.dumps([{k: getattr(s, k) for k in s.__slots__} for s in table], indent=2))
        return 0
    print(f"{spec.title} — {args.games} games, seed {args.seed}, seats: {', '.join(bots)}")
    print(arena.format_table(table, score_name))
    ranked = sorted(table, key=lambda s: s.mean_round_score)
    if len(ranked) >= 2:
        best, second = ranked[0], ranked[1]
        note = arena.overlap_note(
            best.bot, best.mean_round_score, best.ci95, second.bot, second.mean_round_score,
            second.ci95, f"A duplicate tournament deals the same hands to both and needs far "
                         f"fewer games: bullring tournament --game {spec.id} --format duplicate "
                         f"--seats 2 --games {max(200, args.games)} {best.bot} {second.bot}")
        if note:
            print(note)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``bullring-arena``."""
    parser = cli.new_parser("bullring-arena", __doc__)
    add_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``bullring-arena``: the arena alone, as the bot SDK installs it."""
    return cli.run("bullring-arena", build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
