"""The Kubernetes CEL libraries DRA selectors use: ``quantity`` and ``semver`` values.

Upstream's DRA environment (``k8s.io/dynamic-resource-allocation/cel``) is the Kubernetes base
CEL environment (``k8s.io/apiserver/pkg/cel/library``: ``Quantity``, ``SemverLib``) plus the
``device`` variable. Their values are opaque CEL types (``kubernetes.Quantity``,
``kubernetes.Semver``); the engine (cel-expr-python, Google's CEL C++ runtime) type-checks
against those abstract types but cannot carry an opaque Python value at run time. So at run
time a quantity is the one-entry map ``{"__q": milli}`` and a semver ``{"__v": "1.2.3-rc.1"}``
(canonical text, build metadata dropped): CEL's map equality then compares them by value,
exactly as upstream's ``Quantity.Equal`` and ``Semver.Equal`` do, and the member functions
below unwrap them. Nothing else can build such a map with a passing type check: the checking
environment only knows the abstract types.

``SemVer`` parses as ``github.com/blang/semver/v4``'s ``Parse`` (strict ``MAJOR.MINOR.PATCH``,
no leading zeros, dot-separated pre-release identifiers, ``+build``), and with ``normalize``
as upstream's ``semver(string, true)`` (a ``v`` prefix, missing minor/patch, leading zeros).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from emulator.base.api.quantity import parse_quantity

__all__ = ["FUNCTIONS", "Q_TAG", "V_TAG", "SemVer", "parse_semver", "quantity_value", "semver_value"]

Q_TAG: Final = "__q"
V_TAG: Final = "__v"
_INT64: Final = 2**63 - 1
_ALNUM: Final = re.compile(r"^[0-9A-Za-z-]+$")


@dataclass(frozen=True, slots=True, order=False)
class SemVer:
    """A semantic version (``major.minor.patch[-pre][+build]``), compared as semver 2.0.0 says."""

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = ()

    def canonical(self) -> str:
        """The text without build metadata: equal versions give equal texts."""
        core = f"{self.major}.{self.minor}.{self.patch}"
        return core + ("-" + ".".join(str(p) for p in self.pre) if self.pre else "")

    def __str__(self) -> str:
        return self.canonical() + ("+" + ".".join(self.build) if self.build else "")

    def compare(self, other: SemVer) -> int:
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if self.pre == other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            if isinstance(x, int) and isinstance(y, int):
                return -1 if x < y else 1
            if isinstance(x, int):
                return -1  # numeric identifiers have lower precedence than alphanumeric ones
            if isinstance(y, int):
                return 1
            return -1 if x < y else 1
        return -1 if len(self.pre) < len(other.pre) else 1


def _number(part: str, what: str) -> int:
    if not part:
        raise ValueError(f"{what} number must not be empty")
    if not part.isdigit() or not part.isascii():
        raise ValueError(f"Invalid character(s) found in {what} number {part!r}")
    if len(part) > 1 and part[0] == "0":
        raise ValueError(f"{what.capitalize()} number must not contain leading zeroes {part!r}")
    return int(part)


@lru_cache(maxsize=4096)
def parse_semver(text: str, normalize: bool = False) -> SemVer:
    """Parse as blang/semver's ``Parse``; raise ``ValueError`` with its wording when malformed."""
    if normalize:
        text = _normalize(text)
    if not text:
        raise ValueError("Version string empty")
    core, plus, build_text = text.partition("+")
    core, dash, pre_text = core.partition("-")
    parts = core.split(".")
    if len(parts) != 3:
        raise ValueError("No Major.Minor.Patch elements found")
    major, minor, patch = (_number(p, w) for p, w in zip(parts, ("major", "minor", "patch"), strict=True))
    pre: list[int | str] = []
    if dash:
        for ident in pre_text.split("."):
            if not ident:
                raise ValueError("Prerelease is empty")
            if not _ALNUM.match(ident):
                raise ValueError(f"Invalid character(s) found in prerelease {ident!r}")
            if ident.isdigit():
                if len(ident) > 1 and ident[0] == "0":
                    raise ValueError(f"Prerelease number must not contain leading zeroes {ident!r}")
                pre.append(int(ident))
            else:
                pre.append(ident)
    build: list[str] = []
    if plus:
        for ident in build_text.split("."):
            if not ident:
                raise ValueError("Build meta data is empty")
            if not _ALNUM.match(ident):
                raise ValueError(f"Invalid character(s) found in build meta data {ident!r}")
            build.append(ident)
    return SemVer(major, minor, patch, tuple(pre), tuple(build))


