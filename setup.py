"""Build hook: generate the protobuf code from proto/ before the package is built, and
compile the hot modules (referee and server) with mypyc when a C compiler is at hand.

The protobuf code is generated before ``setup()`` itself, not in ``build_py``: package
discovery happens when ``setup()`` is called, and on a clean tree (a fresh clone, the Docker
build) the generated packages must already be there to be found and shipped.

The compiled modules are an optional accelerator (``referee/_accel.py``): the same source
compiled by mypyc, with the pure-Python modules used wherever the build failed (no compiler),
was turned off (``BULLRING_PURE_PYTHON=1`` at install) or no longer matches the source.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def _load(name: str, path: Path) -> Any:
    """The module at ``path``, loaded on its own (the packages are not importable yet)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_ACCEL = _load("_accel", ROOT / "referee" / "_accel.py")
ACCELERATED = tuple(_ACCEL.stamp_key(module) for module in _ACCEL.MODULES)
"""The modules compiled by mypyc, as ``referee/_accel.py`` lists them: the 6 nimmt! trick
path and the seeded deal, and the server's path from an answer to the next request."""
STAMP: str = _ACCEL.STAMP.name
"""Written beside the compiled modules: the SHA-256 of each source they were built from."""


def generate() -> None:
    """Compile ``proto/`` with grpcio-tools (``client_sdk/protogen.py``)."""
    _load("protogen", ROOT / "client_sdk" / "protogen.py").generate()


def accelerator() -> list[Any]:
    """The mypyc extensions of ``ACCELERATED``, or none (pure Python) if mypyc cannot run."""
    if os.environ.get("BULLRING_PURE_PYTHON") or sys.implementation.name != "cpython":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        return []
    try:
        # One shared library inside the package (a top-level one would be outside what an
        # editable install maps), built in build/ so the tree only gets the .so files.
        return list(mypycify(list(ACCELERATED), opt_level="3", group_name="referee._accel",
                             target_dir=str(Path("build") / "mypyc")))
    except (Exception, SystemExit) as exc:  # a type error, an unsupported construct
        print(f"bullring: mypyc accelerator skipped ({exc}); the pure-Python modules are used",
              file=sys.stderr)
        return []


class OptionalBuildExt(build_ext):
    """Build the accelerator if possible; on any failure leave no compiled module behind.

    mypyc runs here, when extensions are built, not each time setup.py is loaded (pip
    loads it three times an install: twice for metadata, once to build).
    """

    def finalize_options(self) -> None:
        """Put the mypyc extensions in place of the placeholder ``setup()`` was given."""
        self.distribution.ext_modules = accelerator()
        super().finalize_options()

    def run(self) -> None:
        """Build every extension, then stamp their sources; on failure remove them all."""
        outputs = [Path(self.get_ext_fullpath(ext.name)) for ext in self.extensions]
        try:
            super().run()
        except Exception as exc:  # no compiler, a compile error: fall back to pure Python
            for path in outputs:
                path.unlink(missing_ok=True)
            print(f"bullring: mypyc accelerator not built ({exc}); the pure-Python modules "
                  "are used", file=sys.stderr)
            return
        if outputs:
            stamp = {src: hashlib.sha256((ROOT / src).read_bytes()).hexdigest()
                     for src in ACCELERATED}
            referee = next(path.parent for path in outputs if path.parent.name == "referee")
            (referee / STAMP).write_text(json.dumps(stamp, indent=1) + "\n")


generate()
# A placeholder makes setuptools run build_ext (and tag the wheel for this platform);
# OptionalBuildExt replaces it with the real extensions, or with none.
setup(ext_modules=[Extension("referee._accel__mypyc", sources=[])],
      cmdclass={"build_ext": OptionalBuildExt})
