"""The standalone bot SDK: a fresh virtual environment with only ``bullring-sdk`` installed,
at the oldest grpcio and protobuf its metadata allows, runs the example bot through a whole
match against the real server.

Marked ``install`` (it builds the SDK and installs it from PyPI or pip's cache, ~20 s):
CI runs it; ``pytest -m "not install"`` leaves it out locally.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from bullring.referee.replay import verify
from tests.serving import ServerProcess

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "client_sdk" / "python" / "sdk" / "examples" / "careful.py"
ALLOWED = {"bullring-sdk", "grpcio", "protobuf", "typing-extensions", "pip", "setuptools"}
"""What the venv may hold: the SDK, its two dependencies (grpcio's own typing-extensions) and
the tools ``python -m venv`` puts in every venv."""


def _run(*args: str | Path, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=timeout)


def _floors(wheel: Path) -> dict[str, str]:
    """``{name: X}`` for every ``Requires-Dist: name>=X`` of a built wheel."""
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
    return dict(re.findall(r"^Requires-Dist: ([\w.-]+)>=([\d.]+)$", text, re.MULTILINE))


@pytest.fixture(scope="module")
def sdk_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv, outside the repository, with the SDK wheel alone, its dependencies held at
    the lowest versions it allows (``lowest.json`` beside the venv says which): what a
    resolver may pick when another package of the bot author's holds them back."""
    home = tmp_path_factory.mktemp("sdk")
    made = _run(sys.executable, "-m", "venv", home / "venv", cwd=home)
    assert made.returncode == 0, made.stderr
    python = home / "venv" / "bin" / "python"
    built = _run(python, "-m", "pip", "wheel", "-q", "--disable-pip-version-check",
                 "--no-deps", "-w", home / "dist", ROOT / "client_sdk" / "python", cwd=home)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    [wheel] = (home / "dist").glob("*.whl")
    floors = _floors(wheel)
    assert set(floors) == {"grpcio", "protobuf"}, floors
    (home / "lowest.json").write_text(json.dumps(floors))
    (home / "lowest.txt").write_text("".join(f"{n}=={v}\n" for n, v in floors.items()))
    pip = _run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
               "-c", home / "lowest.txt", wheel, cwd=home)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    return home / "venv"


def test_the_sdk_installs_alone_with_grpcio_and_protobuf(sdk_venv: Path) -> None:
    """Installing the SDK brings only grpcio and protobuf (no server, no database), here at
    the lowest versions it declares, and the bot API, runner, stubs and engine import from
    the venv, not from the repository (the stubs' protobuf runtime check passes)."""
    listed = _run(sdk_venv / "bin" / "python", "-m", "pip", "list", "--format=json",
                  cwd=sdk_venv)
    versions = {p["name"].lower().replace("_", "-"): p["version"]
                for p in json.loads(listed.stdout)}
    names = set(versions)
    assert "bullring-sdk" in names
    assert names <= ALLOWED, names - ALLOWED
    floors = json.loads((sdk_venv.parent / "lowest.json").read_text())
    for name, floor in floors.items():  # "1.66" is installed as "1.66.0"
        assert f"{versions[name]}.".startswith(f"{floor}."), (name, versions[name], floor)
    probe = ("import importlib.util as u, bullring.sdk.runner, bullring.sdk.arena,"
             " bullring.referee.replay;"
             "from bullring.contract.generated.bullring.v2 import referee_pb2;"
             "print(bullring.sdk.__file__);"
             "print([m for m in ('server', 'bullring.server', 'sqlmodel', 'grpc_health')"
             " if u.find_spec(m)])")
    out = _run(sdk_venv / "bin" / "python", "-c", probe, cwd=sdk_venv)
    assert out.returncode == 0, out.stderr
    where, missing = out.stdout.splitlines()
    assert where.startswith(str(sdk_venv)) and missing == "[]"


def test_the_example_bot_finishes_a_match_from_the_sdk_venv(sdk_venv: Path,
                                                            server: ServerProcess) -> None:
    """``bullring-bot`` from the SDK venv plays the example bot through a whole 6 nimmt!
    match against house bots; every answer of its seat is its own; the replay verifies."""
    match = server.create_match("six_nimmt", 3, "--seed", "4", "--house", "1=greedy",
                                "--house", "2=random")
    assert match.tokens[0] is not None
    bot = _run(sdk_venv / "bin" / "bullring-bot", "--server", server.address, "--token",
               match.tokens[0], f"{EXAMPLE}:Careful", cwd=sdk_venv, timeout=120)
    assert bot.returncode == 0, bot.stderr[-3000:]
    assert f"match {match.match_id} ended: totals [" in bot.stdout
    replay = json.loads(server.replay(match.match_id))
    verify(replay)
    mine = [e for e in replay["events"] if e["type"] == "answer" and e["seat"] == 0]
    assert mine and not any(e["default"] for e in mine)


def test_the_sdk_arena_plays_the_example_bot(sdk_venv: Path) -> None:
    """``bullring-arena`` from the SDK venv tests a bot locally, with no server at all."""
    out = _run(sdk_venv / "bin" / "bullring-arena", "--game", "no_thanks", "--bots",
               f"{EXAMPLE}:Careful,threshold,random", "--games", "20", "--json", cwd=sdk_venv)
    assert out.returncode == 0, out.stderr
    rows = {row["bot"]: row["games"] for row in json.loads(out.stdout)}
    assert rows == {f"{EXAMPLE}:Careful": 20, "threshold": 20, "random": 20}


def test_the_sdk_tournament_and_its_errors(sdk_venv: Path) -> None:
    """``bullring-tournament`` from the SDK venv plays a duplicate tournament; the SDK's
    commands refuse a bad option in one line naming it (exit status 2) and print their
    version."""
    out = _run(sdk_venv / "bin" / "bullring-tournament", "--game", "six_nimmt", "--format",
               "duplicate", "--seats", "2", "--games", "4", "--json", f"{EXAMPLE}:Careful",
               "greedy", cwd=sdk_venv)
    assert out.returncode == 0, out.stderr
    assert {row["bot"] for row in json.loads(out.stdout)["standings"]} == {
        f"{EXAMPLE}:Careful", "greedy"}
    for command in ("bullring-arena", "bullring-tournament"):
        bad = _run(sdk_venv / "bin" / command, "--game", "chess", cwd=sdk_venv)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
        assert bad.stderr.startswith(f"{command}: --game: unknown game 'chess'"), bad.stderr
    version = _run(sdk_venv / "bin" / "bullring-bot", "--version", cwd=sdk_venv)
    assert version.stdout.startswith("bullring-bot 0.1.0 (bullring-sdk)"), version.stdout
