"""Bot specs: the one way a command names a bot to play, resolved to a maker of seeded bots.

``house:NAME`` (or a bare house bot name) is a house bot; ``package.module:ClassName`` and
``path/to/file.py:ClassName`` import the module and make ``ClassName(seed)``, which must
subclass ``bullring.sdk.bot.Bot``. The runner, the arena and the tournament all resolve specs
here. A module that fails to import (a syntax error, an exception at its top level, a missing
dependency) is a ``BotSpecError`` (a ``ValueError``) naming the file and line, not a traceback.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bullring.sdk.bot import Bot
from bullring.sdk.errors import BotSpecError
from bullring.sdk.house import HOUSE_BOTS, house_bot

BotFactory = Callable[[str, int], Bot]
"""Makes a bot for ``(game, seed)``."""

_MODULE_RE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_SPEC_HELP = "expected house:NAME, package.module:ClassName or path/to/file.py:ClassName"


def bot_factory(spec: str) -> BotFactory:
    """Resolve ``spec`` now (import the module, find the class) and return its bot maker.

    The game is only known once the match starts; resolving early makes a typo in the spec
    fail before connecting rather than after the match has begun.
    """
    bot_cls = bot_class(spec)
    if isinstance(spec, str) and spec in HOUSE_BOTS:
        spec = f"house:{spec}"
    where, _, name = spec.rpartition(":")
    if where == "house":
        return lambda game, seed: house_bot(name, game, seed)

    def make(game: str, seed: int) -> Bot:
        if game not in bot_cls.games:
            raise BotSpecError(f"bot {spec!r} plays {', '.join(bot_cls.games)}, not {game!r} "
                             f"(set its `games` attribute)")
        return bot_cls(seed)

    return make


def bot_class(spec: str) -> type[Bot]:
    """The ``Bot`` subclass ``spec`` names (importing its module); BotSpecError if none.
    Its ``games`` attribute says which games it plays."""
    if isinstance(spec, str) and spec in HOUSE_BOTS:
        spec = f"house:{spec}"
    if not isinstance(spec, str) or ":" not in spec:
        raise BotSpecError(f"bad bot spec {spec!r}: {_SPEC_HELP}")
    where, _, name = spec.rpartition(":")
    if where == "house":
        if name not in HOUSE_BOTS:
            raise BotSpecError(f"bad bot spec {spec!r}: unknown house bot {name!r}; "
                             f"known: {', '.join(HOUSE_BOTS)}")
        return HOUSE_BOTS[name]
    if not name or not all(part.isidentifier() for part in name.split(".")):
        raise BotSpecError(f"bad bot spec {spec!r}: {name!r} is not a class name; {_SPEC_HELP}")
    if where.endswith(".py"):
        owner = _import_file(spec, Path(where))
    elif _MODULE_RE.fullmatch(where):
        owner = _import_module(spec, where)
    else:
        raise BotSpecError(f"bad bot spec {spec!r}: {where!r} is neither a module name nor a "
                         f"path to a .py file; {_SPEC_HELP}")
    cls: Any = owner
    for part in name.split("."):
        try:
            cls = getattr(cls, part)
        except AttributeError:
            raise BotSpecError(f"bad bot spec {spec!r}: {where!r} has no {name!r}") from None
    if not (isinstance(cls, type) and issubclass(cls, Bot)):
        raise BotSpecError(f"bad bot spec {spec!r}: {name!r} is not a subclass of "
                         f"bullring.sdk.bot.Bot")
    found: type[Bot] = cls
    return found


def load_bot(spec: str, game: str, seed: int) -> Bot:
    """Return a new bot for ``game`` from ``spec``, seeded with ``seed``.

    ``house:NAME`` is the house bot ``NAME``; ``package.module:ClassName`` and
    ``path/to/file.py:ClassName`` import the module and return ``ClassName(seed)``, which
    must subclass ``Bot``. A bad spec, or a bot that does not play ``game``, raises
    ``BotSpecError`` with a message saying what is wrong.
    """
    return bot_factory(spec)(game, seed)


def _import_module(spec: str, module: str) -> Any:
    try:
        return importlib.import_module(module)
    except Exception as e:
        raise BotSpecError(f"bad bot spec {spec!r}: cannot import {module!r}: "
                         f"{_failure(e)}") from e


def _failure(error: Exception) -> str:
    """Where and why importing a bot's module failed, in one line: ``FILE, line N:
    SyntaxError: ...`` (the line the error points at: the author's own code)."""
    what = f"{type(error).__name__}: {error}"
    if isinstance(error, SyntaxError) and error.filename:
        return f"{error.filename}, line {error.lineno}: {type(error).__name__}: {error.msg}"
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if not frame.filename.startswith("<") and "importlib" not in frame.filename]
    if not frames:
        return what
    return f"{frames[-1].filename}, line {frames[-1].lineno}: {what}"


def _import_file(spec: str, path: Path) -> Any:
    """Import ``path`` as a module, its folder first on ``sys.path`` as ``python FILE`` does."""
    path = path.expanduser().resolve()
    if not path.is_file():
        raise BotSpecError(f"bad bot spec {spec!r}: no such file {str(path)!r}")
    name = f"bullring_bot_{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:10]}"
    if name in sys.modules:
        return sys.modules[name]
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise BotSpecError(f"bad bot spec {spec!r}: cannot load {str(path)!r} as Python")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise BotSpecError(f"bad bot spec {spec!r}: {_failure(e)}") from e
    except BaseException:
        del sys.modules[name]
        raise
    return module
