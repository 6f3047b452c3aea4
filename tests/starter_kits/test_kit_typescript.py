"""The TypeScript starter kit (client_sdk/typescript): copied out of the repository with the
contract, built by its README's command (packages from npm), and run on a live server's
ladder and on match seats (tests/kits.py says what is checked)."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path
from typing import Any

from tests.kits import Kit, KitRig, VariantKitTests, finished, seat_command
from tests.serving import ServerProcess, db_url

TS = Kit("typescript", ("node", "npm"),
         frozenset({"closest to a row's end", "lowest card", "shortest row", "out of chips",
                    "the pot pays for it", "too dear for the pot"}))


def seat_answers(replay: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """The answer events of one seat."""
    return [e for e in replay["events"] if e["type"] == "answer" and e["seat"] == seat]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class TestTypeScriptKit(VariantKitTests):
    """The TypeScript kit; its throwing bot's playCard throws, and the stack names it; it
    also waits for a server that is not up yet and exits 3 on a refused token."""

    KIT = TS
    BOT_SOURCE = "src/bot.ts"
    THROWING_SOURCE = Path(__file__).resolve().parent / "kit_bots" / "throwing_bot.ts"
    THROWN_AT = "at ThrowingBot.playCard"

    def test_readme_installs_what_ci_installs(self) -> None:
        """The README installs Node.js and npm, which CI takes from the machine (the web
        tests need them too)."""
        assert TS.readme_commands()[0].split()[-2:] == ["nodejs", "npm"]
        assert shutil.which("node") and shutil.which("npm")

    def test_waits_for_a_server_that_is_not_up_yet(self, rig: KitRig,
                                                   tmp_path: Path) -> None:
        """Started before the server listens, the bot retries with backoff, connects once the
        server is up, and plays its seat to the end."""
        port = _free_port()
        server = ServerProcess(db_url(tmp_path), ["--port", str(port), "--start-timeout", "30"])
        match = server.create_match("six_nimmt", 2, "--setting", "rounds=1",
                                    "--house", "1=greedy")
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

    def test_an_unknown_token_exits_3(self, rig: KitRig) -> None:
        """A token the server does not know is refused (UNAUTHENTICATED): exit 3, no retry."""
        bot = TS.start(rig.folder, "unknown", rig.server, "bot_not-a-token", "six_nimmt")
        assert finished(bot) == 3
        assert "the token was refused (UNAUTHENTICATED" in bot.err.text()
