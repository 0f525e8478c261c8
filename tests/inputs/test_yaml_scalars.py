"""Scalars whose tag's constructor cannot build them are YAML errors with the node's mark,
not a bare ``ValueError`` (a traceback before this was fixed)."""

from __future__ import annotations

import pytest

from emulator.base.inputs import YamlError, load_documents


@pytest.mark.parametrize(
    ("text", "line", "column", "problem"),
    [
        pytest.param(
            "name: t\nseed: " + "9" * 5000 + "\n",
            2,
            7,
            "cannot read '" + "9" * 40 + "' as tag:yaml.org,2002:int: Exceeds the limit (4300 digits) "
            "for integer string conversion: value has 5000 digits",
            id="int-of-5000-digits",
        ),
        pytest.param(
            "a: [x, 2001-13-45]\n",
            1,
            8,
            "cannot read '2001-13-45' as tag:yaml.org,2002:timestamp: month must be in 1..12",
            id="timestamp-out-of-range",
        ),
        pytest.param(
            "a: {k: 2001-02-30}\n",
            1,
            8,
            "cannot read '2001-02-30' as tag:yaml.org,2002:timestamp: day is out of range for month",
            id="day-out-of-range",
        ),
    ],
)
def test_unbuildable_scalar_is_a_yaml_error(text: str, line: int, column: int, problem: str) -> None:
    with pytest.raises(YamlError) as info:
        load_documents(text, source="s.yaml")
    assert (info.value.yaml_line, info.value.yaml_column, info.value.problem) == (line, column, problem)


def test_an_int_at_the_conversion_limit_still_loads() -> None:
    assert load_documents("seed: " + "9" * 4300 + "\n", source="s.yaml").docs == [{"seed": int("9" * 4300)}]
