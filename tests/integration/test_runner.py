"""The SDK's bot runner playing against a fake referee over gRPC (loading bots by spec:
``tests/unit/test_bot_spec.py``).

The fake referees here are real ``grpc.aio`` (or threaded ``grpc``) servers on a loopback
port, scripted per connection, so reconnects, refusals and missed deadlines are exercised
through the very channel code the runner uses against the real server.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.errors import BullringError
from bullring.referee import six_nimmt
from bullring.sdk import runner
from bullring.sdk.cli import bot as runner_cli
from bullring.sdk.errors import (
    CallFailedError,
    RequestRejectedError,
    ServerUnreachableError,
    TokenRefusedError,
)
from tests.bots.low_card import LowCard
from tests.integration.fake_referee import (
    ENDED,
    STARTED,
    FakeReferee,
    decision,
    free_port,
    read_rest,
)

TOKEN = "seat-token-1"
BOTS = Path(__file__).resolve().parents[1] / "bots"

# --------------------------------------------------------------------------- test bots

RECORDERS: list[Recorder] = []


class Recorder(LowCard):
    """LowCard that records the public events it is told and how often it decided."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.decisions = 0
        RECORDERS.append(self)

    def decide(self, observation: Any) -> Any:
        """Count, then play the lowest card."""
        self.decisions += 1
        return super().decide(observation)

    def on_event(self, type_: str, fields: dict[str, Any]) -> None:
        """Remember the event."""
        self.events.append((type_, fields))


RELEASE_SLOW = threading.Event()


class Slow(LowCard):
    """Blocks in ``decide`` until the test releases it: every deadline is missed."""

    def decide(self, observation: Any) -> Any:
        """Wait for the test, then play the lowest card."""
        RELEASE_SLOW.wait(10)
        return super().decide(observation)


# --------------------------------------------------------------------------- play


