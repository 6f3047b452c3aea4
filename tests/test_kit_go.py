"""The Go starter kit (client_sdk/go), copied out of the repository, built
by its README's commands and played on a live server's ladders."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ladder_helpers import LadderServer
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

KIT = Kit(folder="go", bot_source="bot.go", throwing_bot="throwing_bot.go",
          thrower="throwingBot).PlayCard", outputs=("build",),
          tools=("go", "protoc", "make"))


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
