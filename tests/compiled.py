"""Which of the modules a wheel compiles with mypyc are compiled here (``pyproject.toml``'s
``[tool.bullring] compiled``; ``scripts/accelerate`` builds them in place), and whether an
in-place build still matches its sources."""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES: tuple[str, ...] = tuple(
    tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["bullring"]["compiled"])
"""The compiled modules' source files, relative to the repository (``bullring/referee/core.py``)."""
STAMP = ROOT / "build" / "compiled-in-place.json"
"""The SHA-256 of each source, written by an in-place build (``setup.py``)."""


def module_name(source: str) -> str:
    """``bullring/referee/core.py`` -> ``bullring.referee.core``."""
    return source.removesuffix(".py").replace("/", ".")


def compiled_in_tree(root: Path = ROOT) -> list[Path]:
    """The compiled module files lying beside their sources under ``root``."""
    return [path for source in SOURCES for suffix in importlib.machinery.EXTENSION_SUFFIXES
            if (path := (root / source).with_suffix(suffix)).exists()]


def stale_sources(root: Path = ROOT, stamp: Path = STAMP) -> list[str]:
    """The compiled sources under ``root`` edited since their in-place build (every one of
    them when there is no stamp); empty when nothing is compiled in the tree."""
    if not compiled_in_tree(root):
        return []
    try:
        built = json.loads(stamp.read_text())
    except (OSError, ValueError):
        built = {}
    return [source for source in SOURCES if built.get(source) != hashlib.sha256(
        (root / source).read_bytes()).hexdigest()]
