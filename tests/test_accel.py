"""The optional mypyc accelerator (referee/_accel.py): compiled modules (the referee's and the
server's) are used only when built from the very sources beside them, and they play exactly
as the sources do.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import referee
from referee import _accel

ROOT = Path(__file__).resolve().parent.parent
PROBE = """
import json, referee, referee.six_nimmt as m, server.match_runner as runner
from client_sdk.arena import ArenaConfig, play_one
config = ArenaConfig("six_nimmt", ("random", "greedy", "random", "random"), 6, seed=9)
outcomes = [play_one(config, i) for i in range(6)]
state = m.new_state(3, {"variant": "professional", "rounds": 1}, 5)
while not state.over:
    state.apply({s: state.default_action(s) for s in state.pending})
print(json.dumps({"accelerated": referee.ACCELERATED, "file": m.__file__,
                  "runner": runner.__file__,
                  "outcomes": [[o.totals, o.ranks, o.round_scores] for o in outcomes],
                  "replay": state.replay_rounds()}))
"""


def probe(pythonpath: Path, pure: bool = False) -> dict[str, object]:
    """Run PROBE in a fresh interpreter importing ``referee`` and ``server`` from
    ``pythonpath``."""
    env = {k: v for k, v in os.environ.items() if k != "BULLRING_PURE_PYTHON"}
    env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), str(ROOT)])
    if pure:
        env["BULLRING_PURE_PYTHON"] = "1"
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=pythonpath,
                          capture_output=True, text=True, timeout=120, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_accelerated_only_when_built_from_these_sources() -> None:
    """ACCELERATED is true exactly when compiled files exist, their stamp matches the sources
    and the pure-Python switch is off; the imported module says the same."""
    import referee.six_nimmt as six_nimmt
    import server.match_runner as runner
    import server.outgoing as outgoing

    expected = (bool(_accel.compiled_files()) and _accel.stamp_matches()
                and not os.environ.get("BULLRING_PURE_PYTHON"))
    assert referee.ACCELERATED is expected
    for module in (six_nimmt, runner, outgoing):
        assert module.__file__ is not None
        assert module.__file__.endswith(".py") is not expected, module


def test_pure_switch_and_compiled_play_the_same_games() -> None:
    """BULLRING_PURE_PYTHON=1 imports the sources; either way the same seeds give the same
    outcomes and replays (a no-op comparison when nothing is compiled)."""
    pure = probe(ROOT, pure=True)
    assert pure["accelerated"] is False
    assert str(pure["file"]).endswith("six_nimmt.py")
    assert str(pure["runner"]).endswith("match_runner.py")
    default = probe(ROOT)
    assert default["accelerated"] is (bool(_accel.compiled_files()) and _accel.stamp_matches())
    assert default["outcomes"] == pure["outcomes"]
    assert default["replay"] == pure["replay"]


@pytest.mark.skipif(not _accel.compiled_files(), reason="the accelerator is not built here")
def test_an_edited_source_is_imported_instead_of_its_stale_build(tmp_path: Path) -> None:
    """A copy of the packages with compiled files runs them; once a source is edited, every
    source runs instead (Python alone would keep importing the stale build): an edited
    referee module and an edited server module alike."""
    for edit in ("referee/six_nimmt.py", "server/match_runner.py"):
        copy = tmp_path / edit.split("/")[0]
        for package in ("referee", "server"):
            shutil.copytree(ROOT / package, copy / package,
                            ignore=shutil.ignore_patterns("__pycache__"))
        fresh = probe(copy)
        assert fresh["accelerated"] is True
        assert not str(fresh["file"]).endswith(".py")
        assert not str(fresh["runner"]).endswith(".py")
        source = copy / edit
        source.write_text(source.read_text() + "\nEDITED = True\n")
        edited = probe(copy)
        assert edited["accelerated"] is False
        assert edited["file"] == str(copy / "referee" / "six_nimmt.py")
        assert edited["runner"] == str(copy / "server" / "match_runner.py")
        assert edited["outcomes"] == fresh["outcomes"]


@pytest.mark.skipif(not os.environ.get("CI"), reason="only CI promises a C compiler")
def test_ci_builds_every_accelerated_module() -> None:
    """CI has a C compiler, so its install compiles every accelerated module: a module mypyc
    cannot build (its type pass failed once on names it could not infer through an import
    cycle) would otherwise fall back to pure Python without a word, and run slower."""
    built = {path.name.split(".")[0] for path in _accel.compiled_files()}
    assert built == {module.rsplit(".", 1)[1] for module in _accel.MODULES}
    assert _accel.stamp_matches()
