"""The TypeScript starter kit (client_sdk/typescript): copied out of the repository with the
contract, built by its README's command (packages from npm), and run on a live server's
ladder and on match seats."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.kits import (
    Kit,
    KitRig,
    check_a_throw_falls_to_the_default,
    check_ladder_play,
    check_replaced,
    check_seat_play,
    finished,
    kit_rig,
    seat_command,
)
from tests.serving import ServerProcess, db_url

TS = Kit("typescript", ("node", "npm"))
THROWING_BOT = Path(__file__).resolve().parent / "kit_bots" / "throwing_bot.ts"


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KitRig]:
    """The kit built in a folder of its own, and a ladder server."""
    yield from kit_rig(TS, tmp_path_factory.mktemp("typescript"))


def test_the_starter_bot_plays_both_ladders(rig: KitRig) -> None:
    """The TypeScript starter bot plays two rated matches of each game on the ladder by the
    README's run command and stops on SIGTERM with status 0 (tests/kits.py says what is
    checked)."""
    check_ladder_play(rig)


def test_a_throwing_bot_falls_to_the_default_and_plays_on(rig: KitRig, tmp_path: Path) -> None:
    """A bot whose playCard throws once is logged with its stack, that decision gets the
    default action, and the bot plays the rest of its match."""
    folder = TS.variant(rig.folder, tmp_path / "typescript", "src/bot.ts", THROWING_BOT)
    name = "tsthrows"
    bot = TS.start(folder, name, rig.server, rig.server.add_bot(name), "six_nimmt",
                   "--matches", "1")
    try:
        check_a_throw_falls_to_the_default(rig, name, bot, "thrown on purpose")
        assert "at ThrowingBot.playCard" in bot.err.text()
    finally:
        bot.stop()


def test_the_starter_bot_plays_match_seats(rig: KitRig) -> None:
    """See ``check_seat_play`` (tests/kits.py)."""
    check_seat_play(rig)


def test_a_second_connection_replaces_the_first(rig: KitRig) -> None:
    """See ``check_replaced`` (tests/kits.py)."""
    check_replaced(rig)


def seat_answers(replay: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """The answer events of one seat."""
    return [e for e in replay["events"] if e["type"] == "answer" and e["seat"] == seat]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_waits_for_a_server_that_is_not_up_yet(rig: KitRig, tmp_path: Path) -> None:
    """Started before the server listens, the bot retries with backoff, connects once the
    server is up, and plays its seat to the end."""
    port = _free_port()
    server = ServerProcess(db_url(tmp_path), ["--port", str(port), "--start-timeout", "30"])
    match = server.create_match("six_nimmt", 2, "--setting", "rounds=1", "--house", "1=greedy")
    assert match.tokens[0] is not None
    bot = TS.start(rig.folder, "early", server, match.tokens[0], "six_nimmt",
                   command=seat_command(TS).replace("HOST:PORT", f"127.0.0.1:{port}"))
    bot.err.wait(lambda lines: any("reconnecting in" in line for line in lines), 60,
                 "a failed connection")
    server.start()
    try:
        assert finished(bot) == 0, bot.err.text()[-3000:]
        replay = json.loads(server.replay(match.match_id))
        assert not any(e["default"] for e in seat_answers(replay, 0))
    finally:
        server.stop()


def test_an_unknown_token_exits_3(rig: KitRig) -> None:
    """A token the server does not know is refused (UNAUTHENTICATED): exit 3, no retry."""
    bot = TS.start(rig.folder, "unknown", rig.server, "bot_not-a-token", "six_nimmt")
    assert finished(bot) == 3
    assert "the token was refused (UNAUTHENTICATED" in bot.err.text()
