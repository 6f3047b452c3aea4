"""Readers of an ended match: how long N concurrent readers of its feed take, how long a
bystander's request waits meanwhile, and what they cost the server's memory.

Run: python benchmarks/feeds.py [--readers 3000] [--largest]
It starts ``bullring serve`` on a fresh SQLite file, makes a match for a person through
``POST /api/human-matches`` (an ordinary one: 6 nimmt! to 66 against three house bots; with
``--largest``, the largest an anonymous client may make: 10 seats, 10 rounds), plays the
person's seat with a house bot, then opens ``--readers`` feed readers at once (one
connection each, from this process) while it asks ``/api/games`` every 0.2 s. It prints the
time until every reader had the whole feed, the slowest ``/api/games``, and the server's
RSS before and at its peak.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.append(str(Path(__file__).resolve().parent.parent))  # after installed packages

from benchmarks.common import SERVER_LOG, rss_bytes, start

CLI = [sys.executable, "-m", "bullring.server.cli"]


def serve(folder: Path) -> tuple[subprocess.Popen[str], str, str]:
    """A server on a fresh database in ``folder``: the process, its gRPC address, its URL."""
    proc, address = start([*CLI, "serve", "--port", "0", "--http-port", "0", "--db",
                           f"sqlite:///{folder / 'bullring.db'}", "--human-matches", "100",
                           "--human-open-per-address", "0"])
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, address, line.split("HTTP API on ")[1].split()[0].rstrip("/")


def play(address: str, url: str, largest: bool) -> str:
    """Make a match for a person, play its seat with a house bot; its id."""
    body: dict[str, object] = {"game": "six_nimmt", "deadline_ms": 1000}
    if largest:
        body.update(bots=["random"] * 9, settings={"rounds": "10"})
    made = httpx.post(f"{url}/api/human-matches", json=body, timeout=30).json()
    token = made["play"].split("#")[1]
    subprocess.run([*CLI, "bot", "--server", address, "--token", token, "house:random"],
                   check=True, capture_output=True, timeout=300)
    return str(made["match_id"])


async def read_all(url: str, match_id: str, readers: int, pid: int
                   ) -> tuple[float, float, int, set[int]]:
    """Seconds until every reader had the whole feed, the slowest bystander request, the
    server's peak RSS, and the feed sizes the readers got."""
    limits = httpx.Limits(max_connections=readers + 8, max_keepalive_connections=0)
    peak = rss_bytes(pid)
    slowest = 0.0
    done = asyncio.Event()
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as http:
        async def reader() -> int:
            answer = await http.get(f"/api/matches/{match_id}/feed")
            assert answer.status_code == 200, answer.text
            return len(answer.content)

        async def bystander() -> None:
            nonlocal slowest, peak
            while not done.is_set():
                began = time.monotonic()
                assert (await http.get("/api/games")).status_code == 200
                slowest = max(slowest, time.monotonic() - began)
                peak = max(peak, rss_bytes(pid))
                await asyncio.sleep(0.2)

        watching = asyncio.create_task(bystander())
        began = time.monotonic()
        sizes = await asyncio.gather(*(reader() for _ in range(readers)))
        took = time.monotonic() - began
        done.set()
        await watching
    return took, slowest, peak, set(sizes)


def main() -> None:
    """Print the figures of one run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readers", type=int, default=3000)
    parser.add_argument("--largest", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        proc, address, url = serve(Path(folder))
        try:
            match_id = play(address, url, args.largest)
            before = rss_bytes(proc.pid)
            took, slowest, peak, sizes = asyncio.run(
                read_all(url, match_id, args.readers, proc.pid))
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    kind = "the largest anonymous match (10 seats, 10 rounds)" if args.largest \
        else "an ordinary match (4 seats, to 66)"
    print(f"python benchmarks/feeds.py --readers {args.readers}"
          f"{' --largest' if args.largest else ''}  (server log: {SERVER_LOG})")
    print(f"{args.readers} readers of the feed of {kind}, {max(sizes):,} bytes each: all done "
          f"in {took:.1f} s; /api/games meanwhile at most {slowest:.2f} s; server RSS "
          f"{before / 2**20:.0f} MB before, {peak / 2**20:.0f} MB at the peak")


if __name__ == "__main__":
    main()
