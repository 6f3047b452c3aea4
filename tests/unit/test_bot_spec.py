"""Loading a bot by its spec (``client_sdk/python/sdk/bot_spec.py``): house bots, modules, files
beside
their own helpers, and a clear error for every bad spec."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bullring.referee.registry import get_game
from bullring.sdk import bot_spec
from bullring.sdk.bot import Bot
from bullring.sdk.house.greedy import GreedyBot
from tests.bots.low_card import LowCard

BOTS = Path(__file__).resolve().parents[1] / "bots"


def test_load_house_bot() -> None:
    """``house:NAME`` is the house bot, seeded as asked."""
    bot = bot_spec.load_bot("house:greedy", "six_nimmt", 4)
    assert isinstance(bot, GreedyBot)
    assert bot.rng.random() == random.Random(4).random()


def test_load_module_class() -> None:
    """``package.module:Class`` imports the module and returns ``Class(seed)``."""
    bot = bot_spec.load_bot("tests.bots.low_card:LowCard", "six_nimmt", 5)
    assert type(bot) is LowCard
    assert bot.rng.random() == random.Random(5).random()


def test_load_file_path(tmp_path: Path) -> None:
    """``path/to/file.py:Class`` loads the file, which may import modules beside it."""
    bot = bot_spec.load_bot(f"{BOTS / 'low_card.py'}:LowCard", "six_nimmt", 0)
    assert type(bot).__name__ == "LowCard" and isinstance(bot, Bot)
    (tmp_path / "helper_for_file_bot.py").write_text("CARD_PICK = max\n")
    (tmp_path / "my_bot.py").write_text(
        "from bullring.sdk.bot import Bot\n"
        "from helper_for_file_bot import CARD_PICK\n"
        "class High(Bot):\n"
        "    def play_card(self, observation):\n"
        "        return CARD_PICK(observation.hand)\n")
    high = bot_spec.load_bot(f"{tmp_path / 'my_bot.py'}:High", "no_thanks", 1)
    observation = get_game("six_nimmt").new_state(2, {}, 1).observation(0)
    assert high.decide(observation) == max(observation.hand)


@pytest.mark.parametrize(("spec", "message"), [
    ("", "expected house:NAME"),
    ("low_card", "expected house:NAME"),
    ("house:", "unknown house bot ''"),
    ("house:nobody", "unknown house bot 'nobody'; known: random"),
    ("tests.bots.low_card:", "is not a class name"),
    ("tests.bots.low_card:1x", "is not a class name"),
    (":LowCard", "neither a module name nor a path"),
    ("tests/bots/low_card:LowCard", "neither a module name nor a path"),
    ("no_such_module_xyz:Bot", "cannot import 'no_such_module_xyz'"),
    ("tests.bots.low_card:Missing", "has no 'Missing'"),
    ("json:dumps", "is not a subclass of bullring.sdk.bot.Bot"),
    ("does/not/exist.py:Bot", "no such file"),
])
def test_bad_specs(spec: str, message: str) -> None:
    """Every bad spec is a ValueError that says what is wrong."""
    with pytest.raises(ValueError, match="bad bot spec") as error:
        bot_spec.load_bot(spec, "six_nimmt", 0)
    assert message in str(error.value)


def test_bot_for_another_game() -> None:
    """A bot that does not play the match's game is a ValueError too."""
    with pytest.raises(ValueError, match="plays no_thanks, not 'six_nimmt'"):
        bot_spec.load_bot("house:never_take", "six_nimmt", 0)
    with pytest.raises(ValueError, match="plays six_nimmt, not 'no_thanks'"):
        bot_spec.load_bot("tests.bots.low_card:LowCard", "no_thanks", 0)


@pytest.mark.parametrize(("source", "line", "error"), [
    ("from bullring.sdk.bot import Bot\n\nclass Broken(Bot):\n    def decide(self, obs)\n"
     "        return 1\n", 4, "SyntaxError: expected ':'"),
    ("import json\nLIMIT = 1 / 0\n", 2, "ZeroDivisionError: division by zero"),
    ("import no_such_dependency_xyz\n", 1,
     "ModuleNotFoundError: No module named 'no_such_dependency_xyz'"),
])
def test_a_bot_file_that_fails_to_import_names_its_file_and_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, line: int,
        error: str) -> None:
    """A bot file with a syntax error, an exception at its top level or a missing
    dependency is a ValueError of one line naming the file, the line and the error (the
    commands print it and exit 2, with no traceback); a module spec says the same."""
    path = tmp_path / "broken_bot.py"
    path.write_text(source, encoding="utf-8")
    with pytest.raises(ValueError) as raised:
        bot_spec.bot_class(f"{path}:Broken")
    message = str(raised.value)
    assert message == f"bad bot spec '{path}:Broken': {path}, line {line}: {error}"
    module = tmp_path / "broken_module_bot.py"
    module.write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=f"cannot import 'broken_module_bot': {module}, "
                                         f"line {line}: "):
        bot_spec.bot_class("broken_module_bot:Broken")
