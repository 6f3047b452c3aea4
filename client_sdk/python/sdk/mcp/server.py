"""The MCP server of ``bullring mcp``: one bot token's seat as tools for an LLM agent.

Tools: ``next_decision`` (wait for the seat's next decision: the observation, the legal
answers and the time left, in words and as structured content), ``act`` (answer it; an
illegal or malformed answer is a tool error and the agent may answer again before the
deadline), ``rules`` (the game's rules in short) and ``match_so_far`` (the public events
of the current match). The seat is played by the Python SDK's bot runner, with its
connection, reconnection and backoff; the bot it runs waits for the agent's answers. The
seat joins its match or ladder at the agent's first ``next_decision``, not before.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Awaitable, Sequence
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.sdk.errors import AgentError
from bullring.sdk.mcp import text as mcp_text
from bullring.sdk.mcp.gate import AgentGate, is_loopback
from bullring.sdk.mcp.seat import AgentBot, SeatDesk
from bullring.sdk.practice import practise
from bullring.sdk.runner import play
from bullring.sdk.transports import reap

log = logging.getLogger("bullring.mcp")
"""The MCP server's logger (stderr: stdout is the stdio transport's)."""

INSTRUCTIONS = """\
You play one seat of a Bullring match (6 nimmt! or No Thanks!). Loop: call next_decision,
read the situation, call act with one of the legal answers before the time runs out.
next_decision says when the match has ended; call it again for the next match, if any.
Call rules for the game's rules and match_so_far for what has happened."""


def _result(text: str, content: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=content)


def build(desk: SeatDesk) -> MCPServer:
    """The MCP server whose tools play ``desk``'s seat."""
    server = MCPServer("bullring", instructions=INSTRUCTIONS)

    @server.tool()
    async def next_decision(timeout_s: float = 30.0) -> CallToolResult:
        """Wait (up to timeout_s seconds) for your seat's next decision and return it: the
        observation, the legal answers and the time left. status is "decision", "waiting"
        (none yet: call again), "match_ended" or "finished" (no more matches)."""
        p = await desk.next_decision(max(0.0, min(timeout_s, 300.0)))
        if p is not None:
            return _result(mcp_text.describe_decision(p, desk.match),
                           mcp_text.decision_content(p, desk.match))
        match = desk.match
        if desk.finished is not None:
            return _result(f"No more matches: {desk.finished}",
                           {"status": "finished", "why": desk.finished,
                            "result": match.result if match else None})
        if match is not None and match.result is not None:
            return _result(f"Match {match.match_id} ended: totals {match.result['totals']}, "
                           f"ranks {match.result['ranks']}. Call next_decision to wait for "
                           f"the next match.", {"status": "match_ended",
                                                "match_id": match.match_id,
                                                "result": match.result})
        return _result("No decision yet; call next_decision again.", {"status": "waiting"})

    @server.tool()
    async def act(action: int | str, comment: str = "") -> CallToolResult:
        """Answer the open decision: a card number, a row index, or a word ("take",
        "pass", "reveal", "keep"). An illegal answer is refused with the reason; answer
        again before the deadline. comment (optional): why, in your own words, at most 200
        characters on one line; kept in the match's replay and shown beside the move once
        the match has ended, never to the other seats during it."""
        try:
            p = await desk.act(action, comment)
        except AgentError as e:
            raise ToolError(str(e)) from None
        return _result(f"Accepted {action!r} for decision {p.decision_id}.",
                       {"status": "accepted", "decision_id": p.decision_id,
                        "action": action})

    @server.tool()
    def rules(game: str = "") -> str:
        """The rules of a game ("six_nimmt", "no_thanks"; default: the current match's)."""
        game = game or (desk.match.game if desk.match else "")
        if game and game not in mcp_text.RULES:
            raise ToolError(f"unknown game {game!r}; known: {', '.join(mcp_text.RULES)}")
        return mcp_text.rules(game)

    @server.tool()
    def match_so_far() -> CallToolResult:
        """The current (or last) match: seats, every public event, the result once ended."""
        return _result(mcp_text.describe_match(desk.match), mcp_text.match_content(desk.match))

    return server


async def play_seat(desk: SeatDesk, args: argparse.Namespace, token: str) -> None:
    """Play the seat with the runner (``bullring bot``'s seat options in ``args``) until it
    is done; tell the desk why it stopped."""
    def play_one(matches: int) -> Awaitable[pb.MatchEnded]:
        return play(args.server, token, "mcp-agent", margin_ms=args.margin_ms,
                    give_up_after_s=args.give_up_after, client="bullring-mcp",
                    on_message=desk.on_message, ladder=args.ladder, matches=matches,
                    factory=lambda game, seed: AgentBot(desk, seed),
                    practice_only=args.practice)

    why = "the match ended"
    try:
        if args.practice:
            await practise(args, token, lambda: play_one(1),
                                      lambda: desk.match.match_id if desk.match else "",
                                      sys.stderr)
            why = "the practice match ended"
        else:
            await play_one(args.matches)
            if args.ladder:
                why = "the ladder matches were played"
    except asyncio.CancelledError:
        raise
    except Exception as e:  # the agent is told; the MCP server keeps answering
        log.error("the seat stopped: %s", e)
        why = f"the seat stopped: {e}"
    desk.finish(why)


async def play_when_wanted(desk: SeatDesk, args: argparse.Namespace, token: str) -> None:
    """Play the seat once an agent asks for its first decision: until then nobody joins the
    match or the ladder, so no match is played by defaults for an agent that is not there."""
    await desk.wanted.wait()
    where = f"the {args.ladder} ladder" if args.ladder else "the seat's match"
    log.info("an agent asked for a decision: joining %s", where)
    await play_seat(desk, args, token)


async def serve_http(server: MCPServer, host: str, port: int, agent_token: str | None,
                     origins: Sequence[str] = ()) -> None:
    """Serve ``server`` over streamable HTTP at ``/mcp`` behind an ``AgentGate``: the
    agent's bearer token when one is given, and no browser page but ``origins`` (and, on
    loopback, this machine's own pages)."""
    import uvicorn

    loopback = is_loopback(host)
    app = AgentGate(server.streamable_http_app(host=host), agent_token, origins,
                    loopback_pages=loopback)
    config = uvicorn.Config(app, host=host, port=port,
                            log_level=server.settings.log_level.lower())
    await uvicorn.Server(config).serve()


async def serve(args: argparse.Namespace, token: str, transport: str,
                host: str = "127.0.0.1", port: int = 8000, agent_token: str | None = None,
                origins: Sequence[str] = ()) -> None:
    """Run the MCP server over ``transport`` ("stdio" or "http"); the seat plays from the
    agent's first request for a decision."""
    desk = SeatDesk(args.margin_ms)
    server = build(desk)
    seat = asyncio.create_task(play_when_wanted(desk, args, token))
    try:
        if transport == "stdio":
            await server.run_stdio_async()
        else:
            await serve_http(server, host, port, agent_token, origins)
    finally:
        await reap(seat)
