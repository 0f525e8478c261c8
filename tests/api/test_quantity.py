"""Quantities: every Kubernetes form parses to an exact milli/value, malformed forms are
rejected with upstream's wording, and format → parse round-trips without float error."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.base.api.codec import ManifestError, convert, load_manifests, to_builtins
from emulator.base.api.core import Pod
from emulator.base.api.quantity import EXPECTED, Quantity, decode_quantity, parse_quantity

GI = 1 << 30

# --- the table of forms -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "milli", "value"),
    [
        pytest.param("100m", 100, 1, id="milli"),
        pytest.param("0.5", 500, 1, id="decimal-fraction"),
        pytest.param("2", 2000, 2, id="integer"),
        pytest.param("0", 0, 0, id="zero"),
        pytest.param("1k", 10**6, 1000, id="kilo"),
        pytest.param("1M", 10**9, 10**6, id="mega"),
        pytest.param("1G", 10**12, 10**9, id="giga"),
        pytest.param("1T", 10**15, 10**12, id="tera"),
        pytest.param("1P", 10**18, 10**15, id="peta"),
        pytest.param("1E", 10**21, 10**18, id="exa-not-exponent"),
        pytest.param("1Ki", 1024 * 1000, 1024, id="kibi"),
        pytest.param("1Mi", (1 << 20) * 1000, 1 << 20, id="mebi"),
        pytest.param("1Gi", GI * 1000, GI, id="gibi"),
        pytest.param("1Ti", (1 << 40) * 1000, 1 << 40, id="tebi"),
        pytest.param("1Pi", (1 << 50) * 1000, 1 << 50, id="pebi"),
        pytest.param("1Ei", (1 << 60) * 1000, 1 << 60, id="exbi"),
        pytest.param("1.5Gi", GI * 1500, GI * 3 // 2, id="fractional-binary"),
        pytest.param("0.5Ki", 512 * 1000, 512, id="half-kibi"),
        pytest.param("1e3", 10**6, 1000, id="exponent"),
        pytest.param("1E3", 10**6, 1000, id="exponent-upper"),
        pytest.param("1e-3", 1, 1, id="negative-exponent"),
        pytest.param("2.5e+2", 250_000, 250, id="signed-exponent"),
        pytest.param("+1", 1000, 1, id="plus-sign"),
        pytest.param(".5", 500, 1, id="leading-dot"),
        pytest.param("5.", 5000, 5, id="trailing-dot"),
        pytest.param("+.5", 500, 1, id="plus-leading-dot"),
        pytest.param("1n", 1, 1, id="nano-rounds-up"),
        pytest.param("1u", 1, 1, id="micro-rounds-up"),
        pytest.param("1500u", 2, 1, id="micro-rounds-up-to-next-milli"),
        pytest.param("1000000n", 1, 1, id="nano-exact-milli"),
        pytest.param("1001m", 1001, 2, id="value-rounds-up"),
        pytest.param("0.001", 1, 1, id="one-milli-decimal"),
        pytest.param("0.0001", 1, 1, id="sub-milli-rounds-up"),
        pytest.param("-1", -1000, -1, id="negative-parses"),
        pytest.param(" 2 ", 2000, 2, id="surrounding-space-trimmed-like-UnmarshalJSON"),
    ],
)
def test_parse_forms(text: str, milli: int, value: int) -> None:
    q = parse_quantity(text)
    assert (q.milli, q.value, q.error) == (milli, value, "")
    assert q.text == text.strip()


@pytest.mark.parametrize(
    ("raw", "text", "milli"),
    [
        pytest.param(0.5, "0.5", 500, id="yaml-float-half"),
        pytest.param(2, "2", 2000, id="yaml-int"),
        pytest.param(0.1, "0.1", 100, id="float-0.1-exact"),
        pytest.param(0.7, "0.7", 700, id="float-0.7-no-float-error"),  # 0.7*1000 == 700.0000000000001
        pytest.param(1.1, "1.1", 1100, id="float-1.1-no-float-error"),  # 1.1*1000 == 1100.0000000000002
        pytest.param(2.675, "2.675", 2675, id="float-2.675"),
        pytest.param(1e16, "1e+16", 10**19, id="float-large-repr-exponent"),
        pytest.param(12345678901234567890, "12345678901234567890", 12345678901234567890000, id="big-int"),
        pytest.param(0, "0", 0, id="int-zero"),
    ],
)
def test_numbers_from_yaml_are_exact(raw: int | float, text: str, milli: int) -> None:
    q = parse_quantity(raw)
    assert (q.text, q.milli) == (text, milli)


@pytest.mark.parametrize(
    ("yaml_value", "milli"),
    [
        pytest.param("0.5", 500, id="float"),
        pytest.param("2", 2000, id="int"),
        pytest.param("'2'", 2000, id="quoted-int"),
        pytest.param("100m", 100, id="string"),
        pytest.param("1e3", 10**6, id="exponent-string"),
        pytest.param("1.5e3", 1_500_000, id="yaml-float-with-exponent"),
        pytest.param("0.7", 700, id="float-0.7"),
    ],
)
def test_manifest_values_decode_exactly(yaml_value: str, milli: int) -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        f"spec: {{containers: [{{name: c, image: i, resources: {{requests: {{cpu: {yaml_value}}}}}}}]}}\n"
    )
    (pod,) = load_manifests(text, source="t")
    assert isinstance(pod, Pod)
    assert pod.spec.containers[0].resources.requests["cpu"].milli == milli


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("", id="empty"),
        pytest.param("abc", id="letters"),
        pytest.param("1K", id="upper-K-not-a-suffix"),
        pytest.param("1.2.3", id="two-dots"),
        pytest.param("1e", id="bare-e"),
        pytest.param("1.5e", id="fraction-bare-e"),
        pytest.param("e3", id="no-number"),
        pytest.param("Gi", id="suffix-only"),
        pytest.param("1 Gi", id="inner-space"),
        pytest.param("1Gi1", id="junk-after-suffix"),
        pytest.param("1e3m", id="exponent-and-suffix"),
        pytest.param("1i", id="bare-i"),
        pytest.param("--1", id="double-sign"),
        pytest.param("1ee3", id="double-e"),
        pytest.param(".", id="dot"),
        pytest.param("+", id="plus"),
        pytest.param("-", id="minus"),
        pytest.param("0x10", id="hex"),
        pytest.param("1,5", id="comma"),
        pytest.param(True, id="bool"),
        pytest.param(None, id="null"),
        pytest.param([1], id="list"),
        pytest.param(float("nan"), id="nan"),
        pytest.param(float("inf"), id="inf"),
    ],
)
def test_malformed_forms_rejected(raw: object) -> None:
    with pytest.raises(ValueError, match=r"^quantities must match the regular expression") as err:
        parse_quantity(raw)  # type: ignore[arg-type]
    assert str(err.value) == EXPECTED


def test_decode_quantity_never_raises_and_marks_the_error() -> None:
    q = decode_quantity("1.2.3")
    assert (q.text, q.milli, q.error) == ("1.2.3", 0, EXPECTED)
    assert decode_quantity("2").error == ""
    assert decode_quantity("1.2.3") != parse_quantity("0")


def test_malformed_quantity_in_manifest_names_exact_field_path() -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        "spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 1.2.3}}}]}\n"
    )
    with pytest.raises(ManifestError) as err:
        load_manifests(text, source="pod.yaml")
    assert err.value.path == "spec.containers[0].resources.requests.cpu"
    assert str(err.value) == f'pod.yaml: spec.containers[0].resources.requests.cpu: Invalid value: "1.2.3": {EXPECTED}'


# --- value semantics ------------------------------------------------------------------------


def test_equal_by_value_not_by_text() -> None:
    assert parse_quantity("1") == parse_quantity("1000m") == parse_quantity("1e0") == parse_quantity(1)
    assert parse_quantity("1Ki") == parse_quantity("1024")
    assert hash(parse_quantity("1")) == hash(parse_quantity("1000m"))
    assert parse_quantity("1") != parse_quantity("1001m")
    assert parse_quantity("1").__eq__("1") is NotImplemented
    assert len({parse_quantity("0.5"), parse_quantity("500m")}) == 1


def test_text_is_kept_for_encoding() -> None:
    pod = convert(
        {"spec": {"containers": [{"name": "c", "resources": {"limits": {"memory": "1.5Gi", "cpu": 0.5}}}]}},
        Pod,
    )
    assert to_builtins(pod)["spec"]["containers"][0]["resources"]["limits"] == {"memory": "1.5Gi", "cpu": "0.5"}
    assert str(parse_quantity("1.5Gi")) == "1.5Gi"
    assert repr(parse_quantity("100m")) == "Quantity('100m')"


@pytest.mark.parametrize(
    ("milli", "text"),
    [
        pytest.param(1500, "1500m", id="fractional"),
        pytest.param(2000, "2", id="whole"),
        pytest.param(0, "0", id="zero"),
        pytest.param(1, "1m", id="one-milli"),
    ],
)
def test_from_milli(milli: int, text: str) -> None:
    q = Quantity.from_milli(milli)
    assert (q.text, q.milli) == (text, milli)
    assert parse_quantity(q.text) == q


def test_from_value() -> None:
    q = Quantity.from_value(GI)
    assert (q.text, q.milli, q.value) == (str(GI), GI * 1000, GI)


def test_point_one_plus_point_two_is_exactly_point_three() -> None:
    assert parse_quantity("0.1").milli + parse_quantity("0.2").milli == parse_quantity("0.3").milli == 300
    assert parse_quantity(0.1).milli + parse_quantity(0.2).milli == 300
    # The float sum itself is not 0.3; the quantity of what was written is still exact.
    assert 0.1 + 0.2 != 0.3
    assert parse_quantity("0.30000000000000004").milli == 301  # rounded up, like MilliValue


# --- round trips (hypothesis) ---------------------------------------------------------------

_DECIMAL_EXP = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_EXP = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
millis = st.integers(min_value=0, max_value=10**15)


def _decimal_text(milli: int, exp10: int) -> str:
    """``milli`` thousandths written exactly as a decimal number of 10**exp10 units."""
    return format(Decimal(milli).scaleb(-3 - exp10), "f")


@given(milli=millis, suffix=st.sampled_from(sorted(_DECIMAL_EXP)))
def test_decimal_suffix_round_trip(milli: int, suffix: str) -> None:
    text = _decimal_text(milli, _DECIMAL_EXP[suffix]) + suffix
    q = parse_quantity(text)
    assert q.milli == milli, text
    assert q.value == -(-milli // 1000)


@given(milli=millis, sign=st.sampled_from(["e", "E"]))
def test_exponent_round_trip(milli: int, sign: str) -> None:
    assert parse_quantity(f"{milli}{sign}-3").milli == milli
    assert parse_quantity(f"{milli}{sign}0").milli == milli * 1000


@given(n=st.integers(min_value=0, max_value=2**20), halves=st.booleans(), suffix=st.sampled_from(sorted(_BINARY_EXP)))
def test_binary_suffix_round_trip(n: int, halves: bool, suffix: str) -> None:
    text = f"{n}.5{suffix}" if halves else f"{n}{suffix}"
    exact = (Fraction(n) + (Fraction(1, 2) if halves else 0)) * (1 << _BINARY_EXP[suffix])
    q = parse_quantity(text)
    assert q.milli == exact * 1000
    assert q.value == math.ceil(exact)


@given(milli=millis)
def test_from_milli_text_parses_back(milli: int) -> None:
    q = Quantity.from_milli(milli)
    assert parse_quantity(q.text).milli == milli


@given(milli=st.integers(min_value=0, max_value=10**9))
def test_yaml_float_of_decimal_text_is_exact(milli: int) -> None:
    text = _decimal_text(milli, 0)
    assert parse_quantity(float(text)).milli == milli


@given(a=st.integers(min_value=0, max_value=10**6), b=st.integers(min_value=0, max_value=10**6))
def test_sums_of_decimal_fractions_are_exact(a: int, b: int) -> None:
    qa, qb = parse_quantity(_decimal_text(a, 0)), parse_quantity(_decimal_text(b, 0))
    assert qa.milli + qb.milli == parse_quantity(_decimal_text(a + b, 0)).milli == a + b
