"""Build hook: generate the protobuf code from proto/ before the package is built."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithProtos(build_py):
    """``build_py`` that first compiles ``proto/`` with grpcio-tools."""

    def run(self) -> None:
        """Generate, then build as usual."""
        path = Path(__file__).resolve().parent / "client_sdk" / "protogen.py"
        spec = importlib.util.spec_from_file_location("protogen", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.generate()
        super().run()


setup(cmdclass={"build_py": BuildWithProtos})
