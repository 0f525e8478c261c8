"""Exact Kubernetes resource quantities (``500m``, ``2Gi``, ``1e3``, ``0.5``).

A ``Quantity`` keeps the text it was written as (so it encodes back unchanged) and its
value as an integer number of thousandths (``milli``), rounded up like upstream's
``Quantity.MilliValue``. No float is ever involved: numbers are parsed as exact
fractions. CPU is used in millicores (``milli``); every other resource in base units
(``value``, rounded up like ``Quantity.Value``).

Grammar (upstream ``resource.ParseQuantity``): an optionally signed decimal number,
then one suffix: binary ``Ki Mi Gi Ti Pi Ei``, decimal ``n u m k M G T P E``, or a
decimal exponent ``e<int>`` / ``E<int>``.

Range: any size parses, exactly, as upstream's ``ParseQuantity`` parses it (upstream caps
binary-suffixed ones at the largest int64 and keeps decimal ones as arbitrary-precision
decimals). But a quantity whose milli-value does not fit in an int64 (beyond ``MAX_VALUE``,
about 9.2e15 cores or bytes: ``8Ei`` and ``1e16`` are out) is one the scheduler cannot read:
upstream's scheduler reads ``Quantity.MilliValue()`` as an int64, which then does not hold the
value, and our NodeTable's int64 columns would overflow. Validation
(``emulator.base.api.validation``) refuses it, in upstream's ``field.Invalid`` form, naming
``resource.MaxMilliValue``, the constant upstream compares ``Value()`` with before it trusts
``MilliValue()`` (``fits_int64_milli``, ``TOO_LARGE``). Values below one milli round up to
``1m`` (upstream rounds up to ``1n``: if you ask for some, you get some).

A malformed text does not raise while decoding a manifest: it becomes a Quantity whose
``error`` is set, and validation (``emulator.base.api.validation``) reports it with the exact
field path, which msgspec cannot give for a map value.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Final

__all__ = ["MAX_MILLI", "MAX_VALUE", "TOO_LARGE", "Quantity", "fits_int64_milli", "parse_quantity"]

_BINARY: Final = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}
_DECIMAL: Final = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_RE: Final = re.compile(
    r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?))$"
)
EXPECTED: Final = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
MAX_MILLI: Final = 2**63 - 1
"""The largest milli-value accepted: an int64, as the scheduler's ``MilliValue()`` reads it."""
MAX_VALUE: Final = MAX_MILLI // 1000
"""The largest value accepted, 9223372036854775 (upstream ``resource.MaxMilliValue``)."""
TOO_LARGE: Final = (
    f"must be no more than {MAX_VALUE} (upstream resource.MaxMilliValue): larger quantities do not fit "
    "in the int64 milli-value the scheduler reads"
)


class Quantity:
    """An exact quantity; compare and hash by value, encode as the original text."""

    __slots__ = ("error", "milli", "text")

    text: str
    milli: int
    error: str

    def __init__(self, text: str, milli: int, error: str = "") -> None:
        self.text = text
        self.milli = milli
        self.error = error

    @property
    def value(self) -> int:
        """The value in base units, rounded up (upstream ``Quantity.Value``)."""
        return -((-self.milli) // 1000)

    @classmethod
    def from_milli(cls, milli: int) -> Quantity:
        return cls(f"{milli}m" if milli % 1000 else str(milli // 1000), milli)

    @classmethod
    def from_value(cls, value: int) -> Quantity:
        return cls(str(value), value * 1000)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self.milli == other.milli and self.error == other.error
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.milli)

    def __repr__(self) -> str:
        return f"Quantity({self.text!r})"

    def __str__(self) -> str:
        return self.text


def _exact(value: str | int | float) -> tuple[str, Fraction]:
    if isinstance(value, bool):
        raise ValueError(EXPECTED)
    if isinstance(value, int):
        return str(value), Fraction(value)
    if isinstance(value, float):
        # YAML gives ``cpu: 0.5`` as a float: its shortest repr is the text that was written.
        if not math.isfinite(value):
            raise ValueError(EXPECTED)
        text = repr(value)
        return text, Fraction(text)
    if not isinstance(value, str):
        raise ValueError(EXPECTED)
    text = value.strip()
    m = _RE.match(text)
    if m is None or text in {"", "+", "-", "."}:
        raise ValueError(EXPECTED)
    try:
        number = Fraction(m["num"])
    except ValueError:  # beyond Python's int-from-text digit limit (4300 digits)
        raise ValueError(EXPECTED) from None
    if m["exp"] is not None:
        exponent = int(m["exp"][1:])
        if abs(exponent) > 64:  # far beyond any real quantity; refuse rather than build a huge int
            raise ValueError(EXPECTED)
        return text, number * Fraction(10) ** exponent
    suffix = m["suffix"]
    if suffix in _BINARY:
        return text, number * _BINARY[suffix]
    return text, number * _DECIMAL[suffix]


def parse_quantity(value: str | int | float) -> Quantity:
    """Parse a quantity exactly; raise ``ValueError`` with upstream's wording if malformed.

    Any size parses, as upstream's ``ParseQuantity``; ``fits_int64_milli`` says whether the
    scheduler may read it (validation refuses it otherwise, with ``TOO_LARGE``)."""
    text, exact = _exact(value)
    return Quantity(text, math.ceil(exact * 1000))


def fits_int64_milli(q: Quantity) -> bool:
    """Whether ``q``'s milli-value fits in an int64, as upstream's ``MilliValue()`` returns it."""
    return -MAX_MILLI <= q.milli <= MAX_MILLI


def decode_quantity(value: object) -> Quantity:
    """The msgspec ``dec_hook`` side: never raises, marks a malformed quantity instead."""
    try:
        return parse_quantity(value)  # type: ignore[arg-type]
    except ValueError as err:
        return Quantity(str(value), 0, str(err))
