"""``bullring mcp`` and ``bullring-mcp``: serve one seat to an LLM agent over MCP.

``bullring mcp --server HOST:PORT --token TOKEN`` plays the seat the token names (one match);
with a registered bot's token, ``--ladder GAME`` plays that game's ladder match after
match, and ``--practice [--against ...]`` one unrated practice match. The agent
talks MCP over stdio (the default, for a client that starts the command) or streamable HTTP
(``--transport http --port N``, at ``/mcp``). Over HTTP beyond loopback (``--host
0.0.0.0``) the agent must send a bearer token (``--agent-token`` or
``$BULLRING_AGENT_TOKEN``; without one it refuses to start), and a browser page may call it
only from an origin ``--allow-origin`` names. The seat joins its match or ladder at the
agent's first request for a decision. Needs the ``mcp`` extra: ``pip install 'bullring[mcp]'``.
"""

from __future__ import annotations

import argparse
import logging
import os
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
    parser.add_argument("--agent-token", type=cli.Token(), default=None, metavar="TOKEN",
                        help="with --transport http: the bearer token the agent must send "
                             "(default: $BULLRING_AGENT_TOKEN; required beyond loopback)")
    parser.add_argument("--allow-origin", type=cli.Origin(), action="append", default=[],
                        metavar="ORIGIN",
                        help="with --transport http: a web page's origin that may call it "
                             "from a browser (https://host[:port]; again for more)")
    cli.command(parser, run_from_args)


def agent_token(args: argparse.Namespace) -> str | None:
    """The agent's bearer token (``--agent-token`` or ``$BULLRING_AGENT_TOKEN``), checked:
    ``UsageError`` when HTTP beyond loopback has none, or it is too short to be secret."""
    token: str | None = args.agent_token or os.environ.get("BULLRING_AGENT_TOKEN") or None
    if args.transport != "http":
        if args.agent_token or args.allow_origin:
            raise cli.UsageError(f"--{'agent-token' if args.agent_token else 'allow-origin'}: "
                                 f"only with --transport http")
        return None
    from bullring.sdk.mcp.gate import MIN_TOKEN_CHARS, is_loopback

    make = "python3 -c 'import secrets; print(secrets.token_urlsafe())'"
    if token is None:
        if not is_loopback(args.host):
            raise cli.UsageError(
                f"--agent-token: MCP over HTTP on {args.host}, beyond loopback, needs a "
                f"bearer token for the agent (--agent-token or $BULLRING_AGENT_TOKEN; "
                f"make one with {make})")
        return None
    try:
        cli.Token()(token)
    except argparse.ArgumentTypeError as exc:
        raise cli.UsageError(f"--agent-token: {exc}") from None
    if len(token) < MIN_TOKEN_CHARS:
        raise cli.UsageError(f"--agent-token: at least {MIN_TOKEN_CHARS} characters, not "
                             f"{len(token)} (make one with {make})")
    return token


def run_from_args(args: argparse.Namespace) -> int:
    """Run ``bullring mcp`` until the MCP client goes away; return the exit status."""
    token = runner_cli.seat_token(args)
    try:
        from bullring.sdk.mcp import server as mcp_server
    except ImportError as e:
        raise cli.UsageError(f"bullring mcp needs the mcp package: pip install "
                             f"'bullring[mcp]' ({e})") from None
    gate_token = agent_token(args)
    handler = logging.StreamHandler(sys.stderr)  # stdout carries the stdio transport
    handler.setFormatter(cli.OneLineFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in ("bullring.bot", "bullring.mcp"):
        logging.getLogger(name).addHandler(handler)
        logging.getLogger(name).setLevel(logging.INFO)
        logging.getLogger(name).propagate = False  # not again through the SDK's root handler
    cli.run_async(mcp_server.serve(args, token, args.transport, args.host, args.port,
                                   gate_token, args.allow_origin))  # Ctrl-C: see run_async
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
