"""``IntOrString`` (upstream ``k8s.io/apimachinery/pkg/util/intstr``): ``maxSurge: 25%`` or ``maxSurge: 1``.

What this module owns: the wire type (a YAML int or string), ``scaled_value`` (upstream
``GetScaledValueFromIntOrPercent``, which controllers use to turn ``25%`` of 10 replicas
into a count), ``go_repr`` (how ``field.Invalid`` prints one: Go's ``%#v`` of the struct) and
the API server's checks of one (``positive_int_or_percent_problems``: upstream apps
validation's ``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent``).

It does not own which fields are IntOrStrings, nor their defaults (the kinds' modules).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Final

from emulator.base.api.labels import go_quote

__all__ = [
    "IntOrString",
    "go_repr",
    "is_zero",
    "not_more_than_100_percent_problems",
    "percent_value",
    "positive_int_or_percent_problems",
    "scaled_value",
]

IntOrString = int | str
"""A YAML/JSON integer, or a string such as ``"25%"``."""

_PERCENT_RE: Final = re.compile(r"[0-9]+%")
PERCENT_ERROR: Final = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)


def go_repr(value: IntOrString) -> str:
    """Go's ``%#v`` of an ``intstr.IntOrString`` (``Type`` 0 is an int, 1 a string)."""
    if isinstance(value, int):
        return f'intstr.IntOrString{{Type:0, IntVal:{value}, StrVal:""}}'
    return f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{go_quote(value)}}}"


def percent_value(value: IntOrString) -> int | None:
    """The number of a valid percent string (``"25%"`` → 25), None otherwise."""
    if isinstance(value, str) and _PERCENT_RE.fullmatch(value):
        return int(value[:-1])
    return None


def is_zero(value: IntOrString) -> bool:
    """Upstream ``getIntOrPercentValue(v) == 0``: ``0`` or ``"0%"``."""
    if isinstance(value, int):
        return value == 0
    pct = percent_value(value)
    return pct == 0


def scaled_value(value: IntOrString, total: int, *, round_up: bool) -> int:
    """``GetScaledValueFromIntOrPercent``: an int as is, a percent of ``total`` rounded up or
    down. A string that is not a percent raises ``ValueError`` (validation refuses it)."""
    if isinstance(value, int):
        return value
    pct = percent_value(value)
    if pct is None:
        raise ValueError(f"invalid value for IntOrString: invalid value {go_quote(value)}")
    exact = pct * total
    return math.ceil(exact / 100) if round_up else exact // 100


def positive_int_or_percent_problems(value: IntOrString, path: str) -> Iterator[tuple[str, str]]:
    """``ValidatePositiveIntOrPercent``: a percent string, or an int ≥ 0."""
    if isinstance(value, str):
        if percent_value(value) is None:
            yield path, f"Invalid value: {go_repr(value)}: {PERCENT_ERROR}"
    elif value < 0:
        yield path, f"Invalid value: {value}: must be greater than or equal to 0"


def not_more_than_100_percent_problems(value: IntOrString, path: str) -> Iterator[tuple[str, str]]:
    """``IsNotMoreThan100Percent``: only percents are bounded."""
    pct = percent_value(value)
    if pct is not None and pct > 100:
        yield path, f"Invalid value: {go_repr(value)}: must not be greater than 100%"
