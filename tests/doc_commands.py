"""The shell commands the documentation shows, read from its Markdown, and a way to run them
as written: with sh, in a folder of their own, the placeholders a page writes (``HOST:PORT``,
``TOKEN``, a match id such as ``3f0c…``) replaced by this run's values.

In a page's ``sh`` block a command is a line (a trailing ``\\`` joins the next); a comment
after two spaces on it is a remark; a whole line of comment under it is what it prints, with
``…`` for what is left out (``shown``)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.ladder_helpers import LadderServer, Lines
from tests.serving import CLI

ROOT = Path(__file__).resolve().parent.parent
BIN = f"{Path(sys.executable).parent}/"
"""Where this interpreter's commands are: the README's ``.venv/bin/``."""

SHELL_BLOCK = re.compile(r"```(?:sh|bash|shell)\n(.*?)```", re.S)
NUMBER = r"-?\d+"


def pages() -> list[str]:
    """Every page that shows commands, relative to the repository: the README, docs/ and
    the starter kits' READMEs."""
    found = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "client_sdk").glob("*/README.md"))]
    return [str(page.relative_to(ROOT)) for page in found]


@dataclass(frozen=True)
class Command:
    """One command of a page, as written (without its remark), and what the page shows it
    prints."""

    page: str
    text: str
    remark: str = ""
    """The comment after the command, on its line."""
    shown: tuple[str, ...] = ()


def blocks(page: str) -> list[list[Command]]:
    """The commands of each ``sh`` block of ``page``, in order."""
    text = (ROOT / page).read_text(encoding="utf-8")
    found = []
    for body in SHELL_BLOCK.findall(text):
        commands: list[Command] = []
        for line in re.sub(r"\\\n\s*", " ", body).splitlines():
            stripped = line.strip()
            if not stripped:
                continue
            if stripped.startswith("#"):
                if commands:  # what the command above prints
                    said = stripped.lstrip("#").strip()
                    last = commands[-1]
                    commands[-1] = Command(page, last.text, last.remark, (*last.shown, said))
                continue
            command, _, remark = line.partition("  #")
            commands.append(Command(page, command.strip(), remark.strip()))
        found.append(commands)
    return found


def block(page: str, first: str) -> list[Command]:
    """The one ``sh`` block of ``page`` whose first command starts with ``first``."""
    found = [b for b in blocks(page) if b and b[0].text.startswith(first)]
    assert len(found) == 1, f"{page} has {len(found)} sh blocks starting with `{first}`"
    return found[0]


def shown_pattern(line: str, words: dict[str, str]) -> re.Pattern[str]:
    """A pattern for a line a page shows a command printing: ``words`` (placeholders such as
    a match id) stand for their values, ``…`` for anything, and every other number for any
    number (a score, a port)."""
    keys = sorted(words, key=len, reverse=True)
    pieces = re.split("(" + "|".join([*(re.escape(k) for k in keys), "…", r"\b\d+\b"]) + ")",
                      line)
    pattern = ""
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            pattern += re.escape(piece)
        elif piece in words:
            pattern += re.escape(words[piece])
        elif piece == "…":
            pattern += ".+?"
        else:
            pattern += NUMBER
    return re.compile(pattern)


def check_shown(command: Command, output: str, words: dict[str, str]) -> None:
    """Every line the page shows ``command`` printing (but a lone ``…``) is a line of
    ``output``."""
    lines = output.splitlines()
    for said in command.shown:
        if said == "…":
            continue
        pattern = shown_pattern(said, words)
        assert any(pattern.fullmatch(line.strip()) for line in lines), (
            f"{command.page}: `{command.text}` shows {said!r}, not in its output:\n{output}")


def options(line: str) -> str:
    """``line`` with every optional part written ``[--option VALUE]`` given: the brackets
    dropped."""
    return re.sub(r"\[(--[^\[\]]*)\]", r"\1", line)


