"""The docs stay true and self-contained: every path a file of the project names is inside
the repository, the docs speak of the project (not of how it was built), and the replay
format page lists exactly the fields the engines write."""

from __future__ import annotations

import json
import os
import re
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
            cap = str(getattr(caps, setting.name)) if setting.name in caps.names() else ""
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
