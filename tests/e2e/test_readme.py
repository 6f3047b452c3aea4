"""The README's "A first bot in five minutes" runs as written, in a folder of its own: the bot
saved as ``low_card.py``, its arena run, the server of the first command (on free ports: the
suite runs beside other servers), the bot registered and put on the ladder, a practice run
beside it, and the leaderboard. Only ``.venv/bin/`` becomes this interpreter's folder, the
address the server's and ``TOKEN`` the token ``bots add`` printed."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.ladder_helpers import Lines
from tests.serving import ServerProcess, db_url

README = Path(__file__).resolve().parents[2] / "README.md"
BIN = f"{Path(sys.executable).parent}/"
"""Where this interpreter's commands are: the README's ``.venv/bin/``."""


def _section(text: str, heading: str) -> str:
    """The README's ``## heading`` section."""
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def _blocks(section: str, language: str) -> list[str]:
    """The fenced ``language`` blocks of ``section``, in order."""
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)


def _lines(block: str) -> list[str]:
    """A shell block's commands: comments dropped, continuations joined."""
    joined = block.replace("\\\n", " ")
    return [line.split("  #")[0].strip() for line in joined.splitlines() if line.strip()]


def test_the_readmes_first_bot_runs_as_written(tmp_path: Path) -> None:
    """Every command of the section, in order, as the README gives it: the arena plays
    LowCard; ``bots add`` prints a token; the ladder runner plays rated matches with it; the
    practice run plays its match beside the runner and exits 0, the runner playing on; the
    leaderboard lists the bot."""
    text = README.read_text(encoding="utf-8")
    [install] = _lines(_blocks(_section(text, "Two commands"), "sh")[0])
    serve = shlex.split(install.split(" && ")[-1])
    assert serve[:2] == [".venv/bin/bullring", "serve"], serve
    section = _section(text, "A first bot in five minutes")
    [bot] = _blocks(section, "python")
    (tmp_path / "low_card.py").write_text(bot, encoding="utf-8")
    [arena], [add, ladder, leaderboard], [practice] = (_lines(b) for b in _blocks(section, "sh"))

    def argv(line: str, address: str = "", token: str = "") -> list[str]:
        words = shlex.split(line.replace(".venv/bin/", BIN))
        return [address if w == "127.0.0.1:50051" else token if w == "TOKEN" else w
                for w in words]

    def run(line: str, address: str = "", token: str = "") -> str:
        done = subprocess.run(argv(line, address, token), cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        return done.stdout

    table = run(arena)
    assert "low_card.py:LowCard" in table, table

    server = ServerProcess(db_url(tmp_path), serve[2:]).start()
    runner: subprocess.Popen[str] | None = None
    try:
        added = run(add).strip().splitlines()
        assert added[0].startswith("bot lowcard registered"), added
        token = added[-1]
        runner = subprocess.Popen(argv(ladder, server.address, token), cwd=tmp_path,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert runner.stdout is not None and runner.stderr is not None
        played = Lines(runner.stdout)
        said = Lines(runner.stderr)  # read, so a full pipe never stops it
        played.wait(lambda lines: any(" ended: " in ln for ln in lines), 120,
                    "the ladder runner's first match")

        practised = run(practice, server.address, token)
        assert "practice match asked for" in practised and " ended: " in practised, practised
        assert runner.poll() is None, "".join(said.lines[-20:])
        before = sum(" ended: " in ln for ln in played.lines)
        played.wait(lambda lines: sum(" ended: " in ln for ln in lines) > before, 120,
                    "the runner's next match after the practice run")

        board = run(leaderboard, server.address)
        assert re.search(r"^\s*\d+\s+lowcard\s", board, flags=re.M), board
    finally:
        if runner is not None:
            runner.terminate()
            runner.wait(timeout=30)
        server.stop()
