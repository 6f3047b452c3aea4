"""The docs stay true and self-contained: every path a file of the project names is inside
the repository, the docs speak of the project (not of how it was built), and the replay
format page lists exactly the fields the engines write."""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bullring.referee.registry import get_game
from bullring.referee.replay import build_replay
from bullring.referee.settings import COMMON_SETTINGS
from bullring.sdk.arena import play_game
from bullring.sdk.house import house_bot
from bullring.server.quotas import MatchCaps
from tests.doc_commands import (
    BIN,
    Command,
    Shell,
    block,
    blocks,
    check_shown,
    doc_server,
    options,
    pages,
    serve_options,
    shown_pattern,
)
from tests.kits import Kit
from tests.ladder_helpers import ENDED, LadderBot, Lines, wait_until
from tests.serving import CLI

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

SKIPPED_DIRS = {".git", ".venv", "node_modules", "build", "dist", "generated", "__pycache__",
                "target", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis"}
TEXT_SUFFIXES = {".md", ".py", ".js", ".ts", ".proto", ".toml", ".yaml", ".yml", ".cfg",
                 ".txt", ".sh", ".html", ".css", ".json", ".ini", ""}

MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")
NAMED_MD_FILE = re.compile(r"(?<![\w./-])((?:\.\.?/)*[\w.-]+(?:/[\w.-]+)*\.md)\b")
OUTSIDE = re.compile(r"\.\./shared|/work/")
PARENT_PATH = re.compile(r"(?<![\w.])((?:\.\./)+[\w.-]*)")

HISTORY = re.compile(r"\b(?:this|previous|earlier|same)\s+(?:stop|session)\b"
                     r"|\bother\s+helpers\b|\bhelpers\s+running\b|\btried\s+and\s+dropped\b",
                     re.IGNORECASE)
"""Words about how the project was built; ``git log`` keeps that history."""


def project_files() -> Iterator[Path]:
    """Every text file of the project (not virtualenvs, caches or generated code)."""
    for path in sorted(ROOT.rglob("*")):
        parts = set(path.relative_to(ROOT).parts)
        if parts & SKIPPED_DIRS or any(p.endswith(".egg-info") for p in parts):
            continue
        if path.is_file() and path.suffix in TEXT_SUFFIXES and path.name != "package-lock.json":
            yield path


def _exists_inside(base: Path, target: str) -> bool:
    resolved = (base / target).resolve()
    return resolved.is_relative_to(ROOT) and resolved.exists()


def test_no_file_points_outside_the_repository() -> None:
    """Whoever clones the repository has every page its files name: no path to a folder
    beside the checkout or machine path, every relative Markdown link lands on a file inside
    the repository, and every ``*.md`` a file names exists (beside it or from the repository's
    root)."""
    this = Path(__file__).resolve()
    problems = []
    for path in project_files():
        if path == this:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        where = path.relative_to(ROOT)
        for line_no, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                problems.append(f"{where}:{line_no}: points outside: {line.strip()}")
            for up in PARENT_PATH.findall(line):
                if not (path.parent / up).resolve().is_relative_to(ROOT):
                    problems.append(f"{where}:{line_no}: {up} leaves the repository")
            for target in MARKDOWN_LINK.findall(line) if path.suffix == ".md" else ():
                if re.match(r"[a-z]+:|#", target):
                    continue  # a web address or an anchor on the same page
                if not _exists_inside(path.parent, target.split("#")[0]):
                    problems.append(f"{where}:{line_no}: broken link {target}")
            for named in NAMED_MD_FILE.findall(line):
                if not (_exists_inside(path.parent, named) or _exists_inside(ROOT, named)):
                    problems.append(f"{where}:{line_no}: names {named}, not in the repository")
    assert not problems, "\n".join(problems)


def test_the_checks_catch_what_they_look_for(tmp_path: Path) -> None:
    """The patterns above find what they are for (so the tests cannot pass by matching
    nothing)."""
    assert OUTSIDE.search("see " + "/".join(["..", "shared", "notes.md"]))
    assert PARENT_PATH.findall('"referee" = "../../referee"') == ["../../referee"]
    assert NAMED_MD_FILE.findall("(RULES.md §3) and docs/rules.md") == ["RULES.md",
                                                                      "docs/rules.md"]
    assert MARKDOWN_LINK.findall("[the rules](../rules.md#deadlines)") == ["../rules.md#deadlines"]
    assert not _exists_inside(DOCS, "../../README.md")
    assert _exists_inside(DOCS, "rules.md")
    assert HISTORY.search("measured in the previous\nstop")  # any whitespace between the words


def test_readme_and_docs_speak_of_the_project_not_its_history() -> None:
    """README.md and docs/ say what the project is and does, never how it was built: the
    same check as a case-insensitive ``git grep`` of HISTORY's phrases over README.md and
    docs/."""
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    found = [f"{page.relative_to(ROOT)}:{n}: {line.strip()}"
             for page in pages
             for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
             if HISTORY.search(line)]
    assert not found, "\n".join(found)


def test_code_comments_speak_of_the_code_not_its_history() -> None:
    """Comments and docstrings of the code say what it does, not which work session did it."""
    this = Path(__file__).resolve()
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
             for path in project_files() if path != this and path.suffix != ".md"
             for n, line in enumerate(path.read_text(encoding="utf-8",
                                                     errors="replace").splitlines(), 1)
             if HISTORY.search(line)]
    assert not found, "\n".join(found)


