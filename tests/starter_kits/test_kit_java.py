"""The Java starter kit (client_sdk/java): copied out of the repository with the contract,
built by its README's command from Debian's gRPC Java, and run on a live server's ladder."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kits import (
    Kit,
    KitRig,
    check_a_throw_falls_to_the_default,
    check_ladder_play,
    check_replaced,
    kit_rig,
)

JAVA = Kit("java", ("javac", "protoc", "grpc_java_plugin"))

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

    public static void main(String[] args) {
        bullring.kit.Runner.main(new ThrowingBot(), args);
    }
}
"""


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KitRig]:
    """The kit built in a folder of its own, and a ladder server."""
    yield from kit_rig(JAVA, tmp_path_factory.mktemp("java"))


def test_readme_installs_what_ci_installs() -> None:
    """Every Debian package the README's install command names is installed by .ci/run."""
    JAVA.check_install_line()


def test_the_starter_bot_plays_both_ladders(rig: KitRig) -> None:
    """The Java starter bot plays two rated matches of each game on the ladder by the
    README's run command and stops on SIGTERM with status 0 (tests/kits.py says what is
    checked)."""
    check_ladder_play(rig)


def test_a_throwing_bot_falls_to_the_default_and_plays_on(rig: KitRig, tmp_path: Path) -> None:
    """A bot whose playCard throws once is logged with its stack trace, that decision gets
    the default action, and the bot plays the rest of its match."""
    source = tmp_path / "ThrowingBot.java"
    source.write_text(THROWING_BOT, encoding="utf-8")
    classpath = (rig.folder / "build" / "classpath").read_text().strip()
    absolute = ":".join(str(rig.folder / p) if not p.startswith("/") else p
                        for p in classpath.split(":"))
    subprocess.run(["javac", "-d", str(tmp_path), "-cp", absolute, str(source)], check=True)
    name = "javathrows"
    bot = JAVA.start(rig.folder, name, rig.server, rig.server.add_bot(name), "six_nimmt",
                     "--matches", "1", env={"BOT_CLASS": "ThrowingBot",
                                            "BOT_CLASSPATH": str(tmp_path)})
    try:
        check_a_throw_falls_to_the_default(rig, name, bot, "thrown on purpose at the third card")
        assert "at ThrowingBot.playCard" in bot.err.text()
    finally:
        bot.stop()


def test_a_second_process_on_the_token_replaces_the_first(rig: KitRig) -> None:
    """The runner stops for good (exit 5) when another process takes its token's place."""
    check_replaced(rig)
