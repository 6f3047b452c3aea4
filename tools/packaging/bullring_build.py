"""The package's build backend: setuptools, asking for mypyc's needs only when a wheel is
built.

A wheel compiles the hot modules with mypyc (``setup.py``), whose type pass needs mypy and
what the compiled modules import (sqlmodel, alembic, the grpc and protobuf stubs). An editable
install compiles nothing, so it skips installing them: a fresh checkout's first install is
that much quicker.
"""

from __future__ import annotations

from typing import Any

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F403  (the rest of the backend, unchanged)

MYPYC_NEEDS = ["mypy>=1.10", "sqlmodel>=0.0.22", "alembic>=1.13", "types-grpcio",
               "types-protobuf"]
"""What ``setup.py``'s mypyc build imports and type-checks, besides the base requirements."""


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    """setuptools' wheel requirements plus mypyc's."""
    return [*build_meta.get_requires_for_build_wheel(config_settings), *MYPYC_NEEDS]
