"""``kind: List`` flattening, the one place that expands a manifest document into objects.

What this module owns: what counts as a list document (``kind: List``, or any ``...List``
kind with ``items``, as kubectl reads them), the paths of the items (``documents[1].items[0]``,
``items[2].items[0]`` for a List inside a List), and refusing a document whose expansion
would pass ``MAX_ITEMS`` *before* expanding it: the size is computed once per distinct
sub-document (YAML aliases share them), so a small file describing a huge List is refused
in time proportional to the file. It does not decode the items (``emulator.base.api.codec``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from emulator.base.inputs.errors import InputError, join_path

__all__ = ["MAX_ITEMS", "flatten_list", "is_list"]

MAX_ITEMS: Final = 1_000_000
"""The most objects one document may expand to."""

ErrorFactory = Callable[[str, str, str], Exception]
"""``(file, path, detail) -> exception``: the caller's own ``InputError`` subclass."""


def is_list(doc: Any) -> bool:
    """A list document: ``kind: List``, or a ``...List`` kind that has ``items``."""
    if not isinstance(doc, dict):
        return False
    kind = doc.get("kind")
    return kind == "List" or (isinstance(kind, str) and kind.endswith("List") and "items" in doc)


def _size(doc: Any, memo: dict[int, int]) -> int:
    if not is_list(doc):
        return 1
    known = memo.get(id(doc))
    if known is not None:
        return known
    items = doc.get("items")
    total = sum(_size(item, memo) for item in items) if isinstance(items, list) else 1
    memo[id(doc)] = total
    return total


def flatten_list(
    doc: Any, *, source: str, path: str = "", limit: int = MAX_ITEMS, error: ErrorFactory = InputError
) -> list[tuple[str, Any]]:
    """``(path, object)`` of every object in ``doc``: a list document's items (recursively),
    else ``doc`` itself. Errors (``items`` not a list, too many items) are ``error(source,
    path, detail)``."""
    size = _size(doc, {})
    if size > limit:
        detail = f"the List expands to {size} objects; at most {limit} are allowed"
        raise error(source, join_path(path, "items"), detail)
    out: list[tuple[str, Any]] = []
    stack: list[tuple[str, Any]] = [(path, doc)]
    while stack:
        at, item = stack.pop()
        if not is_list(item):
            out.append((at, item))
            continue
        items = item.get("items")
        if not isinstance(items, list):
            raise error(source, join_path(at, "items"), "expected a list of objects")
        stack.extend((join_path(join_path(at, "items"), i), sub) for i, sub in reversed(list(enumerate(items))))
    return out
