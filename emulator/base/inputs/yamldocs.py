"""YAML text to Python documents, refusing what would blow up later, keeping where nodes are.

What this module owns: the one YAML loader of the project (``YamlLoader``: libyaml's safe
loader when available) and ``load_documents``, which returns the non-empty documents of a
text with their root nodes so that an error path can be turned into ``line:column``
(``YamlDocuments.locate``). It refuses, as a ``YamlError`` with the mark of the offending
node:

* a key written twice in one mapping, as kubectl does (``mapping key "name" already defined
  at line 3``); ``<<`` merges may still be overridden, as YAML allows;
* more than ``MAX_ALIASES`` alias uses in one document (go-yaml, which kubectl uses, refuses
  "excessive aliasing" too): aliases share one node, so an 800-byte file can describe 10^9
  items that a walk over the document would visit one by one;
* an alias inside its own anchor (a recursive document, which every walk would loop on);
* nesting deeper than ``MAX_DEPTH`` levels (the walks that read documents are recursive);
* a scalar that its tag's constructor cannot build (an int past Python's 4300-digit
  conversion limit, a timestamp like ``2001-13-45``).

The alias, recursion and depth checks run on the composed node graph before any Python
object is built; they visit each node once. A text with many nesting indicators is first
checked for depth on its event stream, since libyaml's composer recurses in C.

It does not read files (``reader``) nor interpret documents (``lists`` flattens
``kind: List``; the schema walkers do the rest).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import yaml

from emulator.base.inputs.errors import InputError, split_path

__all__ = ["MAX_ALIASES", "MAX_DEPTH", "YamlDocuments", "YamlError", "YamlLoader", "load_documents"]

MAX_ALIASES: Final = 100
"""Alias uses allowed in one document: plenty for sharing a template, too few to explode."""
MAX_DEPTH: Final = 100
"""Nesting levels allowed in one document (a Kubernetes object is about 15 deep)."""

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG: Final = "tag:yaml.org,2002:merge"
_PREPASS_INDICATORS: Final = 2_000
"""Below this many ``[{-:?`` characters a text cannot nest deep enough to matter."""
_OPEN: Final = 1
_DONE: Final = 2


class YamlError(InputError):
    """Text that is not YAML we accept: ``problem`` and, when known, 1-based ``line``/``column``.

    ``detail`` is ``invalid YAML at line L, column C: <problem>``; ``text`` is PyYAML's whole
    message on one line, for callers that show it instead."""

    def __init__(self, file: str, problem: str, line: int | None, column: int | None, text: str) -> None:
        where = f" at line {line}, column {column}" if line is not None else ""
        super().__init__(file, "", f"invalid YAML{where}: {problem}")
        self.problem = problem
        self.text = text
        self.yaml_line, self.yaml_column = line, column


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def check_graph(root: Any, *, max_aliases: int = MAX_ALIASES, max_depth: int = MAX_DEPTH) -> None:
    """Refuse a composed document with too many aliases, a recursive alias, or too deep.

    Depth-first over the node graph, each node expanded once: reaching a finished node again
    is an alias use; reaching one still open is an alias inside its own anchor."""
    state: dict[int, int] = {id(root): _OPEN}
    stack: list[tuple[Any, Any]] = [(root, iter(_children(root)))]
    aliases = 0
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            state[id(node)] = _DONE
            stack.pop()
            continue
        seen = state.get(id(child))
        if seen == _OPEN:
            raise yaml.composer.ComposerError(
                "while composing a document", root.start_mark, "found a recursive alias", node.start_mark
            )
        if seen == _DONE:
            aliases += 1
            if aliases > max_aliases:
                raise yaml.composer.ComposerError(
                    "while composing a document",
                    root.start_mark,
                    f"document contains excessive aliasing (more than {max_aliases} alias uses)",
                    node.start_mark,
                )
            continue
        if len(stack) >= max_depth and isinstance(child, yaml.CollectionNode):
            raise yaml.composer.ComposerError(
                "while composing a document",
                root.start_mark,
                f"nested deeper than {max_depth} levels",
                child.start_mark,
            )
        state[id(child)] = _OPEN
        stack.append((child, iter(_children(child))))


class YamlLoader(_BaseLoader):  # type: ignore[misc]
    """libyaml's safe loader (the pure-Python one without libyaml) with the checks above;
    ``roots`` keeps the root node of every document it constructed."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.roots: list[Any] = []

    def construct_document(self, node: Any) -> Any:
        check_graph(node)
        self.roots.append(node)
        return super().construct_document(node)

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        """PyYAML's constructors raise a bare ``ValueError`` for a scalar that matches a tag's
        pattern but not its range (an int of more than 4300 digits, ``2001-13-45``); give it
        the node's mark like every other YAML error."""
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError) as err:
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {node.value[:40]!r} as {node.tag}: {str(err).split(';')[0]}", node.start_mark
            ) from None

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=deep)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:
                    continue  # an unhashable key: the base constructor reports it
                if first is not key_node:
                    shown = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key)
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f'mapping key "{shown}" already defined at line {first.start_mark.line + 1}',
                        key_node.start_mark,
                    )
        return super().construct_mapping(node, deep=deep)


