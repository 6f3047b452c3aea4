"""scripts/check-protos: buf lint is clean, and buf breaking catches a wire break on main.

buf comes from npm (tools/buf). Without it these tests skip on a developer's machine and
fail under CI=true (where .ci/run installs it by running the script first).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check-protos"
BUF = ROOT / "tools" / "buf" / "node_modules" / ".bin" / "buf"
PROTO = Path("proto") / "bullring" / "v2" / "referee.proto"


@pytest.fixture(autouse=True)
def _buf() -> None:
    if not BUF.exists():
        why = "buf is not installed: run `npm ci --prefix tools/buf` (or scripts/check-protos)"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh git repository on ``main`` holding a copy of the proto checks, one commit."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "tools").mkdir()
    shutil.copy(ROOT / "buf.yaml", repo / "buf.yaml")
    shutil.copytree(ROOT / "proto", repo / "proto")
    shutil.copy(SCRIPT, repo / "scripts" / "check-protos")
    (repo / "tools" / "buf").symlink_to(ROOT / "tools" / "buf")
    (repo / ".gitignore").write_text("tools/\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    return repo


def _check(repo: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(repo / "scripts" / "check-protos")], cwd=repo, text=True,
                          capture_output=True, env={**os.environ, **env})


def _edit_and_commit(repo: Path, old: str, new: str) -> None:
    path = repo / PROTO
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    _git(repo, "commit", "-q", "-am", "change")


def test_the_repository_protos_pass_lint_and_breaking() -> None:
    """The committed proto is lint-clean (STANDARD + COMMENTS) and does not break its base."""
    result = subprocess.run([str(SCRIPT)], cwd=ROOT, text=True, capture_output=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "lint (STANDARD, COMMENTS)" in result.stdout


def test_a_changed_field_type_on_main_fails_against_the_previous_commit(repo: Path) -> None:
    """On main (CI's clean clone) the base is HEAD^: changing a field's type fails the check."""
    _edit_and_commit(repo, "int32 time_left_ms = 4;", "int64 time_left_ms = 4;")
    result = _check(repo)
    assert result.returncode != 0
    assert "against HEAD^" in result.stdout
    assert 'changed type from "int32" to "int64"' in result.stdout + result.stderr


def test_an_added_field_is_compatible(repo: Path) -> None:
    """Adding a commented field is neither a lint finding nor a breaking change."""
    _edit_and_commit(repo, "  int32 time_left_ms = 4;\n",
                     "  int32 time_left_ms = 4;\n  // A new field.\n  int32 extra = 100;\n")
    result = _check(repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "check-protos: ok" in result.stdout


def test_an_uncommented_message_fails_lint(repo: Path) -> None:
    """The COMMENTS rules hold: a message without a comment is a lint finding."""
    (repo / PROTO).write_text((repo / PROTO).read_text() + "\nmessage Bare {}\n")
    result = _check(repo)
    assert result.returncode != 0
    assert 'Message "Bare" should have a non-empty comment' in result.stdout + result.stderr


def test_a_feature_branch_is_compared_with_its_merge_base(repo: Path) -> None:
    """On a branch other than main the base is the merge base with main, so a break made
    two commits back on the branch is still caught; BUF_AGAINST overrides the base."""
    _git(repo, "checkout", "-q", "-b", "feature")
    _edit_and_commit(repo, "string decision_id = 1;\n  // The kind", "string decision = 1;\n"
                     "  // The kind")
    _edit_and_commit(repo, "// The kind of decision.", "// The kind of this decision.")
    result = _check(repo)
    assert result.returncode != 0
    assert "against the merge base with main" in result.stdout
    assert "decision_id" in result.stdout + result.stderr
    assert _check(repo, BUF_AGAINST="HEAD^").returncode == 0
