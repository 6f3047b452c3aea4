"""The ladder's commands: ``bullring bots``, ``leaderboard``, ``matches``, ``match create``,
``replay export`` and ``admin rotate-token``.

Each works on the database (``--db URL``, by default ``bullring.db`` here) or on a running
server (``--server HOST:PORT``, over gRPC). Whoever may write the database is its local admin;
over the network, the commands that change the ladder need the admin token (``--admin-token``
or ``$BULLRING_ADMIN_TOKEN``): ``bullring serve`` prints it on its first start, ``bullring
admin rotate-token`` makes a new one. Commands that only read never create a database.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from bullring import commandline as cli
from bullring.server.cli import options
from bullring.server.cli.access import LadderAccess, access

STATUSES = ("created", "running", "finished", "aborted")

RATING_LABEL = "rating"
"""The leaderboard's rating, mu - 3 sigma (``ordinal`` in JSON), as the web page names it."""
INTERVAL_LABEL = "skill interval (μ ± 3σ)"
"""The leaderboard's mu ± 3 sigma, as the web page names and writes it (``43.15 ± 11.70``)."""
"""A match's statuses, as ``--status`` names them."""


def ladder(args: argparse.Namespace) -> LadderAccess:
    """The ladder the command works on: the database, or the server named by ``--server``."""
    return access(args)


# --------------------------------------------------------------------------- bots


def _bots(args: argparse.Namespace) -> int:
    where = ladder(args)
    name = getattr(args, "name", "")
    if args.bots_command == "add":
        token = where.add_bot(name, args.owner)
        print(f"bot {name} registered; its token (shown once, only a hash is stored):")
        print(token)
    elif args.bots_command == "version":
        print(f"bot {name} is now version {where.new_version(name)} "
              f"(its ratings keep their mean, with a wider interval)")
    elif args.bots_command in ("disable", "enable"):
        where.set_enabled(name, args.bots_command == "enable")
        print(f"bot {name} {args.bots_command}d")
    elif args.bots_command == "rotate-token":
        token = where.rotate_token(name)
        print(f"bot {name} has a new token (the old one no longer works):")
        print(token)
    else:
        rows = where.bots()
        if args.json:
            print(json.dumps(rows, indent=2))
            return 0
        print(f"{'bot':<24} {'version':>7} {'enabled':>7}  {'owner':<16} playing")
        for b in rows:
            print(f"{b['name']:<24} {b['version']:>7} {'yes' if b['enabled'] else 'no':>7}  "
                  f"{(b['owner'] or '-'):<16} {b['playing'] or '-'}")
    return 0


# --------------------------------------------------------------------------- reads


def _leaderboard(args: argparse.Namespace) -> int:
    entries = ladder(args).leaderboard(args.game)
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    print(f"{args.game} leaderboard (best first by {RATING_LABEL}, μ - 3σ)")
    print(f"{'#':>3} {'bot':<24} {'version':>7} {'games':>6} {RATING_LABEL:>8} "
          f"{INTERVAL_LABEL:>24}")
    for place, e in enumerate(entries, 1):
        interval = f"{e['mu']:.2f} ± {3 * e['sigma']:.2f}"
        print(f"{place:>3} {e['bot']:<24} {e['version']:>7} {e['games']:>6} "
              f"{e['ordinal']:>8.2f} {interval:>24}")
    if not entries:
        print("    (no rated bot yet)")
    return 0


def _matches(args: argparse.Namespace) -> int:
    rows = ladder(args).matches(bot=args.bot, since=args.since, until=args.until,
                                game=args.game, status=args.status, limit=args.limit)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        totals = "" if row["totals"] is None else f"  totals {row['totals']}"
        print(f"{row['match_id']}  {row['created_at'][:19]}  {row['game']:<9} "
              f"{row['status']:<8} {', '.join(row['seats'])}{totals}")
    return 0


def _replay_export(args: argparse.Namespace) -> int:
    from bullring.referee.replay import dumps

    if (args.all is None) == (args.match_id is None):
        raise cli.UsageError("give a MATCH_ID or --all DIR (one of them)")
    where = ladder(args)
    if args.all is not None:
        args.all.mkdir(parents=True, exist_ok=True)
        written = 0
        for match_id in where.finished_match_ids():
            (args.all / f"{match_id}.json").write_text(dumps(where.replay(match_id)),
                                                       encoding="utf-8")
            written += 1
        print(f"wrote {written} replays to {args.all}")
        return 0
    replay = where.replay(args.match_id)
    if args.out is None:
        print(dumps(replay))
    else:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"{args.match_id}.json").write_text(dumps(replay), encoding="utf-8")
    return 0


# --------------------------------------------------------------------------- changes


def _match_create(args: argparse.Namespace) -> int:
    settings = cli.game_settings(args.game, args.setting)
    if args.deadline_ms is not None:
        settings["deadline_ms"] = str(args.deadline_ms)
        settings = cli.game_settings(args.game, list(settings.items()), "--deadline-ms")
    house: dict[int, str] = {}
    for seat, name in args.house:
        if not seat < args.seats:
            raise cli.UsageError(f"--house: seat {seat} is not a seat of a {args.seats}-seat "
                                 f"match (0..{args.seats - 1})")
        house[seat] = name
    humans = set(args.human)
    for seat in humans:
        if not seat < args.seats or seat in house:
            raise cli.UsageError(f"--human: seat {seat} is not a free seat of this "
                                 f"{args.seats}-seat match")
    match_id, tokens = ladder(args).create_match(args.game, args.seats, settings, args.seed,
                                                 house, sorted(humans))
    print(f"match {match_id}")
    for seat, token in enumerate(tokens):
        line = f"seat {seat} {'house:' + house[seat] if token is None else 'token ' + token}"
        if token is not None and seat in humans:
            line += f" play: {args.web.rstrip('/')}/play/{match_id}#{token}"
        print(line)
    return 0


