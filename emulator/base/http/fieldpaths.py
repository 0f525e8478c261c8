"""FieldsV1 paths: their steps, their text and tree forms, and finding and removing them in an object.

Owns: the ``Path`` steps (``f:`` field, ``k:`` list-map item by its keys, ``v:`` set item by
value), ``path_string`` (upstream's ``fieldpath.Path.String()``), ``fields_v1``/``decode_tree``
(a path set to and from the ``fieldsV1`` tree) and ``remove_all``. Does not own which paths a
manager owns (``apply``). Lookups index each list once (by key step), so work is linear in the
object, never a scan per item.
"""

from __future__ import annotations

import json
from typing import Any, Final

from emulator.base.http.budget import spend

__all__ = ["Path", "decode_tree", "fields_v1", "key_step", "path_string", "remove_all", "value_step"]

Path = tuple[str, ...]
"""A field path as ``FieldsV1`` spells its steps: ``("f:spec", "k:{\\"name\\":\\"c\\"}", "f:image")``."""

_KEY_DEFAULTS: Final = {"protocol": "TCP"}
"""Key fields with an OpenAPI default, which structured-merge-diff fills in when an item lacks them."""


def key_step(item: dict[str, Any], keys: tuple[str, ...]) -> str:
    present = {k: item[k] if k in item else _KEY_DEFAULTS[k] for k in sorted(keys) if k in item or k in _KEY_DEFAULTS}
    return "k:" + json.dumps(present, separators=(",", ":"), sort_keys=True)


def value_step(value: Any) -> str:
    return "v:" + json.dumps(value, separators=(",", ":"), sort_keys=True)


def path_string(path: Path) -> str:
    """Upstream's ``fieldpath.Path.String()``: ``.spec.containers[name="c"].image``."""
    out = []
    for step in path:
        tag, text = step[:1], step[2:]
        if tag == "f":
            out.append(f".{text}")
        elif tag == "k":
            keys = json.loads(text)
            out.append("[" + ",".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in keys.items()) + "]")
        elif tag == "v":
            out.append(f"[={text}]")
        else:
            out.append(f"[{text}]")
    return "".join(out)


def fields_v1(paths: set[Path]) -> dict[str, Any]:
    """A set of paths as the ``fieldsV1`` tree (``.`` marks a member that also has children)."""
    tree: dict[str, Any] = {}
    members: set[Path] = set()
    for path in paths:
        node = tree
        for step in path:
            node = node.setdefault(step, {})
        members.add(path)

    def render(node: dict[str, Any], prefix: Path) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if node and prefix in members:
            out["."] = {}
        for step in sorted(node):
            out[step] = render(node[step], (*prefix, step))
        return out

    return render(tree, ())


def remove_all(obj: dict[str, Any], paths: set[Path]) -> None:
    """Remove ``paths`` from ``obj``, shallowest first. List items are found through an index
    built once per list and dropped in one pass per list at the end: linear, not a scan each."""
    index = _ItemIndex()
    doomed: dict[int, tuple[list[Any], set[int]]] = {}
    for path in sorted(paths, key=len):
        spend(len(path))
        node: Any = obj
        for step in path[:-1]:
            node = index.first(node, step)
            if node is None:
                break
        else:
            last = path[-1]
            if isinstance(node, dict) and last.startswith("f:"):
                node.pop(last[2:], None)
            elif isinstance(node, list):
                gone = doomed.setdefault(id(node), (node, set()))[1]
                gone.update(id(item) for item in index.matches(node, last))
    for node, gone in doomed.values():
        node[:] = [item for item in node if id(item) not in gone]


class _ItemIndex:
    """List items by ``k:`` step (every key equal) or ``v:`` step (the whole value)."""

    def __init__(self) -> None:
        self._by: dict[tuple[int, tuple[str, ...] | None], dict[Any, list[Any]]] = {}

    def matches(self, node: list[Any], step: str) -> list[Any]:
        if step.startswith("k:"):
            keys = json.loads(step[2:])
            names = tuple(keys)
            return self._table(node, names).get(tuple(_canonical(keys[k]) for k in names), [])
        if step.startswith("v:"):
            return self._table(node, None).get(step, [])
        return []

    def first(self, node: Any, step: str) -> Any:
        if step.startswith("f:"):
            return node.get(step[2:]) if isinstance(node, dict) else None
        found = self.matches(node, step) if isinstance(node, list) else []
        return found[0] if found else None

    def _table(self, node: list[Any], names: tuple[str, ...] | None) -> dict[Any, list[Any]]:
        table = self._by.get((id(node), names))
        if table is None:
            table = {}
            for item in node:
                if names is None:
                    table.setdefault(value_step(item), []).append(item)
                elif isinstance(item, dict):
                    table.setdefault(tuple(_canonical(item.get(k)) for k in names), []).append(item)
            self._by[(id(node), names)] = table
        return table


def _canonical(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def decode_tree(tree: Any, prefix: Path) -> set[Path]:
    """The paths of a ``fieldsV1`` tree (the inverse of ``fields_v1``)."""
    out: set[Path] = set()
    if not isinstance(tree, dict):
        return out
    for step, child in tree.items():
        if step == ".":
            out.add(prefix)
        elif isinstance(child, dict) and child:
            out |= decode_tree(child, (*prefix, step))
        else:
            out.add((*prefix, step))
    return out