def _normalize(text: str) -> str:
    """Upstream's ``semver(s, true)``: drop a ``v``, fill missing minor/patch, drop leading zeros."""
    text = text.removeprefix("v")
    core_end = len(text)
    for sep in "-+":
        i = text.find(sep)
        if i != -1:
            core_end = min(core_end, i)
    core, rest = text[:core_end], text[core_end:]
    parts = core.split(".")
    if not 1 <= len(parts) <= 3:
        return text
    parts = [p.lstrip("0") or "0" if p.isdigit() else p for p in parts]
    parts += ["0"] * (3 - len(parts))
    return ".".join(parts) + rest


# ---- run-time values -------------------------------------------------------------------------


def quantity_value(milli: int) -> dict[str, int | str]:
    """A quantity at run time; beyond a CEL int (int64) the milli-value travels as its decimal text
    (one representation per value either way, so map equality stays value equality)."""
    return {Q_TAG: milli if -_INT64 - 1 <= milli <= _INT64 else str(milli)}


def semver_value(v: SemVer) -> dict[str, str]:
    return {V_TAG: v.canonical()}


def _milli(q: dict[str, Any]) -> int:
    return int(q[Q_TAG])


def _ver(v: dict[str, Any]) -> SemVer:
    return parse_semver(str(v[V_TAG]))


def _cmp(a: int, b: int) -> int:
    return (a > b) - (a < b)


def _quantity(text: str) -> dict[str, int | str]:
    return quantity_value(parse_quantity(text).milli)  # ValueError: upstream's regular-expression message


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


def _semver(text: str, normalize: bool = False) -> dict[str, str]:
    return semver_value(parse_semver(text, normalize))


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize)
    except ValueError:
        return False
    return True


def _as_integer(q: dict[str, Any]) -> int:
    milli = _milli(q)
    if milli % 1000 or not -_INT64 - 1 <= milli // 1000 <= _INT64:
        raise ValueError("cannot convert value to integer")
    return milli // 1000


def _both_cmp(a: dict[str, Any], b: dict[str, Any]) -> int:
    """``compareTo``: one run-time overload serves quantity and semver (both are maps there)."""
    if Q_TAG in a and Q_TAG in b:
        return _cmp(_milli(a), _milli(b))
    if V_TAG in a and V_TAG in b:
        return _ver(a).compare(_ver(b))
    raise ValueError("no such overload")


FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": _semver,
    "isSemver": _is_semver,
    "compareTo": _both_cmp,
    "isGreaterThan": lambda a, b: _both_cmp(a, b) > 0,
    "isLessThan": lambda a, b: _both_cmp(a, b) < 0,
    "sign": lambda q: _cmp(_milli(q), 0),
    "isInteger": lambda q: _milli(q) % 1000 == 0 and -_INT64 - 1 <= _milli(q) // 1000 <= _INT64,
    "asInteger": _as_integer,
    "asApproximateFloat": lambda q: _milli(q) / 1000,
    "add_q": lambda a, b: quantity_value(_milli(a) + _milli(b)),
    "add_i": lambda a, b: quantity_value(_milli(a) + 1000 * b),
    "sub_q": lambda a, b: quantity_value(_milli(a) - _milli(b)),
    "sub_i": lambda a, b: quantity_value(_milli(a) - 1000 * b),
    "major": lambda v: _ver(v).major,
    "minor": lambda v: _ver(v).minor,
    "patch": lambda v: _ver(v).patch,
}
"""Implementations by name (``add``/``sub`` split by argument type), for ``emulator.base.api.dracel``."""
