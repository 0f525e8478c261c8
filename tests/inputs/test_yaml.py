"""The YAML loader: duplicate keys, alias uses, recursive aliases and deep nesting refused
with a line and column, in time proportional to the text; node marks for ``locate``."""

from __future__ import annotations

import time
from typing import Any

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from emulator.base.inputs import MAX_ALIASES, MAX_DEPTH, YamlError, join_path, load_documents
from tests.inputs.hostile import alias_bomb


def _refused(text: str) -> YamlError:
    with pytest.raises(YamlError) as info:
        load_documents(text, source="s.yaml")
    assert info.value.file == "s.yaml"
    return info.value


def test_documents_skip_empty_ones() -> None:
    docs = load_documents("a: 1\n---\n---\nb: [1, 2]\n", source="s.yaml")
    assert docs.docs == [{"a": 1}, {"b": [1, 2]}]


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        pytest.param(
            "name: a\nseed: 1\nname: b\n",
            'invalid YAML at line 3, column 1: mapping key "name" already defined at line 1',
            id="top-level",
        ),
        pytest.param(
            "spec:\n  containers:\n    - {name: c, image: a, image: b}\n",
            'invalid YAML at line 3, column 27: mapping key "image" already defined at line 3',
            id="flow-mapping",
        ),
        pytest.param(
            "a: [\n",
            "invalid YAML at line 2, column 1: did not find expected node content",
            id="syntax",
        ),
    ],
)
def test_bad_yaml_gives_line_and_column(text: str, detail: str) -> None:
    err = _refused(text)
    assert str(err) == f"s.yaml: {detail}"


def test_merge_keys_may_be_overridden() -> None:
    docs = load_documents("base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\n", source="s.yaml")
    assert docs.docs[0]["use"] == {"x": 1, "y": 3}


def test_aliases_up_to_the_limit_are_accepted() -> None:
    refs = ", ".join(["*a"] * MAX_ALIASES)
    docs = load_documents(f"a: &a {{x: 1}}\nb: [{refs}]\n", source="s.yaml")
    assert len(docs.docs[0]["b"]) == MAX_ALIASES


def test_one_alias_past_the_limit_is_refused() -> None:
    refs = ", ".join(["*a"] * (MAX_ALIASES + 1))
    err = _refused(f"a: &a {{x: 1}}\nb: [{refs}]\n")
    assert err.problem == f"document contains excessive aliasing (more than {MAX_ALIASES} alias uses)"
    assert err.detail.startswith("invalid YAML at line 2, column 4: ")


@pytest.mark.real_time
def test_a_billion_laughs_is_refused_fast() -> None:
    levels = "\n".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 12)}]" for i in range(1, 10))
    started = time.perf_counter()
    err = _refused(f"l0: &l0 [lol]\n{levels}\n")
    assert "excessive aliasing" in err.problem
    assert time.perf_counter() - started < 0.5


@pytest.mark.real_time
def test_the_list_alias_bomb_loads_as_shared_nodes() -> None:
    """81 alias uses: under the limit; the List flattener refuses its expansion (test_lists)."""
    started = time.perf_counter()
    docs = load_documents(alias_bomb(), source="s.yaml")
    assert len(docs.docs[0]["items"]) == 10
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a: &x {b: *x}\n", id="mapping"),
        pytest.param("&x [1, *x]\n", id="sequence"),
        pytest.param("a: &x\n  b:\n    c: *x\n", id="block"),
    ],
)
def test_recursive_alias_is_refused(text: str) -> None:
    assert _refused(text).problem == "found a recursive alias"


