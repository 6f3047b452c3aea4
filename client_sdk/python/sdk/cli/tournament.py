"""``bullring tournament`` and ``bullring-tournament``: round-robin or duplicate tournaments,
in-process on the arena's engine path.

Every table of --seats drawn from the entrants (one table when they all fit) plays --games
games. round-robin: each game its own deal, seats rotated game by game. duplicate: each deal
is played once in every rotation of the table, so every bot holds every hand.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from bullring import commandline as cli
from bullring.sdk.tournament import FORMATS

# The engines (and gRPC) are imported inside run_from_args, so that --help starts fast.

def add_arguments(parser: argparse.ArgumentParser, live: bool = False) -> None:
    """Add the ``bullring tournament`` options and the positional entrants to ``parser``;
    ``live``: the full install's, where a live tournament on a server needs no entrant
    here and --format and --games only to start one (checked when it runs)."""
    parser.add_argument("--game", default="six_nimmt", type=cli.GameName(),
                        help="six_nimmt or no_thanks (or id/version; default: six_nimmt)")
    parser.add_argument("--format", required=not live, choices=FORMATS)
    parser.add_argument("--games", type=cli.positive(), required=not live,
                        help="games at every table (duplicate: rounded up to whole deals)")
    parser.add_argument("--seats", type=cli.Integer(2), default=None,
                        help="table size (default: every entrant at one table)")
    parser.add_argument("--seed", type=cli.Integer(), default=0, help="the root seed")
    parser.add_argument("--setting", action="append", default=[], type=cli.SettingPair(),
                        metavar="KEY=VALUE", help="a setting of every game")
    parser.add_argument("--workers", type=cli.Integer(1, 256), default=1,
                        help="worker processes (default: 1)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--replays", type=cli.WritableDir(), metavar="DIR",
                        help="write one replay per game")
    parser.add_argument("bots", nargs="*" if live else "+", metavar="BOT",
                        type=cli.BotSpec(bare_house=True),
                        help="a house bot (random, greedy, never_take, threshold) or "
                             "module:Class; name one twice to seat it twice")
    cli.command(parser, run_from_args)


def run_from_args(args: argparse.Namespace) -> int:
    """Run ``bullring tournament``: print the report; 0 when played."""
    from bullring.sdk import tournament
    from bullring.sdk.arena import progress_bar

    if os.getcwd() not in sys.path:  # `module:Class` finds modules in the current folder
        sys.path.insert(0, os.getcwd())
    settings = cli.game_settings(args.game, args.setting)
    config = tournament.TournamentConfig(args.game, args.format, tuple(args.bots), args.games,
                                         args.seats, args.seed, settings, args.replays)
    tournament.validate(config)  # a TournamentError exits 2 (USAGE) with its message
    show = sys.stderr.isatty()
    played = tournament.run(config, args.workers, progress_bar() if show else None)
    rep = tournament.report(config, played)
    if args.json:
        print(json.dumps(rep.to_json(), indent=2))
        return 0
    print(tournament.format_report(rep))
    note = tournament.report_note(rep)
    if note:
        print(note)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``bullring-tournament``."""
    parser = cli.new_parser("bullring-tournament", __doc__)
    add_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``bullring-tournament``: tournaments, as the bot SDK installs them."""
    return cli.run("bullring-tournament", build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