@pytest.mark.timeout(30)
def test_reconnects_into_the_same_seat(caplog: pytest.LogCaptureFixture) -> None:
    """A dropped stream is reconnected; the resent decision gets the same answer."""
    caplog.set_level(logging.DEBUG, logger="bullring.bot")
    RECORDERS.clear()
    request, card = decision("d1")
    joins: list[pb.PlayRequest] = []
    answers: list[pb.PlayRequest] = []
    after_end: list[list[pb.PlayRequest]] = []
    read_to_the_end = asyncio.Event()
    seen: list[str] = []

    async def script(connection: int, context: Any) -> None:
        joins.append(await context.read())
        await context.write(STARTED)
        if connection == 1:
            await context.write(pb.PlayResponse(event=wire.event_to_proto(
                six_nimmt.RoundStarted(0, ((1,), (2,), (3,), (4,))))))
        await context.write(request)
        answers.append(await context.read())
        if connection == 1:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "server restarting")
        await context.write(pb.PlayResponse(rejected=pb.AnswerRejected(
            decision_id="d0", reason=pb.REJECT_REASON_NOT_PENDING, message="d0 is over")))
        await context.write(pb.PlayResponse(match_ended=ENDED))
        after_end.append(await read_rest(context))
        read_to_the_end.set()

    async def main() -> pb.MatchEnded:
        async with FakeReferee(script) as referee:
            ended = await runner.play(
                referee.address, TOKEN, "tests.integration.test_runner:Recorder", seed=3,
                client="test-client", on_message=lambda m: seen.append(m.WhichOneof("body")))
            # The referee reads the stream to its end before it stops (stopping first would
            # cut its read short and record nothing).
            await asyncio.wait_for(read_to_the_end.wait(), 10)
            assert referee.connections == 2
            assert referee.tokens == [f"Bearer {TOKEN}"] * 2
            return ended

    assert asyncio.run(main()) == ENDED
    assert [j.join.client for j in joins] == ["test-client", "test-client"]
    assert [(a.answer.decision_id, a.answer.action.card) for a in answers] == [("d1", card)] * 2
    assert after_end == [[]]
    [bot] = RECORDERS  # one bot for the whole match, across the reconnect
    assert bot.decisions == 1
    assert bot.events == [("RoundStarted", {"round": 0, "rows": ((1,), (2,), (3,), (4,))})]
    assert seen == ["match_started", "event", "decision", "match_started", "decision",
                    "rejected", "match_ended"]
    assert "reconnecting in" in caplog.text and "UNAVAILABLE: server restarting" in caplog.text
    rejected = [r for r in caplog.records if "rejected" in r.getMessage()]
    assert rejected[0].levelno == logging.WARNING
    assert "REJECT_REASON_NOT_PENDING" in rejected[0].getMessage()
    assert "d0 is over" in rejected[0].getMessage()
    assert f"decision d1 (PLAY_CARD): answered {card}" in caplog.text


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("code", "error", "built_in"), [
    (grpc.StatusCode.UNAUTHENTICATED, TokenRefusedError, PermissionError),
    (grpc.StatusCode.PERMISSION_DENIED, TokenRefusedError, PermissionError),
    (grpc.StatusCode.INVALID_ARGUMENT, RequestRejectedError, ValueError),
    (grpc.StatusCode.RESOURCE_EXHAUSTED, RequestRejectedError, ValueError),
    (grpc.StatusCode.FAILED_PRECONDITION, CallFailedError, RuntimeError),
])
def test_refusals_are_not_retried(code: grpc.StatusCode, error: type[BullringError],
                                  built_in: type[Exception]) -> None:
    """A refused token or request raises at once, with the server's details, as the SDK's
    error of its kind, which ``except`` of the built-in kind still catches."""

    async def script(connection: int, context: Any) -> None:
        await context.abort(code, "no seat has this token")

    async def main() -> int:
        async with FakeReferee(script) as referee:
            with pytest.raises(error, match=f"{code.name}: no seat has this token") as caught:
                await runner.play(referee.address, "bad", "house:random")
            assert isinstance(caught.value, built_in)
            return referee.connections

    assert asyncio.run(main()) == 1


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("reason", "error"), [
    (pb.CLOSE_REASON_REPLACED, RuntimeError),
    (pb.CLOSE_REASON_TOKEN_REVOKED, PermissionError),
    (pb.CLOSE_REASON_BOT_DISABLED, PermissionError),
])
def test_a_closed_stream_is_not_reconnected(reason: pb.CloseReason,
                                            error: type[Exception]) -> None:
    """A stream the server ends with a Closed message (replaced, token revoked, bot disabled)
    raises with the server's words and is never dialled again, even when the status that
    follows reaches the client as INTERNAL (a write racing the end, grpc/grpc#36066). The
    Join says which games the bot plays."""
    request, _ = decision("d1")
    joins: list[pb.PlayRequest] = []

    async def script(connection: int, context: Any) -> None:
        joins.append(await context.read())
        await context.write(STARTED)
        await context.write(request)
        await context.write(pb.PlayResponse(closed=pb.Closed(
            reason=reason, message="replaced by a newer connection (gRPC Play from x)")))
        await context.abort(grpc.StatusCode.INTERNAL, "Internal error from Core")

    async def main() -> int:
        async with FakeReferee(script) as referee:
            with pytest.raises(error, match=r"replaced by a newer connection \(gRPC Play"):
                await runner.play(referee.address, TOKEN, "house:greedy")
            return referee.connections

    assert asyncio.run(main()) == 1
    assert list(joins[0].join.games) == ["six_nimmt"]


@pytest.mark.timeout(30)
def test_a_stream_closed_as_stalled_is_joined_again() -> None:
    """A stream the server ends because it was not read (Closed, STALLED, then
    RESOURCE_EXHAUSTED) is the runner's own slowness, not a refusal: it joins again and
    plays on in the same seat."""
    joins: list[pb.PlayRequest] = []

    async def script(connection: int, context: Any) -> None:
        joins.append(await context.read())
        await context.write(STARTED)
        if connection == 1:
            message = "the server ended this connection: a write waited 10 s for the client"
            await context.write(pb.PlayResponse(closed=pb.Closed(
                reason=pb.CLOSE_REASON_STALLED, message=message)))
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, message)
        await context.write(pb.PlayResponse(match_ended=ENDED))

    async def main() -> tuple[pb.MatchEnded | None, int]:
        async with FakeReferee(script) as referee:
            ended = await runner.play(referee.address, TOKEN, "house:greedy")
            return ended, referee.connections

    assert asyncio.run(main()) == (ENDED, 2)
    assert len(joins) == 2


