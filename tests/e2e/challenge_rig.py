"""The rig of the practice and challenge tests: a real ``bullring serve`` whose 6 nimmt!
ladder needs tables of four, registered bots ann, bob and cy (ann and bob waiting on it in
their own ``bullring bot`` processes), and ChallengeService calls over a real channel."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from bullring.contract import wire
from bullring.contract.generated.bullring.v2 import referee_pb2 as pb
from bullring.referee.replay import verify
from bullring.server.store import Store
from tests.ladder_helpers import LadderBot, LadderServer
from tests.serving import db_url

FAST = ["--ladder", "six_nimmt", "--ladder-setting", "six_nimmt:rounds=1",
        "--ladder-setting", "six_nimmt:deadline_ms=1000"]
"""Short 6 nimmt! matches: one round of ten tricks."""


class Calls:
    """ChallengeService and LadderService calls over one real gRPC channel."""

    def __init__(self, address: str) -> None:
        self.loop = asyncio.new_event_loop()
        # grpc.aio looks up the current loop outside the calls too (a channel's callbacks):
        # make ours the current one, or it finds none after other tests closed theirs.
        asyncio.set_event_loop(self.loop)
        self.channel = self.loop.run_until_complete(self._open(address))
        self.challenges = wire.challenge_stub(self.channel)
        self.ladder = wire.ladder_stub(self.channel)

    @staticmethod
    async def _open(address: str) -> grpc.aio.Channel:
        return grpc.aio.insecure_channel(address)

    def challenge(self, method: str, token: str, request: Any) -> Any:
        """Call a ChallengeService method as the bot of ``token``."""
        return self.loop.run_until_complete(self.challenges[method](
            request, metadata=(("authorization", f"Bearer {token}"),), timeout=10))

    def matches(self) -> list[pb.MatchSummary]:
        """The match log (LadderService.ListMatches)."""
        return list(self.loop.run_until_complete(self.ladder["ListMatches"](
            pb.ListMatchesRequest(), timeout=10)).matches)

    def close(self) -> None:
        """Close the channel and the loop."""
        self.loop.run_until_complete(self.channel.close())
        self.loop.close()
        asyncio.set_event_loop(None)


@pytest.fixture
def ladder(tmp_path: Path, stop_all: list[LadderBot | LadderServer]
           ) -> Iterator[tuple[LadderServer, dict[str, str], dict[str, LadderBot], Calls]]:
    """A server with ann, bob and cy registered; ann and bob wait on its 6 nimmt! ladder."""
    server = LadderServer(db_url(tmp_path), FAST).start()
    stop_all.append(server)
    tokens = {name: server.add_bot(name) for name in ("ann", "bob", "cy")}
    bots = {name: LadderBot.start(name, server.address, tokens[name], "six_nimmt",
                                  "house:greedy") for name in ("ann", "bob")}
    stop_all.extend(bots.values())
    for bot in bots.values():
        bot.err.wait(lambda lines: any("waiting on the six_nimmt ladder" in ln for ln in lines),
                     30, "the bot to wait on the ladder")
    calls = Calls(server.address)
    yield server, tokens, bots, calls
    calls.close()


def ended(bot: LadderBot, match_id: str) -> bool:
    """Whether ``bot`` saw ``match_id`` end normally."""
    return (match_id, "normal") in bot.matches()


def assert_unrated(store: Store, match_id: str, seats: list[str]) -> None:
    """The match is stored finished and unrated, its replay says so and verifies, and no
    rating changed."""
    summary = store.match_page(match_id=match_id)[0][0]
    assert summary.status == "finished" and not summary.rated
    assert list(summary.seat_names) == seats
    replay = store.replay(match_id)
    assert replay["rated"] is False
    verify(replay)
    assert store.rating_changes(match_id=match_id) == []
