"""``bullring tournament`` on the live ladder: with ``--server HOST:PORT`` (and the admin
token) or ``--db URL`` it runs among registered bots on the server, between their ladder
matches, instead of in this process.

``--bots a,b,c,d --format F --games N`` starts one, waits while it plays (printing its
progress on stderr) and prints the standings with 95% intervals once it is over; with
``--detach`` it prints the tournament's id at once. ``--show ID`` prints a tournament's
standings so far, ``--cancel ID`` cancels it. A game waits ``--absent-wait`` seconds for a
bot that is not on the game's ladder, then plays its seat on default actions; a bot absent at
two of its games in a row forfeits. ``--pace-ms`` plays it slowly, for people to watch (the
least time from one decision of its matches to the next). Stopping the command leaves the
tournament running.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from bullring import commandline as cli
from bullring.sdk.cli import tournament as tournament_cli
from bullring.sdk.standings import SCORE_LABEL, Standing, standings_lines
from bullring.server.cli import options
from bullring.server.cli.access import LadderAccess, Row, access

POLL_S = 1.0
"""How often a waiting command asks how the tournament stands."""
LOST_S = 120.0
"""How long a waiting command keeps asking a server that does not answer (one restarting)."""
HERE_ONLY = {"seed": 0, "setting": [], "workers": 1, "replays": None}
"""Options of a tournament played in this process only, with their defaults."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the in-process options and the live ones to ``parser``."""
    tournament_cli.add_arguments(parser, live=True)
    options.add_ladder_location(parser, admin=True)
    for action in parser._actions:
        if "--db" in action.option_strings:
            action.help = "database URL: the tournament runs on the servers on it"
    live = parser.add_argument_group(
        "live tournaments (with --server or --db)",
        "among registered bots, played on the server's ladder streams")
    live.add_argument("--bots", dest="entrants", type=cli.BotNames(), metavar="NAME,...",
                      help="the registered bots to start a tournament among")
    live.add_argument("--absent-wait", type=cli.Seconds(0), default=None, metavar="SECONDS",
                      help="how long a game waits for a bot not on the ladder before its "
                           "seat plays on default actions (default: 30)")
    live.add_argument("--pace-ms", type=cli.Integer(0, 60_000), default=None,
                      metavar="MS",
                      help="play its matches slowly, for people to watch the bots think: at "
                           "least MS from one decision to the next (default: 0, machine "
                           "speed; the bots' deadlines are untouched)")
    live.add_argument("--detach", action="store_true",
                      help="print the new tournament's id and return at once")
    live.add_argument("--show", type=cli.Text(64), metavar="ID",
                      help="print a tournament's standings so far (exit 1 if it was "
                           "cancelled)")
    live.add_argument("--cancel", type=cli.Text(64), metavar="ID",
                      help="cancel a running tournament (its games not started are not "
                           "played)")
    cli.command(parser, run)


def run(args: argparse.Namespace) -> int:
    """Run ``bullring tournament``: here, or live with --server or --db."""
    live_only = [flag for flag, given in (("--bots", args.entrants), ("--show", args.show),
                                          ("--cancel", args.cancel), ("--detach", args.detach),
                                          ("--absent-wait", args.absent_wait is not None),
                                          ("--pace-ms", args.pace_ms is not None))
                 if given]
    if not (args.server or args.db):
        if live_only:
            raise cli.UsageError(f"{live_only[0]}: a live tournament needs --server or --db")
        for flag in ("format", "games"):
            if getattr(args, flag) is None:
                raise cli.UsageError(f"--{flag}: required")
        if not args.bots:
            raise cli.UsageError("BOT: name the entrants (house bots or module:Class)")
        return tournament_cli.run_from_args(args)
    here = [f"--{name}" for name, unset in HERE_ONLY.items() if getattr(args, name) != unset]
    if args.bots or here:
        raise cli.UsageError(f"{(here or ['BOT'])[0]}: only for a tournament played here; "
                             f"a live tournament names registered bots with --bots")
    if args.show and args.cancel:
        raise cli.UsageError("--show: give --show or --cancel, not both")
    where = access(args)
    if args.cancel:
        row = where.cancel_tournament(args.cancel)
        print(f"tournament {row['tournament_id']} cancelled after {row['played']} of "
              f"{row['total']} games")
        return 0
    if args.show:
        return _print(args, where.tournament(args.show))
    for flag, value in (("--bots", args.entrants), ("--format", args.format),
                        ("--games", args.games)):
        if value is None:
            raise cli.UsageError(f"{flag}: required to start a tournament")
    row = where.create_tournament(args.game, args.format, args.entrants, args.games,
                                  args.seats, args.absent_wait, args.pace_ms or 0)
    if args.detach:
        print(row["tournament_id"])
        return 0
    print(f"tournament {row['tournament_id']}: {row['total']} games; waiting for its end "
          f"(it goes on if this command stops: --show {row['tournament_id']})",
          file=sys.stderr, flush=True)
    return _print(args, _wait(where, row))


def _wait(where: LadderAccess, row: Row) -> Row:
    """Ask how ``row`` stands every ``POLL_S`` until it is over; its last state. A server
    that stops answering is asked again for up to ``LOST_S`` seconds (the tournament goes
    on when a server on its database comes back)."""
    played = -1
    lost: float | None = None
    while row["status"] == "running":
        if row["played"] != played:
            played = row["played"]
            print(f"played {played} of {row['total']}", file=sys.stderr, flush=True)
        time.sleep(POLL_S)
        try:
            row = where.tournament(row["tournament_id"])
        except cli.UnreachableError as exc:
            now = time.monotonic()
            if lost is None:
                lost = now
                print(f"{exc}; asking again for {LOST_S:g} s", file=sys.stderr, flush=True)
            elif now - lost > LOST_S:
                raise
            continue
        lost = None
    return row


def report(row: Row) -> str:
    """A tournament as a heading, its standings table and its forfeits."""
    units = "deal" if row["format"] == "duplicate" else "game"
    lines = [f"{row['game']} {row['format']} tournament {row['tournament_id']}: "
             f"{row['status']}, {row['played']} of {row['total']} games played, tables of "
             f"{row['seats']}",
             f"(lower {SCORE_LABEL} is better; vs field = own minus "
             f"table-mates' mean, per {units}; ± is a 95% interval)"]
    lines += standings_lines([Standing.from_json(s) for s in row["standings"]], row["game"])
    if not row["standings"]:
        lines.append("(no game finished yet)")
    if row["forfeited"]:
        lines.append(f"forfeited: {', '.join(row['forfeited'])}")
    return "\n".join(lines)


def _print(args: argparse.Namespace, row: Row) -> int:
    """Print ``row`` (as JSON with --json); 1 when it was cancelled."""
    print(json.dumps(row, indent=2) if args.json else report(row))
    return 1 if row["status"] == "cancelled" else 0
