"""The optional mypyc accelerator: use the compiled referee modules only while they are
built from the very sources beside them.

``setup.py`` compiles ``core`` and ``six_nimmt`` with mypyc when it can and stamps the
SHA-256 of each source next to the compiled files (``_accel.json``). Python would import a
compiled module in preference to its source, so an edited source (or a stale build) would be
silently ignored: instead, unless every stamp matches, or when ``BULLRING_PURE_PYTHON`` is set,
the pure-Python modules are imported. Both behave the same; the compiled ones are faster.
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
MODULES = ("core", "six_nimmt")
"""The referee modules that may be compiled (``setup.py`` ``ACCELERATED``)."""
STAMP = HERE / "_accel.json"


def compiled_files() -> list[Path]:
    """The compiled module files present beside the sources."""
    return [HERE / f"{name}{suffix}" for name in MODULES
            for suffix in importlib.machinery.EXTENSION_SUFFIXES
            if (HERE / f"{name}{suffix}").exists()]


def stamp_matches() -> bool:
    """Whether the compiled modules were built from the sources as they are now."""
    try:
        stamp = json.loads(STAMP.read_text())
        return all(stamp.get(f"{name}.py") == hashlib.sha256(
            (HERE / f"{name}.py").read_bytes()).hexdigest() for name in MODULES)
    except (OSError, ValueError):
        return False


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the pure-Python source of each accelerated module, ahead of its compiled twin."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """The source's spec for ``referee.core`` and ``referee.six_nimmt``, else None."""
        package, _, name = fullname.rpartition(".")
        if package != __package__ or name not in MODULES:
            return None
        return importlib.util.spec_from_file_location(fullname, HERE / f"{name}.py")


def choose() -> bool:
    """Arrange for the compiled modules or the sources to be imported; True if compiled."""
    if not compiled_files():
        return False
    if os.environ.get("BULLRING_PURE_PYTHON") or not stamp_matches():
        sys.meta_path.insert(0, _SourceFinder())
        return False
    return True