def test_readme_links_every_page_of_the_docs() -> None:
    """A reader finds every page of docs/ from the README."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {target.split("#")[0] for target in MARKDOWN_LINK.findall(readme)}
    missing = [f"docs/{page.name}" for page in sorted(DOCS.glob("*.md"))
               if f"docs/{page.name}" not in linked]
    assert not missing, f"README.md does not link {missing}"


def test_the_readme_reads_in_minutes() -> None:
    """The README stays a short page for users (at most 130 lines, its performance table
    included): the details live in docs/."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 130, f"README.md has {len(lines)} lines"


# -- the replay format page ------------------------------------------------------------------


def _field_tables(page: Path) -> dict[str, list[set[str]]]:
    """The ``| field | meaning |`` tables of ``page``: their first-column names (in
    backquotes), by the ``##`` section they are in, in order."""
    tables: dict[str, list[set[str]]] = {}
    section = ""
    current: set[str] | None = None
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section, current = line[3:].strip(), None
        elif line.startswith("| field |"):
            current = set()
            tables.setdefault(section, []).append(current)
        elif line.startswith("|") and current is not None:
            current.update(re.findall(r"`(\w+)`", line.split("|")[1]))
        elif not line.startswith("|"):
            current = None
    return tables


def _replays(game: str, seats: int, settings: dict[str, Any]) -> dict[str, Any]:
    spec = get_game(game)
    state = spec.new_state(seats, settings, 7)
    players = [house_bot("random", spec.id, seat) for seat in range(seats)]
    log: list[dict[str, Any]] = []
    play_game(state, players, log)
    replay = build_replay(state, match_id="docs", seat_names=["random"] * seats, events=log)
    loaded: dict[str, Any] = json.loads(json.dumps(replay))
    return loaded


def _keys(records: list[dict[str, Any]]) -> set[str]:
    return set().union(*(set(r) for r in records))


def test_replay_format_page_lists_exactly_the_fields_written() -> None:
    """docs/replay-format.md's field tables name every field a replay holds, and no other:
    the match, a 6 nimmt! round and trick (standard and professional), a No Thanks! round
    (with and without hidden cards and tens out)."""
    tables = _field_tables(DOCS / "replay-format.md")
    six = [_replays("six_nimmt", 3, {"rounds": 1}),
           _replays("six_nimmt", 3, {"rounds": 1, "variant": "professional"})]
    nt = [_replays("no_thanks", 3, {}),
          _replays("no_thanks", 4, {"hidden_card": True, "tens_out": True})]
    (match,) = tables["The match"]
    assert match == _keys(six + nt)
    round_six, trick = tables["ROUND for `six_nimmt`"]
    assert round_six == _keys([r for replay in six for r in replay["rounds"]])
    assert trick == _keys([t for replay in six for r in replay["rounds"] for t in r["tricks"]])
    (round_nt,) = tables["ROUND for `no_thanks`"]
    assert round_nt == _keys([r for replay in nt for r in replay["rounds"]])


