"""The Go starter kit (client_sdk/go): copied out of the repository with the contract,
built by its README's command from Debian's Go packages, and run on a live server's
ladder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kits import (
    Kit,
    KitRig,
    check_a_throw_falls_to_the_default,
    check_ladder_play,
    check_replaced,
    check_seat_play,
    kit_rig,
)

GO = Kit("go", ("go", "protoc", "make"))
THROWING_BOT = Path(__file__).resolve().parent / "kit_bots" / "throwing_bot.go"


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KitRig]:
    """The kit built in a folder of its own, and a ladder server."""
    yield from kit_rig(GO, tmp_path_factory.mktemp("go"))


def test_readme_installs_what_ci_installs() -> None:
    """Every Debian package the README's install command names is installed by .ci/run."""
    GO.check_install_line()


def test_the_starter_bot_plays_both_ladders(rig: KitRig) -> None:
    """The Go starter bot plays two rated matches of each game on the ladder by the README's
    run command and stops on SIGTERM with status 0 (tests/kits.py says what is checked)."""
    check_ladder_play(rig)


def test_a_panicking_bot_falls_to_the_default_and_plays_on(rig: KitRig, tmp_path: Path) -> None:
    """A bot whose PlayCard panics once is logged with its stack, that decision gets the
    default action, and the bot plays the rest of its match."""
    folder = GO.variant(rig.folder, tmp_path / "go", "bot.go", THROWING_BOT)
    name = "gothrows"
    bot = GO.start(folder, name, rig.server, rig.server.add_bot(name), "six_nimmt",
                   "--matches", "1")
    try:
        check_a_throw_falls_to_the_default(rig, name, bot, "thrown on purpose")
        assert "(*throwingBot).PlayCard" in bot.err.text()
    finally:
        bot.stop()


def test_the_starter_bot_plays_match_seats(rig: KitRig) -> None:
    """See ``check_seat_play`` (tests/kits.py)."""
    check_seat_play(rig)


def test_a_second_connection_replaces_the_first(rig: KitRig) -> None:
    """See ``check_replaced`` (tests/kits.py)."""
    check_replaced(rig)
