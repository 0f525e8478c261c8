"""Quantities whose milli-value does not fit in an int64 parse (as upstream) but are refused
by validation, so that nothing the scheduler's int64 columns read can overflow.

Regressions: a node with ``memory: 8Ei`` or ``cpu: "1e16"`` passed validation and then
crashed the run (the NodeTable's int64 columns overflowed); a 310-digit cpu crashed ``explain``.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.base.api.codec import convert
from emulator.base.api.core import Node, Pod
from emulator.base.api.errors import Invalid
from emulator.base.api.quantity import EXPECTED, MAX_VALUE, TOO_LARGE, fits_int64_milli, parse_quantity
from emulator.base.api.validation import validate

BIG_CPU = "1" * 310


@pytest.mark.parametrize(
    ("text", "fits"),
    [
        pytest.param("8Ei", False, id="8Ei"),
        pytest.param("7Ei", False, id="7Ei"),
        pytest.param("9Pi", False, id="9Pi"),
        pytest.param("1e16", False, id="1e16"),
        pytest.param("10P", False, id="10P"),
        pytest.param("9223372036854776", False, id="max-plus-one"),
        pytest.param(BIG_CPU, False, id="310-digits"),
        pytest.param(10**20, False, id="huge-int"),
        pytest.param(1.0e16, False, id="huge-float"),
        pytest.param("-1e16", False, id="huge-negative"),
        pytest.param(str(MAX_VALUE), True, id="max-value"),
        pytest.param(f"-{MAX_VALUE}", True, id="min-value"),
        pytest.param("8Pi", True, id="8Pi"),
        pytest.param("9e15", True, id="9e15"),
        pytest.param("1e-30", True, id="tiny-exponent"),
        pytest.param("0.0000001m", True, id="sub-milli"),
    ],
)
def test_fits_int64_milli(text: Any, fits: bool) -> None:
    assert fits_int64_milli(parse_quantity(text)) is fits


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("1e400", id="exponent-400"),
        # Regression: Python's int-from-text digit limit raised a ValueError of its own wording.
        pytest.param("1" * 5000, id="5000-digits"),
        pytest.param("0." + "0" * 5000 + "1", id="5000-fraction-digits"),
        pytest.param(float("inf"), id="inf"),
        pytest.param(float("nan"), id="nan"),
        pytest.param(True, id="bool"),
        pytest.param("0x10", id="hex"),
    ],
)
def test_parse_refuses_malformed_with_upstream_wording(text: Any) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(EXPECTED)}$"):
        parse_quantity(text)


@pytest.mark.parametrize(
    ("text", "milli"),
    [
        # Upstream rounds a tiny non-zero amount up rather than to zero; we round to 1m.
        pytest.param("1e-30", 1, id="tiny-exponent"),
        pytest.param("0.0000001m", 1, id="sub-milli"),
        pytest.param("-0", 0, id="negative-zero"),
    ],
)
def test_tiny_amounts_round_up(text: str, milli: int) -> None:
    assert parse_quantity(text).milli == milli


@given(st.integers(min_value=-(2**70), max_value=2**70))
def test_fits_exactly_when_the_milli_value_is_an_int64(n: int) -> None:
    q = parse_quantity(f"{n}m")
    assert fits_int64_milli(q) is (-(2**63) < n < 2**63)


def _pod(requests: dict[str, Any], limits: dict[str, Any] | None = None) -> Pod:
    resources = {"requests": requests, "limits": limits or {}}
    container = {"name": "c", "image": "i", "resources": resources}
    return convert({"metadata": {"name": "p"}, "spec": {"containers": [container]}}, Pod)


def _node(capacity: dict[str, Any], allocatable: dict[str, Any] | None = None) -> Node:
    status = {"capacity": capacity, "allocatable": allocatable or {}}
    return convert({"metadata": {"name": "n"}, "status": status}, Node)


@pytest.mark.parametrize(
    ("obj", "field", "text"),
    [
        pytest.param(_node({"memory": "8Ei"}), "status.capacity.memory", "8Ei", id="node-capacity-memory"),
        pytest.param(_node({"cpu": "1e16"}), "status.capacity.cpu", "1e16", id="node-capacity-cpu"),
        pytest.param(_node({}, {"cpu": BIG_CPU}), "status.allocatable.cpu", BIG_CPU, id="node-allocatable-cpu"),
        pytest.param(_node({"example.com/gpu": "1e16"}), "status.capacity.example.com/gpu", "1e16", id="node-extended"),
        pytest.param(
            _pod({"cpu": "1e16"}), "spec.containers[0].resources.requests.cpu", "1e16", id="container-request"
        ),
        pytest.param(
            _pod({}, {"memory": "8Ei"}), "spec.containers[0].resources.limits.memory", "8Ei", id="container-limit"
        ),
    ],
)
def test_validation_refuses_out_of_range_quantities(obj: object, field: str, text: str) -> None:
    with pytest.raises(Invalid) as err:
        validate(obj)
    assert err.value.field == field
    assert err.value.detail == f'Invalid value: "{text}": {TOO_LARGE}'


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        pytest.param(_node({"cpu": f"-{BIG_CPU}"}), "status.capacity.cpu", id="huge-negative"),
        pytest.param(_pod({"cpu": "-1"}), "spec.containers[0].resources.requests.cpu", id="negative"),
    ],
)
def test_validation_refuses_negative_quantities_as_before(obj: object, field: str) -> None:
    with pytest.raises(Invalid, match="must be greater than or equal to 0") as err:
        validate(obj)
    assert err.value.field == field


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(_node({"cpu": str(MAX_VALUE), "memory": "8Pi"}), id="node-at-max"),
        pytest.param(_pod({"cpu": str(MAX_VALUE)}), id="pod-at-max"),
    ],
)
def test_validation_accepts_up_to_the_maximum(obj: object) -> None:
    validate(obj)
