"""The part of Go's ``text/template`` that upstream scheduler_perf's templates use, rendered the
way upstream renders them (``getSpecFromTextTemplateFile`` in
``test/integration/scheduler_perf/operations.go``).

Upstream executes a template file with the environment ``templateParams`` (the op's, values
``$x`` replaced by the workload's parameter ``x``) plus ``Index`` (the object's index within
its op) and ``Count`` (the op's count), and the functions of ``getTemplateFuncs``:

==============================================  ==============================================
function                                        result
==============================================  ==============================================
``AddInt a b ...``, ``MultiplyInt a b ...``     sum / product as float64, then truncated to int
``SubtractInt a b``, ``DivideInt a b``          ``a - b`` / ``a / b`` as float64, truncated
``Mod a b``                                     ``int(a) % int(b)`` (Go: the sign of ``a``)
``AddFloat``, ``SubtractFloat``,                the same in float64; ``DivideFloat`` by 0 is an
``MultiplyFloat``, ``DivideFloat``              error (upstream panics)
==============================================  ==============================================

Arguments are numbers or numeric strings (upstream's ``toFloat64``). Understood actions:
``{{.Field}}``, ``{{Func arg ...}}`` with arguments ``.Field``, number and string literals and
parenthesised calls, ``{{/* comments */}}``, and the ``{{-``/``-}}`` trim markers. Anything
else (``if``, ``range``, pipes, variables) is refused with ``TemplateError`` naming the action,
and a field the environment lacks is an error too (upstream would print ``<no value>`` into the
YAML). Values print as Go's ``%v`` does: floats without a fraction as integers.

Pure: parse once (``parse``), render per object (``Template.render``).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["FUNCTIONS", "Template", "TemplateError", "has_actions", "parse"]


class TemplateError(ValueError):
    """A template upstream's renderer would not render the same way (or at all)."""


def _number(value: Any) -> float:
    if isinstance(value, bool) or value is None:
        raise TemplateError(f"cannot cast {_show(value)} to float64")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise TemplateError(f"cannot cast {_show(value)} to float64")


def _divide(i: Any, j: Any) -> float:
    d = _number(j)
    if d == 0:
        raise TemplateError("division by zero")
    return _number(i) / d


def _mod(a: Any, b: Any) -> int:
    m = int(_number(b))
    if m == 0:
        raise TemplateError("integer divide by zero")
    return int(math.fmod(int(_number(a)), m))


FUNCTIONS: Final[Mapping[str, Callable[..., Any]]] = {
    "AddFloat": lambda *xs: math.fsum(_number(x) for x in xs),
    "AddInt": lambda *xs: int(math.fsum(_number(x) for x in xs)),
    "DivideFloat": _divide,
    "DivideInt": lambda i, j: int(_divide(i, j)),
    "Mod": _mod,
    "MultiplyFloat": lambda *xs: math.prod(_number(x) for x in xs),
    "MultiplyInt": lambda *xs: int(math.prod(_number(x) for x in xs)),
    "SubtractFloat": lambda i, j: _number(i) - _number(j),
    "SubtractInt": lambda i, j: int(_number(i) - _number(j)),
}
"""Upstream's ``getTemplateFuncs``."""

_FIXED_ARITY: Final = {"DivideFloat": 2, "DivideInt": 2, "Mod": 2, "SubtractFloat": 2, "SubtractInt": 2}

_ACTION: Final = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.DOTALL)
_TOKEN: Final = re.compile(
    r"\s*(?:(\()|(\))|(\.[A-Za-z_]\w*)|([A-Za-z_]\w*)"  # ( ) .Field Function
    r'|(-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)|("(?:[^"\\]|\\.)*"))'  # number "string"
)


