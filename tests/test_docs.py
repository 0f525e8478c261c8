"""The docs name code that exists: every "`path.py` `name`" pair of ``docs/life-of-a-pod.md``
is defined in that file, and every ``emulator/...`` or ``agents/...`` path written in the docs,
the README or a docstring is a file or folder of the tree. A move or a rename that leaves the
map behind fails here, naming the stale reference."""

from __future__ import annotations

import ast
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAIR = re.compile(r"`([\w./-]+\.py)`\s+`([A-Za-z_][\w.]*)`")
PATH = re.compile(r"(?<![\w/.])((?:emulator|agents)/[\w./-]*\w)")


@cache
def _tree(path: str) -> ast.Module | None:
    file = ROOT / path
    return ast.parse(file.read_text(encoding="utf-8")) if file.is_file() else None


def _bound(node: ast.AST) -> list[str]:
    """Names an assignment binds: plain names and ``self.x``."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    names = []
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                names.append(sub.id)
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
                names.append(sub.attr)
    return names


def _defines(tree: ast.Module, name: str) -> bool:
    """``name`` (or ``Class.member``) is defined in ``tree``."""
    if "." not in name:
        return any(
            (isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == name)
            or name in _bound(n)
            for n in ast.walk(tree)
        )
    cls, member = name.split(".", 1)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in ast.walk(node):
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and item.name == member:
                    return True
                if member in _bound(item):
                    return True
    return False


def _pairs() -> list[tuple[str, str]]:
    return sorted(set(PAIR.findall((ROOT / "docs" / "life-of-a-pod.md").read_text(encoding="utf-8"))))


def test_life_of_a_pod_names_many_stops() -> None:
    assert len(_pairs()) > 100


@pytest.mark.parametrize(("path", "name"), _pairs())
def test_life_of_a_pod_reference_exists(path: str, name: str) -> None:
    tree = _tree(path)
    assert tree is not None, f"docs/life-of-a-pod.md: {path}: no such file"
    assert _defines(tree, name), f"docs/life-of-a-pod.md: {path} defines no `{name}`"


def test_every_written_path_exists() -> None:
    listed = subprocess.run(
        ["git", "ls-files", "*.md", "*.py", "*.toml"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    stale = [
        f"{page}: {path}"
        for page in listed
        for path in sorted(set(PATH.findall((ROOT / page).read_text(encoding="utf-8"))))
        if not (ROOT / path).exists() and not (ROOT / f"{path}.py").exists()
    ]
    assert stale == []


def test_the_checks_catch_a_stale_reference() -> None:
    tree = _tree("emulator/base/apiserver/store.py")
    assert tree is not None
    assert _defines(tree, "Store._commit")
    assert not _defines(tree, "Store.no_such_method")
    assert not _defines(tree, "ApiServer")
    assert _tree(str(Path("emulator", "trace.py"))) is None  # the path written so that the page scan skips it
