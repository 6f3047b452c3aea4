"""Build hook of the bot SDK: generate the protobuf code, then pin protobuf to match it.

The stubs are generated from ``proto/`` at build time, as for the server package, and never
committed. Generated code refuses to import under a protobuf runtime older than the protoc
that wrote it, so the runtime requirement is read off the generated file itself.
"""

from __future__ import annotations

import atexit
import importlib.util
import re
import shutil
import tempfile
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
SDK = HERE.parent


def _generate() -> list[Path]:
    spec = importlib.util.spec_from_file_location("protogen", SDK / "protogen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    outputs: list[Path] = module.generate()
    return outputs


def _protobuf_requirement(outputs: list[Path]) -> str:
    """``protobuf>=X.Y.Z`` where X.Y.Z is the gencode version written into the stubs."""
    pattern = re.compile(r"^# Protobuf Python Version: (\d+)\.(\d+)\.(\d+)", re.MULTILINE)
    versions = []
    for path in outputs:
        found = pattern.search(path.read_text(encoding="utf-8"))
        if found:
            versions.append(tuple(int(x) for x in found.groups()))
    if not versions:
        return "protobuf>=5.27"
    return "protobuf>=" + ".".join(map(str, max(versions)))


def _scratch() -> str:
    """A build folder outside the source tree, removed at exit: no stale copies between
    builds (the sources are the repository's, so the tree stays as it was)."""
    folder = tempfile.mkdtemp(prefix="bullring-sdk-build-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


# Generated before setup() so that both the metadata (the protobuf pin) and the build see it.
setup(install_requires=["grpcio>=1.66", _protobuf_requirement(_generate())],
      options={"build": {"build_base": _scratch()}})