def test_a_refused_connection_ends_the_run_after_a_second(caplog: pytest.LogCaptureFixture
                                                          ) -> None:
    """Where nothing listens, the runner retries quietly (a server may be starting) for
    REFUSED_FOR_S, then raises ConnectionError saying the connection was refused, long
    before give_up_after_s."""
    caplog.set_level(logging.DEBUG, logger="bullring.bot")
    address = f"127.0.0.1:{free_port()}"
    began = time.monotonic()
    with pytest.raises(ServerUnreachableError, match=f"^{address} refused the connection") \
            as caught:
        asyncio.run(runner.play(address, TOKEN, "house:random", give_up_after_s=60))
    assert isinstance(caught.value, ConnectionError)
    assert runner.REFUSED_FOR_S <= time.monotonic() - began < 30
    retries = [r for r in caplog.records if "reconnecting in" in r.getMessage()]
    assert len(retries) >= 3 and {r.levelno for r in retries} == {logging.DEBUG}


# --------------------------------------------------------------------------- several addresses


@pytest.mark.timeout(30)
def test_a_lost_server_is_tried_once_more_then_the_next_address_plays_on(
        caplog: pytest.LogCaptureFixture) -> None:
    """With two addresses: the runner plays on the first; when that stream is lost it dials
    the same server once more (the seat's match runs there), and when that attempt fails
    before the server says anything (a server going down answers UNAVAILABLE) it moves to
    the second address, joins with the same token and the same bot, and plays on there.
    The second server is not dialled before the first was lost."""
    caplog.set_level(logging.DEBUG, logger="bullring.bot")
    RECORDERS.clear()
    request, card = decision("d1")
    first_joins: list[pb.PlayRequest] = []
    second_joins: list[pb.PlayRequest] = []
    answers: list[pb.PlayRequest] = []

    async def going_down(connection: int, context: Any) -> None:
        first_joins.append(await context.read())
        if connection > 1:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "shutting down")
        await context.write(STARTED)
        await context.write(request)
        answers.append(await context.read())
        await context.abort(grpc.StatusCode.UNAVAILABLE, "server killed")

    async def standing(connection: int, context: Any) -> None:
        second_joins.append(await context.read())
        await context.write(STARTED)
        await context.write(request)
        answers.append(await context.read())
        await context.write(pb.PlayResponse(match_ended=ENDED))
        await read_rest(context)

    addresses: list[str] = []

    async def main() -> tuple[pb.MatchEnded, int, int]:
        async with FakeReferee(going_down) as first, FakeReferee(standing) as second:
            addresses.extend([first.address, second.address])
            ended = await runner.play(addresses, TOKEN, "tests.integration.test_runner:Recorder")
            return ended, first.connections, second.connections

    assert asyncio.run(main()) == (ENDED, 2, 1)
    assert [j.join.client for j in first_joins + second_joins] == ["bullring-python"] * 3
    # The decision sent again on the second server gets the same answer from the same bot.
    assert [(a.answer.decision_id, a.answer.action.card) for a in answers] == [("d1", card)] * 2
    [bot] = RECORDERS
    assert bot.decisions == 1
    retries = [r.getMessage() for r in caplog.records if "reconnecting in" in r.getMessage()]
    assert len(retries) == 2
    assert "server killed" in retries[0] and ", to " not in retries[0]  # the same server
    assert "shutting down" in retries[1] and retries[1].endswith(f", to {addresses[1]}")
    connected = [r.getMessage() for r in caplog.records if r.getMessage().startswith("connected")]
    assert connected == [f"connected to {a}" for a in (addresses[0], addresses[0], addresses[1])]


@pytest.mark.timeout(30)
def test_an_address_where_nothing_listens_is_passed_over() -> None:
    """The first address refuses the connection (its server is down): the runner goes on
    to the second at once and plays the match there, without ending the run."""
    async def script(connection: int, context: Any) -> None:
        await context.read()
        await context.write(STARTED)
        await context.write(pb.PlayResponse(match_ended=ENDED))
        await read_rest(context)

    async def main() -> tuple[pb.MatchEnded, int]:
        async with FakeReferee(script) as referee:
            ended = await runner.play([f"127.0.0.1:{free_port()}", referee.address], TOKEN,
                                      "house:random")
            return ended, referee.connections

    assert asyncio.run(main()) == (ENDED, 1)


