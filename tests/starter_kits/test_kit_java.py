"""The Java starter kit (client_sdk/java): copied out of the repository with the contract,
built by its README's command from Debian's gRPC Java, and run on a live server's ladder
(tests/kits.py says what is checked)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.kits import Kit, KitRig, KitTests
from tests.ladder_helpers import LadderBot

JAVA = Kit("java", ("javac", "protoc", "grpc_java_plugin"),
           frozenset({"lowest card", "shortest row", "out of chips", "the pot pays for it",
                      "too dear for the pot"}))

THROWING_BOT = """
import bullring.v2.DecisionRequest;

public class ThrowingBot extends StarterBot {
    private int cards;

    @Override
    public int playCard(DecisionRequest d) {
        if (++cards == 3) {
            throw new IllegalStateException("thrown on purpose at the third card");
        }
        return super.playCard(d);
    }

    @Override
    public String comment() {
        return "x".repeat(201);
    }

    public static void main(String[] args) {
        bullring.kit.Runner.main(new ThrowingBot(), args);
    }
}
"""


class TestJavaKit(KitTests):
    """The Java kit; its throwing bot's playCard throws, and the stack trace names it."""

    KIT = JAVA
    THROWN_AT = "at ThrowingBot.playCard"

    def start_throwing(self, rig: KitRig, tmp_path: Path, name: str) -> LadderBot:
        """The throwing bot compiled against the built kit's classpath, run by the README's
        command with ``BOT_CLASS``."""
        source = tmp_path / "ThrowingBot.java"
        source.write_text(THROWING_BOT, encoding="utf-8")
        classpath = (rig.folder / "build" / "classpath").read_text().strip()
        absolute = ":".join(str(rig.folder / p) if not p.startswith("/") else p
                            for p in classpath.split(":"))
        subprocess.run(["javac", "-d", str(tmp_path), "-cp", absolute, str(source)],
                       check=True)
        return JAVA.start(rig.folder, name, rig.server, rig.server.add_bot(name), "six_nimmt",
                          "--matches", "1", env={"BOT_CLASS": "ThrowingBot",
                                                 "BOT_CLASSPATH": str(tmp_path)})
