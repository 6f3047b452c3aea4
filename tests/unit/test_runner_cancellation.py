"""A cancellation of the bot runner (Ctrl-C) that comes just as what it waits for is done
still cancels it: the dial (``runner._connect``) and a decision's wait for the bot
(``seat._within``) do not return the result instead, as Python 3.11's ``asyncio.wait_for``
does when the inner awaitable finishes in the same instant."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from bullring.sdk.runner import _connect
from bullring.sdk.seat import _within


class _Channel:
    """The part of a ``grpc.aio.Channel`` the dial uses: CONNECTING until ``connect``, then
    READY; ``waiting`` is set once the dial waits for a change of state."""

    def __init__(self) -> None:
        self.state = grpc.ChannelConnectivity.CONNECTING
        self.waiting = asyncio.Event()
        self._change: asyncio.Future[None] | None = None

    def get_state(self, try_to_connect: bool = False) -> grpc.ChannelConnectivity:
        """The state now."""
        return self.state

    async def wait_for_state_change(self, last: grpc.ChannelConnectivity) -> None:
        """Return once ``connect`` changed the state."""
        self._change = asyncio.get_running_loop().create_future()
        self.waiting.set()
        await self._change

    def connect(self) -> None:
        """The channel is ready."""
        assert self._change is not None
        self.state = grpc.ChannelConnectivity.READY
        self._change.set_result(None)


async def _outcome(task: asyncio.Future[Any]) -> str:
    """How ``task`` ended: ``cancelled``, or its result."""
    try:
        return repr(await task)
    except asyncio.CancelledError:
        return "cancelled"


def test_a_cancellation_as_the_channel_gets_ready_cancels_the_dial() -> None:
    """The channel gets ready and the runner is cancelled in the same instant: the dial
    is cancelled, it does not report the connection (the runner would then wait on the
    server, Ctrl-C forgotten)."""
    async def body() -> str:
        channel = _Channel()
        dial = asyncio.ensure_future(_connect(channel, 60))  # type: ignore[arg-type]
        await channel.waiting.wait()
        channel.connect()
        dial.cancel()
        return await _outcome(dial)

    assert asyncio.run(body()) == "cancelled"


def test_the_dial_still_connects_and_times_out() -> None:
    """Uncancelled, the dial reports a ready channel, and a channel that never gets ready
    ends in TimeoutError."""
    async def body() -> tuple[str, str]:
        channel = _Channel()
        dial = asyncio.ensure_future(_connect(channel, 60))  # type: ignore[arg-type]
        await channel.waiting.wait()
        channel.connect()
        connected = await _outcome(dial)
        try:
            await _connect(_Channel(), 0.01)  # type: ignore[arg-type]
        except TimeoutError:
            return connected, "timed out"
        return connected, "returned"

    assert asyncio.run(body()) == ("True", "timed out")


def test_a_cancellation_as_the_bot_answers_cancels_the_wait() -> None:
    """The bot's answer comes and the runner is cancelled in the same instant: the wait is
    cancelled, it does not hand back the answer."""
    async def body() -> str:
        job: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        within = asyncio.ensure_future(_within(job, 60, None))
        await asyncio.sleep(0)  # one turn of the loop: _within waits for the job
        job.set_result("card")
        within.cancel()
        return await _outcome(within)

    assert asyncio.run(body()) == "cancelled"


def test_the_wait_for_the_bot_still_answers_and_times_out() -> None:
    """Uncancelled, the wait hands back the bot's answer, and a bot that does not answer
    within the budget ends in TimeoutError with its job cancelled."""
    async def body() -> tuple[str, str, bool]:
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[str] = loop.create_future()
        loop.call_soon(answered.set_result, "card")
        answer = await _within(answered, 60, None)
        silent: asyncio.Future[str] = loop.create_future()
        try:
            await _within(silent, 0.01, None)
        except TimeoutError:
            return answer, "timed out", silent.cancelled()
        return answer, "returned", silent.cancelled()

    assert asyncio.run(body()) == ("card", "timed out", True)
