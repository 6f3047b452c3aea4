"""Build hook: generate the protobuf code from proto/ before the package is built, and
compile the hot modules with mypyc when a wheel is built.

The protobuf code is generated before ``setup()`` itself, not in ``build_py``: package
discovery happens when ``setup()`` is called, and on a clean tree (a fresh clone, the Docker
build) the generated packages must already be there to be found and shipped.

Which modules are compiled is listed once, in ``pyproject.toml`` (``[tool.bullring]
compiled``). A wheel (``pip install .``, ``python -m build``) carries them compiled, beside
their sources, so the two always match. An editable install (``pip install -e .``, the
development tree) compiles nothing and runs the sources, so an edit takes effect at once;
``scripts/accelerate`` compiles them in place on purpose (``--clean`` removes them).
``BULLRING_PURE_PYTHON=1`` builds a wheel without them (no C compiler, the Docker image).
A build that fails leaves the pure-Python modules, which play identical games, only slower.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent

COMPILED: tuple[str, ...] = tuple(
    tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["bullring"]["compiled"])
"""The source files compiled by mypyc: the 6 nimmt! trick path and the seeded deal, and the
server's path from an answer to the next request."""
STAMP = ROOT / "build" / "compiled-in-place.json"
"""Written by an in-place build: the SHA-256 of each source its compiled files came from
(``tests/conftest.py`` refuses to test a stale build)."""


def _load(name: str, path: Path) -> Any:
    """The module at ``path``, loaded on its own (the packages are not importable yet)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generate() -> None:
    """Compile ``proto/`` with grpcio-tools (``bullring/contract/protogen.py``)."""
    _load("protogen", ROOT / "bullring" / "contract" / "protogen.py").generate()


def accelerator() -> list[Any]:
    """The mypyc extensions of ``COMPILED``, or none (pure Python) if mypyc cannot run."""
    if os.environ.get("BULLRING_PURE_PYTHON") or sys.implementation.name != "cpython":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        return []
    try:
        # One shared library inside the package (a top-level one would be outside what an
        # editable install maps), built in build/ so the tree only gets the .so files.
        return list(mypycify(list(COMPILED), opt_level="3", group_name="bullring.referee.compiled",
                             target_dir=str(Path("build") / "mypyc")))
    except (Exception, SystemExit) as exc:  # a type error, an unsupported construct
        print(f"bullring: mypyc skipped ({exc}); the pure-Python modules are used",
              file=sys.stderr)
        return []


class OptionalBuildExt(build_ext):
    """Compile ``COMPILED`` for a wheel or an explicit in-place build, never for an editable
    install; on any failure leave no compiled module behind.

    mypyc runs here, when extensions are built, not each time setup.py is loaded (pip
    loads it three times an install: twice for metadata, once to build).
    """

    def finalize_options(self) -> None:
        """Put the mypyc extensions (or none) in place of the placeholder ``setup()`` got."""
        editable = bool(getattr(self, "editable_mode", False))
        self.distribution.ext_modules = [] if editable else accelerator()
        super().finalize_options()

    def run(self) -> None:
        """Build every extension; stamp an in-place build's sources; on failure remove all."""
        outputs = [Path(self.get_ext_fullpath(ext.name)) for ext in self.extensions]
        try:
            super().run()
        except Exception as exc:  # no compiler, a compile error: fall back to pure Python
            for path in outputs:
                path.unlink(missing_ok=True)
            print(f"bullring: mypyc build failed ({exc}); the pure-Python modules are used",
                  file=sys.stderr)
            return
        if outputs and self.inplace:
            STAMP.parent.mkdir(exist_ok=True)
            STAMP.write_text(json.dumps({src: hashlib.sha256((ROOT / src).read_bytes())
                                         .hexdigest() for src in COMPILED}, indent=1) + "\n")


generate()
# A placeholder makes setuptools run build_ext (and tag the wheel for this platform);
# OptionalBuildExt replaces it with the real extensions, or with none.
setup(ext_modules=[Extension("bullring.referee.compiled__mypyc", sources=[])],
      cmdclass={"build_ext": OptionalBuildExt})