@pytest.mark.parametrize(
    ("text", "column"),
    [
        pytest.param("[" * 30_000 + "]" * 30_000, MAX_DEPTH + 1, id="flow-sequences-30000"),
        pytest.param("{a: " * 5_000 + "1" + "}" * 5_000, 4 * MAX_DEPTH + 1, id="flow-mappings"),
        pytest.param("- " * 30_000 + "x\n", 2 * MAX_DEPTH + 1, id="compact-block-sequences"),
        pytest.param("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), MAX_DEPTH + 1, id="just-past-the-limit"),
    ],
)
def test_deep_nesting_is_refused_without_crashing(text: str, column: int) -> None:
    """libyaml's composer recurses in C: 30,000 levels would crash the interpreter. PyYAML
    6.0.4's own scanner limit (1,000 levels) may stop first inside flow collections: the
    message is ours either way, the column then libyaml's."""
    err = _refused(text)
    assert err.problem == f"nested deeper than {MAX_DEPTH} levels"
    assert err.yaml_line == 1
    assert err.yaml_column == column or (len(text) > 1000 * 2 and err.yaml_column is not None)


def test_nesting_at_the_limit_is_accepted() -> None:
    doc = load_documents("[" * MAX_DEPTH + "]" * MAX_DEPTH, source="s.yaml").docs[0]
    depth = 0
    while isinstance(doc, list):
        depth, doc = depth + 1, doc[0] if doc else None
    assert depth == MAX_DEPTH


TEXT = """\
name: demo
steps:
  - sleep: 5s
  - createPods:
      count: 3
      template:
        metadata: {labels: {"app.kubernetes.io/name": web}}
"""


@pytest.mark.parametrize(
    ("path", "where"),
    [
        pytest.param("name", (1, 1), id="top-level-key"),
        pytest.param("steps[1].createPods.count", (5, 7), id="nested-key"),
        pytest.param("steps[1]", (4, 5), id="list-item"),
        pytest.param(
            'steps[1].createPods.template.metadata.labels["app.kubernetes.io/name"]', (7, 29), id="quoted-key"
        ),
        pytest.param("steps[1].createPods.namespace", (4, 5), id="missing-field-points-at-its-parent-key"),
        pytest.param("steps[7]", (2, 1), id="missing-index-points-at-the-list-key"),
        pytest.param("steps[0].sleep[...]", (3, 5), id="msgspec-elided-key"),
        pytest.param("", (1, 1), id="root"),
    ],
)
def test_locate_gives_the_line_and_column_of_a_path(path: str, where: tuple[int, int]) -> None:
    assert load_documents(TEXT, source="s.yaml").locate(path) == where


def test_locate_in_a_multi_document_text_needs_the_document_index() -> None:
    docs = load_documents("a: 1\n---\nb:\n  c: 2\n", source="s.yaml")
    assert docs.locate("documents[1].b.c") == (4, 3)
    assert docs.locate("b.c") is None
    assert docs.locate("documents[5].b") is None


_KEY = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True)
_TREE = st.recursive(
    st.one_of(st.integers(-5, 5), st.text("ab c", max_size=5)),
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=3), st.dictionaries(_KEY, children, min_size=1, max_size=3)
    ),
    max_leaves=12,
)


def _key_paths(value: Any, path: str = "") -> list[tuple[str, str]]:
    """(path, last key) of every mapping entry in ``value``."""
    out: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            out.append((join_path(path, k), k))
            out.extend(_key_paths(v, join_path(path, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_key_paths(v, join_path(path, i)))
    return out


@given(tree=st.dictionaries(_KEY, _TREE, min_size=1, max_size=4), flow=st.booleans())
@example(tree={"on": {"null": 1}}, flow=False)
@example(tree={"on": {"null": 1}}, flow=True)
def test_locate_points_at_the_key_a_path_ends_with(tree: dict[str, Any], flow: bool) -> None:
    text = yaml.safe_dump(tree, default_flow_style=flow, width=10**6)
    docs = load_documents(text, source="s.yaml")
    lines = text.splitlines()
    for path, key in _key_paths(tree):
        where = docs.locate(path)
        assert where is not None
        line, column = where
        at = lines[line - 1][column - 1 :]
        # A key YAML would read as another type ('on', 'null', '1') is dumped quoted.
        assert at.startswith((key, f"'{key}", f'"{key}')), (path, text)
