"""Upstream scheduler_perf's Go templates (``emulator/app/bench/gotemplate.py``): the fields, the helper
functions with Go's arithmetic, trim markers and comments, control structures, pipelines, variables,
Go's builtins and value printing, and what is refused."""

from __future__ import annotations

from typing import Any

import pytest

from emulator.app.bench.gotemplate import TemplateError, parse

ENV = {
    "Index": 7,
    "Count": 10,
    "Zone": "a",
    "Ratio": 0.5,
    "Numeric": "3",
    "Mode": "single",
    "Big": 1000000.0,
    "Items": ["x", "y"],
    "Map": {"b": 2, "a": "<1>"},
}


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
        pytest.param("{{ `raw` }}", "raw", id="raw-string"),
        pytest.param("{{mod .Index 3}}/{{div .Index 2}}/{{Int 2.9}}", "1/3/2", id="lowercase-helpers"),
        pytest.param(
            "{{JSON .Map}} {{JSON .Big}} {{JSON .Items}}", '{"a":"\\u003c1\\u003e","b":2} 1000000 ["x","y"]', id="json"
        ),
        pytest.param("{{if .Index}}yes{{end}}", "yes", id="if"),
        pytest.param("{{if .Missing}}yes{{else}}no{{end}}", "no", id="if-missing-is-false"),
        pytest.param('{{if eq .Mode "all"}}a{{else if eq .Mode "single"}}s{{else}}?{{end}}', "s", id="else-if"),
        pytest.param('{{if eq .Missing "single"}}s{{else}}none{{end}}', "none", id="eq-missing"),
        pytest.param("{{if and .Index (lt .Index .Count)}}in{{end}}", "in", id="and-lt"),
        pytest.param('{{or .Missing "dflt"}}', "dflt", id="or-returns-the-value"),
        pytest.param("{{range $i, $v := .Items}}{{$i}}={{$v}};{{end}}", "0=x;1=y;", id="range-list"),
        pytest.param("{{range $k, $v := .Map}}{{$k}}{{end}}", "ab", id="range-map-in-key-order"),
        pytest.param("{{range 3}}{{.}}{{end}}", "012", id="range-int"),
        pytest.param("{{range .Missing}}x{{else}}empty{{end}}", "empty", id="range-else"),
        pytest.param('{{range .Items}}{{if eq . "y"}}{{break}}{{end}}{{.}}{{end}}', "x", id="break"),
        pytest.param("{{with .Map}}{{.b}}{{end}}", "2", id="with"),
        pytest.param("{{$x := 1}}{{if true}}{{$x = 2}}{{end}}{{$x}}", "2", id="variables"),
        pytest.param("{{.Index | Mod 12}}", "5", id="pipe-last-argument"),
        pytest.param('{{printf "%03d-%s" .Index .Zone}}', "007-a", id="printf"),
        pytest.param("{{len .Items}} {{index .Items 1}} {{not .Index}}", "2 y false", id="builtins"),
        pytest.param("{{.Big}} {{.Ratio}}", "1e+06 0.5", id="float64-prints-as-go"),
        pytest.param("{{ (AddInt 1 2) }}", "3", id="parenthesised"),
    ],
)
def test_renders_as_go_would(text: str, expected: str) -> None:
    assert parse(text).render(ENV) == expected


@pytest.mark.parametrize(
    ("text", "env", "message"),
    [
        pytest.param('{{template "x" .}}', ENV, r"is not understood \(template is not known\)", id="template"),
        pytest.param('{{define "x"}}{{end}}', ENV, r"is not understood \(define is not known\)", id="define"),
        pytest.param("{{nosuch 1}}", ENV, r"is not understood \(nosuch is not known\)", id="unknown-function"),
        pytest.param("{{$y}}", ENV, "undefined variable", id="undefined-variable"),
        pytest.param("{{if .Index}}x", ENV, "missing", id="unclosed-if"),
        pytest.param("{{end}}", ENV, "unexpected", id="stray-end"),
        pytest.param('{{if eq .Index "7"}}x{{end}}', ENV, "incompatible types for comparison", id="eq-kinds"),
        pytest.param("{{if eq .Index .Ratio}}x{{end}}", ENV, "incompatible types for comparison", id="int-vs-float64"),
        pytest.param("{{Mod .Index}}", ENV, "Mod takes 2 arguments, got 1", id="arity"),
        pytest.param("{{.Index | Mod 1 2}}", ENV, "Mod takes 2 arguments, got 3", id="arity-with-pipe"),
        pytest.param("{{.Index 1}}", ENV, "can't give argument to non-function", id="argument-to-field"),
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
    assert parse("{{.A}} {{Mod .B (AddInt .C 1)}} {{if .D}}{{$.E}}{{end}}").fields == {"A", "B", "C", "D", "E"}


def test_probe_shows_the_shape_without_values() -> None:
    text = '{{if eq .mode "x"}}a: 1{{else}}b: {{.n}}{{end}}\nc: {{AddInt .m 1}}'
    assert parse(text).probe() == "b: 1\nc: 1"
