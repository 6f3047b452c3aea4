"""Practice matches for ``bullring bot --practice``: ask the server for an unrated match of
a game against named opponents (ChallengeService.CreateChallenge with the bot's token), and
follow the request until it can be played.

House opponents (``house:greedy``) make a practice match, accepted at once; a registered
opponent's owner accepts or declines (or its bot accepts every challenge). The match is
played on the bot's ladder connection, before any rated table, once every registered bot
in it waits on the game's ladder; that connection is practice-only (``Join.practice_only``),
so no rated table seats the bot while it waits.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TextIO

import grpc

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.errors import BullringError, ConfigurationError
from bullring.sdk.errors import (
    CallFailedError,
    ChallengeUnplayableError,
    RequestRejectedError,
    ServerUnreachableError,
    TokenRefusedError,
)

POLL_S = 1.0
"""How often a challenge waiting for its opponents' answers is asked about."""
UNPLAYABLE = ("declined", "cancelled", "expired")
"""A challenge's statuses once it will not be played."""
OPPONENTS = 3
"""House opponents in a practice match that names none."""


def house_opponents(game: str) -> list[str]:
    """The default practice opponents at ``game``: ``OPPONENTS`` house bots that play it."""
    from bullring.sdk.house import HOUSE_BOTS

    kinds = [kind for kind, cls in HOUSE_BOTS.items() if game in cls.games]
    return [f"house:{kinds[(i + 1) % len(kinds)]}" for i in range(OPPONENTS)]


Servers = str | Sequence[str]
"""One server's address, or the addresses of a fleet's servers (any of them answers for a
challenge: it is kept in the database they share)."""


async def _call(servers: Servers, token: str, method: str, request: Any) -> Any:
    """Call ``method`` on the first of ``servers`` that is reachable (UNAVAILABLE moves on
    to the next)."""
    addresses = [servers] if isinstance(servers, str) else list(servers)
    for number, server in enumerate(addresses, 1):
        async with grpc.aio.insecure_channel(server) as channel:
            try:
                return await wire.challenge_stub(channel)[method](
                    request, metadata=(("authorization", f"Bearer {token}"),), timeout=30)
            except grpc.aio.AioRpcError as exc:
                if exc.code() is not grpc.StatusCode.UNAVAILABLE or number == len(addresses):
                    raise _error(server, exc) from None
    raise ConfigurationError("no server address given")


def _error(server: str, exc: grpc.aio.AioRpcError) -> BullringError:
    """A refused call as the error ``runner.play`` would raise for it."""
    code, details = exc.code(), exc.details() or "(no details)"
    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return TokenRefusedError(f"{server} refused the token: {details}")
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return ServerUnreachableError(f"no answer from {server}: {details}")
    if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
                grpc.StatusCode.FAILED_PRECONDITION):
        return RequestRejectedError(details)
    return CallFailedError(f"{server}: {code.name}: {details}")


async def ask(server: Servers, token: str, game: str, opponents: Sequence[str]) -> pb.Challenge:
    """Ask for an unrated match of ``game`` against ``opponents`` (in seat order after the
    bot); the challenge made."""
    reply = await _call(server, token, "CreateChallenge",
                        pb.CreateChallengeRequest(game=game, opponents=list(opponents)))
    challenge: pb.Challenge = reply.challenge
    return challenge


async def challenge(server: Servers, token: str, challenge_id: str) -> pb.Challenge:
    """The challenge ``challenge_id`` as it stands."""
    reply = await _call(server, token, "GetChallenge",
                        pb.GetChallengeRequest(challenge_id=challenge_id))
    found: pb.Challenge = reply.challenge
    return found


async def accepted(server: Servers, token: str, made: pb.Challenge,
                   waiting: Callable[[pb.Challenge], None]) -> pb.Challenge:
    """Wait until ``made`` is no longer pending (``waiting`` is told once it waits); it
    then, or ``RuntimeError`` naming who ended it when it was declined, cancelled or
    expired."""
    found = made
    if found.status == "pending":
        waiting(found)
    while found.status == "pending":
        await asyncio.sleep(POLL_S)
        found = await challenge(server, token, found.challenge_id)
    if found.status in UNPLAYABLE:
        raise ChallengeUnplayableError(f"challenge {found.challenge_id} is {found.status}: "
                           f"{found.message}")
    return found


async def practise(args: argparse.Namespace, token: str,
                   play_one: Callable[[], Awaitable[Any]],
                   played: Callable[[], str], out: TextIO | None = None,
                   joined: asyncio.Event | None = None) -> Any:
    """Ask for the practice match, wait for its answers, then ``play_one`` ladder match after
    another until the one played (``played()``, its id) is the practice match; its result.
    Progress lines go to ``out`` (default: stdout).

    With ``joined`` (set once the connection waits on the ladder), the first ``play_one``
    connects before the match is asked for: beside the bot's running ladder connection the
    server then seats the practice match on this run, never on that one."""
    playing: asyncio.Future[Any] | None = None
    if joined is not None:
        playing = asyncio.ensure_future(play_one())
        waiting = asyncio.ensure_future(joined.wait())
        await asyncio.wait({playing, waiting}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if playing.done():  # it ended before it joined: its error, or its result
            return playing.result()
    made = await ask(args.server, token, args.ladder,
                     args.against or house_opponents(args.ladder))
    print(f"practice match asked for: challenge {made.challenge_id} against "
          f"{', '.join(made.opponents)}, {made.status}", file=out or sys.stdout, flush=True)
    made = await accepted(args.server, token, made, lambda c: print(
        f"waiting for {', '.join(b for b, a in c.answers.items() if a == 'pending')} "
        f"to accept", file=out or sys.stdout, flush=True))
    while True:
        ended = await (playing if playing is not None else play_one())
        playing = None
        made = await challenge(args.server, token, made.challenge_id)
        if made.match_id and made.match_id == played():
            return ended
