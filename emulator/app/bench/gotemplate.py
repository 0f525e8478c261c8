"""Go's ``text/template``, as far as upstream scheduler_perf's templates use it, rendered the way
upstream renders them (``getSpecFromTextTemplateFile`` in ``test/integration/scheduler_perf``).

Upstream executes a template file with the environment ``templateParams`` (the op's, values
``$x`` replaced by the workload's parameter ``x``) plus ``Index`` (the object's index within
its op) and ``Count`` (the op's count), and the functions of ``getTemplateFuncs``
(``gotemplate_funcs.py``, which also owns how values print, compare and test true).

Understood: text and ``{{/* comments */}}`` with the ``{{-``/``-}}`` trim markers; actions
printing a pipeline; ``if``/``else if``/``else``/``end``, ``range`` (over a list, a map in key
order, or an integer) with ``else``, ``break`` and ``continue``, ``with``/``else with``;
pipelines (``a | f b``: the value is the last argument of ``f``), variables (``$x := ...``,
``$x = ...``, ``range $i, $v := ...``, ``$`` the whole environment), field chains
(``.a.b``, ``$x.a``, ``(pipeline).a``), parenthesised pipelines, string (``"..."``, raw)
number, ``true``/``false``/``nil`` literals, and Go's builtins. Anything else (``define``,
``template``, ``block``, a function neither Go nor upstream defines) is refused with
``TemplateError`` naming the action; so is printing a field the environment lacks (upstream
would print ``<no value>`` into the YAML).

Pure: parse once (``parse``), render per object (``Template.render``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from emulator.app.bench.gotemplate_funcs import ARITY, BUILTINS, FUNCTIONS, Missing, TemplateError, show, truth

__all__ = ["FUNCTIONS", "Template", "TemplateError", "has_actions", "parse"]

_ACTION: Final = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.DOTALL)
_TOKEN: Final = re.compile(
    r"""\s*(?:
      (?P<open>\() | (?P<close>\)) | (?P<pipe>\|) | (?P<comma>,) | (?P<declare>:=) | (?P<assign>=)
    | (?P<str>"(?:[^"\\]|\\.)*") | (?P<raw>`[^`]*`)
    | (?P<num>[-+]?(?:0[xX][0-9a-fA-F_]+|(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?))
    | (?P<var>\$[A-Za-z_0-9]*(?:\.[A-Za-z_]\w*)*)
    | (?P<field>(?:\.[A-Za-z_]\w*)+|\.)
    | (?P<ident>[A-Za-z_]\w*)
    )""",
    re.VERBOSE,
)
_KEYWORDS: Final = frozenset({"if", "else", "end", "range", "with", "break", "continue"})
_REFUSED: Final = frozenset({"define", "template", "block", "slice", "call", "html", "js", "urlquery"})

Node = tuple[Any, ...]
"""An expression: ``("field", base, names)`` (base ``"."`` or a variable), ``("lit", value)``,
``("fn", name)``, ``("pipe", pipeline)``, ``("chain", node, names)``."""


@dataclass(frozen=True, slots=True)
class Pipeline:
    decl: tuple[str, ...]
    assign: bool
    """``=`` rather than ``:=``."""
    cmds: tuple[tuple[Node, ...], ...]


@dataclass(frozen=True, slots=True)
class Block:
    """``if``, ``range`` or ``with`` with its bodies."""

    kind: str
    pipe: Pipeline
    body: tuple[Any, ...]
    other: tuple[Any, ...]


_BREAK: Final = ("break",)
_CONTINUE: Final = ("continue",)


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Template:
    parts: tuple[Any, ...]
    """Text (``str``), an action (``Pipeline``), a ``Block``, ``_BREAK`` or ``_CONTINUE``."""
    fields: frozenset[str]
    """The top-level fields the template reads (``Index``, ``Count``, template parameters)."""

    def render(self, env: Mapping[str, Any]) -> str:
        out: list[str] = []
        _Exec(env, out).run(self.parts, env)
        return "".join(out)

    def probe(self) -> str:
        """The text with every action that cannot be evaluated without the real environment
        printed as ``1`` and every such condition false: enough to see the object's kind and
        shape before the values are known."""
        out: list[str] = []
        _Exec({}, out, lenient=True).run(self.parts, {})
        return "".join(out)


def has_actions(text: str) -> bool:
    return "{{" in text


# --- parsing ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def parse(text: str) -> Template:
    """The template ``text``; ``TemplateError`` for an action outside the understood part."""
    items: list[Any] = []  # str, ("action", body, source)
    pos, trim_next = 0, False
    for m in _ACTION.finditer(text):
        before = text[pos : m.start()]
        if trim_next:
            before = before.lstrip()
        if m.group(1):
            before = before.rstrip()
        items.append(before)
        trim_next = bool(m.group(3))
        pos = m.end()
        body = m.group(2).strip()
        if not (body.startswith("/*") and body.endswith("*/")):
            items.append(("action", body, m.group(0)))
    rest = text[pos:]
    items.append(rest.lstrip() if trim_next else rest)
    if "{{" in "".join(p for p in items if isinstance(p, str)):
        raise TemplateError("an unclosed {{ action")
    parser = _Parser(items)
    parts, end = parser.parts(())
    if end is not None:
        raise TemplateError(f"unexpected {end[2]}")
    return Template(parts, frozenset(parser.fields))


class _Parser:
    def __init__(self, items: list[Any]) -> None:
        self.items, self.i = items, 0
        self.fields: set[str] = set()
        self.vars: list[str] = ["$"]

    def parts(self, stops: tuple[str, ...]) -> tuple[tuple[Any, ...], Any]:
        """Parts up to an action starting with a word of ``stops`` (returned, consumed)."""
        out: list[Any] = []
        while self.i < len(self.items):
            item = self.items[self.i]
            self.i += 1
            if isinstance(item, str):
                if item:
                    out.append(item)
                continue
            _, body, source = item
            word = body.split(None, 1)[0] if body else ""
            if word in stops:
                return tuple(out), item
            if word in ("else", "end"):
                raise TemplateError(f"unexpected {source}")
            if word in ("if", "range", "with"):
                out.append(self.block(word, body[len(word) :], source))
            elif word in ("break", "continue") and body == word:
                out.append(_BREAK if word == "break" else _CONTINUE)
            else:
                out.append(self.pipeline(body, source))
        if stops:
            raise TemplateError(f"unexpected end of template: {{{{end}}}} missing ({stops})")
        return tuple(out), None

    def block(self, kind: str, rest: str, source: str) -> Block:
        mark = len(self.vars)
        pipe = self.pipeline(rest, source, range_decl=kind == "range")
        inner = len(self.vars)  # the pipeline's variables reach the end of the block
        body, stop = self.parts(("else", "end"))
        del self.vars[inner:]
        other: tuple[Any, ...] = ()
        if stop[1].split(None, 1)[0] == "else":
            after = stop[1][len("else") :].strip()
            word = after.split(None, 1)[0] if after else ""
            if word in ("if", "with"):  # else if / else with: one {{end}} closes the chain
                other = (self.block(word, after[len(word) :], stop[2]),)
                del self.vars[mark:]
                return Block(kind, pipe, body, other)
            if after:
                raise TemplateError(f"{stop[2]} is not understood")
            other, stop = self.parts(("end",))
            del self.vars[inner:]
        if stop[1] != "end":
            raise TemplateError(f"{stop[2]} is not understood")
        del self.vars[mark:]
        return Block(kind, pipe, body, other)

    def pipeline(self, body: str, source: str, *, range_decl: bool = False) -> Pipeline:
        toks = self.tokens(body, source)
        decl: list[str] = []
        assign = False
        j = 0
        # $x :=   $x =   $i, $v :=
        if toks and toks[0][0] == "var":
            k = 1
            names = [toks[0][1]]
            if range_decl and len(toks) > 2 and toks[1][0] == "comma" and toks[2][0] == "var":
                names.append(toks[2][1])
                k = 3
            if k < len(toks) and toks[k][0] in ("declare", "assign"):
                if any("." in n for n in names):
                    raise TemplateError(f"{source}: cannot declare a field")
                assign = toks[k][0] == "assign"
                if assign and any(n not in self.vars for n in names):
                    raise TemplateError(f"{source}: undefined variable {names[0]}")
                decl, j = names, k + 1
        cmds, j = self.commands(toks, j, source)
        if j != len(toks):
            raise TemplateError(f"the Go template expression {source} is not understood")
        if not assign:
            self.vars.extend(decl)
        return Pipeline(tuple(decl), assign, cmds)

    def commands(
        self, toks: list[tuple[str, str, bool]], j: int, source: str
    ) -> tuple[tuple[tuple[Node, ...], ...], int]:
        cmds: list[tuple[Node, ...]] = []
        while True:
            words: list[Node] = []
            while j < len(toks) and toks[j][0] not in ("pipe", "close"):
                node, j = self.operand(toks, j, source, first=not words)
                words.append(node)
            if not words:
                raise TemplateError(f"the Go template expression {source} has an empty command")
            if words[0][0] != "fn" and len(words) > 1:
                raise TemplateError(f"{source}: can't give argument to non-function")
            cmds.append(tuple(words))
            if j < len(toks) and toks[j][0] == "pipe":
                j += 1
                continue
            return tuple(cmds), j

    def operand(self, toks: list[tuple[str, str, bool]], j: int, source: str, *, first: bool) -> tuple[Node, int]:
        kind, text, _ = toks[j]
        node: Node
        if kind == "open":
            cmds, k = self.commands(toks, j + 1, source)
            if k >= len(toks) or toks[k][0] != "close":
                raise TemplateError(f"the Go template expression {source} has an unclosed (")
            node, j = ("pipe", Pipeline((), False, cmds)), k + 1
            if j < len(toks) and toks[j][0] == "field" and toks[j][1] != "." and not toks[j][2]:  # (x).f
                node, j = ("chain", node, tuple(toks[j][1][1:].split("."))), j + 1
            return node, j
        if kind == "str":
            return ("lit", _unquote(text, source)), j + 1
        if kind == "raw":
            return ("lit", text[1:-1]), j + 1
        if kind == "num":
            return ("lit", _number_literal(text, source)), j + 1
        if kind == "field":
            chain = () if text == "." else tuple(text[1:].split("."))
            if chain:
                self.fields.add(chain[0])
            return ("field", ".", chain), j + 1
        if kind == "var":
            name, *names = text.split(".")
            if name not in self.vars:
                raise TemplateError(f"{source}: undefined variable {name}")
            if name == "$" and names:
                self.fields.add(names[0])
            return ("field", name, tuple(names)), j + 1
        if kind == "ident":
            if text in ("true", "false"):
                return ("lit", text == "true"), j + 1
            if text == "nil":
                return ("lit", None), j + 1
            if text in _REFUSED or text in _KEYWORDS:
                raise TemplateError(f"the Go template expression {source} is not understood ({text} is not known)")
            if text not in FUNCTIONS and text not in BUILTINS and text not in ("and", "or"):
                raise TemplateError(f"the Go template expression {source} is not understood ({text} is not known)")
            return ("fn", text), j + 1
        raise TemplateError(f"the Go template expression {source} is not understood")

    @staticmethod
    def tokens(body: str, source: str) -> list[tuple[str, str, bool]]:
        """(kind, text, whether blanks precede it)."""
        out: list[tuple[str, str, bool]] = []
        pos = 0
        while pos < len(body):
            m = _TOKEN.match(body, pos)
            if m is None or m.end() == pos:
                if body[pos:].strip() == "":
                    break
                raise TemplateError(f"the Go template expression {source} is not understood")
            assert m.lastgroup is not None
            out.append((m.lastgroup, m.group(m.lastgroup), m.start(m.lastgroup) > pos))
            pos = m.end()
        return out


def _unquote(text: str, source: str) -> str:
    try:
        return bytes(text[1:-1], "utf-8").decode("unicode_escape")
    except UnicodeDecodeError:
        raise TemplateError(f"{source}: bad string literal") from None


def _number_literal(text: str, source: str) -> int | float:
    t = text.replace("_", "")
    try:
        if re.fullmatch(r"[-+]?0[xX][0-9a-fA-F]+", t):
            return int(t, 16)
        if re.fullmatch(r"[-+]?\d+", t):
            return int(t)
        return float(t)
    except ValueError:
        raise TemplateError(f"{source}: bad number {text}") from None


# --- executing --------------------------------------------------------------------------------


class _Exec:
    def __init__(self, root: Mapping[str, Any], out: list[str], *, lenient: bool = False) -> None:
        self.out, self.lenient = out, lenient
        self.vars: list[tuple[str, Any]] = [("$", root)]

    def run(self, parts: tuple[Any, ...], dot: Any) -> None:
        mark = len(self.vars)
        try:
            for part in parts:
                if isinstance(part, str):
                    self.out.append(part)
                elif part is _BREAK:
                    raise _Break
                elif part is _CONTINUE:
                    raise _Continue
                elif isinstance(part, Pipeline):
                    try:
                        text = show(self.pipeline(part, dot))
                    except TemplateError:
                        if not self.lenient:
                            raise
                        text = "1"
                    if not part.decl:
                        self.out.append(text)
                else:
                    self.block(part, dot)
        finally:
            del self.vars[mark:]

    def block(self, b: Block, dot: Any) -> None:
        mark = len(self.vars)
        if b.kind == "range":
            try:
                items = _items(self.pipeline(Pipeline((), False, b.pipe.cmds), dot))
            except TemplateError:
                if not self.lenient:
                    raise
                items = []
            try:
                if not items:
                    self.run(b.other, dot)
                for key, item in items:
                    del self.vars[mark:]
                    if len(b.pipe.decl) == 2:
                        self.vars += [(b.pipe.decl[0], key), (b.pipe.decl[1], item)]
                    elif b.pipe.decl:
                        self.vars.append((b.pipe.decl[0], item))
                    try:
                        self.run(b.body, item)
                    except _Continue:
                        continue
            except _Break:
                pass
        else:
            try:
                value = self.pipeline(b.pipe, dot)
            except TemplateError:
                if not self.lenient:
                    raise
                value = None
            if truth(value):
                self.run(b.body, value if b.kind == "with" else dot)
            else:
                self.run(b.other, dot)
        del self.vars[mark:]

    def pipeline(self, p: Pipeline, dot: Any) -> Any:
        value: Any = _NOTHING
        for cmd in p.cmds:
            value = self.command(cmd, dot, value)
        for name in p.decl:
            if p.assign:
                for k in range(len(self.vars) - 1, -1, -1):
                    if self.vars[k][0] == name:
                        self.vars[k] = (name, value)
                        break
            else:
                self.vars.append((name, value))
        return value

    def command(self, cmd: tuple[Node, ...], dot: Any, final: Any) -> Any:
        head = cmd[0]
        if head[0] != "fn":
            if final is not _NOTHING:
                raise TemplateError("can't give argument to non-function")
            return self.eval(head, dot)
        name = head[1]
        if name in ("and", "or"):
            args = [*cmd[1:]]
            if not args and final is _NOTHING:
                raise TemplateError(f"wrong number of args for {name}: want at least 1 got 0")
            value: Any = None
            for k, a in enumerate([*args, final] if final is not _NOTHING else args):
                value = a if k == len(args) else self.eval(a, dot)
                if truth(value) != (name == "and"):
                    return value
            return value
        values = [self.eval(a, dot) for a in cmd[1:]]
        if final is not _NOTHING:
            values.append(final)
        want = ARITY.get(name)
        if want is not None and len(values) != want:
            raise TemplateError(f"{name} takes {want} arguments, got {len(values)}")
        fn = FUNCTIONS.get(name) or BUILTINS[name]
        try:
            return fn(*values)
        except TypeError:
            raise TemplateError(f"wrong number of args for {name}: got {len(values)}") from None

    def eval(self, node: Node, dot: Any) -> Any:
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "fn":
            return self.command((node,), dot, _NOTHING)
        if kind == "pipe":
            return self.pipeline(node[1], dot)
        if kind == "chain":
            return _walk(self.eval(node[1], dot), node[2])
        _, base, names = node
        if base == ".":
            return _walk(dot, names)
        for name, value in reversed(self.vars):
            if name == base:
                return _walk(value, names)
        raise TemplateError(f"undefined variable {base}")


_NOTHING: Final = object()


def _walk(value: Any, names: tuple[str, ...]) -> Any:
    for name in names:
        if isinstance(value, Mapping):
            value = value[name] if name in value else Missing(name)
        elif isinstance(value, Missing) or value is None:
            raise TemplateError(f"nil pointer evaluating .{name}")
        else:
            raise TemplateError(f"can't evaluate field {name} in type {type(value).__name__}")
    return value


def _items(value: Any) -> list[tuple[Any, Any]]:
    if value is None or isinstance(value, Missing):
        return []
    if isinstance(value, bool | float):
        raise TemplateError(f"range can't iterate over {show(value)}")
    if isinstance(value, int):
        return [(i, i) for i in range(value)]
    if isinstance(value, list | tuple):
        return list(enumerate(value))
    if isinstance(value, Mapping):
        return [(k, value[k]) for k in sorted(value)]
    raise TemplateError(f"range can't iterate over {show(value)}")
