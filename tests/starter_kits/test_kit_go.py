"""The Go starter kit (client_sdk/go): copied out of the repository with the contract,
built by its README's command from Debian's Go packages, and run on a live server's
ladder and on match seats (tests/kits.py says what is checked)."""

from __future__ import annotations

import shlex
import socket
import subprocess
from pathlib import Path

from tests.kits import Kit, KitRig, VariantKitTests


class TestGoKit(VariantKitTests):
    """The Go kit; its throwing bot's PlayCard panics, and the stack names it."""

    KIT = Kit("go", ("go", "protoc", "make"),
              frozenset({"closest to a row's end", "lowest card", "shortest row", "out of chips",
                         "the pot pays for it", "too dear for the pot"}))
    BOT_SOURCE = "bot.go"
    THROWING_SOURCE = Path(__file__).resolve().parent / "kit_bots" / "throwing_bot.go"
    THROWN_AT = "(*throwingBot).PlayCard"

    def test_a_port_where_nothing_listens_is_called_so(self, rig: KitRig) -> None:
        """The README's run command pointed at a port where nothing listens says it cannot
        connect there, never that a connection it never had was lost, and gives up after
        ``--give-up-after`` with status 4."""
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            closed = f"127.0.0.1:{sock.getsockname()[1]}"
        run = shlex.split(self.KIT.readme_commands()[2])
        argv = [{"HOST:PORT": closed, "TOKEN": "x"}.get(word, word) for word in run]
        done = subprocess.run([*argv, "--give-up-after", "1"], cwd=rig.folder,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 4, done.stderr
        assert f"cannot connect to {closed}" in done.stderr, done.stderr
        assert "connection lost" not in done.stderr, done.stderr
