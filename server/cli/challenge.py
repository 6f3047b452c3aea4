"""``bullring challenge``: practice matches and challenges, as a registered bot.

Each subcommand acts as the bot whose token it is given (``--token`` or
``$BULLRING_TOKEN``), on a running server (``--server HOST:PORT``, over gRPC) or on the
database (``--db URL``). ``create`` challenges opponents in seat order (``house:greedy`` or
a registered bot); ``list`` and ``show`` say where each challenge stands (``show`` exits 1
when it was declined, cancelled or expired, printing who and why; a challenge not answered
within the server's ``--challenge-expiry`` expires); the named bots' owners ``accept``
or ``decline``, or turn ``auto-accept`` on. An accepted challenge is played, unrated, on the
bots' ladder connections (``bullring bot --ladder GAME``).
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from bullring import commandline as cli
from bullring.server.cli import options
from bullring.server.cli.access import Row, _rpc_error
from bullring.server.store.times import iso

ENDED_UNPLAYED = ("declined", "cancelled", "expired")
"""A challenge's statuses once it can no longer be played (``show`` exits 1)."""


def _token(args: argparse.Namespace) -> str:
    token = args.token or os.environ.get("BULLRING_TOKEN")
    if not token:
        raise cli.UsageError("--token: a registered bot's token is needed (--token or "
                             "$BULLRING_TOKEN)")
    return str(token)


def _row(challenge: Any) -> Row:
    """A challenge (store or wire form) as plain JSON values."""
    if hasattr(challenge, "challenge_id"):
        return {"id": challenge.challenge_id, "game": challenge.game,
                "challenger": challenge.challenger, "opponents": list(challenge.opponents),
                "answers": dict(challenge.answers), "status": challenge.status,
                "message": challenge.message, "match_id": challenge.match_id or None,
                "created_at": iso(challenge.created_ms)}
    return {"id": challenge.id, "game": challenge.game, "challenger": challenge.challenger,
            "opponents": list(challenge.opponents), "answers": dict(challenge.answers),
            "status": challenge.status, "message": challenge.message,
            "match_id": challenge.match_id,
            "created_at": challenge.created_at.isoformat(timespec="seconds")}


def _remote(args: argparse.Namespace, method: str, **fields: Any) -> Any:
    import asyncio

    import grpc

    from bullring.contract import wire

    request = wire.CHALLENGE_METHODS[method][0](**fields)
    metadata = (("authorization", f"Bearer {_token(args)}"),)

    async def call() -> Any:
        async with grpc.aio.insecure_channel(args.server) as channel:
            return await wire.challenge_stub(channel)[method](request, metadata=metadata,
                                                              timeout=30)
    try:
        reply = asyncio.run(call())
    except grpc.aio.AioRpcError as exc:
        if exc.code() == grpc.StatusCode.UNAUTHENTICATED:
            raise cli.RefusedError(f"{args.server} refused the token: {exc.details()}") \
                from None
        raise _rpc_error(args.server, exc) from None
    return reply


def _local(args: argparse.Namespace, method: str, **fields: Any) -> Any:
    """``method`` done on the database itself; a refusal is raised as it is (its class
    carries the command's exit status)."""
    from bullring.referee.registry import GAMES
    from bullring.server.errors import NotAuthenticatedError, NotFoundError
    from bullring.server.ladder.seating import make_challenge

    store = options.open_store(args)
    bot = store.bot_for_token(_token(args))
    if bot is None:
        raise NotAuthenticatedError("this is not a registered bot's token")
    if method == "CreateChallenge":
        return make_challenge(store, bot, fields["game"], fields["opponents"],
                              tuple({g.id for g in GAMES.values()}), {})
    if method == "ListChallenges":
        return store.challenges(bot.name)
    if method == "GetChallenge":
        found = store.challenge(fields["challenge_id"])
        if bot.name not in found.bots:
            raise NotFoundError(f"no challenge {fields['challenge_id']!r} names {bot.name!r}")
        return found
    if method == "AnswerChallenge":
        return store.answer_challenge(fields["challenge_id"], bot.name, fields["accept"],
                                      fields.get("reason", ""))
    store.set_auto_accept(bot.name, fields["auto_accept"])
    return None


