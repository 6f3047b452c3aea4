"""Starting matches: the first seat to join a stored match starts its runner; seats joining
meanwhile wait for that one start, and starts of different matches go on side by side (a
start that waits on the database holds up no other match)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from bullring.referee.six_nimmt import new_state
from bullring.server.match.hub import MatchHub
from bullring.server.store import MatchConfig, Store


class HeldStore(Store):
    """The real store, whose reads of one match's configuration wait until released: a
    database call that takes long (a locked file, a slow network) for that match alone."""

    def __init__(self, url: str, held: str) -> None:
        super().__init__(url)
        self.held = held
        self.release = threading.Event()
        self.reached = threading.Event()

    def match_config(self, match_id: str) -> MatchConfig:
        """The stored configuration; for the held match, once released."""
        if match_id == self.held:
            self.reached.set()
            assert self.release.wait(30)
        return super().match_config(match_id)


def test_a_slow_start_holds_up_no_other_match_and_runs_once(tmp_path: Path) -> None:
    """While match A's start waits on the database, match B starts; every seat of A that
    joined meanwhile gets A's one runner once its start completes."""
    probe = Store(f"sqlite:///{tmp_path}/starts.db")
    settings = new_state(2, {"rounds": 1}).settings
    slow, _ = probe.create_match("six_nimmt", settings, 1, ["a", "b"], {})
    quick, _ = probe.create_match("six_nimmt", settings, 2, ["c", "d"], {})
    store = HeldStore(f"sqlite:///{tmp_path}/starts.db", held=slow)

    async def body() -> None:
        hub = MatchHub(store, start_timeout_s=5)
        first = asyncio.create_task(hub.runner(slow))
        second = asyncio.create_task(hub.runner(slow))
        assert await asyncio.to_thread(store.reached.wait, 10)
        other = await asyncio.wait_for(hub.runner(quick), 10)
        assert other.config.match_id == quick and not first.done()
        store.release.set()
        one, two = await asyncio.wait_for(asyncio.gather(first, second), 10)
        assert one is two and one.config.match_id == slow
        assert hub.runners == {slow: one, quick: other}
        await hub.shutdown()

    asyncio.run(body())
