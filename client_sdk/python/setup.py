"""Build hook of the bot SDK: generate the protobuf code, then pin protobuf to match it.

The stubs are generated from ``proto/`` at build time, as for the server package, and never
committed. Generated code refuses to import under a protobuf runtime older than the protoc
that wrote it, so the runtime requirement is read off the generated file itself.
"""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import tempfile
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _protobuf_requirement() -> str:
    """Generate the stubs; ``protobuf>=X.Y.Z`` where X.Y.Z is the oldest runtime they accept
    (``bullring.contract.protogen.runtime_floor``: the version their runtime check names)."""
    protogen = ROOT / "bullring" / "contract" / "protogen.py"
    spec = importlib.util.spec_from_file_location("protogen", protogen)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    floor: tuple[int, int, int] = module.runtime_floor(module.generate())
    return "protobuf>=" + ".".join(map(str, floor))


def _scratch() -> str:
    """A build folder outside the source tree, removed at exit: no stale copies between
    builds (the sources are the repository's, so the tree stays as it was)."""
    folder = tempfile.mkdtemp(prefix="bullring-sdk-build-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


# Generated before setup() so that both the metadata (the protobuf pin) and the build see it.
setup(install_requires=["grpcio>=1.66", _protobuf_requirement()],
      options={"build": {"build_base": _scratch()}})
