"""The C++ starter kit (client_sdk/cpp): copied out of the repository with the contract,
built by its README's command from Debian's gRPC C++, and run on a live server's
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

CPP = Kit("cpp", ("g++", "protoc", "grpc_cpp_plugin", "pkg-config", "make"))
THROWING_BOT = Path(__file__).resolve().parent / "kit_bots" / "throwing_bot.cpp"


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KitRig]:
    """The kit built in a folder of its own, and a ladder server."""
    yield from kit_rig(CPP, tmp_path_factory.mktemp("cpp"))


def test_readme_installs_what_ci_installs() -> None:
    """Every Debian package the README's install command names is installed by .ci/run."""
    CPP.check_install_line()


def test_the_starter_bot_plays_both_ladders(rig: KitRig) -> None:
    """The C++ starter bot plays two rated matches of each game on the ladder by the README's
    run command and stops on SIGTERM with status 0 (tests/kits.py says what is checked)."""
    check_ladder_play(rig)


def test_a_throwing_bot_falls_to_the_default_and_plays_on(rig: KitRig, tmp_path: Path) -> None:
    """A bot whose PlayCard throws once is logged with where it was thrown, that decision gets the
    default action, and the bot plays the rest of its match."""
    folder = CPP.variant(rig.folder, tmp_path / "cpp", "bot.cpp", THROWING_BOT)
    name = "cppthrows"
    bot = CPP.start(folder, name, rig.server, rig.server.add_bot(name), "six_nimmt",
                   "--matches", "1")
    try:
        check_a_throw_falls_to_the_default(rig, name, bot, "thrown on purpose")
        assert "ThrowingBot::PlayCard" in bot.err.text()
    finally:
        bot.stop()


def test_the_starter_bot_plays_match_seats(rig: KitRig) -> None:
    """See ``check_seat_play`` (tests/kits.py)."""
    check_seat_play(rig)


def test_a_second_connection_replaces_the_first(rig: KitRig) -> None:
    """See ``check_replaced`` (tests/kits.py)."""
    check_replaced(rig)
