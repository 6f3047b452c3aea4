"""A public server under abuse, on default options: what readers of the biggest match an
anonymous client may make, and a crowd of trickling connections, cost everyone else.

Run: python benchmarks/abuse.py [--readers 40] [--tricklers 400] [--seconds 15]

It starts ``bullring serve`` with its defaults on a fresh SQLite file, with house bots
playing the ladder, and measures two attacks in turn:

1. Readers. An anonymous client makes a match for a person through ``POST
   /api/human-matches`` (the largest the caps allow: 10 seats, 10 rounds; then an ordinary
   one: 4 seats to 66), its seat is played by a house bot, then ``--readers`` clients read
   its feed, all at once. Printed: the server's RSS growth (peak
   less before), the p99 of an ordinary ``GET /api/games`` asked every 0.1 s meanwhile,
   and the ladder matches finished meanwhile (``/metrics``).
2. Tricklers. ``--tricklers`` connections from 127.0.0.2 each send a request head that
   announces a body and then one byte every 4 s, while 127.0.0.1 asks ``GET /api/games``
   every 0.1 s for ``--seconds``. Printed: that request's p50 and p99, how many trickling
   connections the server refused or closed, and the ladder matches finished meanwhile.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.append(str(Path(__file__).resolve().parent.parent))  # after installed packages

from benchmarks.common import percentile, rss_bytes, start

CLI = [sys.executable, "-m", "bullring.server.cli"]
HOUSE = "greedy,greedy,random,random"


def serve(folder: Path) -> tuple[subprocess.Popen[str], str, str]:
    """``bullring serve`` with its default options and house bots on the ladder: the
    process, its gRPC address, its HTTP URL."""
    proc, address = start([*CLI, "serve", "--port", "0", "--http-port", "0", "--db",
                           f"sqlite:///{folder / 'bullring.db'}", "--house-bots", HOUSE])
    assert proc.stdout is not None
    for line in proc.stdout:
        if "HTTP API on " in line:
            return proc, address, line.split("HTTP API on ")[1].split()[0].rstrip("/")
    raise RuntimeError("the server printed no HTTP address")


def finished(url: str) -> float:
    """Ladder and other matches finished so far, from the server's own metrics."""
    text = httpx.get(f"{url}/metrics", timeout=30).text
    return sum(float(v) for v in re.findall(
        r'^bullring_matches_finished_total\{[^}]*termination="normal"[^}]*\} ([\d.e+]+)$',
        text, re.M))


def make_and_play(address: str, url: str, largest: bool) -> str:
    """An anonymous match for a person (the largest the default caps allow, or an ordinary
    one), its seat played by a house bot to the end; its id."""
    body: dict[str, object] = {"game": "six_nimmt"}
    if largest:
        body.update(bots=["random"] * 9, settings={"rounds": "10"})
    made = httpx.post(f"{url}/api/human-matches", json=body, timeout=60)
    made.raise_for_status()
    token = made.json()["play"].split("#")[1]
    subprocess.run([*CLI, "bot", "--server", address, "--token", token, "house:random"],
                   check=True, capture_output=True, timeout=600)
    return str(made.json()["match_id"])


async def bystander(url: str, stop: asyncio.Event, seconds: list[float]) -> None:
    """Ask ``GET /api/games`` every 0.1 s until ``stop``, noting how long each took."""
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        while not stop.is_set():
            began = time.perf_counter()
            (await client.get("/api/games")).raise_for_status()
            seconds.append(time.perf_counter() - began)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.1)


async def watch_rss(pid: int, stop: asyncio.Event, peak: list[int]) -> None:
    """The server's peak RSS until ``stop``."""
    while not stop.is_set():
        peak[0] = max(peak[0], rss_bytes(pid))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.05)


