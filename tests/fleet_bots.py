"""Several registered bots in one process, each playing a ladder through the SDK's runner
(``bullring.sdk.runner.play``) on its own connection: the bots of a fleet test, one process
per server, lighter on a small machine than a process per bot.

Run: python -m tests.fleet_bots --server HOST:PORT --ladder GAME NAME=TOKEN[@unary]...
(``@unary``: that bot answers by SubmitAnswer calls beside a Subscribe stream, not on a Play
stream). It prints ``ready`` once every runner has started, and ``NAME failed: ...`` for a
runner that gave up; SIGTERM ends it.
"""

from __future__ import annotations

import argparse
import asyncio
import signal

from bullring.sdk.runner import play


async def _bot(server: str, ladder: str, name: str, token: str) -> None:
    token, _, transport = token.partition("@")
    try:
        await play(server, token, "house:random", ladder=ladder, give_up_after_s=60,
                   transport=transport or "stream")
    except Exception as exc:
        print(f"{name} failed: {exc}", flush=True)


async def _main(server: str, ladder: str, bots: list[str]) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    tasks = [asyncio.create_task(_bot(server, ladder, *bot.split("=", 1))) for bot in bots]
    print("ready", flush=True)
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def main() -> None:
    """Play every bot given until SIGTERM."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", required=True)
    parser.add_argument("--ladder", required=True)
    parser.add_argument("bots", nargs="+", metavar="NAME=TOKEN[@unary]")
    args = parser.parse_args()
    asyncio.run(_main(args.server, args.ladder, args.bots))


if __name__ == "__main__":
    main()