def test_replay_format_page_lists_every_log_entry_the_server_writes() -> None:
    """Every entry type the match runner logs, and the answers, are in the EVENT table."""
    page = (DOCS / "replay-format.md").read_text(encoding="utf-8")
    section = page.split("## EVENT", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `(\w+)`(?: / `(\w+)`)?", section, re.M))
    names = {name for pair in documented for name in pair if name} - {"type"}
    runner = (ROOT / "server" / "match" / "runner.py").read_text(encoding="utf-8")
    logged = set(re.findall(r'_event\("(\w+)"', runner))
    logged |= set(re.findall(r'"(connect|reconnect)" if', runner))
    assert logged, "no _event calls found: the pattern no longer fits the runner"
    assert names == logged | {"answer"}


@pytest.mark.parametrize("page", ["rules.md", "replay-format.md"])
def test_settings_in_the_docs_are_the_engines(page: str) -> None:
    """Every setting the engines declare is documented with its default in docs/rules.md
    (and named in the replay format's example only where it shows real defaults)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    if page != "rules.md":
        example = re.search(r'"settings": (\{.*?\}),', text, re.S)
        assert example is not None
        assert json.loads(example.group(1)) == get_game("six_nimmt").new_state(2, None, 0).settings
        return
    for game in ("six_nimmt", "no_thanks"):
        for setting in get_game(game).settings:
            default = str(setting.default).lower()
            row = re.search(rf"^\| `{setting.name}` \| `?{re.escape(default)}`? \|", text, re.M)
            assert row, f"{game} setting {setting.name} (default {default}) not in rules.md"


def test_protocol_settings_table_is_the_engines_and_the_caps() -> None:
    """docs/protocol.md's table of match settings is every setting of every game, with its
    type, default, range and the cap a match made without the admin token is held to, as the
    engines declare them and MatchCaps sets them."""
    text = (DOCS / "protocol.md").read_text(encoding="utf-8")
    table = text.split("<!-- settings -->", 1)[1].split("\n\n", 1)[0]
    rows = {(game, name): (kind, default, values, cap) for game, name, kind, default, values,
            cap in re.findall(r"^\|\s*`?([\w ]+?)`?\s*\|\s*`(\w+)`\s*\|\s*([\w/]+)\s*\|"
                              r"\s*`?(\w+)`?\s*\|\s*([^|]*?)\s*\|\s*(\d*)\s*\|$", table, re.M)}
    expected = {}
    caps = MatchCaps()
    common = {s.name for s in COMMON_SETTINGS}
    for game in ("six_nimmt", "no_thanks"):
        for setting in get_game(game).settings:
            where = "every game" if setting.name in common else game
            if isinstance(setting.default, bool):
                kind, values = "true/false", ""
            elif isinstance(setting.default, int):
                kind, values = "integer", f"{setting.minimum}..{setting.maximum}"
            else:
                kind, values = "choice", ", ".join(f"`{c}`" for c in setting.choices)
            cap = "" if caps.cap(setting) is None else str(caps.cap(setting))
            expected[(where, setting.name)] = (kind, str(setting.default).lower(), values, cap)
    assert rows == expected


def test_protocol_transcripts_and_http_examples_are_what_a_real_server_sends() -> None:
    """docs/protocol.md's gRPC and HTTP transcripts and docs/http.md's curl examples are
    played again against a real server (``scripts/protocol_transcript.py --check``): every
    message and answer must be the same, but for match ids, tokens, the time left and how
    messages fall into polls."""
    pages = ["docs/protocol.md", "docs/http.md"]
    checked = subprocess.run(
        [sys.executable, "scripts/protocol_transcript.py", "--check", *pages],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, (
        f"{checked.stdout}{checked.stderr}\nrun `python scripts/protocol_transcript.py "
        f"--write {' '.join(pages)}` if the change is meant")


def test_every_test_the_docs_name_exists() -> None:
    """A promise in the docs names the test that holds it: every ``tests/...py`` file (and
    ``::test_name``) and every backquoted ``test_...`` name in README.md and docs/ is in the
    suite, so a renamed or moved test cannot leave a promise unheld."""
    tests = ROOT / "tests"
    defined = {m for path in tests.rglob("*.py")
               for m in re.findall(r"^\s*(?:async )?def (test_\w+)", path.read_text(
                   encoding="utf-8"), re.M)}
    missing = []
    for page in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for path, name in re.findall(r"(tests/[\w/]+\.py)(?:::(\w+))?", text):
            if not (ROOT / path).is_file():
                missing.append(f"{page.name}: {path}")
            elif name and not re.search(rf"def {name}\b",
                                        (ROOT / path).read_text(encoding="utf-8")):
                missing.append(f"{page.name}: {path}::{name}")
        missing += [f"{page.name}: {name}" for name in re.findall(r"`(test_\w+)(?=[`[])", text)
                    if name not in defined]
    assert not missing, "\n".join(missing)


def _section(text: str, heading: str) -> str:
    """The text of the ``## heading...`` section of a Markdown page."""
    start = text.index(f"\n## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def _shell_lines(section: str) -> list[str]:
    """The command lines of a section's ``sh`` blocks (comments and output left out)."""
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_bot_authors_first_steps_run_as_written(tmp_path: Path) -> None:
    """docs/bot-authors.md's §2 (copy the example bot into a folder of one's own) and §3
    (play it in the arena there) run as written from a checkout, with the SDK's commands on
    PATH as §1 leaves them; only the arena's 500 games are cut to 10."""
    text = (DOCS / "bot-authors.md").read_text(encoding="utf-8")
    copy = _shell_lines(_section(text, "2. "))
    arena = [line for line in _shell_lines(_section(text, "3. "))
             if line.startswith("bullring-arena ")]
    assert len(copy) == 1 and len(arena) == 2
    env = {**os.environ, "HOME": str(tmp_path),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    script = " && ".join([*copy, *(line.replace("--games 500", "--games 10")
                                   for line in arena)])
    done = subprocess.run(["sh", "-c", script], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    tables = [line for line in done.stdout.splitlines()
              if line.startswith("careful.py:Careful ")]
    assert len(tables) == len(arena) and all(" 10 " in line for line in tables), done.stdout
    assert (tmp_path / "mybot" / "careful.py").is_file()


# -- the commands the pages show, run as written -------------------------------------------

KIT_PAGES = {page.split("/")[1]: page for page in pages()
             if page.startswith("client_sdk/") and page != "client_sdk/python/README.md"}
"""The starter kits' READMEs, by kit folder (the Python SDK's README is the SDK's)."""


def _kit_test(kit: str) -> str:
    """The test class of a kit (``tests/kits.py``'s ``KitTests``), as pytest names it."""
    module = f"tests/starter_kits/test_kit_{kit.replace('-', '_')}.py"
    [name] = re.findall(r"^class (Test\w+)\(", (ROOT / module).read_text(encoding="utf-8"), re.M)
    return f"{module}::{name}"


COVERED: dict[tuple[str, str], str] = {
    ("README.md", "python3 -m venv .venv"):
        "skipped: makes the virtual environment an install goes into (CI makes its own, "
        ".ci/run)",
    ("README.md", ".venv/bin/pip install"):
        "skipped: installs from PyPI into a fresh venv (CI makes its install with the test "
        "command's pip install -e, .ci/run; tests/install/ builds and installs both "
        "distributions into fresh venvs)",
    ("README.md", ".venv/bin/pytest"): "ci",
    ("README.md", ".venv/bin/bullring serve --house-bots"):
        "tests/e2e/test_readme.py::test_the_readmes_first_bot_runs_as_written",
    ("README.md", ".venv/bin/bullring arena --game six_nimmt --bots low_card.py"):
        "tests/e2e/test_readme.py::test_the_readmes_first_bot_runs_as_written",
    ("README.md", ".venv/bin/bullring bots add lowcard"):
        "tests/e2e/test_readme.py::test_the_readmes_first_bot_runs_as_written",
    ("README.md", ".venv/bin/bullring bot --server"):
        "tests/e2e/test_readme.py::test_the_readmes_first_bot_runs_as_written",
    ("README.md", ".venv/bin/bullring leaderboard"):
        "tests/e2e/test_readme.py::test_the_readmes_first_bot_runs_as_written",
    ("README.md", ".venv/bin/bullring tournament"):
        "test_live_tournament_commands_run_as_written",
    ("docs/arena.md", "bullring arena --game GAME"):
        "test_synopses_name_the_options_the_commands_take",
    ("docs/arena.md", "bullring tournament --game GAME"):
        "test_synopses_name_the_options_the_commands_take",
    ("docs/arena.md", "bullring arena --game six_nimmt"): "test_local_commands_run_as_written",
    ("docs/bot-authors.md", "python3 -m venv bot-env"):
        "skipped: makes a virtual environment for the SDK's install",
    ("docs/bot-authors.md", "bot-env/bin/pip install ./client_sdk/python"):
        "skipped: installs grpcio and protobuf from PyPI; tests/install/test_sdk_install.py "
        "installs the SDK alone into a fresh venv and plays its commands",
    ("docs/bot-authors.md", ". bot-env/bin/activate"):
        "skipped: puts that venv's commands on PATH; the tests run this interpreter's",
    ("docs/bot-authors.md", "mkdir -p ~/mybot"): "test_bot_authors_first_steps_run_as_written",
    ("docs/bot-authors.md", "cp client_sdk/python/sdk/examples/careful.py"):
        "test_bot_authors_first_steps_run_as_written",
    ("docs/bot-authors.md", "cd ~/mybot"): "test_bot_authors_first_steps_run_as_written",
    ("docs/bot-authors.md", "bullring-arena"): "test_bot_authors_first_steps_run_as_written",
    ("docs/bot-authors.md", "bullring serve --port 50051 &"):
        "test_matches_by_hand_run_as_written",
    ("docs/bot-authors.md", "bullring match create"): "test_matches_by_hand_run_as_written",
    ("docs/bot-authors.md", "bullring-bot --server 127.0.0.1:50051"):
        "test_matches_by_hand_run_as_written",
    ("docs/bot-authors.md", "bullring replay"): "test_matches_by_hand_run_as_written",
    ("docs/bot-authors.md", "bullring-bot --server HOST:PORT --token TOKEN careful.py"):
        "test_matches_by_hand_run_as_written",
    ("docs/bot-authors.md", "bullring-bot --server ladder1:50051,ladder2:50051"):
        "skipped: names a fleet's hosts; tests/e2e/test_fleet_failover.py runs the same "
        "command with the addresses of two servers and kills the first",
    ("docs/bot-authors.md", "bullring-bot --server HOST:PORT --token TOKEN --ladder"):
        "test_the_ladder_pages_commands_run_as_written",
    ("docs/development.md", "python3 -m venv .venv"):
        "skipped: makes the virtual environment an install goes into (CI makes its own, "
        ".ci/run)",
    ("docs/development.md", ".venv/bin/pip install"):
        "skipped: installs from PyPI (CI installs the same way, .ci/run)",
    ("docs/development.md", ".venv/bin/pytest"): "ci",
    ("docs/development.md", ".venv/bin/pytest -"):
        "skipped: a part of the suite, which CI runs whole (.ci/run)",
    ("docs/development.md", ".venv/bin/ruff check ."): "ci",
    ("docs/development.md", ".venv/bin/mypy"): "ci",
    ("docs/envs.md", "pip install"):
        "skipped: installs PettingZoo, Gymnasium and NumPy from PyPI (the test extra CI "
        "installs has them)",
    ("docs/envs.md", "python client_sdk/python/sdk/examples/linear_policy.py"):
        "test_the_training_command_gives_the_saved_weights",
    ("docs/envs.md", "bullring arena"): "test_local_commands_run_as_written",
    ("docs/envs.md", "bullring bot --server"):
        "tests/e2e/test_trained_policy.py::test_the_trained_policy_plays_rated_ladder_matches",
    ("docs/http.md", "bullring serve --http-port"): "test_matches_by_hand_run_as_written",
    ("docs/http.md", "curl"): "test_protocol_transcripts_and_http_examples_are_what_a_real_"
                              "server_sends",
    ("docs/http.md", "T=br_"): "test_protocol_transcripts_and_http_examples_are_what_a_real_"
                               "server_sends",
    ("docs/ladder.md", "bullring serve"): "test_the_ladder_pages_commands_run_as_written",
    ("docs/ladder.md", "bullring bots add"): "test_the_ladder_pages_commands_run_as_written",
    ("docs/ladder.md", "bullring bot --server"): "test_the_ladder_pages_commands_run_as_written",
    ("docs/ladder.md", "bullring leaderboard"): "test_the_ladder_pages_commands_run_as_written",
    ("docs/ladder.md", "bullring matches"): "test_the_ladder_pages_commands_run_as_written",
    ("docs/ladder.md", "bullring replay"): "test_the_ladder_pages_commands_run_as_written",
    ("docs/ladder.md", "BULLRING_ADMIN_TOKEN="): "test_the_ladder_pages_commands_run_as_written",
    ("docs/ladder.md", "bullring challenge"): "test_the_ladder_pages_commands_run_as_written",
    ("docs/ladder.md", "bullring tournament"): "test_live_tournament_commands_run_as_written",
    ("docs/operations.md", "bullring serve ["):
        "test_synopses_name_the_options_the_commands_take",
    ("docs/operations.md", "bullring serve --port"): "test_matches_by_hand_run_as_written",
    ("docs/operations.md", "bullring match create"): "test_matches_by_hand_run_as_written",
    ("docs/operations.md", "bullring bot --server"): "test_matches_by_hand_run_as_written",
    ("docs/operations.md", "bullring replay"): "test_matches_by_hand_run_as_written",
    ("docs/operations.md", "docker compose"):
        "skipped: needs a Docker daemon and the network; tests/install/test_docker.py checks "
        "docker/compose.yaml and runs its services' commands through the entrypoint",
    ("docs/play-in-browser.md", "bullring match create"): "test_matches_by_hand_run_as_written",
    ("docs/tv.md", "bullring tournament"): "test_live_tournament_commands_run_as_written",
    ("client_sdk/python/README.md", "pip install ./client_sdk/python"):
        "skipped: installs grpcio and protobuf from PyPI; tests/install/test_sdk_install.py "
        "installs the SDK alone into a fresh venv and plays its commands",
    ("client_sdk/python/README.md", "bullring-arena"): "test_local_commands_run_as_written",
    ("client_sdk/python/README.md", "bullring-tournament"): "test_local_commands_run_as_written",
    ("client_sdk/python/README.md", "bullring-bot"): "test_matches_by_hand_run_as_written",
    **{(page, "sudo apt-get install"): f"{_kit_test(kit)}::test_readme_installs_what_ci_installs"
       for kit, page in KIT_PAGES.items()},
    **{(page, part): f"{_kit_test(kit)}::test_the_starter_bot_plays_both_ladders"
       for kit, page in KIT_PAGES.items()
       for command in Kit(kit, (), frozenset()).readme_commands()[1:]
       for part in command.split(" && ")},
    **{(page, copy): "test_the_kits_copy_commands_run_as_written"
       for page in KIT_PAGES.values() for copy in ("cp -r client_sdk/", "cp -r proto ~/mybot/")},
}
"""Where each command the pages show is run, by page and the start of the command (the
longest that fits; ``a && b`` is two commands): a test of this file, a test elsewhere
(``tests/...py::test_...``), ``ci`` for a command .ci/run runs as written, or ``skipped:``
and why it cannot run in a test."""


def _where(page: str, part: str) -> tuple[str, str] | None:
    """The key of COVERED that says where ``part`` of ``page`` runs (None: nowhere)."""
    keys = [key for key in COVERED if key[0] == page and part.startswith(key[1])]
    return max(keys, key=lambda key: len(key[1])) if keys else None


def test_every_command_in_the_docs_is_run_or_listed() -> None:
    """Every command in a ``sh`` block of the README, docs/ and the kits' READMEs is run by a
    test that exists (this file's, or one COVERED names), run by CI as written (.ci/run holds
    it), or listed as skipped with the reason; and every entry of the list is a command some
    page shows, so the list cannot go stale."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    here = {name for name in globals() if name.startswith("test_")}
    used, problems = set(), []
    for page in pages():
        for commands in blocks(page):
            for command in commands:
                for part in command.text.split(" && "):
                    key = _where(page, part)
                    if key is None:
                        problems.append(f"{page}: `{part}` is neither run nor listed")
                        continue
                    used.add(key)
                    where = COVERED[key]
                    if where == "ci" and part.replace(".venv/bin/", "") not in ci:
                        problems.append(f"{page}: `{part}` is not a line of .ci/run")
    for key, where in COVERED.items():
        if key not in used:
            problems.append(f"{key}: no page shows such a command")
        if where.startswith("tests/"):
            path, *names = where.split("::")
            found: object = importlib.import_module(path.removesuffix(".py").replace("/", "."))
            for name in names:
                found = getattr(found, name, None)
            if not callable(found):
                problems.append(f"{key}: {where} does not exist")
        elif not where.startswith(("skipped: ", "ci")) and where not in here:
            problems.append(f"{key}: no test {where} in this file")
    assert not problems, "\n".join(problems)


def test_the_command_readers_read_what_they_look_for() -> None:
    """The helpers above find what they are for, so the tests that use them cannot pass by
    matching nothing: a shown line's pattern takes a match id's value, any number and any
    ``…``, and no other text; brackets of optional parts drop; placeholders are replaced
    whole, never inside a longer name; a command no entry names is found unlisted."""
    shown = shown_pattern("match 3f0c… ended: totals [39, 13] (normal); you: …",
                          {"3f0c…": "ab12cd"})
    assert shown.fullmatch("match ab12cd ended: totals [1, -2] (normal); you: seat 0")
    assert not shown.fullmatch("match 3f0c99 ended: totals [1, -2] (normal); you: seat 0")
    assert not shown.fullmatch("match ab12cd ended: totals [1] (normal); you: seat 0")
    assert options("x [--seed S] [--setting K=V]... y") == "x --seed S --setting K=V... y"
    line = Shell(ROOT, words={"TOKEN": "t", "ADMIN_TOKEN": "a", "S": "7"}).line(
        "BULLRING_ADMIN_TOKEN=x .venv/bin/bullring --admin-token ADMIN_TOKEN --token TOKEN "
        "--seed S --Seed")
    assert line == f"BULLRING_ADMIN_TOKEN=x {BIN}bullring --admin-token a --token t --seed 7 --Seed"
    assert _where("docs/ladder.md", "bullring nonsense") is None
    assert _where("docs/development.md", ".venv/bin/pytest -m x") == (
        "docs/development.md", ".venv/bin/pytest -")


def _match_created(output: str) -> tuple[str, dict[int, str]]:
    """The match id and the seat tokens ``bullring match create`` printed."""
    found = re.search(r"^match (\w+)$", output, re.M)
    assert found is not None, output
    tokens = {int(seat): token for seat, token
              in re.findall(r"^seat (\d+) token (\S+)", output, re.M)}
    return found.group(1), tokens


def _wait_exit(proc: subprocess.Popen[str], out: Lines, err: Lines, timeout: float = 120
               ) -> int:
    """Wait until a background command has exited and all it printed is read; on a time-out,
    say whether it is still running and what it last wrote to stderr."""
    try:
        wait_until(lambda: proc.poll() is not None and bool(out.lines) and out.lines[-1] == ""
                   and bool(err.lines) and err.lines[-1] == "", timeout, "a command to exit")
    except AssertionError as exc:
        state = "still running" if proc.poll() is None else f"exited {proc.returncode}"
        raise AssertionError(f"{exc} ({state}; its stderr ends):\n"
                             + "".join(list(err.lines)[-40:])) from None
    code = proc.returncode
    assert code is not None
    return code


def test_matches_by_hand_run_as_written(tmp_path: Path) -> None:
    """A match made by hand, as each page that shows one writes it: the server's ``bullring
    serve`` of docs/http.md, docs/operations.md and docs/bot-authors.md §3 (on free ports
    here) prints the three lines http.md shows; in the folder of bot-authors §2, §3's match
    with a token seat is played by ``careful.py`` to the line §3 shows and its replay
    verifies; §4's seat command plays another; operations.md's match, with each bracketed
    option given, is played by two ``bullring bot`` processes (one in the background) and
    its replay verifies; play-in-browser.md's match prints the lines it shows, a person's
    seat with its play link; the SDK README's ``bullring-bot`` plays a seat from the
    repository's folder."""
    home = {"HOME": str(tmp_path)}
    Shell(ROOT, env=home).run(block("docs/bot-authors.md", "mkdir -p ~/mybot")[0])
    folder = tmp_path / "mybot"
    [served] = block("docs/http.md", "bullring serve")
    rehearsal = block("docs/bot-authors.md", "bullring serve --port 50051 &")
    by_hand = block("docs/operations.md", "bullring serve --port 50051 &")
    assert [serve_options(c) for c in (served, rehearsal[0], by_hand[0])] == [[], [], []]
    server = doc_server(folder, served).start()
    shell = Shell(folder, env=home, words={"127.0.0.1:50051": server.address,
                                           "HOST:PORT": server.address})
    try:
        assert server.proc is not None and server.proc.stdout is not None
        check_shown(served, "\n".join([*server.banner, server.proc.stdout.readline()]), {})

        _, create, play, check = rehearsal
        output = shell.run(create, shown=False)
        match_id, tokens = _match_created(output)
        words = {"3f0c…": match_id, "br_…": tokens[0]}
        check_shown(create, output, words)
        shell.run(play, words=words)
        assert "1 replays checked, 1 verified, 0 failed" in shell.run(check, words=words)
        [seat] = block("docs/bot-authors.md",
                       "bullring-bot --server HOST:PORT --token TOKEN careful.py")
        match_id, tokens = _match_created(shell.run(create, shown=False))
        assert f"match {match_id} ended: totals [" in shell.run(seat, words={"TOKEN": tokens[0]})

        _, create, first, second, check = by_hand
        output = shell.run(options(create.text), words={"KEY=VALUE": "rounds=1", "S": "7"})
        match_id, tokens = _match_created(output)
        words = {"1f2e3d4c5b6a": match_id}
        check_shown(create, output, words)
        seat0 = shell.start(first, words={**words, "br_…": tokens[0]})
        shell.run(second, words={**words, "br_…": tokens[1]})
        assert _wait_exit(*seat0) == 0, seat0[2].text()
        assert re.search(rf"^match {match_id} ended: .*; you \(seat 0\)", seat0[1].text(), re.M)
        assert "1 replays checked, 1 verified, 0 failed" in shell.run(check, words=words)

        [person] = block("docs/play-in-browser.md", "bullring match create")
        output = shell.run(person, shown=False)
        match_id, tokens = _match_created(output)
        check_shown(person, output, {"0b6f3c1d2e4a": match_id})
        assert f"play: http://127.0.0.1:8080/play/{match_id}#{tokens[0]}" in output

        sdk = block("client_sdk/python/README.md", "pip install")[-1]
        match_id, tokens = _match_created(shell.run(rehearsal[1], shown=False))
        output = Shell(ROOT, words={"HOST:PORT": server.address, "TOKEN": tokens[0]}).run(sdk)
        assert f"match {match_id} ended: totals [" in output
    finally:
        shell.stop()
        server.stop()


def _ladder_line(output: str, bot: str) -> bool:
    """Whether the leaderboard ``output`` ranks ``bot``."""
    return re.search(rf"^\s*\d+\s+{re.escape(bot)}\s", output, re.M) is not None


def test_the_ladder_pages_commands_run_as_written(tmp_path: Path) -> None:
    """docs/ladder.md, each command as written in one folder: its ``bullring serve`` with
    house bots; ``bots add mybot`` prints a token; the ladder runner (the README's
    ``low_card.py``) plays rated matches with it; the leaderboard ranks mybot; ``matches
    --bot mybot --since 2h`` lists its match; ``replay export --all`` writes every replay,
    each verified. Over ``--server``: the leaderboard again and ``bots add herbot`` with the
    admin token. The challenge commands, with mybot's token and with bob's
    (``$BULLRING_TOKEN``): a practice match accepted at once, a challenge pending for bob,
    listed to bob, accepted; another declined with its reason, which ``show`` then reports
    (exit 1); auto-accept on. docs/bot-authors.md §4's ladder runner, with ``--matches 1``
    as its remark says, plays one match and exits 0."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [low_card] = re.findall(r"Save this as `low_card.py`:\n\n```python\n(.*?)```", readme, re.S)
    (tmp_path / "low_card.py").write_text(low_card, encoding="utf-8")
    shutil.copy(ROOT / "client_sdk" / "python" / "sdk" / "examples" / "careful.py", tmp_path)
    serve, add, play, board, listed, export = block("docs/ladder.md", "bullring serve")
    server = doc_server(tmp_path, serve).start()
    address = server.address
    shell = Shell(tmp_path, words={"127.0.0.1:50051": address, "HOST:PORT": address,
                                   "ladder.example.org:50051": address})
    try:
        output = shell.run(add)
        assert output.startswith("bot mybot registered"), output
        mybot = output.split()[-1]
        runner = shell.start(play, words={"bot_…": mybot})
        runner[1].wait(lambda lines: any(ENDED.match(line) for line in lines), 120,
                       "mybot's first ladder match")
        match_id = next(m.group(1) for line in runner[1].lines if (m := ENDED.match(line)))
        assert _ladder_line(shell.run(board), "mybot")
        assert re.search(rf"^{match_id}\s.*six_nimmt finished", shell.run(listed), re.M)
        output = shell.run(export)
        files = len(list((tmp_path / "replays").glob("*.json")))
        assert files and f"wrote {files} replays to replays" in output, output
        assert f"{files} replays checked, {files} verified, 0 failed" in output, output
        runner[0].send_signal(signal.SIGINT)  # Ctrl-C: the rest needs no match of mybot
        assert _wait_exit(*runner) == 130, runner[2].text()[-3000:]

        remote, added = block("docs/ladder.md", "bullring leaderboard --game six_nimmt --server")
        assert _ladder_line(shell.run(remote), "mybot")
        assert shell.run(added).startswith("bot herbot registered")

        practice, challenge, seen, accept, decline, auto, show = block(
            "docs/ladder.md", "bullring challenge create")
        bob = server.add_bot("bob")
        as_mybot, as_bob = {"BULLRING_TOKEN": mybot}, {"BULLRING_TOKEN": bob}
        assert re.fullmatch(r"challenge \w+ \(six_nimmt\): mybot against house:greedy, "
                            r"house:random: accepted\n", shell.run(practice, env=as_mybot))
        pending = shell.run(challenge, env=as_mybot)
        assert pending.endswith(": mybot against bob: pending; answers: bob pending\n")
        first = pending.split()[1]
        assert shell.run(seen, env=as_bob) == pending
        assert shell.run(accept, words={"CHALLENGE_ID": first}, env=as_bob).endswith(
            ": accepted; answers: bob accepted\n")
        second = shell.run(challenge, env=as_mybot).split()[1]
        said = "declined; answers: bob declined; declined by bob: not today\n"
        assert shell.run(decline, words={"CHALLENGE_ID": second}, env=as_bob).endswith(said)
        assert shell.run(auto, env=as_bob) == "auto-accept on\n"
        assert shell.run(show, status=1, words={"CHALLENGE_ID": second},
                         env=as_bob).endswith(said)

        [ladder] = block("docs/bot-authors.md",
                         "bullring-bot --server HOST:PORT --token TOKEN --ladder")
        assert "--matches N" in ladder.remark, ladder
        output = shell.run(f"{ladder.text} --matches 1",
                           words={"TOKEN": server.add_bot("careful")})
        assert len([line for line in output.splitlines() if ENDED.match(line)]) == 1, output
    finally:
        shell.stop()
        server.stop()


def _tournament_id(err: Lines) -> str:
    """The id a waiting ``bullring tournament`` says first (on standard error)."""
    said = re.compile(r"^tournament (\w+): \d+ games; waiting for its end")
    err.wait(lambda lines: any(said.match(line) for line in lines), 60, "the tournament's id")
    return next(m.group(1) for line in err.lines if (m := said.match(line)))


def test_live_tournament_commands_run_as_written(tmp_path: Path) -> None:
    """The live tournament commands as the README, docs/ladder.md and docs/tv.md write them,
    beside a ``bullring serve`` in the same folder (its admin token file there) with ann,
    bob, cy and dee on the 6 nimmt! ladder (``bullring bot --ladder six_nimmt
    house:greedy``, as the server says to connect a bot): the README's round-robin plays its
    10 games and prints every bot's standing; ladder.md's, with each bracketed option given
    (tables of 3, a pace of 1.5 s), says its id, ``--show`` prints it running and
    ``--cancel`` cancels it, upon which the waiting command exits 1 saying so; tv.md's
    paced final likewise."""
    server = doc_server(tmp_path, Command("docs/ladder.md", "bullring serve")).start()
    address = server.address
    bots = [LadderBot.start(name, address, server.add_bot(name), "six_nimmt", "house:greedy")
            for name in ("ann", "bob", "cy", "dee")]
    shell = Shell(tmp_path, words={"127.0.0.1:50051": address, "HOST:PORT": address,
                                   "ADMIN_TOKEN": server.first_admin_token()})
    try:
        for bot in bots:
            bot.err.wait(lambda lines: any("waiting on the six_nimmt ladder" in line
                                           for line in lines), 60, f"{bot.name} to join")
        [final] = block("README.md", ".venv/bin/bullring tournament")
        output = shell.run(final)
        assert re.search(r"round-robin tournament \w+: finished, 10 of 10 games played, "
                         r"tables of 4", output), output
        assert all(re.search(rf"^{name}\s+10\s", output, re.M)
                   for name in ("ann", "bob", "cy", "dee")), output

        paced, show, cancel = block("docs/ladder.md", "bullring tournament")
        [tv] = block("docs/tv.md", "bullring tournament")
        for create in (options(paced.text), tv.text):
            waiting = shell.start(create)
            tournament = {"TOURNAMENT_ID": _tournament_id(waiting[2])}
            if create != tv.text:
                assert re.search(r"tournament \w+: running, \d+ of 40 games played, tables "
                                 r"of 3", shell.run(show, words=tournament))
            assert "cancelled after" in shell.run(cancel, words=tournament)
            assert _wait_exit(*waiting) == 1, waiting[2].text()
            assert ": cancelled, " in waiting[1].text()
    finally:
        shell.stop()
        for bot in bots:
            bot.stop()
        server.stop()


def test_local_commands_run_as_written() -> None:
    """The local arena and tournament commands, from the repository's folder as written:
    docs/arena.md's careful bot against house bots, the SDK README's ``bullring-arena`` and
    duplicate ``bullring-tournament``, each listing every bot with every game; and
    docs/envs.md's arena run of the trained policy prints the very table the page shows."""
    shell = Shell(ROOT)
    careful = "client_sdk/python/sdk/examples/careful.py:Careful"
    [arena] = block("docs/arena.md", "bullring arena --game six_nimmt")
    output = shell.run(arena)
    assert all(re.search(rf"^{re.escape(bot)}\s+500\s", output, re.M)
               for bot in (careful, "greedy", "random")), output
    _, sdk_arena, sdk_tournament, _ = block("client_sdk/python/README.md", "pip install")
    output = shell.run(sdk_arena)
    assert all(re.search(rf"^{re.escape(bot)}\s+200\s", output, re.M)
               for bot in (careful, "greedy", "random")), output
    output = shell.run(sdk_tournament)
    assert "duplicate tournament" in output and all(
        re.search(rf"^{re.escape(bot)}\s+200\s", output, re.M) for bot in (careful, "greedy"))

    page = (DOCS / "envs.md").read_text(encoding="utf-8")
    [table] = re.findall(r"The arena's table of the first command.*?\n```\n(.*?)```", page, re.S)
    policy = block("docs/envs.md", "bullring arena")[0]
    assert table in shell.run(policy)


def test_the_training_command_gives_the_saved_weights(tmp_path: Path) -> None:
    """docs/envs.md's training command, run as written in a folder that holds the example
    (so the repository's saved copy is left alone), trains on the games the page says and
    saves exactly the weights of the saved copy: same seed, same weights."""
    examples = tmp_path / "client_sdk" / "python" / "sdk" / "examples"
    examples.mkdir(parents=True)
    saved = ROOT / "client_sdk" / "python" / "sdk" / "examples" / "linear_policy.json"
    shutil.copy(saved.with_suffix(".py"), examples)
    [train] = block("docs/envs.md", "python client_sdk/python/sdk/examples/linear_policy.py")
    output = Shell(tmp_path).run(train, timeout=600)
    assert "trained on 4608 games" in output, output
    assert "It plays 4,608 games" in (DOCS / "envs.md").read_text(encoding="utf-8")
    made = json.loads((examples / "linear_policy.json").read_text(encoding="utf-8"))
    kept = json.loads(saved.read_text(encoding="utf-8"))
    for weights in (made, kept):
        del weights["trained"]["seconds"]
    assert made == kept


def _files(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file()}


def test_the_kits_copy_commands_run_as_written(tmp_path: Path) -> None:
    """Each kit README's ``cp -r client_sdk/KIT ~/mybot && cp -r proto ~/mybot/``, run from
    the repository's folder as written, makes the folder the kit's tests build
    (``tests/kits.py``: the kit with the contract in ``proto/``)."""
    for kit, page in KIT_PAGES.items():
        [copy] = block(page, "cp -r client_sdk/")
        home = tmp_path / kit
        home.mkdir()
        Shell(ROOT, env={"HOME": str(home)}).run(copy)
        built = Kit(kit, (), frozenset()).copy_out(tmp_path / f"{kit}-tests")
        made = _files(home / "mybot")
        assert "proto/bullring/v2/referee.proto" in made and "README.md" in made, made
        assert _files(built) <= made, _files(built) - made


def _usage_options(argv: list[str]) -> set[str]:
    """The options a command's ``--help`` usage names."""
    done = subprocess.run([*CLI, *argv, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    usage = done.stdout.split("\n\n", 1)[0]
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", usage)) - {"--help", "--version"}


def test_synopses_name_the_options_the_commands_take() -> None:
    """The synopses (a command with its options in brackets) of docs/arena.md and
    docs/operations.md name only options their command takes, and every one it takes:
    ``bullring serve`` and ``bullring arena`` in theirs; ``bullring tournament`` in
    arena.md's (local) with docs/ladder.md's live tournament commands."""
    def named(page: str, first: str) -> set[str]:
        return {option for command in block(page, first)
                for option in re.findall(r"(?<![\w-])--[a-z][a-z-]*", command.text)}

    assert named("docs/operations.md", "bullring serve [") == _usage_options(["serve"])
    assert named("docs/arena.md", "bullring arena --game GAME") == _usage_options(["arena"])
    live = named("docs/ladder.md", "bullring tournament") | {"--db", "--detach"}
    assert "--db URL` instead of `--server`" in (DOCS / "ladder.md").read_text(encoding="utf-8")
    assert named("docs/arena.md", "bullring tournament --game GAME") | live == _usage_options(
        ["tournament"])
