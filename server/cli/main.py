"""The ``bullring`` command line: the referee server, the ladder, bots, the arena, tournaments
and replays.

Ladder commands work on the database (--db) or on a running server (--server HOST:PORT).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bullring import commandline as cli
from bullring.server.cli import challenge as challenge_cli
from bullring.server.cli import ladder as ladder_cli
from bullring.server.cli import options
from bullring.server.cli import tournament as server_tournament_cli
from bullring.server.logs import LOG_FORMATS

if TYPE_CHECKING:  # the server's modules load when it serves, not for --help
    from bullring.server.app import ServerOptions

METRICS_ACCESS = ("admin", "token", "public", "off")
"""The values of ``bullring serve --metrics`` (``bullring.server.metrics.ACCESS`` says
what each lets in; the command line does not import the server to parse its options)."""


def _replay_verify(args: argparse.Namespace) -> int:
    from bullring.referee import replay
    from bullring.referee.core import RefereeError

    failures = checked = 0
    for path in args.paths:
        files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl")) \
            if path.is_dir() else [path]
        for file in files:
            try:
                replays = replay.loads(file.read_text(encoding="utf-8"),
                                       lines=file.suffix == ".jsonl")
            except (OSError, UnicodeDecodeError, RefereeError) as exc:
                print(f"{file}: {exc}")
                failures += 1
                continue
            for number, one in enumerate(replays, 1):
                name = f"{file}:{number}" if file.suffix == ".jsonl" else str(file)
                checked += 1
                try:
                    checked_from = replay.verify(one)
                except RefereeError as exc:
                    failures += 1
                    print(f"{name}: MISMATCH {exc}")
                    continue
                if checked_from == replay.FROM_ROUNDS:
                    print(f"{name}: verified from {checked_from}")
    print(f"{checked} replays checked, {checked - failures} verified, {failures} failed")
    return 1 if failures or not checked else 0


def _serve(args: argparse.Namespace) -> int:
    from bullring.server import app

    if args.workers > 1:
        return _supervise(args)
    return app.main(serve_options(args))


def _supervise(args: argparse.Namespace) -> int:
    """``bullring serve --workers N``: N processes of the server on one address."""
    import logging

    from bullring.server import workers

    if not options.db_url(args).startswith("postgresql"):
        raise cli.UsageError("--workers: the workers share one database, which must be "
                             "PostgreSQL (--db postgresql://...); a SQLite file serves one "
                             "process")
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    http_port = None if args.http_port < 0 else args.http_port
    return workers.Supervisor(sys.argv[1:], args.workers, args.host, args.port,
                              http_port).run()


def serve_options(args: argparse.Namespace) -> ServerOptions:
    """The server's options from ``bullring serve``'s arguments (its defaults are the
    options' own: ``tests/unit/test_cli.py`` holds them equal)."""
    from bullring.server import app
    from bullring.server.ladder import seating as ladder
    from bullring.server.ladder.rules import registered_games
    from bullring.server.quotas import MatchCaps, Quotas
    from bullring.server.transports.limits import Limits

    sizes = {game: ladder.TableSize(low, high) for game, low, high in args.table_size}
    settings: dict[str, dict[str, str]] = {}
    for game, key, value in args.ladder_setting:
        settings.setdefault(game, {})[key] = value
    games = registered_games() if args.ladder is None else args.ladder
    ladder_options = ladder.LadderOptions(games, sizes, settings, args.house_bots,
                                          args.house_rest,
                                          challenge_expiry_s=args.challenge_expiry,
                                          max_tournament_games=args.max_tournament_games)
    quotas = Quotas(args.human_open_per_address, args.human_per_hour, args.challenges_open,
                    args.challenges_per_hour)
    return app.ServerOptions(args.host, args.port, options.db_url(args),
                                       args.start_timeout, ladder=ladder_options,
                                       db_retry_s=args.db_retry,
                                       http_port=None if args.http_port < 0 else args.http_port,
                                       limits=Limits(
                                           max_connections=args.max_connections,
                                           max_streams=args.max_streams,
                                           max_body_bytes=args.max_body_kb * 1024,
                                           header_timeout_s=args.header_timeout,
                                           idle_timeout_s=args.idle_timeout,
                                           body_timeout_s=args.body_timeout,
                                           max_connections_per_address=(
                                               args.max_connections_per_address),
                                           max_calls_per_address=args.max_calls_per_address,
                                           stall_timeout_s=args.stall_timeout),
                                       human_matches=args.human_matches,
                                       admin_token_file=args.admin_token_file,
                                       caps=MatchCaps.given(args.match_cap), quotas=quotas,
                                       challenge_retention_s=args.challenge_retention,
                                       replay_cache_bytes=args.replay_cache_mb << 20,
                                       metrics=args.metrics, log_format=args.log_format,
                                       worker=args.worker, broker=args.broker)


def _add_serve(commands: cli.Commands) -> None:
    serve = commands.add_parser(
        "serve", help="run the referee server: gRPC, the HTTP API and the web page")
    serve.add_argument("--host", default="127.0.0.1", type=cli.Host(),
                       help="the address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=cli.Port(), default=50051,
                       help="the gRPC port (default: 50051; 0 picks a free port)")
    serve.add_argument("--workers", type=cli.positive(), default=1, metavar="N",
                       help="processes serving the ports as one server, one a core (default: "
                            "1; more need a PostgreSQL database, and --broker to run one ladder: "
                            "docs/operations.md)")
    serve.add_argument("--worker", type=cli.non_negative(), default=None,
                       help=argparse.SUPPRESS)  # a worker's index, given by the supervisor
    options.add_db(serve, creates=True)
    serve.add_argument("--start-timeout", type=cli.Seconds(0, strict=True), default=60.0,
                       metavar="SECONDS",
                       help="how long a match waits for all its bots before starting anyway "
                            "(default: 60)")
    serve.add_argument("--db-retry", type=cli.Seconds(0), default=30.0, metavar="SECONDS",
                       help="how long a database call is retried while the database is "
                            "unavailable (a locked SQLite file, a PostgreSQL restart; "
                            "default: 30)")
    serve.add_argument("--ladder", default=None, type=cli.GameList(), metavar="GAME,...",
                       help="games whose ladders run (default: every registered game, "
                            "bullring games)")
    serve.add_argument("--table-size", action="append", default=[], type=cli.TableSizeArg(),
                       metavar="GAME=MIN-MAX",
                       help="ladder table sizes (default: each game's own, bullring games)")
    serve.add_argument("--ladder-setting", action="append", default=[],
                       type=cli.LadderSetting(), metavar="GAME:KEY=VALUE",
                       help="a setting of every ladder match of GAME")
    serve.add_argument("--house-bots", default=(), type=cli.HouseBotList(), metavar="NAME,...",
                       help="house bots the server plays on the ladders (greedy,random,...; "
                            "a name given twice is two bots)")
    serve.add_argument("--house-rest", type=cli.Seconds(0), default=1.0, metavar="SECONDS",
                       help="a house bot's pause between ladder matches (default: 1)")
    serve.add_argument("--challenge-expiry", type=cli.Seconds(0, strict=True),
                       default=3600.0, metavar="SECONDS",
                       help="a challenge not answered by all its opponents within this "
                            "expires (default: 3600)")
    serve.add_argument("--http-port", type=cli.Port(allow_off=True), default=8080,
                       help="port of the HTTP API and web page (default: 8080; 0 picks a free "
                            "port, -1: off)")
    serve.add_argument("--human-matches", type=cli.non_negative(), default=8, metavar="N",
                       help="matches for people (the web page's \"play against the bots\") "
                            "open at once (default: 8; 0: no such button)")
    serve.add_argument("--admin-token-file", type=cli.WritableFile(), default=None,
                       metavar="PATH",
                       help="where the first start writes the admin token, mode 0600 (default: "
                            "beside a SQLite database, bullring.db: bullring-admin-token; "
                            "else ./bullring-admin-token)")
    serve.add_argument("--metrics", choices=METRICS_ACCESS, default="admin",
                       help="who may read the Prometheus metrics at /metrics on the HTTP "
                            "port: admin (loopback addresses, and the admin token from "
                            "anywhere; the default), token (the admin token only), public, "
                            "or off")
    serve.add_argument("--broker", type=options.BrokerUrl(), default=None, metavar="URL",
                       help="the NATS broker (nats://HOST:PORT) through which the servers "
                            "of one PostgreSQL database seat any of their bots together: "
                            "one ladder across servers (default: none, this server seats "
                            "the bots connected to it; needs pip install 'bullring[fleet]')")
    serve.add_argument("--log-format", choices=LOG_FORMATS, default="text",
                       help="the log on standard error: text lines (the default) or json, "
                            "one object per line")
    limits = serve.add_argument_group(
        "limits", "what clients may hold, the same on the gRPC and the HTTP port")
    limits.add_argument("--max-connections", type=cli.non_negative(), default=0, metavar="N",
                        help="open connections per port (default: 0, half of the open-file "
                             "limit less a reserve, each)")
    limits.add_argument("--max-streams", type=cli.positive(), default=1000, metavar="N",
                        help="concurrent gRPC streams per connection (default: 1000)")
    limits.add_argument("--max-connections-per-address", type=cli.non_negative(), default=64,
                        metavar="N",
                        help="open HTTP connections from one client address (IPv6: one /64); "
                             "more are answered 429 (default: 64; 0: no cap, behind a proxy)")
    limits.add_argument("--max-calls-per-address", type=cli.non_negative(), default=1000,
                        metavar="N",
                        help="concurrent gRPC calls (streams included) from one client "
                             "address, over all its connections; more are refused with "
                             "RESOURCE_EXHAUSTED (default: 1000; 0: no cap)")
    limits.add_argument("--max-body-kb", type=cli.positive(), default=1024, metavar="KB",
                        help="largest HTTP request body, refused with 413 before it is read "
                             "(default: 1024)")
    limits.add_argument("--header-timeout", type=cli.Seconds(0, strict=True), default=10.0,
                        metavar="SECONDS",
                        help="a new connection's handshake (gRPC), a request head (HTTP) and "
                             "a Play stream's Join must arrive within this, else it is closed "
                             "(default: 10)")
    limits.add_argument("--body-timeout", type=cli.Seconds(0, strict=True), default=10.0,
                        metavar="SECONDS",
                        help="an HTTP request's whole body must arrive within this of its "
                             "head, else it is answered 408 and the connection closed "
                             "(default: 10)")
    limits.add_argument("--idle-timeout", type=cli.Seconds(0, strict=True), default=60.0,
                        metavar="SECONDS",
                        help="a connection with no call in progress is closed after this "
                             "(default: 60)")
    limits.add_argument("--stall-timeout", type=cli.Seconds(0, strict=True), default=10.0,
                        metavar="SECONDS",
                        help="a stream to a bot whose write waits this long for the client "
                             "to read is ended as stalled (default: 10)")
    quotas = serve.add_argument_group(
        "caps and quotas", "how much a client without the admin token may ask for: each "
        "match's settings, and matches or challenges per address or bot (0: no quota)")
    quotas.add_argument("--match-cap", action="append", default=[], type=options.MatchCapArg(),
                        metavar="NAME=MAX",
                        help="the most a match made without the admin token (a person's "
                             "match, a challenge, a practice match) may ask for: seats=10, "
                             "deadline_ms=60000, max_timeouts=5, time_bank_ms=60000 and each "
                             "game's own caps (bullring games lists them) unless given")
    quotas.add_argument("--human-open-per-address", type=cli.non_negative(), default=2,
                        metavar="N",
                        help="matches for people one address may have open at once "
                             "(default: 2)")
    quotas.add_argument("--human-per-hour", type=cli.non_negative(), default=20, metavar="N",
                        help="matches for people one address may ask for in any hour "
                             "(default: 20)")
    quotas.add_argument("--challenges-open", type=cli.non_negative(), default=10, metavar="N",
                        help="challenges and practice matches one bot may have waiting to "
                             "be answered or seated (default: 10)")
    quotas.add_argument("--challenges-per-hour", type=cli.non_negative(), default=120,
                        metavar="N",
                        help="challenges and practice matches one bot may ask for in any "
                             "hour (default: 120)")
    quotas.add_argument("--challenge-retention", type=cli.Seconds(0, strict=True),
                        default=86_400.0, metavar="SECONDS",
                        help="a challenge over (played, declined, withdrawn or expired) is "
                             "deleted after this (default: 86400)")
    quotas.add_argument("--max-tournament-games", type=cli.positive(), default=2000,
                        metavar="N",
                        help="the most games one live tournament may schedule (default: "
                             "2000)")
    quotas.add_argument("--replay-cache-mb", type=cli.non_negative(), default=64, metavar="MB",
                        help="memory for the encoded feeds and replays of ended matches, "
                             "each built once and shared by its readers (default: 64)")
    cli.command(serve, _serve)


def _bot(args: argparse.Namespace) -> int:
    from bullring.sdk.cli import bot as runner_cli

    return runner_cli.run_from_args(args)


def _mcp(args: argparse.Namespace) -> int:
    from bullring.sdk.cli import mcp as mcp_cli

    return mcp_cli.run_from_args(args)


def _games(_args: argparse.Namespace) -> int:
    from bullring.referee.registry import GAMES, SOURCES
    from bullring.server.ladder.rules import default_table_size

    for versioned, spec in GAMES.items():
        table = default_table_size(spec.id)
        ladder = f"{table.minimum}" if table.minimum == table.maximum \
            else f"{table.minimum}-{table.maximum}"
        settings = ", ".join(f"{s.name}={str(s.default).lower()}" for s in spec.settings)
        caps = ", ".join(f"{s.name}={s.public_max}" for s in spec.settings
                         if s.public_max is not None)
        print(f"{versioned}  {spec.title}  (from {SOURCES.get(versioned, '?')})\n"
              f"  seats {spec.min_seats}-{spec.max_seats}, ladder tables {ladder}; "
              f"web view: {'its own' if spec.web_view else 'generic'}\n"
              f"  settings: {settings}"
              + (f"\n  caps without the admin token (--match-cap NAME=MAX): {caps}"
                 if caps else ""))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of every ``bullring`` subcommand."""
    from bullring.sdk.cli import arena as arena_cli
    from bullring.sdk.cli import bot as runner_cli
    from bullring.sdk.cli import mcp as mcp_cli
    from bullring.sdk.cli import tournament as tournament_cli
    from bullring.server.cli import health as health_probe

    parser = cli.new_parser("bullring", __doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    _add_serve(commands)
    games = commands.add_parser("games", help="the games installed here, each with the "
                                              "distribution that registers it")
    cli.command(games, _games)
    bot = commands.add_parser("bot", help="play a seat (or a game's ladder) with a bot")
    runner_cli.add_arguments(bot)
    cli.command(bot, _bot)
    agent = commands.add_parser("mcp", help="serve a seat (or a ladder) to an LLM agent over "
                                            "MCP, stdio or streamable HTTP")
    mcp_cli.add_arguments(agent)
    cli.command(agent, _mcp)
    ladder_cli.add_commands(commands)
    challenge_cli.add_commands(commands)

    replay = commands.add_parser("replay", help="export stored replays, verify replay files")
    replay_commands = replay.add_subparsers(dest="replay_command", required=True,
                                            metavar="COMMAND")
    ladder_cli.add_replay_export(replay_commands)
    verify = replay_commands.add_parser("verify", help="replay files through the engine")
    verify.add_argument("paths", nargs="+", type=cli.ReadablePath(), metavar="FILE|DIR")
    cli.command(verify, _replay_verify)

    arena_parser = commands.add_parser("arena", help="play many local games between bots")
    arena_cli.add_arguments(arena_parser)
    cup = commands.add_parser("tournament", help="a round-robin or duplicate tournament, "
                                                 "played here or live on a server",
                              description=tournament_cli.__doc__.split("\n\n")[1] + "\n\n"
                              + server_tournament_cli.__doc__.split("\n\n")[0])
    server_tournament_cli.add_arguments(cup)
    probe = commands.add_parser("health", help="ask a server whether it is SERVING")
    health_probe.add_arguments(probe)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``bullring`` command and return its exit status."""
    return cli.run("bullring", build_parser(), argv, options.classify)


if __name__ == "__main__":
    sys.exit(main())
