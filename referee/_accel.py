"""The optional mypyc accelerator: use the compiled modules only while they are built from
the very sources beside them.

``setup.py`` compiles the referee's hot modules (``referee.core``, ``referee.six_nimmt``) and
the server's per-decision path (``server.match_runner``, ``server.outgoing``) with mypyc when
it can, and stamps the SHA-256 of each source next to the compiled files (``_accel.json``).
Python would import a compiled module in preference to its source, so an edited source (or a
stale build) would be silently ignored: instead, unless every stamp matches, or when
``BULLRING_PURE_PYTHON`` is set, the pure-Python modules are imported, all of them. Both
behave the same; the compiled ones are faster. The choice is made once, when ``referee`` is
first imported (``server`` imports it first of all).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
"""The folder holding the ``referee`` and ``server`` packages."""
MODULES = ("referee.core", "referee.six_nimmt", "server.match_runner", "server.outgoing")
"""The modules that may be compiled (``setup.py`` compiles exactly these)."""
STAMP = HERE / "_accel.json"


def source(module: str) -> Path:
    """The source file of ``module``, one of ``MODULES``."""
    return ROOT.joinpath(*module.split(".")).with_suffix(".py")


def compiled_files() -> list[Path]:
    """The compiled module files present beside the sources."""
    return [path for module in MODULES for suffix in importlib.machinery.EXTENSION_SUFFIXES
            if (path := source(module).with_suffix(suffix)).exists()]


def stamp_key(module: str) -> str:
    """``module``'s source path from ``ROOT``, as the stamp names it (``referee/core.py``)."""
    return source(module).relative_to(ROOT).as_posix()


def stamp_matches() -> bool:
    """Whether the compiled modules were built from the sources as they are now."""
    try:
        stamp = json.loads(STAMP.read_text())
        return all(stamp.get(stamp_key(module)) == hashlib.sha256(
            source(module).read_bytes()).hexdigest() for module in MODULES)
    except (OSError, ValueError):
        return False


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the pure-Python source of each accelerated module, ahead of its compiled twin."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """The source's spec for each of ``MODULES``, else None."""
        if fullname not in MODULES:
            return None
        return importlib.util.spec_from_file_location(fullname, source(fullname))


def choose() -> bool:
    """Arrange for the compiled modules or the sources to be imported; True if compiled."""
    if not compiled_files():
        return False
    if os.environ.get("BULLRING_PURE_PYTHON") or not stamp_matches():
        sys.meta_path.insert(0, _SourceFinder())
        return False
    return True
