"""Build hook: generate the protobuf code from proto/ before the package is built.

It runs before ``setup()`` itself, not in ``build_py``: package discovery happens when
``setup()`` is called, and on a clean tree (a fresh clone, the Docker build) the generated
packages must already be there to be found and shipped.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import setup


def generate() -> None:
    """Compile ``proto/`` with grpcio-tools (``client_sdk/protogen.py``)."""
    path = Path(__file__).resolve().parent / "client_sdk" / "protogen.py"
    spec = importlib.util.spec_from_file_location("protogen", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.generate()


generate()
setup()
