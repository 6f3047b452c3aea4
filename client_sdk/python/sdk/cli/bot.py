"""``bullring bot`` and ``bullring-bot``: play a seat, or a game's ladder, with a bot.

``bullring bot --server HOST:PORT --token TOKEN BOT`` connects with the seat's token, loads
the bot once the match says which game it is, answers every decision within the time the
server says is left (minus a safety margin), and reconnects into the same seat when the
connection drops. ``--server HOST:PORT,HOST:PORT`` names several servers of one fleet: the
runner plays on the first that answers and moves on to the next when it is lost. With a
registered bot's token, ``--ladder GAME`` plays that game's ladder, one match after
another. With ``--practice`` too, it first asks the server for one unrated
match against ``--against`` (house bots ``house:KIND`` or registered bots, in seat order
after it; by default three house bots), plays it on that ladder and leaves; a registered
opponent's owner must accept first (the command waits, and exits 1 if the challenge is
declined or expires). It joins the ladder with ``Join.practice_only``: while a registered
opponent is not on the ladder yet, the bot waits, and no rated table seats it.

BOT is ``house:NAME`` (a house bot), ``package.module:ClassName`` or
``path/to/file.py:ClassName`` (a ``bullring.sdk.bot.Bot`` subclass).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from bullring import commandline as cli

# The engines (and gRPC) are imported inside run_from_args, so that --help starts fast.

TRANSPORTS = ("stream", "unary")
"""``stream``: the bidirectional Play stream; ``unary``: Subscribe plus SubmitAnswer calls."""


def add_seat_arguments(parser: argparse.ArgumentParser, what: str = "bot") -> None:
    """Add the options of whatever plays a seat, a ladder or a practice match on a server:
    ``--server``, ``--token``, ``--margin-ms``, ``--give-up-after``, ``--ladder``,
    ``--matches``, ``--practice`` and ``--against``."""
    parser.add_argument("--server", required=True, metavar="HOST:PORT[,HOST:PORT...]",
                        type=cli.ServerAddresses(),
                        help="the referee server's gRPC address, or the addresses of several "
                             "servers of one fleet, comma separated: the first that answers "
                             "is played on, and the next when its connection is lost")
    parser.add_argument("--token", default=None, metavar="TOKEN", type=cli.Token(),
                        help="the seat's token (default: $BULLRING_TOKEN)")
    parser.add_argument("--margin-ms", type=cli.non_negative(), default=50,
                        help=f"send the {what}'s answer this many ms before the deadline "
                             "(default: 50)")
    parser.add_argument("--give-up-after", type=cli.Seconds(0, strict=True), default=60.0,
                        metavar="SECONDS",
                        help="stop reconnecting after this long without a connection")
    parser.add_argument("--ladder", default=None, metavar="GAME", type=cli.GameName(),
                        help="with a registered bot's token: play GAME's ladder, one match "
                             "after another")
    parser.add_argument("--matches", type=cli.non_negative(), default=0, metavar="N",
                        help="with --ladder: leave after N matches (default: never)")
    parser.add_argument("--practice", action="store_true",
                        help="with --ladder: ask for one unrated match, play it and leave")
    parser.add_argument("--against", type=cli.Opponents(), default=None,
                        metavar="OPPONENT,...",
                        help="with --practice: house:KIND or registered bots, in seat order "
                             "after this bot (default: three house bots)")


def seat_token(args: argparse.Namespace) -> str:
    """The token ``add_seat_arguments`` names (``--token`` or ``$BULLRING_TOKEN``), once the
    options are checked together."""
    token: str | None = args.token or os.environ.get("BULLRING_TOKEN")
    if not token:
        raise cli.UsageError("--token: a token is required (--token or $BULLRING_TOKEN)")
    if (args.practice or args.against) and not args.ladder:
        raise cli.UsageError("--practice: name the game to practise with --ladder GAME")
    if args.against and not args.practice:
        raise cli.UsageError("--against: only with --practice")
    if args.practice and args.matches:
        raise cli.UsageError("--matches: a practice plays one match")
    return token


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``bullring bot`` options and the positional bot spec to ``parser``."""
    add_seat_arguments(parser)
    parser.add_argument("--seed", type=cli.Integer(), default=0, help="the bot's random seed")
    parser.add_argument("--transport", choices=TRANSPORTS, default="stream",
                        help="stream: one bidirectional stream; unary: a server stream and "
                             "one call per answer")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also log each match's start, every decision answered, events "
                             "and verdicts (by default: one line per match, at its end)")
    parser.add_argument("bot", metavar="BOT", type=cli.BotSpec(),
                        help="module:Class, path/to/file.py:Class or house:NAME")
    cli.command(parser, run_from_args)