@dataclass
class Shell:
    """Runs commands as written with ``sh -c``, in ``cwd``, with this interpreter's commands
    first on PATH (the README's ``.venv/bin/`` is its folder) and the placeholders of
    ``words`` replaced by their values."""

    cwd: Path
    words: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    background: list[subprocess.Popen[str]] = field(default_factory=list)

    def line(self, command: str, words: dict[str, str] | None = None) -> str:
        """``command`` with its placeholders replaced (``words`` over this shell's own)."""
        every = {".venv/bin/": BIN, **self.words, **(words or {})}
        keys = sorted(every, key=len, reverse=True)
        pattern = "|".join(rf"(?<![\w$]){re.escape(k)}" + (r"(?!\w)" if k[-1].isalnum() else "")
                           for k in keys)
        return re.sub(pattern, lambda m: every[m.group(0)], command)

    def environ(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The commands' environment."""
        path = f"{BIN.rstrip('/')}{os.pathsep}{os.environ.get('PATH', '')}"
        return {**os.environ, "PATH": path, "PYTHONUNBUFFERED": "1", **self.env,
                **(extra or {})}

    def run(self, command: Command | str, status: int = 0, words: dict[str, str] | None = None,
            env: dict[str, str] | None = None, shown: bool = True, timeout: float = 300) -> str:
        """Run ``command``; assert it exits ``status``; its standard output and error (with
        ``shown``, the page's ``shown`` lines must be among them, placeholders replaced:
        ``check_shown``)."""
        text = command.text if isinstance(command, Command) else command
        line = self.line(text, words)
        done = subprocess.run(["sh", "-c", line], cwd=self.cwd, capture_output=True,
                              text=True, timeout=timeout, env=self.environ(env))
        output = done.stdout + done.stderr
        assert done.returncode == status, (
            f"`{text}` (run as `{line}`) exited {done.returncode}, not {status}:\n{output}")
        if shown and isinstance(command, Command):
            check_shown(command, output, {**self.words, **(words or {})})
        return output

    def start(self, command: Command | str, words: dict[str, str] | None = None,
              env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], Lines, Lines]:
        """Start ``command`` (a trailing ``&`` dropped) and follow what it prints: the
        process, its standard output and its standard error."""
        text = command.text if isinstance(command, Command) else command
        line = self.line(text.removesuffix("&").strip(), words)
        proc = subprocess.Popen(["sh", "-c", f"exec {line}"], cwd=self.cwd, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=self.environ(env))
        self.background.append(proc)
        assert proc.stdout is not None and proc.stderr is not None
        return proc, Lines(proc.stdout), Lines(proc.stderr)

    def stop(self) -> None:
        """Stop every command started in the background that still runs."""
        for proc in self.background:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def serve_options(command: Command) -> list[str]:
    """The options of a page's ``bullring serve`` line but its ports (a test's server takes
    free ones) and a trailing ``&``."""
    words = shlex.split(command.text.removesuffix("&").replace(".venv/bin/", ""))
    assert words[:2] == ["bullring", "serve"], command
    kept: list[str] = []
    rest = iter(words[2:])
    for word in rest:
        if word in ("--port", "--http-port"):
            next(rest)
        elif not word.startswith(("--port=", "--http-port=")):
            kept.append(word)
    return kept


@dataclass
class DocServer(LadderServer):
    """``bullring serve`` as a page writes it (``args``), run in ``cwd`` on free ports and
    the default database there (``bullring.db``, no ``--db``), its log followed."""

    args: list[str] = field(default_factory=list)

    def command(self) -> list[str]:
        """``bullring serve`` with the page's options, on free ports."""
        assert self.cwd is not None
        self.admin_file = self.cwd / "bullring-admin-token"
        return [*CLI, "serve", *self.args, "--port", "0", "--http-port", "0"]


def doc_server(folder: Path, command: Command) -> DocServer:
    """A page's ``bullring serve`` line started in ``folder``."""
    return DocServer(f"sqlite:///{folder / 'bullring.db'}", cwd=folder,
                     args=serve_options(command))
