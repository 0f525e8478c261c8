"""Upstream scheduler_perf's Go templates (``emulator/app/bench/gotemplate.py``): the fields, the helper
functions with Go's arithmetic, trim markers and comments, and what is refused."""

from __future__ import annotations

from typing import Any

import pytest

from emulator.app.bench.gotemplate import TemplateError, parse

ENV = {"Index": 7, "Count": 10, "Zone": "a", "Ratio": 0.5, "Numeric": "3"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("n-{{.Index}}", "n-7", id="field"),
        pytest.param("{{ .Index }}/{{ .Count }}", "7/10", id="spaces"),
        pytest.param("{{AddInt .Index 1 2}}", "10", id="add-int"),
        pytest.param("{{SubtractInt .Count .Index}}", "3", id="subtract-int"),
        pytest.param("{{MultiplyInt .Index .Ratio}}", "3", id="multiply-int-truncates"),
        pytest.param("{{DivideInt .Index 2}}", "3", id="divide-int"),
        pytest.param("{{DivideInt -7 2}}", "-3", id="divide-int-toward-zero"),
        pytest.param("{{Mod .Index 3}}", "1", id="mod"),
        pytest.param("{{Mod -7 3}}", "-1", id="mod-sign-of-dividend"),
        pytest.param("{{DivideFloat .Index 2}}", "3.5", id="divide-float"),
        pytest.param("{{AddFloat .Ratio .Ratio}}", "1", id="float-without-fraction-prints-as-int"),
        pytest.param("{{AddInt .Numeric 1}}", "4", id="numeric-string"),
        pytest.param("{{Mod (AddInt .Index 5) .Count}}", "2", id="nested"),
        pytest.param("a {{- .Zone -}} b", "aab", id="trim-markers"),
        pytest.param("x{{/* a comment */}}y", "xy", id="comment"),
        pytest.param('{{ "lit" }}', "lit", id="string-literal"),
    ],
)
def test_renders_as_go_would(text: str, expected: str) -> None:
    assert parse(text).render(ENV) == expected


@pytest.mark.parametrize(
    ("text", "env", "message"),
    [
        pytest.param("{{if .Index}}x{{end}}", ENV, r"\{\{if .Index\}\} is not understood \(if is not known\)", id="if"),
        pytest.param("{{.Index | printf}}", ENV, r"\{\{.Index \| printf\}\} is not understood", id="pipe"),
        pytest.param("{{$x := 1}}", ENV, "is not understood", id="variable"),
        pytest.param("{{Mod .Index}}", ENV, "Mod takes 2 arguments, got 1", id="arity"),
        pytest.param("{{(AddInt 1 2}}", ENV, "unclosed", id="paren"),
        pytest.param("{{.Missing}}", ENV, r"reads \.Missing, which is not set", id="missing-field"),
        pytest.param("{{DivideFloat 1 0}}", ENV, "division by zero", id="divide-by-zero"),
        pytest.param("{{AddInt .Zone 1}}", ENV, "cannot cast a to float64", id="not-a-number"),
        pytest.param("{{ .Index ", ENV, "unclosed", id="unclosed-action"),
    ],
)
def test_refuses_what_upstream_would_not_render_the_same(text: str, env: dict[str, Any], message: str) -> None:
    with pytest.raises(TemplateError, match=message):
        parse(text).render(env)


def test_fields_are_listed() -> None:
    assert parse("{{.A}} {{Mod .B (AddInt .C 1)}}").fields == {"A", "B", "C"}
