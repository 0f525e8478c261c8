"""CEL for DRA device selectors, in upstream's environment (``k8s.io/dynamic-resource-allocation/cel``).

An expression such as ``device.attributes["gpu.example.com"].model == "A100"`` or
``device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0`` is compiled once
(``compile_selector``, cached by expression in a bounded LRU, failures too, as upstream's
``cel.Cache``) and evaluated per device (``CompiledSelector.matches``).

Engine: cel-expr-python (Google's CEL C++ runtime; chosen by measurement, see
``bench/cel_selectors.py``). Two environments share one expression: the *checking* one declares
upstream's opaque ``kubernetes.Quantity`` / ``kubernetes.Semver`` types, so a parse error, an
undeclared function or a wrong overload is a compile error with upstream's
``ERROR: <input>:LINE:COL: ...`` text and caret; the *running* one carries those values as tagged
maps (``emulator.base.api.dracellib``). Environment as upstream's: the ``device`` variable
(``driver``, ``attributes``, ``capacity``, and ``allowMultipleAllocations`` when the
DRAConsumableCapacity gate is on), the quantity and semver libraries, ``cel.bind``, the string
extension functions and optional types. Not available (an ``undeclared reference`` compile error
here, accepted upstream): the Kubernetes list, regex, URL, IP/CIDR, format and sets libraries and
two-variable comprehensions; cost estimation (upstream refuses an expression whose worst-case
cost exceeds ``CELSelectorExpressionMaxCost``; a device has at most 32 attributes and
capacities, so only pathological expressions reach it).

Runtime semantics as upstream's ``DeviceMatches``: a domain the device has no entry for reads as
an empty map (``device.attributes["other.example.com"].x`` is ``no such key: x``, not
``no such key: other.example.com``) — for domains written as string literals, which is how
selectors name them; a runtime error is ``CelEvalError``, which upstream's allocator turns into
``claim NS/NAME: selector #I: CEL runtime error: ...`` and fails the allocation with.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from emulator.base.api import dracellib
from emulator.base.api.dracellib import SemVer, parse_semver
from emulator.base.api.quantity import Quantity, fits_int64_milli, parse_quantity

__all__ = [
    "CEL_CONSUMABLE_CAPACITY",
    "CEL_SELECTOR_EXPRESSION_MAX_LENGTH",
    "CelCompileError",
    "CelEvalError",
    "CompiledSelector",
    "DeviceView",
    "cache_clear",
    "cache_info",
    "cel_features",
    "compile_selector",
    "device_view",
    "split_qualified_name",
]

CEL_SELECTOR_EXPRESSION_MAX_LENGTH: Final = 10 * 1024
"""Upstream ``resource.CELSelectorExpressionMaxLength``: longer expressions are refused unparsed."""
CACHE_SIZE: Final = 1024
"""Bounded like upstream's scheduler cache of compiled expressions (``cel.NewCache(10)`` per
allocator there; one process-wide cache here serves the apiserver and the scheduler)."""


class CelCompileError(Exception):
    """A malformed selector: ``str()`` is upstream's ``compilation failed: ERROR: <input>:1:5: ...``."""

    message: str
    column: int | None
    too_long: bool
    """Over ``CEL_SELECTOR_EXPRESSION_MAX_LENGTH``: upstream's validation reports ``field.TooLong``
    (the message is its text) where every other compile error is ``field.Invalid``."""

    def __init__(self, message: str, column: int | None = None, too_long: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.column = column
        self.too_long = too_long

    def __str__(self) -> str:
        return self.message


class CelEvalError(Exception):
    """A runtime error evaluating a selector against one device (upstream's CEL runtime error)."""

    message: str

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


# ---- devices ---------------------------------------------------------------------------------


def split_qualified_name(name: str, driver: str) -> tuple[str, str]:
    """Upstream ``parseQualifiedName``: ``domain/id``, or the driver's domain for a bare id."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


@dataclass(frozen=True, slots=True)
class DeviceView:
    """One device as a selector sees it; built by ``device_view`` from a ResourceSlice device."""

    driver: str
    attributes: Mapping[str, Mapping[str, bool | int | str | SemVer]]
    capacity: Mapping[str, Mapping[str, Quantity]]
    allow_multiple_allocations: bool = False
    error: str = ""
    """Set when an attribute cannot be read (a malformed version): every selector fails with it."""
    data: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The CEL activation's ``device`` value, built once per view (filled in ``__post_init__``)."""
    activation: list[Any] = field(default_factory=list, compare=False, repr=False)
    """The engine's activation over ``data``, made at the first evaluation and reused by every
    selector after it (a third of an evaluation's cost is building it)."""

    def __post_init__(self) -> None:
        if self.data:
            return
        attrs = {
            domain: {k: dracellib.semver_value(v) if isinstance(v, SemVer) else v for k, v in values.items()}
            for domain, values in self.attributes.items()
        }
        caps = {
            domain: {k: dracellib.quantity_value(q.milli) for k, q in values.items()}
            for domain, values in self.capacity.items()
        }
        self.data.update(
            driver=self.driver,
            attributes=attrs,
            capacity=caps,
            allowMultipleAllocations=self.allow_multiple_allocations,
        )


_RAW_KEYS: Final = (("int_value", "int"), ("bool_value", "bool"), ("string_value", "string"))


def _raw_field(raw: Any, names: tuple[str, ...]) -> Any:
    for name in names:
        value = raw.get(name) if isinstance(raw, Mapping) else getattr(raw, name, None)
        if value is not None:
            return value
    return None


def device_view(
    driver: str,
    attributes: Mapping[str, Any],
    capacity: Mapping[str, Any],
    allow_multiple_allocations: bool = False,
) -> DeviceView:
    """A ``DeviceView`` from a device's raw attributes and capacity (upstream ``DeviceMatches``).

    ``attributes``: name -> a ``resource.DeviceAttribute`` (or its manifest form, a mapping
    ``{"int": 1}``, ``{"bool": true}``, ``{"string": "x"}``, ``{"version": "1.2.3"}``); a plain
    bool/int/str/SemVer is taken as is. ``capacity``: name -> a ``resource.DeviceCapacity`` (or a
    mapping with ``value``), or a Quantity. Unqualified names belong to the driver's domain."""
    error = ""
    attrs: dict[str, dict[str, bool | int | str | SemVer]] = {}
    for name in sorted(attributes):
        raw = attributes[name]
        value: bool | int | str | SemVer | None
        if isinstance(raw, bool | int | str | SemVer):
            value = raw
        else:
            value = None
            for keys in _RAW_KEYS:
                value = _raw_field(raw, keys)
                if value is not None:
                    break
            if value is None:
                version = _raw_field(raw, ("version_value", "version"))
                if version is None:
                    error = error or f"attribute {name}: unsupported attribute value"
                    continue
                try:
                    value = parse_semver(str(version))
                except ValueError as err:
                    error = error or f"attribute {name}: parse semantic version: {err}"
                    continue
        domain, ident = split_qualified_name(name, driver)
        attrs.setdefault(domain, {})[ident] = value
    caps: dict[str, dict[str, Quantity]] = {}
    for name in sorted(capacity):
        raw = capacity[name]
        q = raw if isinstance(raw, Quantity) else _raw_field(raw, ("value",))
        if not isinstance(q, Quantity):
            error = error or f"capacity {name}: not a quantity"
            continue
        domain, ident = split_qualified_name(name, driver)
        caps.setdefault(domain, {})[ident] = q
    return DeviceView(driver, attrs, caps, allow_multiple_allocations, error)


# ---- environments ----------------------------------------------------------------------------

_S, _I, _B, _D = cel.Type.STRING, cel.Type.INT, cel.Type.BOOL, cel.Type.DOUBLE
_MAP: Final = cel.Type.Map(cel.Type.STRING, cel.Type.DYN)


def _env(quantity: Any, semver: Any, impls: bool) -> Any:
    """The DRA environment; ``quantity``/``semver`` are the value types (abstract or map)."""
    q, v = quantity, semver
    fn = dracellib.FUNCTIONS

    def ov(oid: str, ret: Any, params: list[Any], name: str, member: bool = False) -> Any:
        if impls:
            return cel.Overload(oid, ret, params, is_member=member, impl=fn[name])
        return cel.Overload(oid, ret, params, is_member=member)

    def member(name: str, *overloads: tuple[str, Any, list[Any], str]) -> Any:
        return cel.FunctionDecl(name, [ov(o, r, p, n, True) for o, r, p, n in overloads])

    if impls:  # quantity and semver are one map type here: one overload serves both
        compares = [
            member("compareTo", ("compareTo_map", _I, [q, q], "compareTo")),
            member("isGreaterThan", ("isGreaterThan_map", _B, [q, q], "isGreaterThan")),
            member("isLessThan", ("isLessThan_map", _B, [q, q], "isLessThan")),
        ]
    else:
        compares = [
            member(
                name,
                (f"quantity_{name}", ret, [q, q], name),
                (f"semver_{name}", ret, [v, v], name),
            )
            for name, ret in (("compareTo", _I), ("isGreaterThan", _B), ("isLessThan", _B))
        ]
    functions = [
        cel.FunctionDecl("quantity", [ov("string_to_quantity", q, [_S], "quantity")]),
        cel.FunctionDecl("isQuantity", [ov("is_quantity_string", _B, [_S], "isQuantity")]),
        cel.FunctionDecl(
            "semver",
            [ov("string_to_semver", v, [_S], "semver"), ov("string_bool_to_semver", v, [_S, _B], "semver")],
        ),
        cel.FunctionDecl(
            "isSemver",
            [ov("is_semver_string", _B, [_S], "isSemver"), ov("is_semver_string_bool", _B, [_S, _B], "isSemver")],
        ),
        *compares,
        member("sign", ("quantity_sign", _I, [q], "sign")),
        member("isInteger", ("quantity_is_integer", _B, [q], "isInteger")),
        member("asInteger", ("quantity_get_integer", _I, [q], "asInteger")),
        member("asApproximateFloat", ("quantity_get_float", _D, [q], "asApproximateFloat")),
        member("add", ("quantity_add", q, [q, q], "add_q"), ("quantity_add_int", q, [q, _I], "add_i")),
        member("sub", ("quantity_sub", q, [q, q], "sub_q"), ("quantity_sub_int", q, [q, _I], "sub_i")),
        member("major", ("semver_major", _I, [v], "major")),
        member("minor", ("semver_minor", _I, [v], "minor")),
        member("patch", ("semver_patch", _I, [v], "patch")),
    ]
    return cel.NewEnv(
        variables={"device": _MAP},
        extensions=[ext_strings.ExtStrings(), ext_bindings.ExtBindings(), ext_optional.ExtOptional()],
        functions=functions,
    )


_CHECK_ENV: Final = _env(
    cel.Type.AbstractType("kubernetes.Quantity"), cel.Type.AbstractType("kubernetes.Semver"), impls=False
)
_RUN_ENV: Final = _env(_MAP, _MAP, impls=True)

# ---- compiling -------------------------------------------------------------------------------

_POSITION: Final = re.compile(r"ERROR: <input>:(\d+):(\d+):")
_STATUS: Final = re.compile(r"^[A-Z_]+: ")
_STRING: Final = re.compile(
    r"""[rR]?(?:\"\"\"(?:[^\\]|\\.)*?\"\"\"|'''(?:[^\\]|\\.)*?'''"""
    r"""|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
)
_FIELD: Final = re.compile(r"(?<![.\w])device\s*(\.)\s*([A-Za-z_][A-Za-z0-9_]*)")
_DOMAIN: Final = re.compile(r"""\bdevice\s*\.\s*(attributes|capacity)\s*\[\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*\]""")
_FIELDS: Final = ("driver", "attributes", "capacity")
_NO_SUCH_KEY: Final = re.compile(r'^Key not found in map : "?(.*?)"?$')


def _cel_type_name(t: Any) -> str:
    """cel-cpp's ``MAP<STRING, DYN>`` in cel-go's spelling, ``map(string, dyn)``."""
    return str(t.name()).lower().replace("<", "(").replace(">", ")")


def _issue(expression: str, line: int, col: int, text: str) -> str:
    """An issue as cel-go's ``Issues.String()`` prints it (column 1-based, caret under it)."""
    src = expression.split("\n")[line - 1]
    return f"ERROR: <input>:{line}:{col}: {text}\n | {src}\n | {'.' * (col - 1)}^"


_LITERAL_CALL: Final = re.compile(r"""(?<![.\w])(quantity|semver)\(\s*("[^"\\]*"|'[^'\\]*')\s*\)""")


def _fold_literals(expression: str, blanked: str) -> str:
    """``quantity("40Gi")`` / ``semver("1.2.0")`` of a valid literal as the run-time map it makes,
    so evaluation does not call back into Python for it (a third of a quantity selector's cost).
    Only for the running environment: checking and positions use the expression as written."""
    out: list[str] = []
    last = 0
    for m in _LITERAL_CALL.finditer(blanked):
        literal = expression[m.start(2) + 1 : m.end(2) - 1]
        try:
            if m.group(1) == "quantity":
                q = parse_quantity(literal)
                if not fits_int64_milli(q):
                    continue  # a CEL int literal could not hold it: the callback computes it
                folded = f'{{"{dracellib.Q_TAG}": {q.milli}}}'
            else:
                folded = f'{{"{dracellib.V_TAG}": "{parse_semver(literal).canonical()}"}}'
        except ValueError:
            continue  # stays a call: the error is the evaluation's, as upstream's
        out.append(expression[last : m.start()])
        out.append(folded)
        last = m.end()
    out.append(expression[last:])
    return "".join(out)


def _blank_strings(expression: str) -> str:
    """The expression with string literals' contents blanked (their first and last characters
    kept), positions kept."""
    return _STRING.sub(lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[-1], expression)


@dataclass(frozen=True, slots=True)
class CompiledSelector:
    """A selector that compiled: ``matches`` evaluates it against one device."""

    expression: str
    program: Any = field(repr=False, compare=False)
    domains: tuple[tuple[str, str], ...] = ()
    """``(attributes|capacity, domain)`` pairs the expression indexes with a literal: a device
    without that domain reads it as an empty map, as upstream's ``mapper`` default."""

    def matches(self, device: DeviceView) -> bool:
        if device.error:
            raise CelEvalError(device.error)
        data = device.data
        missing = [(k, d) for k, d in self.domains if d not in data[k]]
        if missing:
            data = dict(data, attributes=dict(data["attributes"]), capacity=dict(data["capacity"]))
            for kind, domain in missing:
                data[kind][domain] = {}
            result = self.program.eval(data={"device": data})
        else:
            if not device.activation:
                device.activation.append(_RUN_ENV.Activation({"device": data}))
            result = self.program.eval(device.activation[0])
        value = result.value()
        if result.type() == cel.Type.ERROR:
            raise CelEvalError(_runtime_message(str(value)))
        if not isinstance(value, bool):
            raise CelEvalError(f"CEL result of type {_cel_type_name(result.type())} could not be converted to bool")
        return value


def _runtime_message(text: str) -> str:
    """cel-cpp's error text in cel-go's words where they differ (``no such key: x``)."""
    text = _STATUS.sub("", text, count=1)
    m = _NO_SUCH_KEY.match(text)
    if m:
        return f"no such key: {m.group(1)}"
    return text


CEL_CONSUMABLE_CAPACITY: ContextVar[bool] = ContextVar("CEL_CONSUMABLE_CAPACITY", default=False)
"""The API server's DRAConsumableCapacity gate while it validates (upstream reads the process's
``DefaultFeatureGate``): with it on, selectors may use ``device.allowMultipleAllocations``."""


@contextmanager
def cel_features(*, consumable_capacity: bool) -> Iterator[None]:
    """Validate selectors in this block with the DRAConsumableCapacity gate as given."""
    token = CEL_CONSUMABLE_CAPACITY.set(consumable_capacity)
    try:
        yield
    finally:
        CEL_CONSUMABLE_CAPACITY.reset(token)


def compile_selector(expression: str, consumable_capacity: bool = False) -> CompiledSelector:
    """Compile a selector (cached); raise ``CelCompileError`` as upstream's ``CompileCELExpression``.

    ``consumable_capacity``: the DRAConsumableCapacity gate, which declares
    ``device.allowMultipleAllocations``."""
    result = _compile_cached(expression, consumable_capacity)
    if isinstance(result, CelCompileError):
        raise result
    return result


def cache_info() -> Any:
    return _compile_cached.cache_info()


def cache_clear() -> None:
    _compile_cached.cache_clear()


@lru_cache(maxsize=CACHE_SIZE)
def _compile_cached(expression: str, consumable_capacity: bool) -> CompiledSelector | CelCompileError:
    if len(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        return CelCompileError(f"Too long: may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes", None)
    try:
        checked = _CHECK_ENV.compile(expression)
    except RuntimeError as err:
        text = _STATUS.sub("", str(err), count=1).removesuffix(" [INVALID_ARGUMENT]")
        m = _POSITION.search(text)
        return CelCompileError("compilation failed: " + text, int(m.group(2)) if m else None)
    blanked = _blank_strings(expression)
    allowed = (*_FIELDS, "allowMultipleAllocations") if consumable_capacity else _FIELDS
    for m in _FIELD.finditer(blanked):
        if m.group(2) not in allowed:
            line = expression.count("\n", 0, m.start(1)) + 1
            col = m.start(1) - (expression.rfind("\n", 0, m.start(1)) + 1) + 1
            issue = _issue(expression, line, col, f"undefined field '{m.group(2)}'")
            return CelCompileError("compilation failed: " + issue, col)
    out = checked.return_type()
    if out != cel.Type.BOOL and out != cel.Type.DYN:
        return CelCompileError(f"must evaluate to bool or the unknown type, not {_cel_type_name(out)}", None)
    program = _RUN_ENV.compile(_fold_literals(expression, blanked), disable_check=True)
    domains: list[tuple[str, str]] = []
    for m in _DOMAIN.finditer(expression):
        pair = (m.group(1), m.group(2) if m.group(2) is not None else m.group(3))
        if pair not in domains:
            domains.append(pair)
    return CompiledSelector(expression, program, tuple(domains))