async def readers(url: str, match_id: str, count: int, pid: int) -> dict[str, float]:
    """``count`` readers of the match's feed at once, each on its own connection, with a
    bystander and the RSS watched meanwhile."""
    before, peak = rss_bytes(pid), [0]
    took: list[float] = []
    stop = asyncio.Event()
    limits = httpx.Limits(max_connections=count + 4, max_keepalive_connections=0)
    done_before = finished(url)
    began = time.perf_counter()
    side = [asyncio.create_task(bystander(url, stop, took)),
            asyncio.create_task(watch_rss(pid, stop, peak))]
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:
        answers = await asyncio.gather(*(client.get(f"/api/matches/{match_id}/feed")
                                         for _ in range(count)))
    sizes = {len(a.content) for a in answers if a.status_code == 200}
    assert len(sizes) == 1, f"the readers got {sorted({a.status_code for a in answers})}"
    stop.set()
    await asyncio.gather(*side)
    took.sort()
    return {"rss_mb": (peak[0] - before) / 2**20, "p99_s": percentile(took, 0.99),
            "seconds": time.perf_counter() - began, "ladder": finished(url) - done_before,
            "feed_kb": sizes.pop() / 1024}


async def trickle(host: str, port: int, stop: asyncio.Event, ended: list[str]) -> None:
    """One connection from 127.0.0.2 that announces a body and sends a byte every 4 s."""
    try:
        reader, writer = await asyncio.open_connection(host, port, local_addr=("127.0.0.2", 0))
    except OSError:
        ended.append("refused")
        return
    writer.write(b"POST /api/play/answer HTTP/1.1\r\nHost: x\r\nContent-Type: "
                 b"application/json\r\nContent-Length: 1000\r\n\r\n")
    try:
        while not stop.is_set():
            writer.write(b" ")
            await writer.drain()
            with contextlib.suppress(TimeoutError):
                if await asyncio.wait_for(reader.read(1), 4.0) == b"":
                    ended.append("closed")
                    return
                ended.append("answered")
                return
    except (ConnectionError, OSError):
        ended.append("closed")
    finally:
        writer.close()


async def tricklers(url: str, count: int, seconds: float) -> dict[str, float]:
    """``count`` trickling connections from 127.0.0.2 while 127.0.0.1 is served."""
    host, port = url.split("//")[1].split(":")
    stop = asyncio.Event()
    took: list[float] = []
    ended: list[str] = []
    done_before = finished(url)
    crowd = [asyncio.create_task(trickle(host, int(port), stop, ended)) for _ in range(count)]
    watcher = asyncio.create_task(bystander(url, stop, took))
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.gather(watcher, *crowd)
    took.sort()
    return {"p50_s": percentile(took, 0.5), "p99_s": percentile(took, 0.99),
            "answered_or_closed": len(ended), "ladder": finished(url) - done_before}


def main() -> None:
    """Print the figures of both attacks."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--readers", type=int, default=40)
    parser.add_argument("--tricklers", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args()
    print(f"$ python benchmarks/abuse.py --readers {args.readers} --tricklers "
          f"{args.tricklers} --seconds {args.seconds:g}")
    with tempfile.TemporaryDirectory() as folder:
        proc, address, url = serve(Path(folder))
        try:
            for largest in (True, False):
                match_id = make_and_play(address, url, largest)
                got = asyncio.run(readers(url, match_id, args.readers, proc.pid))
                what = "largest anonymous match (10 seats, 10 rounds)" if largest else \
                    "ordinary match (4 seats to 66)"
                print(f"{args.readers} readers of the feed ({got['feed_kb']:.0f} KB) of the "
                      f"{what}: "
                      f"RSS +{got['rss_mb']:.1f} MB, GET /api/games p99 {got['p99_s']:.3f} s, "
                      f"{got['seconds']:.1f} s in all, {got['ladder']:.0f} ladder matches "
                      f"finished meanwhile", flush=True)
            got = asyncio.run(tricklers(url, args.tricklers, args.seconds))
            print(f"{args.tricklers} trickling connections from 127.0.0.2 for "
                  f"{args.seconds:g} s: GET /api/games from 127.0.0.1 p50 {got['p50_s']:.3f} s, "
                  f"p99 {got['p99_s']:.3f} s; {got['answered_or_closed']:.0f} trickling "
                  f"connections refused, answered or closed by the server; "
                  f"{got['ladder']:.0f} ladder matches finished meanwhile", flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=60)


if __name__ == "__main__":
    main()
