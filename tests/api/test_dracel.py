"""CEL for DRA device selectors: upstream's environment (``device``, quantity, semver, bind,
string extensions), its compile errors with positions, its runtime errors, the qualified-name
rule, and the compile cache.

The table follows the cases of upstream's ``dynamic-resource-allocation/cel/compile_test.go``
(``TestCompile``), restated here."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.base.api import dracel
from emulator.base.api.dracel import (
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    CelCompileError,
    CelEvalError,
    compile_selector,
    device_view,
    split_qualified_name,
)
from emulator.base.api.dracellib import SemVer, parse_semver
from emulator.base.api.quantity import Quantity, parse_quantity

DRIVER = "dra.example.com"


def _match(
    expression: str,
    attributes: dict[str, Any] | None = None,
    capacity: dict[str, Any] | None = None,
    driver: str = DRIVER,
) -> bool:
    view = device_view(driver, attributes or {}, capacity or {})
    return compile_selector(expression).matches(view)


# --- upstream's TestCompile table ----------------------------------------------------------

CASES: list[Any] = [
    pytest.param("true", {}, {}, "", "", True, id="true"),
    pytest.param("false", {}, {}, "", "", False, id="false"),
    pytest.param("?!", {}, {}, "Syntax error", "", False, id="syntax-error"),
    pytest.param("1", {}, {}, "must evaluate to bool or the unknown type, not int", "", False, id="type-error"),
    pytest.param(
        'device.attributes["dra.example.com"].noSuchAttr.isGreaterThan(quantity("0"))',
        {},
        {},
        "",
        "no such key: noSuchAttr",
        False,
        id="runtime-error",
    ),
    pytest.param(
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        {},
        {},
        "",
        "no such key: noSuchAttr",
        False,
        id="domain-check-negative",
    ),
    pytest.param('device.driver == "dra.example.com"', {}, {}, "", "", True, id="driver-name"),
    pytest.param(
        'device.attributes["dra.example.com"].name',
        {"name": {"bool": True}},
        {},
        "",
        "",
        True,
        id="driver-name-qualifier",
    ),
    pytest.param(
        'device.attributes["other.example.com"].name',
        {"other.example.com/name": {"bool": True}},
        {},
        "",
        "",
        True,
        id="qualified-attribute-name",
    ),
    pytest.param('device.attributes["dra.example.com"].name', {"name": {"bool": True}}, {}, "", "", True, id="bool"),
    pytest.param('device.attributes["dra.example.com"].name > 0', {"name": {"int": 1}}, {}, "", "", True, id="int"),
    pytest.param(
        'device.attributes["dra.example.com"].name == "fish"',
        {"name": {"string": "fish"}},
        {},
        "",
        "",
        True,
        id="string",
    ),
    pytest.param(
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
        {"name": {"version": "1.0.0"}},
        {},
        "",
        "",
        True,
        id="version",
    ),
    pytest.param(
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        {},
        {"name": {"value": parse_quantity("1Mi")}},
        "",
        "",
        True,
        id="quantity",
    ),
    pytest.param(
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("1.0.0"))',
        {"name": {"version": "1.0"}},
        {},
        "",
        "attribute name: parse semantic version",
        False,
        id="malformed-version-attribute",
    ),
    pytest.param(
        'device.attributes["dra.example.com"].bool && device.attributes["dra.example.com"].int > 0 && '
        'device.attributes["dra.example.com"].string == "fish" && '
        'device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) && '
        'device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki"))',
        {"bool": {"bool": True}, "int": {"int": 1}, "string": {"string": "fish"}, "version": {"version": "1.0.0"}},
        {"quantity": {"value": parse_quantity("1Mi")}},
        "",
        "",
        True,
        id="all",
    ),
    pytest.param(
        'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && '
        'device.attributes["dra.example.com"].c',
        {"a": {"bool": True}, "b": {"bool": True}, "c": {"bool": True}},
        {},
        "",
        "",
        True,
        id="many",
    ),
    pytest.param(
        'cel.bind(dra, device.attributes["dra.example.com"], dra.a && dra.b)',
        {"a": {"bool": True}, "b": {"bool": True}},
        {},
        "",
        "",
        True,
        id="bind",
    ),
    pytest.param(
        'device.attributes["dra.example.com"].name.lowerAscii().startsWith("fi")',
        {"name": {"string": "FISH"}},
        {},
        "",
        "",
        True,
        id="string-extensions",
    ),
    pytest.param("device.noSuchField", {}, {}, "undefined field 'noSuchField'", "", False, id="undefined-field"),
    # upstream's checker knows device.attributes is a map and refuses this at compile time; here
    # ``device`` is map(string, dyn), so it is the runtime conversion that fails
    pytest.param("device.attributes", {}, {}, "", "could not be converted to bool", False, id="map-result"),
    pytest.param(
        'device.attributes["dra.example.com"].name',
        {"name": {"string": "x"}},
        {},
        "",
        "CEL result of type string could not be converted to bool",
        False,
        id="dyn-result-not-bool",
    ),
]


def _outcome(expression: str, attributes: dict[str, Any], capacity: dict[str, Any]) -> tuple[str, Any]:
    try:
        selector = compile_selector(expression)
    except CelCompileError as err:
        return ("compile", str(err))
    try:
        return ("match", selector.matches(device_view(DRIVER, attributes, capacity)))
    except CelEvalError as err:
        return ("eval", str(err))


@pytest.mark.parametrize(("expression", "attributes", "capacity", "compile_error", "match_error", "match"), CASES)
def test_compile_table(
    expression: str,
    attributes: dict[str, Any],
    capacity: dict[str, Any],
    compile_error: str,
    match_error: str,
    match: bool,
) -> None:
    outcome = _outcome(expression, attributes, capacity)
    if compile_error:
        assert outcome[0] == "compile", outcome
        assert compile_error in outcome[1]
    elif match_error:
        assert outcome[0] == "eval", outcome
        assert match_error in outcome[1]
    else:
        assert outcome == ("match", match)


# --- compile errors: upstream's text, with positions ---------------------------------------


@pytest.mark.parametrize(
    ("expression", "column", "text"),
    [
        pytest.param("device.x ==", 12, "Syntax error: mismatched input '<EOF>'", id="eof"),
        pytest.param("?!", 1, "Syntax error", id="junk"),
        pytest.param('quantity("1") < quantity("2")', 15, "found no matching overload for '_<_'", id="quantity-lt"),
        pytest.param(
            'quantity("1").compareTo(1) == 0', 24, "found no matching overload for 'compareTo'", id="wrong-arg-type"
        ),
        pytest.param("1 + 'a' == 2", 3, "found no matching overload for '_+_' applied to '(int, string)'", id="add"),
        pytest.param("noSuchVar", 1, "undeclared reference to 'noSuchVar'", id="undeclared"),
        pytest.param("device.driverName == ''", 7, "undefined field 'driverName'", id="old-field-name"),
        pytest.param('true &&\n  device.nope == ""', 9, "undefined field 'nope'", id="second-line"),
    ],
)
def test_compile_errors_name_the_position(expression: str, column: int, text: str) -> None:
    with pytest.raises(CelCompileError) as info:
        compile_selector(expression)
    err = info.value
    assert err.column == column
    assert str(err).startswith("compilation failed: ERROR: <input>:")
    assert f":{column}: " in str(err)
    assert text in str(err)
    assert "\n | " in str(err)  # the source line and a caret under the column, as cel-go prints


def test_string_literals_are_not_fields() -> None:
    assert _match('"device.nope" == "device.nope"')


def test_too_long_is_refused_unparsed() -> None:
    long = "true || " * (CEL_SELECTOR_EXPRESSION_MAX_LENGTH // 8) + "true"
    with pytest.raises(CelCompileError, match=f"may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH}"):
        compile_selector(long)


def test_allow_multiple_allocations_only_with_the_gate() -> None:
    with pytest.raises(CelCompileError, match="undefined field 'allowMultipleAllocations'"):
        compile_selector("device.allowMultipleAllocations")
    selector = compile_selector("device.allowMultipleAllocations", consumable_capacity=True)
    assert selector.matches(device_view(DRIVER, {}, {}, allow_multiple_allocations=True))
    assert not selector.matches(device_view(DRIVER, {}, {}))


# --- the qualified-name rule -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "domain", "ident"),
    [
        ("model", DRIVER, "model"),
        ("dra.example.com/model", DRIVER, "model"),
        ("other.example.com/model", "other.example.com", "model"),
    ],
)
def test_split_qualified_name(name: str, domain: str, ident: str) -> None:
    assert split_qualified_name(name, DRIVER) == (domain, ident)


def test_view_groups_by_domain() -> None:
    view = device_view(
        DRIVER,
        {"model": {"string": "A100"}, "other.example.com/model": {"string": "B"}, "v": {"version": "1.2.3+b"}},
        {"memory": {"value": parse_quantity("80Gi")}, "other.example.com/slots": parse_quantity("4")},
    )
    assert view.attributes == {
        DRIVER: {"model": "A100", "v": SemVer(1, 2, 3, (), ("b",))},
        "other.example.com": {"model": "B"},
    }
    assert view.capacity == {
        DRIVER: {"memory": parse_quantity("80Gi")},
        "other.example.com": {"slots": Quantity("4", 4000)},
    }
    assert view.error == ""


def test_missing_domain_is_an_empty_map_but_not_a_member() -> None:
    # upstream's mapper: a lookup of an absent domain gives {}; ``in`` still says it is absent
    assert _match('!("other.example.com" in device.attributes)')
    assert _match('device.attributes["other.example.com"].size() == 0')
    with pytest.raises(CelEvalError, match="no such key: model"):
        _match('device.attributes["other.example.com"].model == "x"')


# --- quantity and semver libraries -------------------------------------------------------------


@pytest.mark.parametrize(
    "expression",
    [
        'quantity("1Gi") == quantity("1024Mi")',
        'quantity("1Gi").compareTo(quantity("1G")) > 0',
        'quantity("500m").isLessThan(quantity("1"))',
        'quantity("2").isGreaterThan(quantity("1500m"))',
        'quantity("1k").asInteger() == 1000',
        'quantity("1.5").asApproximateFloat() == 1.5',
        '!quantity("1.5").isInteger() && quantity("2").isInteger()',
        'quantity("-3").sign() == -1 && quantity("0").sign() == 0 && quantity("3").sign() == 1',
        'quantity("1").add(quantity("500m")) == quantity("1500m")',
        'quantity("1").add(2) == quantity("3")',
        'quantity("1").sub(quantity("500m")) == quantity("500m")',
        'quantity("5").sub(2).asInteger() == 3',
        'isQuantity("1Gi") && !isQuantity("1 Gi")',
        'semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3',
        'semver("1.2.3").isGreaterThan(semver("1.2.3-rc.1"))',
        'semver("1.2.3-alpha").isLessThan(semver("1.2.3-alpha.1"))',
        'semver("1.2.3-alpha.2").isLessThan(semver("1.2.3-alpha.10"))',
        'semver("1.2.3-2").isLessThan(semver("1.2.3-alpha"))',
        'semver("1.0.0").compareTo(semver("1.0.0+build")) == 0',
        'semver("1.0.0") == semver("1.0.0+other")',
        'isSemver("1.2.3") && !isSemver("1.2") && !isSemver("01.2.3") && isSemver("v1.2", true)',
        'semver("v01.2", true) == semver("1.2.0")',
    ],
)
def test_library_functions(expression: str) -> None:
    assert _match(expression)


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        ('quantity("1 Gi").sign() == 1', "quantities must match the regular expression"),
        ('semver("1.2").major() == 1', "No Major.Minor.Patch elements found"),
        ('quantity("1.5").asInteger() == 1', "cannot convert value to integer"),
    ],
)
def test_library_runtime_errors(expression: str, error: str) -> None:
    with pytest.raises(CelEvalError, match=error):
        _match(expression)


quantities = st.builds(
    lambda n, s: f"{n}{s}", st.integers(-(10**6), 10**6), st.sampled_from(["", "m", "k", "Ki", "Mi", "M", "Gi"])
)


@given(quantities, quantities)
def test_compare_to_agrees_with_quantity_order(a: str, b: str) -> None:
    qa, qb = parse_quantity(a), parse_quantity(b)
    view = device_view(DRIVER, {}, {"a": qa, "b": qb})
    got = compile_selector(
        'device.capacity["dra.example.com"].a.compareTo(device.capacity["dra.example.com"].b) == '
        f"{(qa.milli > qb.milli) - (qa.milli < qb.milli)}"
    ).matches(view)
    assert got


versions = st.builds(
    lambda a, b, c, pre: f"{a}.{b}.{c}" + (f"-{pre}" if pre else ""),
    st.integers(0, 3),
    st.integers(0, 3),
    st.integers(0, 3),
    st.sampled_from(["", "alpha", "alpha.1", "beta", "rc.1", "1", "2"]),
)


@given(versions, versions, versions)
def test_semver_order_is_total_and_transitive(a: str, b: str, c: str) -> None:
    va, vb, vc = (parse_semver(x) for x in (a, b, c))
    assert va.compare(vb) == -vb.compare(va)
    if va.compare(vb) <= 0 and vb.compare(vc) <= 0:
        assert va.compare(vc) <= 0


# --- the cache -----------------------------------------------------------------------------


def test_compile_once_per_distinct_expression() -> None:
    dracel.cache_clear()
    first = compile_selector('device.driver == "a.example.com"')
    assert compile_selector('device.driver == "a.example.com"') is first
    compile_selector('device.driver == "b.example.com"')
    info = dracel.cache_info()
    assert (info.misses, info.hits) == (2, 1)


def test_compile_errors_are_cached_too() -> None:
    dracel.cache_clear()
    for _ in range(3):
        with pytest.raises(CelCompileError):
            compile_selector("device.x ==")
    info = dracel.cache_info()
    assert (info.misses, info.hits) == (1, 2)


def test_view_is_reused_across_selectors() -> None:
    view = device_view(DRIVER, {"model": {"string": "A100"}}, {"memory": parse_quantity("80Gi")})
    driver = compile_selector('device.driver == "dra.example.com"')
    model = compile_selector('device.attributes["dra.example.com"].model == "A100"')
    memory = compile_selector('device.capacity["dra.example.com"].memory.compareTo(quantity("40Gi")) >= 0')
    for _ in range(2):
        assert driver.matches(view)
        assert model.matches(view)
        assert memory.matches(view)
    assert len(view.activation) == 1


@pytest.mark.parametrize(
    "expression",
    [
        'quantity("40Gi") == quantity("40960Mi")',
        'quantity("8Ei").isGreaterThan(quantity("1"))',  # beyond an int64 of milli: not folded, still exact
        'semver("1.2.0-rc.1+b") == semver("1.2.0-rc.1")',
        '"quantity(\\"1\\")" == \'quantity("1")\'',  # inside a string literal: left alone
    ],
)
def test_literal_folding_keeps_meaning(expression: str) -> None:
    assert _match(expression)


def test_view_from_the_api_structs() -> None:
    from emulator.base.api.resource import DeviceAttribute, DeviceCapacity

    view = device_view(
        DRIVER,
        {
            "model": DeviceAttribute(string_value="A100"),
            "count": DeviceAttribute(int_value=8),
            "ok": DeviceAttribute(bool_value=False),
            "other.example.com/v": DeviceAttribute(version_value="1.2.3"),
        },
        {"memory": DeviceCapacity(value=parse_quantity("80Gi"))},
    )
    assert view.attributes == {
        DRIVER: {"model": "A100", "count": 8, "ok": False},
        "other.example.com": {"v": SemVer(1, 2, 3)},
    }
    assert view.capacity == {DRIVER: {"memory": parse_quantity("80Gi")}}
    assert compile_selector(
        'device.attributes["dra.example.com"].count == 8 && !device.attributes["dra.example.com"].ok'
    ).matches(view)
    broken = device_view(DRIVER, {"v": DeviceAttribute()}, {})
    with pytest.raises(CelEvalError, match="attribute v: unsupported attribute value"):
        compile_selector("true").matches(broken)
