"""Round trips through a message broker, as a seat's messages would take between two servers
of a fleet: one process publishes a message the size of a decision request, another
receives it and answers with one the size of an answer, and the first times the round trip.
NATS (core pub/sub) and Redis (pub/sub), each on 127.0.0.1 as this machine runs them, beside
the same round trip over a plain TCP socket between the same two processes, in one run.

Run: python benchmarks/broker.py [--messages 5000] [--repeats 3]
(needs ``pip install nats-py redis`` and the brokers on 127.0.0.1:4222 and 6379)

Each row is one transport: round trips per second with one message in flight (a seat waits
for its answer), p50 and p99 of the round trip, and the ratio of its p50 to the socket's.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # after installed packages

from benchmarks.common import percentile

REQUEST = b"r" * 220
"""About a 6 nimmt! decision request's size in bytes."""
ANSWER = b"a" * 40
"""About an answer's size in bytes."""
NATS_URL = "nats://127.0.0.1:4222"
REDIS_URL = "redis://127.0.0.1:6379"


async def _nats_echo(ready: Callable[[], None]) -> None:
    import nats

    client = await nats.connect(NATS_URL)

    async def answer(message: object) -> None:
        await client.publish("bench.answers", ANSWER)

    await client.subscribe("bench.requests", cb=answer)
    await client.flush()
    ready()
    await asyncio.Event().wait()


async def _nats_rounds(count: int) -> list[float]:
    import nats

    client = await nats.connect(NATS_URL)
    got: asyncio.Queue[None] = asyncio.Queue()

    async def arrived(message: object) -> None:
        got.put_nowait(None)

    await client.subscribe("bench.answers", cb=arrived)
    await client.flush()
    times = []
    for _ in range(count):
        began = time.perf_counter()
        await client.publish("bench.requests", REQUEST)
        await got.get()
        times.append(time.perf_counter() - began)
    await client.close()
    return times


async def _redis_echo(ready: Callable[[], None]) -> None:
    import redis.asyncio as redis

    client = redis.from_url(REDIS_URL)
    pubsub = client.pubsub()
    await pubsub.subscribe("bench.requests")
    ready()
    async for message in pubsub.listen():
        if message["type"] == "message":
            await client.publish("bench.answers", ANSWER)


async def _redis_rounds(count: int) -> list[float]:
    import redis.asyncio as redis

    client = redis.from_url(REDIS_URL)
    pubsub = client.pubsub()
    await pubsub.subscribe("bench.answers")
    await pubsub.get_message(timeout=1.0)  # the subscription's confirmation
    times = []
    for _ in range(count):
        began = time.perf_counter()
        await client.publish("bench.requests", REQUEST)
        while (message := await pubsub.get_message(timeout=5.0)) is None or \
                message["type"] != "message":
            pass
        times.append(time.perf_counter() - began)
    await pubsub.aclose()
    await client.aclose()
    return times


async def _socket_echo(ready: Callable[[], None], port_out: list[int]) -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (await reader.readexactly(len(REQUEST))):
            writer.write(ANSWER)
            await writer.drain()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port_out.append(server.sockets[0].getsockname()[1])
    ready()
    await asyncio.Event().wait()


async def _socket_rounds(count: int, port: int) -> list[float]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    times = []
    for _ in range(count):
        began = time.perf_counter()
        writer.write(REQUEST)
        await writer.drain()
        await reader.readexactly(len(ANSWER))
        times.append(time.perf_counter() - began)
    writer.close()
    return times


def _echo(kind: str, ready: multiprocessing.synchronize.Event, port: object) -> None:
    """The answering process: serve ``kind``'s echo until killed."""
    ports: list[int] = []

    def said_ready() -> None:
        if ports:
            port.value = ports[0]  # type: ignore[attr-defined]
        ready.set()

    if kind == "nats":
        asyncio.run(_nats_echo(said_ready))
    elif kind == "redis":
        asyncio.run(_redis_echo(said_ready))
    else:
        asyncio.run(_socket_echo(said_ready, ports))


def measure(kind: str, count: int) -> list[float]:
    """``count`` round trips through ``kind`` to a process of its own, in seconds each."""
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    port = context.Value("i", 0)
    echo = context.Process(target=_echo, args=(kind, ready, port), daemon=True)
    echo.start()
    try:
        if not ready.wait(30):
            raise RuntimeError(f"the {kind} echo did not start")
        rounds: Callable[[], Awaitable[list[float]]]
        if kind == "nats":
            rounds = lambda: _nats_rounds(count)  # noqa: E731
        elif kind == "redis":
            rounds = lambda: _redis_rounds(count)  # noqa: E731
        else:
            rounds = lambda: _socket_rounds(count, port.value)  # noqa: E731
        return asyncio.run(rounds())
    finally:
        echo.terminate()
        echo.join(10)


def main() -> None:
    """Print each transport's round trips, alternating them ``--repeats`` times."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"$ python benchmarks/broker.py --messages {args.messages} --repeats {args.repeats}")
    kinds = ("socket", "nats", "redis")
    found: dict[str, list[float]] = {kind: [] for kind in kinds}
    rates: dict[str, list[float]] = {kind: [] for kind in kinds}
    for _ in range(args.repeats):
        for kind in kinds:
            times = measure(kind, args.messages)[args.messages // 10:]  # past the warm-up
            found[kind] += times
            rates[kind].append(len(times) / sum(times))
    base = statistics.median(found["socket"])
    print(f"{'transport':<10} {'round trips/s':>13} {'p50 ms':>8} {'p99 ms':>8} {'p50 ratio':>9}")
    for kind in kinds:
        times = sorted(found[kind])
        p50 = statistics.median(times)
        print(f"{kind:<10} {statistics.median(rates[kind]):>13.0f} {p50 * 1000:>8.3f} "
              f"{percentile(times, 0.99) * 1000:>8.3f} {p50 / base:>9.2f}")


if __name__ == "__main__":
    main()