def _show(value: Any) -> str:
    """Go's ``%v`` of a template value."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 1e21:
            return str(int(value))
        return repr(value).replace("inf", "Inf")
    return str(value)


Node = tuple[str, Any]
"""``("field", name)``, ``("literal", value)`` or ``("call", (name, [args]))``."""


@dataclass(frozen=True, slots=True)
class Template:
    parts: tuple[str | Node, ...]
    fields: frozenset[str]
    """The fields the template reads (``Index``, ``Count``, template parameters)."""

    def render(self, env: Mapping[str, Any]) -> str:
        return "".join(p if isinstance(p, str) else _show(_eval(p, env)) for p in self.parts)


def _eval(node: Node, env: Mapping[str, Any]) -> Any:
    kind, value = node
    if kind == "literal":
        return value
    if kind == "field":
        if value not in env:
            raise TemplateError(f"the template reads .{value}, which is not set (Index, Count or a templateParams key)")
        return env[value]
    name, args = value
    return FUNCTIONS[name](*(_eval(a, env) for a in args))


def has_actions(text: str) -> bool:
    return "{{" in text


@functools.lru_cache(maxsize=256)
def parse(text: str) -> Template:
    """The template ``text``; ``TemplateError`` for an action outside the understood part."""
    parts: list[str | Node] = []
    fields: set[str] = set()
    pos = 0
    trim_next = False
    for m in _ACTION.finditer(text):
        before = text[pos : m.start()]
        if trim_next:
            before = before.lstrip()
        if m.group(1):
            before = before.rstrip()
        parts.append(before)
        trim_next = bool(m.group(3))
        pos = m.end()
        body = m.group(2).strip()
        if body.startswith("/*") and body.endswith("*/"):
            continue
        node = _parse_action(body, m.group(0))
        fields |= _fields(node)
        parts.append(node)
    rest = text[pos:]
    parts.append(rest.lstrip() if trim_next else rest)
    if "{{" in "".join(p for p in parts if isinstance(p, str)):
        raise TemplateError("an unclosed {{ action")
    return Template(tuple(p for p in parts if p != ""), frozenset(fields))


def _fields(node: Node) -> set[str]:
    kind, value = node
    if kind == "field":
        return {value}
    if kind == "call":
        return set().union(*(_fields(a) for a in value[1])) if value[1] else set()
    return set()


def _parse_action(body: str, action: str) -> Node:
    tokens: list[tuple[int, str]] = []
    pos = 0
    while pos < len(body):
        m = _TOKEN.match(body, pos)
        if m is None or m.end() == pos:
            if body[pos:].strip() == "":
                break
            raise TemplateError(f"the Go template expression {action} is not understood")
        assert m.lastindex is not None
        tokens.append((m.lastindex, m.group(m.lastindex)))
        pos = m.end()
    node, used = _parse_command(tokens, 0, action)
    if used != len(tokens):
        raise TemplateError(f"the Go template expression {action} is not understood")
    return node


def _parse_command(tokens: list[tuple[int, str]], i: int, action: str) -> tuple[Node, int]:
    """A command from ``tokens[i]``: an operand, or a function and its arguments, up to a ``)``."""
    if i < len(tokens) and tokens[i][0] == 4:
        name = tokens[i][1]
        if name not in FUNCTIONS:
            raise TemplateError(f"the Go template expression {action} is not understood ({name} is not known)")
        args: list[Node] = []
        i += 1
        while i < len(tokens) and tokens[i][0] != 2:
            arg, i = _parse_operand(tokens, i, action)
            args.append(arg)
        arity = _FIXED_ARITY.get(name)
        if arity is not None and len(args) != arity:
            raise TemplateError(f"{action}: {name} takes {arity} arguments, got {len(args)}")
        return ("call", (name, args)), i
    return _parse_operand(tokens, i, action)


def _parse_operand(tokens: list[tuple[int, str]], i: int, action: str) -> tuple[Node, int]:
    if i >= len(tokens):
        raise TemplateError(f"the Go template expression {action} is not understood")
    kind, text = tokens[i]
    if kind == 1:
        node, j = _parse_command(tokens, i + 1, action)
        if j >= len(tokens) or tokens[j][0] != 2:
            raise TemplateError(f"the Go template expression {action} has an unclosed (")
        return node, j + 1
    if kind == 3:
        return ("field", text[1:]), i + 1
    if kind == 5:
        is_int = re.fullmatch(r"-?\d+", text) is not None
        return ("literal", int(text) if is_int else float(text)), i + 1
    if kind == 6:
        return ("literal", bytes(text[1:-1], "utf-8").decode("unicode_escape")), i + 1
    raise TemplateError(f"the Go template expression {action} is not understood")