def test_every_address_refusing_ends_the_run_after_a_second() -> None:
    """Where nothing listens at any of the addresses, the run ends after REFUSED_FOR_S with
    one ConnectionError naming them all; the same address twice is a ValueError before any
    dial."""
    first, second = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    began = time.monotonic()
    with pytest.raises(ConnectionError, match=r"refused the connection.*; so did ") as caught:
        asyncio.run(runner.play([first, second], TOKEN, "house:random", give_up_after_s=60))
    assert runner.REFUSED_FOR_S <= time.monotonic() - began < 30
    assert first in str(caught.value) and second in str(caught.value)
    with pytest.raises(ValueError, match="named twice"):
        asyncio.run(runner.play([first, first], TOKEN, "house:random"))


@pytest.mark.timeout(30)
def test_gives_up_when_nothing_answers(caplog: pytest.LogCaptureFixture) -> None:
    """A listener that never speaks (no gRPC, no HTTP): the runner retries with backoff,
    warning each time, then raises ConnectionError after give_up_after_s."""
    caplog.set_level(logging.INFO, logger="bullring.bot")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        began = time.monotonic()
        with pytest.raises(ServerUnreachableError, match=f"gave up on {address} after 0.6 s"):
            asyncio.run(runner.play(address, TOKEN, "house:random", give_up_after_s=0.6))
    assert 0.5 < time.monotonic() - began < 10
    assert caplog.text.count("reconnecting in") >= 1  # backed off, but kept trying


@pytest.mark.timeout(30)
def test_a_missed_deadline_sends_nothing(caplog: pytest.LogCaptureFixture) -> None:
    """A bot slower than time left minus the margin is not answered for."""
    RELEASE_SLOW.clear()
    request, _ = decision("d1", time_left_ms=80)
    received: list[list[pb.PlayRequest]] = []
    read_to_the_end = asyncio.Event()

    async def script(connection: int, context: Any) -> None:
        await context.read()
        await context.write(STARTED)
        await context.write(request)
        await context.write(pb.PlayResponse(match_ended=ENDED))
        received.append(await read_rest(context))
        read_to_the_end.set()

    async def main() -> pb.MatchEnded:
        async with FakeReferee(script) as referee:
            ended = await runner.play(referee.address, TOKEN,
                                      "tests.integration.test_runner:Slow", margin_ms=50)
            await asyncio.wait_for(read_to_the_end.wait(), 10)  # as above
            return ended

    try:
        assert asyncio.run(main()) == ENDED
    finally:
        RELEASE_SLOW.set()
    assert received == [[]]
    assert "missed decision d1 (PLAY_CARD)" in caplog.text


@pytest.mark.timeout(30)
def test_unary_transport() -> None:
    """Subscribe carries the server's messages; each answer goes by SubmitAnswer."""
    request, card = decision("d7")
    submitted: list[pb.SubmitAnswerRequest] = []
    tokens: list[str | None] = []

    async def main() -> pb.MatchEnded:
        answered = asyncio.Event()

        async def subscribe(req: pb.SubscribeRequest, context: Any) -> None:
            tokens.append(dict(context.invocation_metadata()).get("authorization"))
            assert req.client == "bullring-python"
            await context.write(pb.SubscribeResponse(message=STARTED))
            await context.write(pb.SubscribeResponse(message=request))
            await answered.wait()
            await context.write(pb.SubscribeResponse(message=pb.PlayResponse(match_ended=ENDED)))

        async def submit(req: pb.SubmitAnswerRequest, context: Any) -> pb.SubmitAnswerResponse:
            tokens.append(dict(context.invocation_metadata()).get("authorization"))
            submitted.append(req)
            answered.set()
            return pb.SubmitAnswerResponse(
                accepted=pb.AnswerAccepted(decision_id=req.answer.decision_id))

        server = grpc.aio.server()
        server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(wire.BOT_SERVICE, {
            "Subscribe": grpc.unary_stream_rpc_method_handler(
                subscribe, request_deserializer=pb.SubscribeRequest.FromString,
                response_serializer=pb.SubscribeResponse.SerializeToString),
            "SubmitAnswer": grpc.unary_unary_rpc_method_handler(
                submit, request_deserializer=pb.SubmitAnswerRequest.FromString,
                response_serializer=pb.SubmitAnswerResponse.SerializeToString),
        })])
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            return await runner.play(f"127.0.0.1:{port}", TOKEN, "tests.bots.low_card:LowCard",
                                     transport="unary")
        finally:
            await server.stop(None)

    assert asyncio.run(main()) == ENDED
    assert [(s.answer.decision_id, s.answer.action.card) for s in submitted] == [("d7", card)]
    assert tokens == [f"Bearer {TOKEN}"] * 2