def _admin(args: argparse.Namespace) -> int:
    token = ladder(args).rotate_admin_token()
    print("the new admin token (shown once, only a hash is stored; the old one no longer works):")
    print(token)
    return 0


# --------------------------------------------------------------------------- the parsers


def _command(parser: argparse.ArgumentParser, run: Callable[[argparse.Namespace], int], *,
             admin: bool) -> None:
    options.add_ladder_location(parser, admin=admin)
    cli.command(parser, run)


def add_commands(commands: cli.Commands) -> None:
    """Add ``bots``, ``leaderboard``, ``matches``, ``match`` and ``admin`` to ``bullring``."""
    bots = commands.add_parser("bots", help="the bot registry",
                               description="The bot registry: " + __doc__.split("\n\n")[1])
    bots_commands = bots.add_subparsers(dest="bots_command", required=True, metavar="COMMAND")
    add = bots_commands.add_parser("add", help="register a bot and print its token once")
    add.add_argument("name", type=cli.BotName(), metavar="NAME",
                     help="1-64 letters, digits, '-', '_' or '.'")
    add.add_argument("--owner", default="", type=cli.Text(100), help="who the bot belongs to")
    _command(add, _bots, admin=True)
    for name, text in (("version", "start a new version (widens its rating interval)"),
                       ("disable", "stop seating the bot and hide it from the leaderboard"),
                       ("enable", "seat the bot again"),
                       ("rotate-token", "give the bot a new token; the old one stops working")):
        one = bots_commands.add_parser(name, help=text)
        one.add_argument("name", type=cli.BotName(), metavar="NAME", help="the bot's name")
        _command(one, _bots, admin=True)
    listing = bots_commands.add_parser("list", help="list the registered bots")
    listing.add_argument("--json", action="store_true", help="print JSON")
    _command(listing, _bots, admin=False)

    board = commands.add_parser("leaderboard", help="a game's ratings, best first")
    board.add_argument("--game", required=True, type=cli.GameName())
    board.add_argument("--json", action="store_true", help="print JSON")
    _command(board, _leaderboard, admin=False)

    log = commands.add_parser("matches", help="the match log, newest first")
    log.add_argument("--bot", type=cli.BotName(), help="only matches this bot sat in")
    log.add_argument("--since", type=cli.When(), help="created at or after (ISO time or 2h)")
    log.add_argument("--until", type=cli.When(), help="created before (ISO time or 30m)")
    log.add_argument("--game", type=cli.GameName(), help="only matches of this game")
    log.add_argument("--status", choices=STATUSES, help="only matches in this status")
    log.add_argument("--limit", type=cli.Integer(1, 1000), default=50,
                     help="at most this many (default: 50)")
    log.add_argument("--json", action="store_true", help="print JSON")
    _command(log, _matches, admin=False)

    match = commands.add_parser("match", help="create a match")
    match_commands = match.add_subparsers(dest="match_command", required=True,
                                          metavar="COMMAND")
    create = match_commands.add_parser("create", help="register a match, print seat tokens")
    create.add_argument("--game", required=True, type=cli.GameName())
    create.add_argument("--seats", type=cli.Integer(2, 10), required=True,
                        help="seats at the table")
    create.add_argument("--setting", action="append", default=[], type=cli.SettingPair(),
                        metavar="KEY=VALUE", help="a setting of the match")
    create.add_argument("--deadline-ms", type=cli.Integer(10, 60_000),
                        help="time for each decision (the deadline_ms setting)")
    create.add_argument("--house", action="append", default=[], type=cli.HouseSeat(),
                        metavar="SEAT=NAME", help="a house bot plays SEAT (0-based)")
    create.add_argument("--human", action="append", default=[], type=cli.Integer(0, 9),
                        metavar="SEAT", help="a person plays SEAT in the browser: its line "
                        "ends with the link to open (the deadline is 30000 ms unless given)")
    create.add_argument("--web", default="http://127.0.0.1:8080", type=cli.Text(200),
                        metavar="URL", help="the server's web address, for --human's links "
                                            "(default: http://127.0.0.1:8080)")
    create.add_argument("--seed", type=cli.Integer(0, 2**31 - 1), default=None,
                        help="the deal's root seed (default: a fresh random one, shown in the "
                             "replay once the match has ended)")
    _command(create, _match_create, admin=True)

    admin = commands.add_parser("admin", help="the admin token")
    admin_commands = admin.add_subparsers(dest="admin_command", required=True,
                                          metavar="COMMAND")
    rotate = admin_commands.add_parser("rotate-token", help="make and print a new admin token")
    _command(rotate, _admin, admin=True)


def add_replay_export(commands: cli.Commands) -> None:
    """Add ``replay export`` to the ``replay`` command."""
    export = commands.add_parser("export", help="print or write a stored replay")
    export.add_argument("match_id", nargs="?", type=cli.MatchId(), metavar="MATCH_ID",
                        help="the match whose replay to print (or --all)")
    export.add_argument("--all", type=cli.WritableDir(), metavar="DIR",
                        help="write every finished match to DIR/MATCH_ID.json")
    export.add_argument("--out", type=cli.WritableDir(), metavar="DIR",
                        help="write DIR/MATCH_ID.json")
    _command(export, _replay_export, admin=False)
