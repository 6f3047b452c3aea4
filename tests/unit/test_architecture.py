"""docs/architecture.md stays true: every module it names exists, every folder it lists is
there and installs as the module it says, and the path of one decision it tells follows real
imports, module to module."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
MODULE = re.compile(r"`(bullring(?:\.\w+)+)`")
FOLDER_ROW = re.compile(r"^\| `([\w/<>.-]+/)` \| (?:`(bullring[\w.]*)`)? *\|", re.M)


def _section(title: str) -> str:
    start = PAGE.index(f"## {title}")
    end = PAGE.find("\n## ", start + 1)
    return PAGE[start:] if end < 0 else PAGE[start:end]


@pytest.mark.parametrize("name", sorted(set(MODULE.findall(PAGE))))
def test_every_module_the_page_names_exists(name: str) -> None:
    """A module the page cites imports (or is an attribute of the module before it)."""
    try:
        importlib.import_module(name)
    except ModuleNotFoundError:
        parent, _, attribute = name.rpartition(".")
        assert hasattr(importlib.import_module(parent), attribute), name


def test_every_folder_the_page_lists_is_the_module_it_names() -> None:
    """Each folder of the table exists, and the module beside it is loaded from there."""
    rows = FOLDER_ROW.findall(PAGE)
    assert len(rows) >= 10
    for folder, module in rows:
        if "<" in folder:
            continue
        assert (ROOT / folder).is_dir(), folder
        if module:
            loaded = Path(importlib.import_module(module).__file__ or "").resolve().parent
            assert loaded == (ROOT / folder).resolve(), (folder, module, loaded)


def test_the_path_of_one_decision_follows_real_imports() -> None:
    """Over gRPC and over HTTP, each module the path names is reached from one named before
    it: one imports the other (directly or through others), as the page tells it."""
    graph = grimp.build_graph("bullring")
    names = [n for n in MODULE.findall(_section("The path of one decision")) if n in graph.modules]
    assert len(names) >= 8, names
    for i, there in enumerate(names[1:], start=1):
        linked = [here for here in names[:i] if here != there and (
            graph.find_shortest_chain(importer=here, imported=there)
            or graph.find_shortest_chain(importer=there, imported=here))]
        assert linked, f"{there} is linked by imports to none of {names[:i]}"
