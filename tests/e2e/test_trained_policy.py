"""The policy trained in ``bullring.sdk.envs`` plays on the ladder through the Python SDK."""

from __future__ import annotations

from pathlib import Path

from bullring.referee.replay import verify
from bullring.server.store import Store
from tests.ladder_helpers import LadderBot, LadderServer, wait_for_matches
from tests.serving import db_url

SPEC = "bullring.sdk.examples.linear_policy:LinearPolicy"
"""The trained example bot, as ``bullring bot`` loads it (docs/envs.md)."""


def test_the_trained_policy_plays_rated_ladder_matches(
        tmp_path: Path, stop_all: list[LadderBot | LadderServer]) -> None:
    """The example bot, a real ``bullring bot --ladder`` process loading the saved weights,
    plays rated two-seat 6 nimmt! matches against the server's house ``random``: each match
    ends normally and its replay verifies, every answer of its seat is its own (none a
    default), and the bot is on the leaderboard with those matches rated."""
    server = LadderServer(db_url(tmp_path), [
        "--ladder", "six_nimmt", "--table-size", "six_nimmt=2-2", "--house-bots", "random",
        "--house-rest", "0", "--ladder-setting", "six_nimmt:rounds=1"]).start()
    stop_all.append(server)
    bot = LadderBot.start("trained", server.address, server.add_bot("trained"), "six_nimmt",
                          SPEC)
    stop_all.append(bot)
    wait_for_matches([bot], 3, timeout=120)
    bot.stop()
    server.stop()

    store = Store(server.db)
    ended = {match_id for match_id, _ in bot.matches()}
    finished = [m for m in store.matches(bot="trained") if m.id in ended]
    assert len(finished) >= 3
    for match in finished:
        assert match.ladder and match.status == "finished"
        replay = store.replay(match.id)
        verify(replay)
        assert replay["termination"] == "normal"
        seat = [s["name"] for s in replay["seats"]].index("trained")
        answers = [e for e in replay["events"] if e["type"] == "answer" and e["seat"] == seat]
        assert answers and not any(e["default"] for e in answers)
    (entry,) = [e for e in store.leaderboard("six_nimmt") if e.bot == "trained"]
    assert entry.games >= len(finished)
