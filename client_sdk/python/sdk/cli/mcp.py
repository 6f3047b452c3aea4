"""``bullring mcp`` and ``bullring-mcp``: serve one seat to an LLM agent over MCP.

``bullring mcp --server HOST:PORT --token TOKEN`` plays the seat the token names (one match);
with a registered bot's token, ``--ladder GAME`` plays that game's ladder match after
match, and ``--practice [--against ...]`` one unrated practice match. The agent
talks MCP over stdio (the default, for a client that starts the command) or streamable HTTP
(``--transport http --port N``, at ``/mcp``). Needs the ``mcp`` extra:
``pip install 'bullring[mcp]'``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from bullring import commandline as cli
from bullring.sdk.cli import bot as runner_cli

TRANSPORTS = ("stdio", "http")
"""``stdio``: the MCP client starts this command; ``http``: streamable HTTP on a port."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``bullring mcp`` options to ``parser``."""
    runner_cli.add_seat_arguments(parser, "agent")
    parser.add_argument("--transport", choices=TRANSPORTS, default="stdio",
                        help="stdio (default) or http (streamable HTTP at /mcp)")
    parser.add_argument("--host", default="127.0.0.1", type=cli.Host(),
                        help="with --transport http: the address to listen on")
    parser.add_argument("--port", type=cli.Port(), default=8000,
                        help="with --transport http: the port (default: 8000; 0 picks one)")
    cli.command(parser, run_from_args)


def run_from_args(args: argparse.Namespace) -> int:
    """Run ``bullring mcp`` until the MCP client goes away; return the exit status."""
    import asyncio

    token = runner_cli.seat_token(args)
    try:
        from bullring.sdk.mcp import server as mcp_server
    except ImportError as e:
        raise cli.UsageError(f"bullring mcp needs the mcp package: pip install "
                             f"'bullring[mcp]' ({e})") from None
    handler = logging.StreamHandler(sys.stderr)  # stdout carries the stdio transport
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in ("bullring.bot", "bullring.mcp"):
        logging.getLogger(name).addHandler(handler)
        logging.getLogger(name).setLevel(logging.INFO)
        logging.getLogger(name).propagate = False  # not again through the SDK's root handler
    asyncio.run(mcp_server.serve(args, token, args.transport, args.host, args.port))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``bullring-mcp``."""
    parser = cli.new_parser("bullring-mcp", __doc__)
    add_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``bullring-mcp``: serve a seat over MCP, as the bot SDK installs it (``bullring mcp``
    too)."""
    return cli.run("bullring-mcp", build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
