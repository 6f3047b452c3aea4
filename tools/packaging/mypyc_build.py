"""What both distributions' ``setup.py`` share: compiling their hot modules with mypyc.

Which modules are compiled is listed once, in the repository's ``pyproject.toml``
(``[tool.bullring] compiled``); each distribution compiles the ones it owns: ``bullring-sdk``
the rules (``bullring/referee/``), ``bullring`` the server's per-decision path
(``bullring/server/match/``). A wheel carries them compiled, beside their sources. An
editable install compiles nothing and runs the sources; ``scripts/accelerate`` compiles them
in place on purpose. ``BULLRING_PURE_PYTHON=1`` builds without them (no C compiler, the
Docker image). A build that fails leaves the pure-Python modules, which play identical
games, only slower.

Loaded by path (``importlib``), before the packages are importable.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

from setuptools.command.build_ext import build_ext

STAMP = Path("build") / "compiled-in-place.json"
"""Relative to the repository: the SHA-256 of each source an in-place build compiled
(``tests/conftest.py`` refuses to test a stale build)."""


def compiled_sources(root: Path, folder: str) -> list[str]:
    """The sources under ``folder`` (``bullring/referee/``) that ``pyproject.toml`` lists
    as compiled, relative to the repository ``root``."""
    listed = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["bullring"]["compiled"]
    return [source for source in listed if source.startswith(folder)]


def _extensions(root: Path, sources: list[str], group: str) -> list[Any]:
    """The mypyc extensions of ``sources``, or none (pure Python) if mypyc cannot run."""
    if os.environ.get("BULLRING_PURE_PYTHON") or sys.implementation.name != "cpython":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        return []
    try:
        # One shared library inside the package (a top-level one would be outside what an
        # editable install maps), built in build/ so the tree only gets the .so files.
        return list(mypycify([str(root / s) for s in sources], opt_level="3", group_name=group,
                             target_dir=str(Path("build") / "mypyc")))
    except (Exception, SystemExit) as exc:  # a type error, an unsupported construct
        print(f"bullring: mypyc skipped ({exc}); the pure-Python modules are used",
              file=sys.stderr)
        return []


def optional_build_ext(root: Path, sources: list[str], group: str) -> type[build_ext]:
    """A ``build_ext`` command that compiles ``sources`` (as mypyc group ``group``) for a
    wheel or an explicit in-place build, never for an editable install, and on any failure
    leaves no compiled module behind."""

    class OptionalBuildExt(build_ext):  # type: ignore[misc]
        """Compile with mypyc where it can; fall back to the sources where it cannot.

        mypyc runs here, when extensions are built, not each time setup.py is loaded (pip
        loads it three times an install: twice for metadata, once to build).
        """

        def finalize_options(self) -> None:
            """Put the mypyc extensions (or none) in place of the placeholder ``setup()``
            got."""
            editable = bool(getattr(self, "editable_mode", False))
            self.distribution.ext_modules = [] if editable else _extensions(root, sources,
                                                                             group)
            super().finalize_options()

        def run(self) -> None:
            """Build every extension; stamp an in-place build's sources; on failure remove
            all."""
            outputs = [Path(self.get_ext_fullpath(ext.name)) for ext in self.extensions]
            try:
                super().run()
            except Exception as exc:  # no compiler, a compile error: fall back to pure Python
                for path in outputs:
                    path.unlink(missing_ok=True)
                print(f"bullring: mypyc build failed ({exc}); the pure-Python modules are "
                      f"used", file=sys.stderr)
                return
            if outputs and self.inplace:
                stamp = root / STAMP
                stamp.parent.mkdir(exist_ok=True)
                try:
                    built = json.loads(stamp.read_text())
                except (OSError, ValueError):
                    built = {}
                built.update({s: hashlib.sha256((root / s).read_bytes()).hexdigest()
                              for s in sources})
                stamp.write_text(json.dumps(built, indent=1, sort_keys=True) + "\n")

    return OptionalBuildExt
