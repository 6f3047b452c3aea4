"""The ``bullring`` command line: the arena, tournaments, replays, the server and the ladder."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from referee.core import RefereeError
from server.store import DEFAULT_DB


def _settings(pairs: Sequence[str]) -> dict[str, str]:
    from client_sdk.arena import settings_from_pairs

    return settings_from_pairs(pairs)


def _replay_verify(args: argparse.Namespace) -> int:
    from referee import replay

    failures = checked = 0
    for path in args.paths:
        files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl")) \
            if path.is_dir() else [path]
        for file in files:
            try:
                replays = replay.loads(file.read_text(encoding="utf-8"),
                                       lines=file.suffix == ".jsonl")
            except (OSError, RefereeError) as exc:
                print(f"{file}: {exc}")
                failures += 1
                continue
            for number, one in enumerate(replays, 1):
                name = f"{file}:{number}" if file.suffix == ".jsonl" else str(file)
                checked += 1
                try:
                    replay.verify(one)
                except RefereeError as exc:
                    failures += 1
                    print(f"{name}: MISMATCH {exc}")
    print(f"{checked} replays checked, {checked - failures} verified, {failures} failed")
    return 1 if failures or not checked else 0


def _serve(args: argparse.Namespace) -> int:
    from server import app, ladder

    games = tuple(g.strip() for g in args.ladder.split(",") if g.strip())
    try:
        from referee.registry import get_game

        games = tuple(get_game(g).id for g in games)
        sizes: dict[str, ladder.TableSize] = {}
        for pair in args.table_size:
            game, sep, size = pair.partition("=")
            if not sep:
                raise ValueError(f"--table-size wants GAME=MIN-MAX, not {pair!r}")
            sizes[get_game(game).id] = ladder.TableSize.parse(size)
        settings: dict[str, dict[str, str]] = {}
        for pair in args.ladder_setting:
            game, sep, setting = pair.partition(":")
            if not sep:
                raise ValueError(f"--ladder-setting wants GAME:KEY=VALUE, not {pair!r}")
            settings.setdefault(get_game(game).id, {}).update(_settings([setting]))
        house = tuple(b.strip() for b in args.house_bots.split(",") if b.strip())
        ladder.house_names(house)
        ladder_options = ladder.LadderOptions(games, sizes, settings, house, args.house_rest)
    except (RefereeError, ValueError) as exc:
        print(f"bullring serve: {exc}", file=sys.stderr)
        return 2
    options = app.ServerOptions(args.host, args.port, args.db, args.start_timeout,
                                ladder=ladder_options, db_retry_s=args.db_retry,
                                http_port=None if args.http_port < 0 else args.http_port)
    return app.main(options)


def _match_create(args: argparse.Namespace) -> int:
    from server.match_setup import MatchSetupError, create_match
    from server.store import Store

    settings: dict[str, str] = _settings(args.setting)
    if args.deadline_ms is not None:
        settings["deadline_ms"] = str(args.deadline_ms)
    house: dict[int, str] = {}
    for pair in args.house:
        seat, sep, name = pair.partition("=")
        if not sep or not seat.isdigit() or not 0 <= int(seat) < args.seats:
            print(f"bullring match create: --house wants SEAT=NAME with SEAT 0..{args.seats - 1},"
                  f" not {pair!r}", file=sys.stderr)
            return 2
        house[int(seat)] = name
    try:
        created = create_match(Store(args.db), args.game, args.seats, settings, args.seed, house)
    except MatchSetupError as exc:
        print(f"bullring match create: {exc}", file=sys.stderr)
        return 2
    print(f"match {created.match_id}")
    for seat, token in enumerate(created.tokens):
        print(f"seat {seat} {'house:' + house[seat] if token is None else 'token ' + token}")
    return 0


def _replay_export(args: argparse.Namespace) -> int:
    from referee.replay import dumps
    from server.store import Store, UnknownMatchError

    if args.all is not None:
        if args.match_id is not None:
            print("bullring replay export: give a MATCH_ID or --all DIR, not both",
                  file=sys.stderr)
            return 2
        store = Store(args.db)
        args.all.mkdir(parents=True, exist_ok=True)
        written = 0
        for match in store.matches(status="finished"):
            (args.all / f"{match.id}.json").write_text(dumps(store.replay(match.id)),
                                                       encoding="utf-8")
            written += 1
        print(f"wrote {written} replays to {args.all}")
        return 0
    if args.match_id is None:
        print("bullring replay export: give a MATCH_ID or --all DIR", file=sys.stderr)
        return 2
    try:
        replay = Store(args.db).replay(args.match_id)
    except UnknownMatchError as exc:
        print(f"bullring replay export: {exc}", file=sys.stderr)
        return 2
    if args.out is None:
        print(dumps(replay))
    else:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"{args.match_id}.json").write_text(dumps(replay), encoding="utf-8")
    return 0


def _bot(args: argparse.Namespace) -> int:
    from client_sdk import runner

    return int(runner.run_from_args(args))


def _tournament(args: argparse.Namespace) -> int:
    from client_sdk import tournament

    return tournament.run_from_args(args, _settings(args.setting))


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of every ``bullring`` subcommand."""
    parser = argparse.ArgumentParser(prog="bullring", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    arena = commands.add_parser("arena", help="play many local games between bots")
    from client_sdk import arena as arena_cli

    arena_cli.add_arguments(arena)
    arena.set_defaults(run=arena_cli.run_from_args)

    replay = commands.add_parser("replay", help="work with replay files")
    replay_commands = replay.add_subparsers(dest="replay_command", required=True)
    verify = replay_commands.add_parser("verify", help="replay files through the engine")
    verify.add_argument("paths", nargs="+", type=Path, metavar="FILE|DIR")
    verify.set_defaults(run=_replay_verify)
    export = replay_commands.add_parser("export", help="print or write a stored replay")
    export.add_argument("match_id", nargs="?")
    export.add_argument("--all", type=Path, metavar="DIR",
                        help="write every finished match to DIR/MATCH_ID.json")
    export.add_argument("--db", default=DEFAULT_DB, help="database URL")
    export.add_argument("--out", type=Path, metavar="DIR", help="write DIR/MATCH_ID.json")
    export.set_defaults(run=_replay_export)

    serve = commands.add_parser(
        "serve", help="run the referee server: gRPC, the HTTP API and the web page")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=50051, help="0 picks a free port")
    serve.add_argument("--db", default=DEFAULT_DB, help="database URL (default: SQLite file)")
    serve.add_argument("--start-timeout", type=float, default=60.0,
                       help="seconds a match waits for all its bots before starting anyway")
    serve.add_argument("--db-retry", type=float, default=30.0, metavar="SECONDS",
                       help="how long a database call is retried while the database is "
                            "unavailable (a locked SQLite file, a PostgreSQL restart; "
                            "default 30)")
    serve.add_argument("--ladder", default="six_nimmt,no_thanks", metavar="GAME,...",
                       help="games whose ladders run (default: six_nimmt,no_thanks)")
    serve.add_argument("--table-size", action="append", default=[], metavar="GAME=MIN-MAX",
                       help="ladder table sizes (default: six_nimmt=4-5, no_thanks=4)")
    serve.add_argument("--ladder-setting", action="append", default=[],
                       metavar="GAME:KEY=VALUE", help="a setting of every ladder match of GAME")
    serve.add_argument("--house-bots", default="", metavar="NAME,...",
                       help="house bots the server plays on the ladders (greedy,random,...; "
                            "a name given twice is two bots)")
    serve.add_argument("--house-rest", type=float, default=1.0, metavar="SECONDS",
                       help="a house bot's pause between ladder matches (default: 1)")
    serve.add_argument("--http-port", type=int, default=8080,
                       help="port of the HTTP API and web page (0 picks a free port, -1: off)")
    serve.set_defaults(run=_serve)

    match = commands.add_parser("match", help="manage matches")
    match_commands = match.add_subparsers(dest="match_command", required=True)
    create = match_commands.add_parser("create", help="register a match, print seat tokens")
    create.add_argument("--game", required=True)
    create.add_argument("--seats", type=int, required=True)
    create.add_argument("--setting", action="append", default=[], metavar="KEY=VALUE")
    create.add_argument("--deadline-ms", type=int)
    create.add_argument("--house", action="append", default=[], metavar="SEAT=NAME")
    create.add_argument("--seed", type=int, default=0)
    create.add_argument("--db", default=DEFAULT_DB, help="database URL")
    create.set_defaults(run=_match_create)

    probe = commands.add_parser("health", help="ask a server whether it is SERVING")
    from server import health_probe

    health_probe.add_arguments(probe)
    probe.set_defaults(run=health_probe.run_from_args)

    from server import ladder_cli

    ladder_cli.add_commands(commands)

    bot = commands.add_parser("bot", help="play a seat (or the ladder) with a bot")
    from client_sdk import runner

    runner.add_arguments(bot)
    bot.set_defaults(run=_bot)

    cup = commands.add_parser("tournament", help="round-robin or duplicate tournament, local")
    from client_sdk import tournament

    tournament.add_arguments(cup)
    cup.set_defaults(run=_tournament)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``bullring`` command and return its exit status."""
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
