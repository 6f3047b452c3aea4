"""Build hook of the bot SDK (``bullring-sdk``): generate the protobuf code, pin protobuf to
match it, and compile the rules' hot modules with mypyc when a wheel is built.

The stubs are generated from ``proto/`` at build time, as for the server package, and never
committed. Generated code refuses to import under a protobuf runtime older than the protoc
that wrote it, so the runtime requirement is read off the generated file itself. Compiling is
``tools/packaging/mypyc_build.py``'s, shared with the server's build.
"""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import tempfile
from pathlib import Path
from typing import Any

from setuptools import Extension, setup

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _load(name: str, path: Path) -> Any:
    """The module at ``path``, loaded on its own (the packages are not importable yet)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _protobuf_requirement() -> str:
    """Generate the stubs; ``protobuf>=X.Y.Z`` where X.Y.Z is the oldest runtime they accept
    (``bullring.contract.protogen.runtime_floor``: the version their runtime check names)."""
    protogen = _load("protogen", ROOT / "bullring" / "contract" / "protogen.py")
    floor: tuple[int, int, int] = protogen.runtime_floor(protogen.generate())
    return "protobuf>=" + ".".join(map(str, floor))


def _scratch() -> str:
    """A build folder outside the source tree, removed at exit: no stale copies between
    builds (the sources are the repository's, so the tree stays as it was)."""
    folder = tempfile.mkdtemp(prefix="bullring-sdk-build-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


mypyc = _load("mypyc_build", ROOT / "tools" / "packaging" / "mypyc_build.py")
# Generated before setup() so that both the metadata (the protobuf pin) and the build see it.
# A placeholder extension makes setuptools run build_ext (and tag the wheel for this
# platform); the command replaces it with the real extensions, or with none.
setup(install_requires=["grpcio>=1.66", _protobuf_requirement()],
      ext_modules=[Extension("bullring.referee.compiled__mypyc", sources=[])],
      cmdclass={"build_ext": mypyc.optional_build_ext(
          ROOT, mypyc.compiled_sources(ROOT, "bullring/referee/"), "bullring.referee.compiled")},
      options={"build": {"build_base": _scratch()}})
