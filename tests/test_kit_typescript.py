"""The TypeScript starter kit (client_sdk/typescript), copied out of the repository, built
by its README's commands and played on a live server's ladders, and on match seats."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from referee.replay import verify
from tests.ladder_helpers import LadderServer
from tests.serving import ServerProcess, db_url
from tests.starter_kits import (
    THROWING,
    Built,
    Kit,
    build_copy,
    check_exception_falls_to_default,
    check_plays_both_ladders,
    check_toolchain_line,
    ladder,
)

__all__ = ["ladder"]

KIT = Kit(folder="typescript", bot_source="src/bot.ts", throwing_bot="throwing_bot.ts",
          thrower="ThrowingBot.playCard", outputs=("node_modules", "dist", "generated"),
          tools=("node", "npm"))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The kit copied to a temporary folder and built there."""
    return build_copy(KIT, tmp_path_factory.mktemp("kit") / KIT.folder)


def test_readme_toolchain_is_installed() -> None:
    """The README's first command names Debian packages, all installed here."""
    check_toolchain_line(KIT)


def test_starter_bot_plays_both_ladders(built: Built, ladder: LadderServer) -> None:
    """See ``check_plays_both_ladders``."""
    check_plays_both_ladders(built, ladder)


def test_exception_in_bot_code_falls_to_default(built: Built, ladder: LadderServer,
                                               tmp_path: Path) -> None:
    """See ``check_exception_falls_to_default``."""
    thrower = built.variant(tmp_path / KIT.folder, THROWING / KIT.throwing_bot)
    check_exception_falls_to_default(thrower, ladder)


def seat_answers(replay: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """The answer events of one seat."""
    return [e for e in replay["events"] if e["type"] == "answer" and e["seat"] == seat]


def test_plays_a_match_seat_and_exits_0(built: Built, server: ServerProcess) -> None:
    """With a match seat's token and no ladder, the bot plays that seat of a 6 nimmt! match
    to the end, prints the result line and exits 0; the stored replay verifies and holds
    only the bot's own answers."""
    match = server.create_match("six_nimmt", 4, "--seed", "11", "--house", "1=greedy",
                                "--house", "2=random", "--house", "3=random")
    assert match.tokens[0] is not None
    bot = built.start(server.address, match.tokens[0], None)
    assert bot.wait() == 0, bot.log()
    assert [match_id for match_id, _ in bot.ended()] == [match.match_id]
    replay = json.loads(server.replay(match.match_id))
    verify(replay)
    mine = seat_answers(replay, 0)
    assert mine and not any(e["default"] for e in mine)


def test_two_bots_play_no_thanks_seats(built: Built, server: ServerProcess) -> None:
    """Two kit bots and a house bot play a No Thanks! match, answering take/pass words."""
    match = server.create_match("no_thanks", 3, "--seed", "3", "--house", "2=threshold")
    bots = [built.start(server.address, token, None) for token in match.tokens[:2]
            if token is not None]
    assert [bot.wait() for bot in bots] == [0, 0], bots[0].log()
    replay = json.loads(server.replay(match.match_id))
    verify(replay)
    for seat in (0, 1):
        answers = seat_answers(replay, seat)
        assert answers and not any(e["default"] for e in answers)
        assert {e["action"] for e in answers} <= {"take", "pass"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_waits_for_a_server_that_is_not_up_yet(built: Built, tmp_path: Path) -> None:
    """Started before the server listens, the bot retries with backoff, connects once the
    server is up, and plays its seat to the end."""
    port = _free_port()
    server = ServerProcess(db_url(tmp_path), ["--port", str(port), "--start-timeout", "30"])
    match = server.create_match("six_nimmt", 2, "--setting", "rounds=1", "--house", "1=greedy")
    assert match.tokens[0] is not None
    bot = built.start(f"127.0.0.1:{port}", match.tokens[0], None)
    bot.err.wait(lambda lines: any("reconnecting in" in line for line in lines), 60,
                 "a failed connection")
    server.start()
    try:
        assert bot.wait() == 0, bot.log()
        replay = json.loads(server.replay(match.match_id))
        assert not any(e["default"] for e in seat_answers(replay, 0))
    finally:
        server.stop()


def test_an_unknown_token_exits_3(built: Built, server: ServerProcess) -> None:
    """A token the server does not know is refused (UNAUTHENTICATED): exit 3, no retry."""
    bot = built.start(server.address, "bot_not-a-token", "six_nimmt")
    assert bot.wait() == 3
    assert "the token was refused (UNAUTHENTICATED" in bot.err.text()