@dataclass(slots=True)
class YamlDocuments:
    """The non-empty documents of one text, and their root nodes (for ``locate``)."""

    docs: list[Any]
    roots: list[Any] = field(repr=False)

    def locate(self, path: str) -> tuple[int, int] | None:
        """1-based ``(line, column)`` of the node ``path`` names, or of its deepest ancestor
        present (a missing field points at its mapping); paths start with ``documents[i]``
        when there are several documents. ``None`` when not even the document is known."""
        keys = split_path(path)
        if len(self.roots) > 1:
            if len(keys) < 2 or keys[0] != "documents" or not isinstance(keys[1], int) or keys[1] >= len(self.roots):
                return None
            node, keys = self.roots[keys[1]], keys[2:]
        elif self.roots:
            node = self.roots[0]
        else:
            return None
        mark = node.start_mark
        for key in keys:
            child = None
            if isinstance(node, yaml.MappingNode) and isinstance(key, str):
                for key_node, value_node in node.value:  # the last one wins, as after a merge
                    if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                        child, mark = value_node, key_node.start_mark
            elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
                child = node.value[key]
                mark = child.start_mark
            if child is None:
                break
            node = child
        return mark.line + 1, mark.column + 1


def _check_nesting(text: str, max_depth: int) -> None:
    """Refuse nesting deeper than ``max_depth`` from the event stream, before libyaml's composer
    (recursive in C: ~25,000 levels of ``[`` crash the interpreter) sees the text. Only run when
    the text has enough indicators to nest that deep, as the pass costs ~15% of a load."""
    if sum(text.count(c) for c in "[{-:?") < _PREPASS_INDICATORS:
        return
    loader = _BaseLoader(text)
    depth = 0
    problem = f"nested deeper than {max_depth} levels"
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
                depth += 1
                if depth > max_depth:
                    raise yaml.composer.ComposerError(None, None, problem, event.start_mark)
            elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                depth -= 1
    except yaml.scanner.ScannerError as err:
        # PyYAML >= 6.0.4's libyaml stops at 1,000 levels while scanning ahead inside flow
        # collections, before the events above reach ours: the same refusal, one message.
        if "nesting depth" not in (err.problem or ""):
            raise
        raise yaml.composer.ComposerError(None, None, problem, err.problem_mark) from None
    finally:
        loader.dispose()


def load_documents(text: str, *, source: str) -> YamlDocuments:
    """Every non-empty document of a (multi-document) YAML or JSON text; ``YamlError`` if bad."""
    docs: list[Any] = []
    roots: list[Any] = []
    loader: Any = None
    try:
        _check_nesting(text, MAX_DEPTH)
        loader = YamlLoader(text)
        while loader.check_data():
            doc = loader.get_data()
            if doc is not None:
                docs.append(doc)
                roots.append(loader.roots[-1])
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "syntax error"
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        raise YamlError(source, problem, line, column, " ".join(str(err).split())) from None
    except yaml.YAMLError as err:
        text = " ".join(str(err).split())
        raise YamlError(source, text, None, None, text) from None
    finally:
        if loader is not None:
            loader.dispose()
    return YamlDocuments(docs, roots)
