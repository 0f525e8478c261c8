"""The values side of ``gotemplate.py``: how Go's ``text/template`` prints, compares and tests
values, its builtin functions (``and``, ``or``, ``not``, ``len``, ``index``, ``print``,
``printf``, ``println``, ``eq``, ``ne``, ``lt``, ``le``, ``gt``, ``ge``) and upstream
scheduler_perf's helpers (``getTemplateFuncs`` in ``test/integration/scheduler_perf``):

==============================================  ==============================================
function                                        result
==============================================  ==============================================
``AddInt a b ...``, ``MultiplyInt a b ...``     sum / product as float64, then truncated to int
``SubtractInt a b``, ``DivideInt a b``          ``a - b`` / ``a / b`` as float64, truncated
``Mod a b``, ``mod a b``                        ``int(a) % int(b)`` (Go: the sign of ``a``)
``div a b``                                     ``DivideInt``'s twin
``Int a``                                       ``int(a)`` (truncated)
``JSON v``                                      ``v`` as Go's ``json.Marshal`` writes it
``AddFloat``, ``SubtractFloat``,                the same in float64; ``DivideFloat`` by 0 is an
``MultiplyFloat``, ``DivideFloat``              error (upstream panics)
==============================================  ==============================================

Arguments are numbers or numeric strings (upstream's ``toFloat64``). Value kinds follow Go's:
Python ``int`` is Go's ``int`` (``.Index``, ``.Count``, integer literals), ``float`` is
``float64`` (every number of a ``templateParams`` value, as upstream decodes them from JSON),
``None`` is a missing value (``MISSING``: printing it is an error, since upstream would print
``<no value>`` into the YAML; it is false in ``if``).
"""

from __future__ import annotations

import decimal
import json
import math
from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = ["BUILTINS", "FUNCTIONS", "MISSING", "Missing", "TemplateError", "filled_params", "show", "truth"]


class TemplateError(ValueError):
    """A template upstream's renderer would not render the same way (or at all)."""


class Missing:
    """A field the environment lacks (Go: the zero ``reflect.Value`` of a missing map key)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


MISSING: Final = Missing("")


def _number(value: Any) -> float:
    if isinstance(value, Missing):
        show(value)  # raises, naming the field
    if isinstance(value, bool) or value is None:
        raise TemplateError(f"cannot cast {show(value, strict=False)} to float64")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise TemplateError(f"cannot cast {show(value, strict=False)} to float64")


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


def _go_float(f: float) -> str:
    """Go's ``%v`` of a float64 (``strconv.FormatFloat(f, 'g', -1, 64)``): the shortest digits
    that read back the same, in exponent form when the exponent is below -4 or 6 or more
    (``1e+06``, ``1.5e-05``)."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1, f) < 0 else "0"
    sign, digits, exponent = decimal.Decimal(repr(f)).normalize().as_tuple()
    assert isinstance(exponent, int)
    ds = "".join(map(str, digits))
    dp = len(ds) + exponent  # position of the decimal point
    exp = dp - 1
    out = ""
    if exp < -4 or exp >= 6:
        mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        out = f"{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    elif dp <= 0:
        out = "0." + "0" * -dp + ds
    elif dp >= len(ds):
        out = ds + "0" * (dp - len(ds))
    else:
        out = ds[:dp] + "." + ds[dp:]
    return ("-" if sign else "") + out


def show(value: Any, *, strict: bool = True) -> str:
    """Go's ``%v`` of a template value; a missing field is an error when ``strict``."""
    if isinstance(value, Missing):
        if strict:
            raise TemplateError(
                f"the template reads .{value.name}, which is not set (Index, Count or a templateParams key)"
            )
        return "<no value>"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, list | tuple):
        return "[" + " ".join(show(v, strict=strict) for v in value) + "]"
    if isinstance(value, Mapping):
        return "map[" + " ".join(f"{k}:{show(value[k], strict=strict)}" for k in sorted(value)) + "]"
    return str(value)


def truth(value: Any) -> bool:
    """Go's ``template.IsTrue``: the zero value of its type (or a missing one) is false."""
    if value is None or isinstance(value, Missing):
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str | list | tuple | Mapping):
        return len(value) > 0
    return True


def _kind(v: Any) -> str:
    if v is None or isinstance(v, Missing):
        return "invalid"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    return "other"


def _eq(a: Any, *bs: Any) -> bool:
    if not bs:
        raise TemplateError("missing argument for comparison")
    ka = _kind(a)
    for b in bs:
        kb = _kind(b)
        if ka != kb:
            if ka != "invalid" and kb != "invalid":
                raise TemplateError("incompatible types for comparison")
            continue
        if ka == "other":
            raise TemplateError("non-comparable type")
        if ka == "invalid" or a == b:
            return True
    return False


def _less(a: Any, b: Any) -> bool:
    ka, kb = _kind(a), _kind(b)
    if ka == "invalid" or kb == "invalid":
        raise TemplateError("invalid type for comparison")
    if ka != kb:
        raise TemplateError("incompatible types for comparison")
    if ka not in ("int", "float", "string"):
        raise TemplateError("invalid type for comparison")
    return bool(a < b)


def _len(v: Any) -> int:
    if isinstance(v, str | list | tuple | Mapping):
        return len(v)
    raise TemplateError(f"len of type {_kind(v)}")


