"""The mypyc-compiled modules (``pyproject.toml``'s ``[tool.bullring] compiled``) play exactly
as their sources do, a stale in-place build is caught, and CI's compiled pass really runs
compiled code."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.compiled import ROOT, SOURCES, compiled_in_tree, module_name, stale_sources

PROBE = """
import json, bullring.referee.six_nimmt.engine as m, bullring.server.match.runner as runner
from bullring.sdk.arena import ArenaConfig, play_one
config = ArenaConfig("six_nimmt", ("random", "greedy", "random", "random"), 6, seed=9)
outcomes = [play_one(config, i) for i in range(6)]
state = m.new_state(3, {"variant": "professional", "rounds": 1}, 5)
while not state.over:
    state.apply({s: state.default_action(s) for s in state.pending})
print(json.dumps({"file": m.__file__, "runner": runner.__file__,
                  "outcomes": [[o.totals, o.ranks, o.round_scores] for o in outcomes],
                  "replay": state.replay_rounds()}))
"""


def probe(pythonpath: Path) -> dict[str, object]:
    """Run PROBE in a fresh interpreter importing the packages from ``pythonpath``."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=pythonpath,
                          capture_output=True, text=True, timeout=120, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def sources_only(tmp_path: Path) -> Path:
    """A copy of the namespace without any compiled file: the sources alone (its folders
    copied where ``bullring/`` links to them)."""
    shutil.copytree(ROOT / "bullring", tmp_path / "bullring",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "node_modules",
                                                  "web"))
    return tmp_path


def test_compiled_and_pure_play_the_same_games(tmp_path: Path) -> None:
    """The same seeds give the same outcomes and replays from the modules this tree runs
    (compiled in CI's compiled pass) as from the sources alone."""
    here = probe(ROOT)
    assert str(here["file"]).endswith(".py") is not bool(compiled_in_tree())
    pure = probe(sources_only(tmp_path))
    assert str(pure["file"]).endswith("six_nimmt/engine.py")
    assert str(pure["runner"]).endswith("match/runner.py")
    assert here["outcomes"] == pure["outcomes"]
    assert here["replay"] == pure["replay"]


def test_a_stale_in_place_build_is_named(tmp_path: Path) -> None:
    """An in-place build stamps its sources: once one of them is edited (or with no stamp)
    ``stale_sources`` names it, which makes the test session refuse to run (conftest)."""
    tree = sources_only(tmp_path / "tree")
    stamp = tmp_path / "stamp.json"
    assert stale_sources(tree, stamp) == []  # nothing compiled: nothing can be stale
    suffix = ".cpython-311-x86_64-linux-gnu.so"
    for source in SOURCES:
        (tree / source).with_suffix(suffix).write_bytes(b"")
    if (tree / SOURCES[0]).with_suffix(suffix) not in compiled_in_tree(tree):
        pytest.skip(f"this interpreter does not load {suffix} files")
    assert stale_sources(tree, stamp) == list(SOURCES)  # no stamp: every one
    stamp.write_text(json.dumps({s: hashlib.sha256((tree / s).read_bytes()).hexdigest()
                                 for s in SOURCES}))
    assert stale_sources(tree, stamp) == []
    edited = tree / "bullring" / "server" / "match" / "runner.py"
    edited.write_text(edited.read_text() + "\nEDITED = True\n")
    assert stale_sources(tree, stamp) == ["bullring/server/match/runner.py"]


@pytest.mark.skipif(not os.environ.get("BULLRING_EXPECT_COMPILED"),
                    reason="only CI's compiled pass promises compiled modules")
def test_the_compiled_pass_runs_every_module_compiled() -> None:
    """CI's second pass (after scripts/accelerate) runs every listed module compiled: a module
    mypyc could not build would otherwise fall back to its source without a word."""
    import importlib

    for source in SOURCES:
        module = importlib.import_module(module_name(source))
        assert not str(module.__file__).endswith(".py"), module