def _call(args: argparse.Namespace, method: str, **fields: Any) -> Any:
    """One ChallengeService call, on the server or the database; the challenge(s) it gives
    as rows."""
    if args.server:
        reply = _remote(args, method, **fields)
        if method == "ListChallenges":
            return [_row(c) for c in reply.challenges]
        return _row(reply.challenge) if method != "SetAutoAccept" else None
    found = _local(args, method, **fields)
    if method == "ListChallenges":
        return [_row(c) for c in found]
    return None if found is None else _row(found)


def _line(row: Row) -> str:
    answers = ", ".join(f"{bot} {answer}" for bot, answer in row["answers"].items())
    parts = [f"challenge {row['id']} ({row['game']}): {row['challenger']} against "
             f"{', '.join(row['opponents'])}: {row['status']}"]
    if answers:
        parts.append(f"answers: {answers}")
    if row["message"]:
        parts.append(row["message"])
    if row["match_id"]:
        parts.append(f"match {row['match_id']}")
    return "; ".join(parts)


def _run(args: argparse.Namespace) -> int:
    command = args.challenge_command
    if command == "create":
        row = _call(args, "CreateChallenge", game=args.game, opponents=args.against)
    elif command == "list":
        rows = _call(args, "ListChallenges")
        if args.json:
            print(json.dumps(rows, indent=2))
        for one in [] if args.json else rows:
            print(_line(one))
        return 0
    elif command == "show":
        row = _call(args, "GetChallenge", challenge_id=args.challenge_id)
    elif command in ("accept", "decline"):
        row = _call(args, "AnswerChallenge", challenge_id=args.challenge_id,
                    accept=command == "accept", reason=getattr(args, "reason", ""))
    else:
        _call(args, "SetAutoAccept", auto_accept=args.setting == "on")
        print(f"auto-accept {args.setting}")
        return 0
    print(json.dumps(row, indent=2) if getattr(args, "json", False) else _line(row))
    return 1 if command == "show" and row["status"] in ENDED_UNPLAYED else 0


def add_commands(commands: cli.Commands) -> None:
    """Add ``challenge`` to ``bullring``."""
    challenge = commands.add_parser(
        "challenge", help="practice matches and challenges, as a registered bot",
        description=__doc__.split("\n\n")[1])
    subcommands = challenge.add_subparsers(dest="challenge_command", required=True,
                                           metavar="COMMAND")
    create = subcommands.add_parser("create", help="challenge opponents to an unrated match")
    create.add_argument("--game", required=True, type=cli.GameName())
    create.add_argument("--against", required=True, type=cli.Opponents(),
                        metavar="OPPONENT,...",
                        help="in seat order after the bot: house:KIND or a registered bot")
    listing = subcommands.add_parser("list", help="the challenges the bot made or is named in")
    show = subcommands.add_parser("show", help="one challenge (exit 1 if declined, "
                                                "cancelled or expired)")
    accept = subcommands.add_parser("accept", help="accept a challenge naming the bot")
    decline = subcommands.add_parser("decline", help="decline a challenge naming the bot, "
                                                     "or withdraw one's own")
    decline.add_argument("--reason", default="", type=cli.Text(200),
                         help="why, shown to the challenger")
    auto = subcommands.add_parser("auto-accept", help="accept every challenge naming the bot")
    auto.add_argument("setting", choices=("on", "off"), help="on or off")
    for one in (show, accept, decline):
        one.add_argument("challenge_id", metavar="CHALLENGE_ID", type=cli.Text(64),
                         help="the challenge's id")
    for one in (create, listing, show, accept, decline, auto):
        options.add_ladder_location(one, admin=False)
        one.add_argument("--token", type=cli.Token(), metavar="TOKEN",
                         help="the bot's token (default: $BULLRING_TOKEN)")
        if one in (create, listing, show):
            one.add_argument("--json", action="store_true", help="print JSON")
        cli.command(one, _run)
