"""The ladder's commands: ``bullring bots``, ``leaderboard``, ``matches``, ``admin``.

They open the database directly, so whoever may write the database is its local admin.
With ``--server HOST:PORT`` the ``bots`` commands go over gRPC (AdminService) instead, and
need the admin token: its hash is stored; ``bullring serve`` prints the token the first
time, ``bullring admin rotate-token`` makes a new one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from server.store import DEFAULT_DB, BotError, Store

_AGO = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def parse_time(text: str) -> datetime:
    """An ISO date/time (UTC unless it says otherwise) or an age such as ``30m``, ``2h``."""
    ago = _AGO.match(text)
    if ago:
        return datetime.now(UTC) - timedelta(**{_UNITS[ago.group(2)]: float(ago.group(1))})
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither an ISO time (2026-12-02T17:00) nor an age (30m, 2h, 1d)"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _bots_remote(args: argparse.Namespace) -> int:
    """Run a ``bots`` command over gRPC (AdminService) with the admin token."""
    import asyncio

    import grpc

    from client_sdk import wire
    from client_sdk.generated.bullring.v2 import referee_pb2 as pb

    token = args.admin_token or os.environ.get("BULLRING_ADMIN_TOKEN")
    if not token:
        print("bullring bots: --server needs the admin token (--admin-token or "
              "$BULLRING_ADMIN_TOKEN)", file=sys.stderr)
        return 2
    calls: dict[str, tuple[str, Any]] = {
        "add": ("RegisterBot", lambda: pb.RegisterBotRequest(name=args.name, owner=args.owner)),
        "version": ("NewBotVersion", lambda: pb.NewBotVersionRequest(name=args.name)),
        "disable": ("SetBotEnabled", lambda: pb.SetBotEnabledRequest(name=args.name)),
        "enable": ("SetBotEnabled", lambda: pb.SetBotEnabledRequest(name=args.name,
                                                                     enabled=True)),
        "rotate-token": ("RotateBotToken", lambda: pb.RotateBotTokenRequest(name=args.name)),
    }
    if args.bots_command not in calls:
        print(f"bullring bots: {args.bots_command} reads the database; use --db",
              file=sys.stderr)
        return 2
    method, request = calls[args.bots_command]

    async def call() -> Any:
        async with grpc.aio.insecure_channel(args.server) as channel:
            return await wire.admin_stub(channel)[method](
                request(), metadata=(("authorization", f"Bearer {token}"),), timeout=30)

    try:
        reply = asyncio.run(call())
    except grpc.aio.AioRpcError as exc:
        print(f"bullring bots: {exc.code().name}: {exc.details()}", file=sys.stderr)
        return 3 if exc.code() in (grpc.StatusCode.UNAUTHENTICATED,
                                   grpc.StatusCode.PERMISSION_DENIED) else 2
    if args.bots_command in ("add", "rotate-token"):
        print(f"bot {args.name}'s token (shown once, only a hash is stored):")
        print(reply.token)
    elif args.bots_command == "version":
        print(f"bot {args.name} is now version {reply.version}")
    else:
        print(f"bot {args.name} {args.bots_command}d")
    return 0


def _bots(args: argparse.Namespace) -> int:
    if getattr(args, "server", None):
        return _bots_remote(args)
    store = Store(args.db)
    try:
        if args.bots_command == "add":
            token = store.add_bot(args.name, args.owner)
            print(f"bot {args.name} registered; its token (shown once, only a hash is stored):")
            print(token)
        elif args.bots_command == "version":
            print(f"bot {args.name} is now version {store.new_version(args.name)} "
                  f"(its ratings keep their mean, with a wider interval)")
        elif args.bots_command in ("disable", "enable"):
            store.set_enabled(args.name, args.bots_command == "enable")
            print(f"bot {args.name} {args.bots_command}d")
        elif args.bots_command == "rotate-token":
            token = store.rotate_token(args.name)
            print(f"bot {args.name} has a new token (the old one no longer works):")
            print(token)
        else:
            rows = store.bots()
            if args.json:
                print(json.dumps([{"name": b.name, "owner": b.owner, "version": b.version,
                                   "enabled": b.enabled, "house": b.house,
                                   "playing": b.current_match} for b in rows], indent=2))
            else:
                print(f"{'bot':<24} {'version':>7} {'enabled':>7}  {'owner':<16} playing")
                for b in rows:
                    print(f"{b.name:<24} {b.version:>7} {'yes' if b.enabled else 'no':>7}  "
                          f"{(b.owner or '-'):<16} {b.current_match or '-'}")
    except BotError as exc:
        print(f"bullring bots: {exc}", file=sys.stderr)
        return 2
    return 0


def _leaderboard(args: argparse.Namespace) -> int:
    from referee.registry import get_game

    game = get_game(args.game).id
    entries = Store(args.db).leaderboard(game)
    if args.json:
        print(json.dumps([{k: getattr(e, k) for k in e.__slots__} for e in entries], indent=2))
        return 0
    print(f"{game} leaderboard (ordered by mu - 3 sigma)")
    print(f"{'#':>3} {'bot':<24} {'ver':>3} {'games':>6} {'mu':>7} {'mu ± 3 sigma':>20} "
          f"{'ordinal':>8}")
    for place, e in enumerate(entries, 1):
        interval = f"{e.mu - 3 * e.sigma:.1f} .. {e.mu + 3 * e.sigma:.1f}"
        print(f"{place:>3} {e.bot:<24} {e.version:>3} {e.games:>6} {e.mu:>7.2f} "
              f"{interval:>20} {e.ordinal:>8.2f}")
    return 0


def _matches(args: argparse.Namespace) -> int:
    store = Store(args.db)
    rows = store.matches(bot=args.bot, since=args.since, until=args.until, game=args.game,
                         status=args.status, limit=args.limit)
    seats = store.seats([m.id for m in rows])
    out: list[dict[str, Any]] = []
    for m in rows:
        totals = json.loads(m.replay_json)["totals"] if m.replay_json else None
        out.append({"match_id": m.id, "game": m.game, "status": m.status,
                    "ladder": m.ladder, "created_at": m.created_at.isoformat(),
                    "finished_at": m.finished_at.isoformat() if m.finished_at else None,
                    "seats": [s.name for s in seats[m.id]], "totals": totals})
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for row in out:
        totals = "" if row["totals"] is None else f"  totals {row['totals']}"
        print(f"{row['match_id']}  {row['created_at'][:19]}  {row['game']:<9} "
              f"{row['status']:<8} {', '.join(row['seats'])}{totals}")
    return 0


def _admin(args: argparse.Namespace) -> int:
    token = Store(args.db).rotate_admin_token()
    print("the new admin token (shown once, only a hash is stored; the old one no longer works):")
    print(token)
    return 0


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bots``, ``leaderboard``, ``matches`` and ``admin`` to the ``bullring`` parser."""
    bots = commands.add_parser("bots", help="the bot registry (local admin: writes the DB)")
    bots_commands = bots.add_subparsers(dest="bots_command", required=True)
    add = bots_commands.add_parser("add", help="register a bot and print its token once")
    add.add_argument("name")
    add.add_argument("--owner", default="", help="who the bot belongs to")
    for name, text in (("version", "start a new version (widens its rating interval)"),
                       ("disable", "stop seating the bot and hide it from the leaderboard"),
                       ("enable", "seat the bot again"),
                       ("rotate-token", "give the bot a new token; the old one stops working")):
        one = bots_commands.add_parser(name, help=text)
        one.add_argument("name")
    listing = bots_commands.add_parser("list", help="list the registered bots")
    listing.add_argument("--json", action="store_true")
    for sub in bots_commands.choices.values():
        sub.add_argument("--db", default=DEFAULT_DB, help="database URL")
        if sub is not listing:
            sub.add_argument("--server", metavar="HOST:PORT",
                             help="do it over gRPC on this server instead of the database")
            sub.add_argument("--admin-token", metavar="TOKEN",
                             help="with --server: the admin token ($BULLRING_ADMIN_TOKEN)")
    bots.set_defaults(run=_bots)

    board = commands.add_parser("leaderboard", help="a game's ratings, best first")
    board.add_argument("--game", required=True)
    board.add_argument("--json", action="store_true")
    board.add_argument("--db", default=DEFAULT_DB, help="database URL")
    board.set_defaults(run=_leaderboard)

    log = commands.add_parser("matches", help="the match log, newest first")
    log.add_argument("--bot", help="only matches this registered bot sat in")
    log.add_argument("--since", type=parse_time, help="created at or after (ISO time or 2h)")
    log.add_argument("--until", type=parse_time, help="created before (ISO time or 30m)")
    log.add_argument("--game")
    log.add_argument("--status", choices=("created", "running", "finished", "aborted"))
    log.add_argument("--limit", type=int, default=50)
    log.add_argument("--json", action="store_true")
    log.add_argument("--db", default=DEFAULT_DB, help="database URL")
    log.set_defaults(run=_matches)

    admin = commands.add_parser("admin", help="the admin token")
    admin_commands = admin.add_subparsers(dest="admin_command", required=True)
    rotate = admin_commands.add_parser("rotate-token", help="make and print a new admin token")
    rotate.add_argument("--db", default=DEFAULT_DB, help="database URL")
    admin.set_defaults(run=_admin)
