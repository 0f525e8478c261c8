"""No import cycle in ``emulator/`` or ``agents/``, function-local imports included.

import-linter checks the layers but not a cycle inside one layer, and it cannot see an import
written inside a function, the usual way a cycle gets hidden. This test reads every module's
AST: every ``import`` / ``from ... import`` anywhere in the module (function bodies too) is an
edge, except those under ``if TYPE_CHECKING:`` (never executed). ``from pkg import name``
points at ``pkg.name`` when that is a module of ours, else at ``pkg``. Importing ``a.b.c`` also
runs the ``__init__`` of ``a`` and ``a.b``; those implicit edges are left out, as import-linter
leaves them out (a package's ``__init__`` re-exporting its submodules is not a cycle).

Lazy imports for start-up speed are fine; only a cycle is forbidden. Each strongly connected
component of more than one module is reported with its modules and the edges inside it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("emulator", "agents")


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, skipping the bodies of ``if TYPE_CHECKING:`` (not their else)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def import_graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """Our modules and, for each, the modules of ours it imports."""
    files = {_module_name(p, root): p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in _imports(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _resolve(node, module, is_package)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in files else base)
            for target in targets:
                if target in files and target != module:
                    graph[module].add(target)
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _describe(component: list[str], graph: Mapping[str, set[str]]) -> str:
    members = set(component)
    edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in members]
    return f"cycle among {', '.join(component)}: " + "; ".join(edges)


def test_no_import_cycle() -> None:
    graph = import_graph()
    found = cycles(graph)
    assert not found, "\n".join(_describe(c, graph) for c in found)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {"p/__init__.py": "", "p/a.py": "import p.b\n", "p/b.py": "def f():\n    from p import a\n"},
            [["p.a", "p.b"]],
            id="function-local-import-closes-a-cycle",
        ),
        pytest.param(
            {"p/__init__.py": "", "p/a.py": "from .b import x\n", "p/b.py": "from . import a\n"},
            [["p.a", "p.b"]],
            id="relative-imports",
        ),
        pytest.param(
            {
                "p/__init__.py": "",
                "p/a.py": "from p.b import x\n",
                "p/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.a import y\n",
            },
            [],
            id="type-checking-only-import-is-no-edge",
        ),
        pytest.param(
            {"p/__init__.py": "from p.a import x\n", "p/a.py": "from p.b import y\n", "p/b.py": "x = 1\n"},
            [],
            id="package-init-reexport-is-no-cycle",
        ),
        pytest.param(
            {
                "p/__init__.py": "",
                "p/a.py": "import p.b\n",
                "p/b.py": "import p.c\n",
                "p/c.py": "def f():\n    import p.a\n",
            },
            [["p.a", "p.b", "p.c"]],
            id="three-module-cycle",
        ),
    ],
)
def test_cycle_finder(tmp_path: Path, files: dict[str, str], expected: list[list[str]]) -> None:
    assert cycles(import_graph(_tree(tmp_path, files), ("p",))) == expected
