"""The bot runner's readers are reaped without swallowing a cancellation meant for the runner
(``bullring.sdk.transports.reap``): Ctrl-C as a match ends still stops ``bullring bot``."""

from __future__ import annotations

import asyncio

from bullring.sdk.transports import reap


async def _slow_to_stop(stopping: asyncio.Event, release: asyncio.Event) -> None:
    """A reader that, once cancelled, takes until ``release`` to end."""
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        stopping.set()
        await release.wait()
        raise


def test_reaping_a_reader_ends_it_and_returns() -> None:
    """The reader's own cancellation is swallowed: the caller goes on."""
    async def body() -> bool:
        reader = asyncio.ensure_future(asyncio.Event().wait())
        await asyncio.sleep(0)
        await reap(reader)
        return reader.cancelled()

    assert asyncio.run(body())


def test_a_caller_cancelled_while_it_reaps_is_cancelled() -> None:
    """The caller is cancelled while it waits for the reader to end (Ctrl-C just as a match
    ends): the caller's cancellation propagates, it does not return as if the reap were all."""
    async def body() -> str:
        stopping, release = asyncio.Event(), asyncio.Event()
        reader = asyncio.ensure_future(_slow_to_stop(stopping, release))
        await asyncio.sleep(0)
        reaping = asyncio.ensure_future(reap(reader))
        await stopping.wait()  # the reader got its cancel and is winding down
        reaping.cancel()  # the runner's own cancellation arrives now
        release.set()
        try:
            await reaping
        except asyncio.CancelledError:
            return "cancelled"
        return "returned"

    assert asyncio.run(body()) == "cancelled"
