"""``metadata_labels_problem`` (memoised) equals the first ``label_problems`` of the same map,
whatever the order of its items and however often it is asked."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.base.api.labelselector import label_problems
from emulator.base.api.validation import metadata_labels_problem

KEYS = st.sampled_from(["app", "a b", "example.com/tier", "-bad", "k" * 64, "x/y/z", "", "zone"])
VALUES = st.sampled_from(["", "web", "a b", "v" * 64, "-x", "ok.1", "zone-a"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=4), st.randoms(use_true_random=False))
def test_memoised_problem_equals_label_problems(labels: dict[str, str], rnd: object) -> None:
    items = list(labels.items())
    rnd.shuffle(items)  # type: ignore[attr-defined]
    want = next(label_problems(labels, "metadata.labels"), None)
    assert metadata_labels_problem(tuple(items)) == want
    assert metadata_labels_problem(tuple(items)) == want  # asked again: from the memo