def test_bad_arguments_fail_before_connecting() -> None:
    """A bad spec or transport is a ValueError without any connection attempt."""
    address = f"127.0.0.1:{free_port()}"
    with pytest.raises(ValueError, match="bad bot spec"):
        asyncio.run(runner.play(address, TOKEN, "house:nobody"))
    with pytest.raises(ValueError, match="unknown transport"):
        asyncio.run(runner.play(address, TOKEN, "house:random", transport="pigeon"))


# --------------------------------------------------------------------------- command line


@pytest.fixture
def cli_logging() -> Iterator[None]:
    """Undo the stderr handler ``run_from_args`` installs."""
    yield
    logger = logging.getLogger("bullring.bot")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    logger.setLevel(logging.NOTSET)


def threaded_referee(play: Callable[[Iterator[pb.PlayRequest], Any], Iterator[pb.PlayResponse]]
                     ) -> tuple[grpc.Server, str]:
    """A threaded gRPC server (the CLI runs its own event loop) serving ``play``."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(wire.BOT_SERVICE, {
        "Play": grpc.stream_stream_rpc_method_handler(
            play, request_deserializer=pb.PlayRequest.FromString,
            response_serializer=pb.PlayResponse.SerializeToString)})])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"


@pytest.mark.timeout(30)
def test_cli_prints_the_result(capsys: pytest.CaptureFixture[str], cli_logging: None,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``bullring bot`` plays the match and prints one line, marking its own seat; the token
    may come from env."""
    tokens: list[str | None] = []

    def play(requests: Iterator[pb.PlayRequest], context: Any) -> Iterator[pb.PlayResponse]:
        tokens.append(dict(context.invocation_metadata()).get("authorization"))
        next(requests)
        yield STARTED
        yield pb.PlayResponse(match_ended=ENDED)

    server, address = threaded_referee(play)
    try:
        monkeypatch.setenv("BULLRING_TOKEN", "from-env")
        assert runner_cli.main(["--server", address, "--seed", "2", "-v", "house:random"]) == 0
    finally:
        server.stop(None)
    out, err = capsys.readouterr()
    assert out == ("match m-1 ended: totals [3, 7] ranks [1, 2] (normal); "
                   "you (seat 0): total 3, rank 1\n")
    assert "connected to" in err
    assert tokens == ["Bearer from-env"]


@pytest.mark.timeout(30)
def test_cli_exit_codes(capsys: pytest.CaptureFixture[str], cli_logging: None,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    """3 for a refused token, 4 after giving up, 2 for a bad spec or no token."""
    monkeypatch.delenv("BULLRING_TOKEN", raising=False)

    def refuse(requests: Iterator[pb.PlayRequest], context: Any) -> Iterator[pb.PlayResponse]:
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown token")
        yield from ()

    server, address = threaded_referee(refuse)
    try:
        assert runner_cli.main(("--server", address, "--token", "x", "house:random")) == 3
    finally:
        server.stop(None)
    assert "UNAUTHENTICATED: unknown token" in capsys.readouterr().err
    nowhere = f"127.0.0.1:{free_port()}"
    assert runner_cli.main(("--server", nowhere, "--token", "x", "--give-up-after", "0.2",
                            "house:random")) == 4
    assert "gave up" in capsys.readouterr().err
    assert runner_cli.main(("--server", nowhere, "--token", "x", "house:random")) == 4
    assert "refused the connection" in capsys.readouterr().err
    assert runner_cli.main(("--server", nowhere, "--token", "x", "nope")) == 2
    assert runner_cli.main(("--server", nowhere, "house:random")) == 2
    assert "a token is required" in capsys.readouterr().err
