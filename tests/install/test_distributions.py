"""The two distributions of the repository own disjoint files under the one namespace
``bullring``: ``bullring-sdk`` (client_sdk/python: the rules, the contract, the command-line
framework and the SDK) and ``bullring`` (the server, requiring that SDK). Installed in either
order they leave ``pip check`` clean; nothing installs a top-level ``server``; without the
SDK the server refuses to start in one line that says what to install.

Marked ``install``: it builds both packages into fresh venvs (pure Python, a few minutes).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "client_sdk" / "python"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "BULLRING_PURE_PYTHON": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def _run(*args: str | Path, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=_env(), text=True,
                          capture_output=True, timeout=900)
    if check:
        assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-3000:])
    return done


def _venv(home: Path) -> Path:
    _run(sys.executable, "-m", "venv", home / "venv", cwd=home)
    return home / "venv" / "bin"


FILES = """
import importlib.metadata as md, json
print(json.dumps({d: sorted(str(f) for f in md.distribution(d).files or ())
                  for d in ("bullring", "bullring-sdk")}))
"""


def _owned(bin_dir: Path, home: Path) -> dict[str, set[str]]:
    import json

    listed = json.loads(_run(bin_dir / "python", "-c", FILES, cwd=home).stdout)
    return {dist: {f for f in files if "__pycache__" not in f} for dist, files in listed.items()}


def test_the_server_then_the_sdk_own_disjoint_files_and_the_server_needs_the_sdk(
        tmp_path: Path) -> None:
    """``pip install .`` brings the SDK with it; installing the SDK again changes nothing
    ``pip check`` minds; the two own no file in common, no ``server`` module exists; once
    the SDK is uninstalled, ``bullring serve`` refuses to start, naming what to install."""
    bin_dir = _venv(tmp_path)
    _run(bin_dir / "pip", "install", "-q", ROOT, cwd=tmp_path)
    _run(bin_dir / "pip", "install", "-q", SDK, cwd=tmp_path)
    assert "No broken requirements" in _run(bin_dir / "pip", "check", cwd=tmp_path).stdout
    owned = _owned(bin_dir, tmp_path)
    assert not owned["bullring"] & owned["bullring-sdk"]
    strays = [f for f in owned["bullring"]
              if not f.startswith(("bullring/server/", "bullring-", "../"))]
    assert not strays, strays
    assert "bullring/__init__.py" in owned["bullring-sdk"]
    assert _run(bin_dir / "python", "-c", "import server", cwd=tmp_path, check=False
                ).returncode != 0
    _run(bin_dir / "pip", "uninstall", "-y", "-q", "bullring-sdk", cwd=tmp_path)
    refused = _run(bin_dir / "bullring", "serve", "--port", "0", cwd=tmp_path, check=False)
    assert refused.returncode != 0
    assert refused.stderr.strip().splitlines() == [
        "bullring: the bot SDK this server runs on (the distribution bullring-sdk) is not "
        "installed; install it with: pip install ./client_sdk/python"], refused.stderr


def test_the_sdk_then_the_server_leave_pip_check_clean(tmp_path: Path) -> None:
    """The reverse order: the SDK first, then the server; both work together."""
    bin_dir = _venv(tmp_path)
    _run(bin_dir / "pip", "install", "-q", SDK, cwd=tmp_path)
    _run(bin_dir / "pip", "install", "-q", ROOT, cwd=tmp_path)
    assert "No broken requirements" in _run(bin_dir / "pip", "check", cwd=tmp_path).stdout
    owned = _owned(bin_dir, tmp_path)
    assert not owned["bullring"] & owned["bullring-sdk"]
    version = _run(bin_dir / "bullring", "--version", cwd=tmp_path)
    assert version.stdout.startswith("bullring "), version.stdout
    arena = _run(bin_dir / "bullring-arena", "--game", "six_nimmt", "--bots", "greedy,random",
                 "--games", "4", "--seed", "1", cwd=tmp_path)
    assert "greedy" in arena.stdout
