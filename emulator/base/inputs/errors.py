"""The one error family for bad input, and the helpers that build its paths.

What this module owns: ``InputError`` (every "the file you gave me is wrong" error of the
project is one: ``ScenarioError``, ``ManifestError``, ``ConfigError``, ``ExplainError`` ...
keep their names for callers and subclass it), the path syntax shared by every reader
(``join_path``, ``split_path``), how a value is shown in a message (``show``), and the
translation of a ``msgspec.ValidationError`` into a message and a path (``msgspec_error``).
It does not read files (``reader``) nor parse YAML (``yamldocs``).

Message format, one line, the parts that are known joined by ``": "``::

    <file>[:<line>:<column>]: <path>: <detail>

``s.yaml:12:5: steps[3].createPods.template.spec.containers[0].resources.requests.cpu:
quantities must match ...`` — ``line``/``column`` are 1-based and present only when the YAML
node the path names is known (``yamldocs.YamlDocuments.locate``); ``path`` is absent when
the whole file is at fault (``s.yaml: invalid YAML ...``); ``file`` is absent for errors
that name a command-line option rather than a file (``--seeds: must be at least 1``).

Paths are YAML paths: ``.name`` for a key that is an identifier (letters, digits, ``_``,
``-``), ``["any key"]`` (JSON-quoted) for any other key, ``[3]`` for a list index.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import msgspec

__all__ = ["InputError", "PlainInputError", "join_path", "join_paths", "msgspec_error", "show", "split_path"]

_IDENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_AT: Final = re.compile(r"^(?P<msg>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_SEGMENT: Final = re.compile(
    r'\.?(?P<key>[A-Za-z_][A-Za-z0-9_-]*)|\[(?P<index>\d+)\]|\[(?P<quoted>"(?:[^"\\]|\\.)*")\]'
)


class InputError(Exception):
    """Bad input: ``<file>[:<line>:<column>]: <path>: <detail>`` (empty parts left out).

    ``line`` and ``column`` (1-based) may be filled in after the error is raised, by the
    reader that knows where ``path`` is in ``file``; ``str()`` always shows the current ones.
    """

    def __init__(
        self, file: str, path: str, detail: str, *, line: int | None = None, column: int | None = None
    ) -> None:
        super().__init__(file, path, detail)
        self.file = file
        self.path = path
        self.detail = detail
        self.line = line
        self.column = column

    def locate(self, line: int, column: int) -> None:
        """Record where in ``file`` the path is (1-based), unless already known."""
        if self.line is None:
            self.line, self.column = line, column

    def __str__(self) -> str:
        where = self.file
        if where and self.line is not None:
            where += f":{self.line}" + (f":{self.column}" if self.column is not None else "")
        return ": ".join(part for part in (where, self.path, self.detail) if part)

    def __reduce__(self) -> tuple[Any, ...]:
        # Subclasses have their own constructor signatures: rebuild from the state instead.
        return _restore, (type(self), dict(self.__dict__))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(file={self.file!r}, path={self.path!r}, detail={self.detail!r})"


class PlainInputError(InputError):
    """An ``InputError`` known by its one-line message, which already names the file and path
    (or the command-line option): ``detail`` is the message, ``file`` and ``path`` are empty.
    For errors that wrap another's text (``UsageError``, ``SetupError``, ``HuntError``)."""

    def __init__(self, message: str) -> None:
        super().__init__("", "", message)


def _restore(cls: type[InputError], state: dict[str, Any]) -> InputError:
    err = cls.__new__(cls)
    Exception.__init__(err, state.get("file", ""), state.get("path", ""), state.get("detail", ""))
    err.__dict__.update(state)
    return err


def join_path(path: str, key: str | int) -> str:
    """``path`` extended by one key or index, in the syntax above."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    k = key if _IDENT.match(key) else f"[{json.dumps(key)}]"
    if not path or k.startswith("["):
        return path + k
    return f"{path}.{k}"


def join_paths(prefix: str, sub: str) -> str:
    """Two paths end to end (``sub`` may start with ``.`` or ``[``, as msgspec's do)."""
    sub = sub.lstrip(".")
    if not prefix or not sub:
        return prefix or sub
    return prefix + sub if sub.startswith("[") else f"{prefix}.{sub}"


def split_path(path: str) -> list[str | int]:
    """The keys and indexes of ``path``, as far as they can be read (msgspec's ``[...]``,
    a dictionary key it does not name, ends the list)."""
    out: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _SEGMENT.match(path, pos)
        if m is None:
            break
        if m["key"] is not None:
            out.append(m["key"])
        elif m["index"] is not None:
            out.append(int(m["index"]))
        else:
            out.append(str(json.loads(m["quoted"])))
        pos = m.end()
    return out


def msgspec_error(err: msgspec.ValidationError | str) -> tuple[str, str]:
    """``(message, path)`` of a msgspec validation error: ``"Expected `int`, got `str` - at
    `$.spec.x[0]`"`` → ``("Expected `int`, got `str`", "spec.x[0]")``; path ``""`` at the root."""
    m = _AT.match(str(err))
    if m is None:  # pragma: no cover - the pattern matches every string
        return str(err), ""
    return m["msg"], (m["path"] or "").lstrip(".")


def show(value: Any) -> str:
    """A value as an error message shows it: JSON scalars, or what kind of thing it is."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None or isinstance(value, str | int | float | bool):
        return json.dumps(value, ensure_ascii=False)
    return type(value).__name__