def _index(v: Any, *keys: Any) -> Any:
    for k in keys:
        if isinstance(v, Mapping):
            v = v.get(k)
        elif isinstance(v, list | tuple | str) and isinstance(k, int) and not isinstance(k, bool):
            if not 0 <= k < len(v):
                raise TemplateError(f"index out of range: {k}")
            v = v[k]
        else:
            raise TemplateError(f"can't index item of type {_kind(v)}")
    return v


def _sprint(*args: Any) -> str:
    out = []
    for i, a in enumerate(args):
        if i and not isinstance(a, str) and not isinstance(args[i - 1], str):
            out.append(" ")
        out.append(show(a, strict=False))
    return "".join(out)


def _sprintf(fmt: Any, *args: Any) -> str:
    """Go's ``fmt.Sprintf`` for the verbs templates use: ``%v %d %s %q %f %g %x %t %%``."""
    if not isinstance(fmt, str):
        raise TemplateError("printf's format must be a string")
    out, i, n = [], 0, 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        j = i + 1
        while j < len(fmt) and fmt[j] in "+-# 0123456789.":
            j += 1
        if j >= len(fmt):
            out.append("%!(NOVERB)")
            break
        flags, verb = fmt[i + 1 : j], fmt[j]
        i = j + 1
        if verb == "%":
            out.append("%")
            continue
        if n >= len(args):
            out.append(f"%!{verb}(MISSING)")
            continue
        a = args[n]
        n += 1
        if verb in "vs":
            text = show(a, strict=False)
        elif verb == "t":
            text = show(a, strict=False) if isinstance(a, bool) else f"%!t({show(a, strict=False)})"
        elif verb == "q":
            text = json.dumps(a) if isinstance(a, str) else f"%!q({show(a, strict=False)})"
        elif verb in "dxfeg" and _kind(a) == ("int" if verb in "dx" else "float"):
            text = ("%" + flags + verb) % a
            flags = ""
        else:
            text = f"%!{verb}({show(a, strict=False)})"
        out.append(("%" + flags + "s") % text if flags else text)
    return "".join(out)


def _go_json(v: Any) -> str:
    """``json.Marshal``: compact, map keys sorted, ``<``, ``>``, ``&`` escaped, float64 in
    plain form below 1e21."""
    if isinstance(v, Missing) or v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise TemplateError(f"json: unsupported value: {_go_float(v)}")
        if v == int(v) and abs(v) < 1e21:
            return str(int(v))
        a = abs(v)
        return repr(v) if 1e-6 <= a < 1e21 else json.dumps(v).replace("e-0", "e-").replace("e+0", "e+")
    if isinstance(v, str):
        s = json.dumps(v, ensure_ascii=False)
        for ch, esc in (
            ("<", "\\u003c"),
            (">", "\\u003e"),
            ("&", "\\u0026"),
            ("\u2028", "\\u2028"),
            ("\u2029", "\\u2029"),
        ):
            s = s.replace(ch, esc)
        return s
    if isinstance(v, list | tuple):
        return "[" + ",".join(_go_json(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{" + ",".join(f"{_go_json(str(k))}:{_go_json(v[k])}" for k in sorted(v, key=str)) + "}"
    raise TemplateError(f"json: unsupported type {type(v).__name__}")


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
    "mod": _mod,
    "div": lambda i, j: int(_divide(i, j)),
    "Int": lambda x: int(_number(x)),
    "JSON": _go_json,
}
"""Upstream's ``getTemplateFuncs``."""

BUILTINS: Final[Mapping[str, Callable[..., Any]]] = {
    "not": lambda x: not truth(x),
    "len": _len,
    "index": _index,
    "print": _sprint,
    "printf": _sprintf,
    "println": lambda *xs: " ".join(show(x, strict=False) for x in xs) + "\n",
    "eq": _eq,
    "ne": lambda a, b: not _eq(a, b),
    "lt": _less,
    "le": lambda a, b: _less(a, b) or _eq(a, b),
    "gt": lambda a, b: not (_less(a, b) or _eq(a, b)),
    "ge": lambda a, b: not _less(a, b),
}
"""Go's builtins (``and`` and ``or`` short-circuit, so the executor evaluates them itself)."""

ARITY: Final[Mapping[str, int]] = {
    "DivideFloat": 2,
    "DivideInt": 2,
    "Mod": 2,
    "SubtractFloat": 2,
    "SubtractInt": 2,
    "mod": 2,
    "div": 2,
    "Int": 1,
    "JSON": 1,
    "not": 1,
    "len": 1,
    "ne": 2,
    "lt": 2,
    "le": 2,
    "gt": 2,
    "ge": 2,
}
"""Functions taking a fixed number of arguments (Go checks it when the action runs)."""


def filled_params(template_params: dict[str, Any], params: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """An op's ``templateParams`` with each ``$x`` replaced by the workload's parameter x
    (upstream's ``resolveTemplateParams``), sorted by key. Numbers are float64, as upstream
    decodes the file's JSON (it matters to ``eq`` and to how ``1e+06`` prints)."""
    out = {k: params[v[1:]] if isinstance(v, str) and v.startswith("$") else v for k, v in template_params.items()}
    return tuple(sorted((k, _float64(v)) for k, v in out.items()))


def _float64(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, list):
        return [_float64(v) for v in value]
    if isinstance(value, dict):
        return {k: _float64(v) for k, v in value.items()}
    return value
