"""The bot runner: plays one seat of a match on a Bullring server with a ``Bot``.

``bullring bot --server HOST:PORT --token TOKEN BOT`` connects with the seat's token, loads
the bot once the match says which game it is, answers every decision within the time the
server says is left (minus a safety margin), and reconnects into the same seat when the
connection drops. The bot sees the very observation values the local arena gives it.

With a registered bot's token, ``--ladder GAME`` joins that game's ladder instead: the stream
stays open and carries one match after another, a new bot object for each; after a lost
connection the runner reconnects (with the same backoff) and the server gives the bot back
its seat, or queues it again.

``--server`` may name several servers of one fleet (``HOST:PORT,HOST:PORT``): the runner
connects to the first that answers, and when a connection is lost it tries the same server
once more, then the next one, so a ladder bot whose server died plays on on another.

A bot is named by a spec: ``house:NAME`` (a house bot), ``package.module:ClassName`` or
``path/to/file.py:ClassName`` (a ``Bot`` subclass, instantiated as ``ClassName(seed)``).

Here are the connection and its reconnects (``play``); the seat's state and answers are in
``client_sdk/python/sdk/seat.py``, the two transports in ``client_sdk/python/sdk/transports.py``,
the bot's thread
in ``client_sdk/python/sdk/bot_thread.py`` and the command line in
``client_sdk/python/sdk/cli/bot.py``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence

import grpc

from bullring.commandline import reach
from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.errors import BullringError, ConfigurationError
from bullring.sdk.backoff import Backoff
from bullring.sdk.bot import Bot
from bullring.sdk.bot_spec import BotFactory, bot_class, bot_factory
from bullring.sdk.errors import (
    CallFailedError,
    RequestRejectedError,
    ServerUnreachableError,
    TokenRefusedError,
)
from bullring.sdk.seat import Seat
from bullring.sdk.transports import RETRYABLE, Connection, play_stream, play_unary

SESSIONS = {"stream": play_stream, "unary": play_unary}
"""How a seat talks to the server, by ``--transport`` name: the bidirectional Play stream, or
Subscribe plus SubmitAnswer calls."""

log = logging.getLogger("bullring.bot")
"""The runner's logger: connections and what goes wrong at INFO and above; each match's
start and end, every decision answered, events and verdicts at DEBUG."""

RECONNECT = Backoff(first_s=0.05, max_s=2.0, factor=2.0, jitter=0.5)
"""The pauses between reconnects: 0.05 s doubling up to 2 s, each shortened by up to half."""

REFUSED_FOR_S = 1.0
"""How long connections may be refused, before the server has ever answered, until the
runner stops: nothing listens at that address (a server just starting gets this long)."""

DIAL_S = 2.0
"""With several addresses, how long one dial may take before the runner moves on to the
next address (a machine that vanished answers nothing, not even a refusal)."""


def _channel_options() -> list[tuple[str, int]]:
    # A private subchannel per channel, so each attempt really dials instead of inheriting
    # gRPC's own (much longer) reconnect backoff; the runner does the backing off.
    return [*wire.channel_options(), ("grpc.use_local_subchannel_pool", 1),
            ("grpc.initial_reconnect_backoff_ms", int(RECONNECT.first_s * 1000)),
            ("grpc.max_reconnect_backoff_ms", int(RECONNECT.max_s * 1000))]


async def _connect(channel: grpc.aio.Channel, within_s: float) -> bool:
    """Dial ``channel``; True once it is ready, False when the attempt fails, TimeoutError
    after ``within_s``. A cancellation (Ctrl-C) that comes as the channel gets ready still
    cancels: the deadline is ``asyncio.timeout``'s, not Python 3.11's ``asyncio.wait_for``,
    which returns the inner result then and drops the cancellation."""
    async with asyncio.timeout(within_s):
        state = channel.get_state(try_to_connect=True)
        while state is not grpc.ChannelConnectivity.READY:
            if state in (grpc.ChannelConnectivity.TRANSIENT_FAILURE,
                         grpc.ChannelConnectivity.SHUTDOWN):
                return False
            await channel.wait_for_state_change(state)
            state = channel.get_state(try_to_connect=True)
        return True


class Refusals:
    """Since when every dial has been refused, and at which addresses: the runner stops
    once all its addresses have refused for ``REFUSED_FOR_S`` before any server answered."""

    def __init__(self, addresses: Sequence[str]) -> None:
        self.addresses = tuple(addresses)
        self.since: float | None = None
        self.refused: set[str] = set()

    def check(self, address: str, finding: reach.Finding | None, reached: bool) -> None:
        """Raise ``ServerUnreachableError`` when ``finding`` (what a failed dial of ``address``
        found) shows that the addresses will never be a gRPC server, before one has ever
        answered: an HTTP port at once, refusals once every address has refused for
        ``REFUSED_FOR_S`` with no other failure between."""
        if finding is None or finding.kind is not reach.Kind.REFUSED:
            self.since = None
            self.refused.clear()
            if finding is not None and not reached:
                raise ServerUnreachableError(finding.message)
            return
        now = time.monotonic()
        if self.since is None:
            self.since = now
        self.refused.add(address)
        if not reached and now - self.since >= REFUSED_FOR_S and \
                self.refused.issuperset(self.addresses):
            others = [a for a in self.addresses if a != address]
            raise ServerUnreachableError(finding.message + (f"; so did {', '.join(others)}"
                                                            if others else ""))

    @property
    def refusing(self) -> bool:
        """Whether the last failed dial was refused."""
        return self.since is not None


def _refusal(e: grpc.aio.AioRpcError) -> BullringError:
    """The exception ``play`` raises for a status it does not retry."""
    code, details = e.code(), e.details() or "(no details)"
    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return TokenRefusedError(f"the server refused the token: {code.name}: {details}")
    if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED):
        return RequestRejectedError(f"the server rejected the request: {code.name}: {details}")
    return CallFailedError(f"the server ended the seat's stream: {code.name}: {details}")


def addresses_of(server: str | Sequence[str]) -> tuple[str, ...]:
    """The addresses ``play`` tries, in order: ``server`` itself, or each of a sequence;
    ValueError for none, or one named twice."""
    addresses = (server,) if isinstance(server, str) else tuple(server)
    if not addresses:
        raise ConfigurationError("no server address given")
    if len(set(addresses)) != len(addresses):
        raise ConfigurationError(f"an address is named twice in {', '.join(addresses)}")
    return addresses


async def play(server: str | Sequence[str], token: str, bot_spec: str, *, seed: int = 0,
               transport: str = "stream", margin_ms: int = 50, give_up_after_s: float = 60.0,
               client: str = "bullring-python",
               on_message: Callable[[pb.PlayResponse], None] | None = None,
               ladder: str | None = None, matches: int = 0,
               factory: BotFactory | None = None,
               practice_only: bool = False) -> pb.MatchEnded:
    """Play the seat ``token`` names on ``server`` with the bot ``bot_spec``; return the result.

    ``server`` is one address (``HOST:PORT``), or several servers of one fleet, tried in
    order: the runner stays on the server it reached for as long as it can, and moves on to
    the next address (after the last, the first again) whenever an attempt fails before the
    server said anything: a refused or timed-out dial (``DIAL_S``), or a call that failed
    at once. A lost connection is tried once more on the same server (the seat's match
    runs there), then on the next.

    With ``ladder`` (a game id) and a registered bot's token, play that game's ladder: one
    match after another on the same stream, until ``matches`` have ended (0: forever); the
    last result is returned. With ``practice_only`` too, the server never seats it at a
    rated table: only in its practice matches and challenges (``bullring bot --practice``).

    The bot is made (``load_bot(bot_spec, game, seed)``) when MatchStarted arrives. Each
    decision is answered if the bot decides within the time left (counted from when the
    request arrived) minus ``margin_ms``; otherwise nothing is sent and the server applies
    its default action. The server's messages are read while the bot decides: a decision
    the server has moved past (its next decision, the match's end or another match has
    come) is not given to the bot, nor waited for, so a slow bot never leaves the runner
    behind the server. ``on_message`` is called with every message from the server, before
    the runner acts on it.

    When the connection fails (UNAVAILABLE, CANCELLED, DEADLINE_EXCEEDED, INTERNAL, UNKNOWN)
    or the stream ends before MatchEnded, the runner reconnects into the same seat with
    exponential backoff and jitter (0.05 s doubling up to 2 s; with several addresses the
    pause grows once per round of them). It raises ``ServerUnreachableError`` (a
    ``ConnectionError``) once ``give_up_after_s`` has passed without a working connection
    (one on which the server sent something); before the server has ever answered, sooner:
    at once when the address answers HTTP/1.1 (Bullring's HTTP port: the message names the
    gRPC port), and after ``REFUSED_FOR_S`` of refused connections (nothing listens there,
    nor at any other address given).
    It raises ``TokenRefusedError`` (a ``PermissionError``) at once for
    UNAUTHENTICATED / PERMISSION_DENIED, ``RequestRejectedError`` (a ``ValueError``) for
    INVALID_ARGUMENT / RESOURCE_EXHAUSTED, ``BotSpecError`` (a ``ValueError``) for a bad bot
    spec, and ``CallFailedError`` (a ``RuntimeError``) for any other status.

    A stream the server ends on purpose carries a last ``Closed`` message, acted on before
    the status (which a client still writing may see as INTERNAL): replaced by a newer
    connection with the same token raises ``StreamClosedError`` (a ``RuntimeError``), a
    rotated token or a disabled bot ``AccessEndedError`` (a ``PermissionError``), each with
    the server's message; none is reconnected. The bot's ``games`` go in the Join, so a seat
    or ladder of another game is refused (FAILED_PRECONDITION: ``CallFailedError``) before
    it is taken.

    ``factory`` makes the bots instead of ``bot_spec``, which then only names them in the
    log (``bullring mcp`` plays a seat this way, with a bot that waits for an agent).
    """
    if transport not in SESSIONS:
        raise ConfigurationError(
            f"unknown transport {transport!r}; use one of {', '.join(SESSIONS)}")
    if margin_ms < 0:
        raise ConfigurationError(f"margin_ms must be >= 0, not {margin_ms}")
    addresses = addresses_of(server)
    if factory is None:
        seat = Seat(bot_spec, bot_factory(bot_spec), seed, margin_ms, on_message, ladder,
                    matches, bot_class(bot_spec).games, practice_only)
    else:
        seat = Seat(bot_spec, factory, seed, margin_ms, on_message, ladder, matches, Bot.games,
                    practice_only)
    session = SESSIONS[transport]
    metadata = (("authorization", f"Bearer {token}"),)
    down_since = time.monotonic()
    failures = 0
    at = 0
    last_error = "no attempt yet"
    reached = False
    refusals = Refusals(addresses)
    try:
        while True:
            address = addresses[at]
            remaining = give_up_after_s - (time.monotonic() - down_since)
            if remaining <= 0:
                raise ServerUnreachableError(f"gave up on {', '.join(addresses)} after "
                                             f"{give_up_after_s:g} s without a connection; "
                                             f"last error: {last_error}")
            conn = Connection()
            log.debug("connecting to %s (%s)%s", address, transport,
                      f", attempt {failures + 1}" if failures else "")
            dial_s = remaining if len(addresses) == 1 else min(remaining, DIAL_S)
            async with grpc.aio.insecure_channel(address, options=_channel_options()) as channel:
                try:
                    ready = await _connect(channel, dial_s)
                    last_error = f"cannot connect to {address}"
                except TimeoutError:
                    ready, last_error = False, f"connecting to {address} timed out"
                if not ready:
                    finding = await asyncio.to_thread(reach.probe, address)
                    refusals.check(address, finding, reached)
                    if finding is not None:
                        last_error = finding.message
                if ready:
                    log.info("connected to %s", address)
                    try:
                        ended = await session(seat, wire.bot_stub(channel), metadata, client,
                                              conn)
                    except grpc.aio.AioRpcError as e:
                        if e.code() not in RETRYABLE:
                            raise _refusal(e) from None
                        last_error = f"{address}: {e.code().name}: {e.details()}"
                    else:
                        if ended is not None:
                            if ladder is None:
                                log.debug("match %s ended: totals %s ranks %s (%s)",
                                          seat.match_id, list(ended.totals),
                                          list(ended.ranks),
                                          wire.termination_name(ended.termination))
                            return ended
                        last_error = f"the stream from {address} ended before MatchEnded"
            if conn.heard:
                down_since, failures, reached = time.monotonic(), 0, True
            else:  # nothing from this server on this attempt: the next one's turn
                at = (at + 1) % len(addresses)
            failures += 1
            delay = RECONNECT.pause(-(-failures // len(addresses)))
            remaining = give_up_after_s - (time.monotonic() - down_since)
            log.log(logging.DEBUG if refusals.refusing and not reached else logging.WARNING,
                    "connection to %s failed (%s); reconnecting in %.2f s%s", address,
                    last_error, max(0.0, min(delay, remaining)),
                    "" if addresses[at] == address else f", to {addresses[at]}")
            await asyncio.sleep(max(0.0, min(delay, remaining)))
    finally:
        seat.thread.close()
