"""Build hook of the server distribution (``bullring``): generate the protobuf code, depend on
the bot SDK of this very repository, and compile the server's hot modules with mypyc when a
wheel is built.

The server installs ``bullring.server`` alone; the namespace's root, the rules, the contract,
the command-line framework and the SDK belong to ``bullring-sdk`` (``client_sdk/python``),
which it requires from this checkout (a direct reference to ``client_sdk/python``), so one
``pip install .`` installs both and no file has two owners.

The protobuf code is generated before ``setup()`` itself, so that a development tree
(``pip install -e``) has it. Compiling is ``tools/packaging/mypyc_build.py``'s, shared with
the SDK's build.
"""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from setuptools import Extension, setup

ROOT = Path(__file__).resolve().parent
SDK = ROOT / "client_sdk" / "python"


def _load(name: str, path: Path) -> Any:
    """The module at ``path``, loaded on its own (the packages are not importable yet)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def requirements() -> list[str]:
    """The server's own requirements (``[tool.bullring] server-dependencies``) and the SDK
    of this checkout."""
    own = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["bullring"]
    return [*own["server-dependencies"], f"bullring-sdk @ {SDK.as_uri()}"]


def _scratch() -> str:
    """A build folder outside the source tree, removed at exit: a wheel never takes in what
    an earlier build (an in-place one, or the SDK's) left in ``build/``."""
    folder = tempfile.mkdtemp(prefix="bullring-build-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


_load("protogen", ROOT / "bullring" / "contract" / "protogen.py").generate()
mypyc = _load("mypyc_build", ROOT / "tools" / "packaging" / "mypyc_build.py")
# A placeholder makes setuptools run build_ext (and tag the wheel for this platform);
# the command replaces it with the real extensions, or with none.
setup(install_requires=requirements(),
      ext_modules=[Extension("bullring.server.compiled__mypyc", sources=[])],
      cmdclass={"build_ext": mypyc.optional_build_ext(
          ROOT, mypyc.compiled_sources(ROOT, "bullring/server/"), "bullring.server.compiled")},
      options={"build": {"build_base": _scratch()}})