def _configure_logging(verbose: bool) -> None:
    log = logging.getLogger("bullring.bot")
    for handler in [h for h in log.handlers if getattr(h, "_bullring_cli", False)]:
        log.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(cli.OneLineFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler._bullring_cli = True  # type: ignore[attr-defined]
    log.addHandler(handler)
    log.setLevel(logging.DEBUG if verbose else logging.INFO)


def run_from_args(args: argparse.Namespace) -> int:
    """Run ``bullring bot``: play the seat (or the ladder), print one line per match as it
    ends (``result_line``); return the exit status.

    0: the match ended (or the ladder's matches were played); a ``CommandError`` otherwise:
    2 a bad bot spec or request, 3 the token was refused, 4 the server could not be reached
    (gave up reconnecting, a refused connection, its HTTP port), 1 any other refusal by the
    server.
    """
    import asyncio

    from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
    from bullring.sdk.bot_spec import bot_class
    from bullring.sdk.practice import practise
    from bullring.sdk.runner import play

    _configure_logging(args.verbose)
    token = seat_token(args)
    if os.getcwd() not in sys.path:  # `module:Class` finds modules in the current folder
        sys.path.insert(0, os.getcwd())
    try:  # a bot that cannot load fails here, before the server is asked for anything
        bot_class(args.bot)
    except ValueError as e:
        raise cli.UsageError(str(e)) from None
    match_id = ["?"]
    seat = [-1]
    queued = asyncio.Event()
    """Set once the connection waits on the ladder (a practice run asks for its match then)."""

    def remember(response: Any) -> None:
        which = response.WhichOneof("body")
        if which == "ladder_queued":
            queued.set()
        elif which == "match_started":
            match_id[0] = response.match_started.match_id
            seat[0] = response.match_started.seat
        elif which == "match_ended":
            print(result_line(match_id[0], seat[0], response.match_ended), flush=True)

    async def practice() -> pb.MatchEnded:
        ended: pb.MatchEnded = await practise(args, token, lambda: play(
            args.server, token, args.bot, seed=args.seed, transport=args.transport,
            margin_ms=args.margin_ms, give_up_after_s=args.give_up_after,
            on_message=remember, ladder=args.ladder, matches=1, practice_only=True),
            lambda: match_id[0], joined=queued)
        return ended

    try:  # Ctrl-C: see cli.run_async
        cli.run_async(practice() if args.practice else play(
            args.server, token, args.bot, seed=args.seed, transport=args.transport,
            margin_ms=args.margin_ms, give_up_after_s=args.give_up_after,
            on_message=remember, ladder=args.ladder, matches=args.matches))
    except PermissionError as e:
        raise cli.RefusedError(str(e)) from None
    except ConnectionError as e:
        raise cli.UnreachableError(str(e)) from None
    except ValueError as e:
        raise cli.UsageError(str(e)) from None
    except RuntimeError as e:
        raise cli.CommandError(str(e)) from None
    return 0


def result_line(match_id: str, seat: int, ended: Any) -> str:
    """The one line ``bullring bot`` prints for each match, at its end: every seat's total
    and rank in seat order, how it ended, and this bot's own seat (``you``)."""
    from bullring.contract import wire

    totals, ranks = list(ended.totals), list(ended.ranks)
    line = (f"match {match_id} ended: totals {totals} ranks {ranks} "
            f"({wire.termination_name(ended.termination)})")
    if 0 <= seat < min(len(totals), len(ranks)):
        line += f"; you (seat {seat}): total {totals[seat]}, rank {ranks[seat]}"
    return line


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``bullring-bot``."""
    parser = cli.new_parser("bullring-bot", __doc__)
    add_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``bullring-bot``: play one seat, as the bot SDK installs it (``bullring bot`` too)."""
    return cli.run("bullring-bot", build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
