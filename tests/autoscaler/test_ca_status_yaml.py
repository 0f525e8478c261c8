"""``block_yaml``, the status ConfigMap's hand-written YAML (written every loop), is
``yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)`` byte for byte: for the
documents ``StatusBuilder`` builds (any group name, backoff message and time) and for any
document of mappings, lists of mappings, ints and strings."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.autoscaler.clusterautoscaler.status import Counts, GroupState, StatusBuilder, block_yaml


def _dump(doc: Any) -> str:
    return str(yaml.safe_dump(doc, sort_keys=False, default_flow_style=False))


_words = st.sampled_from(
    ["c-2x", "yes", "no", "1", "0.5", "null", "~", "a: b", "x #y", "-", "it's", "", "é", "two words", "g" * 90]
)
_text = st.one_of(_words, st.text(max_size=40), st.text(alphabet="ab -:#'\".", max_size=100))
_scalar = st.one_of(st.integers(-(10**6), 10**6), _text)
_key = st.one_of(st.sampled_from(["name", "status", "nodeCounts", "lastProbeTime"]), _text)
_doc = st.recursive(
    st.dictionaries(_key, _scalar, max_size=4),
    lambda inner: st.dictionaries(_key, st.one_of(_scalar, inner, st.lists(inner, max_size=3)), max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_doc)
def test_any_document_as_pyyaml_writes_it(doc: dict[str, Any]) -> None:
    assert block_yaml(doc) == _dump(doc)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(_text, min_size=0, max_size=3, unique=True),
    st.floats(-1e6, 1e8, allow_nan=False),
    st.floats(0, 1e6),
    _text,
    st.integers(0, 5),
)
def test_status_documents_as_pyyaml_writes_them(
    names: list[str], t: float, probe_back: float, backoff: str, n: int
) -> None:
    groups = [
        GroupState(name, Counts(n, n, 0, n % 2, n // 2), n, 0, 10 * n, n % 3, n == 1, backoff if n == 2 else "")
        for name in names
    ]
    builder = StatusBuilder()
    for moment in (t, t + 10.25):
        text = builder.build(moment, groups, Counts(n), moment - probe_back)
        assert text == _dump(yaml.safe_load(text))
