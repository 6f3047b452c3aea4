"""The game registry finds every game by its distribution's entry point (group
``bullring.games``), and refuses an entry point that registers wrongly, naming it."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import EntryPoint

import pytest

from bullring.referee.registry import (
    ENTRY_POINT_GROUP,
    GAMES,
    SOURCES,
    GameRegistrationError,
    UnknownGameError,
    discover,
    get_game,
)


def point(name: str, value: str) -> EntryPoint:
    """An entry point of the games' group, as a distribution's metadata holds one."""
    return EntryPoint(name, value, ENTRY_POINT_GROUP)


def test_the_two_games_bullring_comes_with_are_registered_by_its_sdk_entry_points() -> None:
    """6 nimmt! and No Thanks! are found as any other game is: by bullring-sdk's entry
    points, listed in the order of their titles."""
    assert list(GAMES)[:1] == ["six_nimmt/1"] and "no_thanks/1" in GAMES
    assert SOURCES["six_nimmt/1"] == SOURCES["no_thanks/1"] == "bullring-sdk"
    assert get_game("six_nimmt") is GAMES["six_nimmt/1"]


def test_discover_orders_by_title_and_records_each_source() -> None:
    """Games found are listed by title whatever order their entry points come in."""
    sources: dict[str, str] = {}
    found = discover([point("no_thanks", "bullring.referee.games:NO_THANKS"),
                      point("six_nimmt", "bullring.referee.games:SIX_NIMMT")], sources)
    assert list(found) == ["six_nimmt/1", "no_thanks/1"]
    assert sources == {"six_nimmt/1": "an unknown distribution",
                       "no_thanks/1": "an unknown distribution"}


def test_an_entry_point_that_is_not_a_game_spec_is_refused_by_name() -> None:
    """An entry point naming something else than a GameSpec stops the registry, saying
    which entry point and what it named."""
    with pytest.raises(GameRegistrationError, match=r"entry point 'broken' "
                       r"\(bullring.referee.settings:COMMON_SETTINGS\) is a tuple"):
        discover([point("broken", "bullring.referee.settings:COMMON_SETTINGS")])


def test_a_game_registered_twice_is_refused_naming_both() -> None:
    """Two entry points registering one versioned id stop the registry, naming both."""
    with pytest.raises(GameRegistrationError, match=r"six_nimmt/1 is registered twice: by "
                       r".*'six_nimmt'.* and by .*'again'"):
        discover([point("six_nimmt", "bullring.referee.games:SIX_NIMMT"),
                  point("again", "bullring.referee.games:SIX_NIMMT")])


def test_an_unknown_game_names_the_games_installed() -> None:
    """Asking for a game nobody registered says which games are."""
    with pytest.raises(UnknownGameError, match="known games: no_thanks/1, six_nimmt/1"):
        get_game("chess")


@pytest.mark.parametrize("first", ["bullring.referee.games", "bullring.referee.six_nimmt.spec",
                                   "bullring.referee.no_thanks.spec"])
def test_a_games_own_module_may_be_imported_before_the_registry(first: str) -> None:
    """A module an entry point names imports the registry (for ``GameSpec``): imported
    first, in a fresh interpreter, it still loads, and the registry then finds every game,
    that one included, when first asked."""
    probe = (f"import {first}\n"
             "from bullring.referee.registry import GAMES, SOURCES\n"
             "print(sorted(GAMES), sorted(SOURCES))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "'no_thanks/1', 'six_nimmt/1'] ['no_thanks/1', 'six_nimmt/1']" in done.stdout
