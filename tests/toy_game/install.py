"""The toy game installed as a game's author ships one: its distribution (this folder's
``pyproject.toml``) built and installed by pip into a folder of its own, which a process
finds on its ``PYTHONPATH`` (the suite's environment is left as it was)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
"""The toy game's distribution: its pyproject.toml and its package."""


def install(folder: Path) -> Path:
    """pip-install the toy game into ``folder`` (made here, empty) and return the folder.
    Built from a copy, so the build leaves nothing in the repository (and two tests
    installing at once do not share a build folder); no index is asked (``--no-index``)."""
    source = folder.parent / f"{folder.name}-source"
    source.mkdir()
    shutil.copy2(HERE / "pyproject.toml", source)
    shutil.copytree(HERE / "bullring_toy_game", source / "bullring_toy_game",
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--no-index", "--target", str(folder),
                    str(source)], check=True, capture_output=True, text=True)
    return folder


def with_installed(site: Path, environ: dict[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default: this process's) with ``site`` first on ``PYTHONPATH``: a
    process started with it finds the toy game installed there."""
    env = dict(os.environ if environ is None else environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH")) if p)
    return env
