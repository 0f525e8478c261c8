"""``metadata_labels_problem``, ``annotations_problem`` and ``kubelet_annotation_problem``
(memoised) equal the first problem computed afresh of the same map, whatever the order of its
items and however often they are asked."""

from __future__ import annotations

import gc
import weakref

from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.base.api.labelselector import label_problems
from emulator.base.api.metavalidation import (
    annotations_problem,
    annotations_problem_reference,
    kubelet_annotation_problem,
    metadata_labels_problem,
)
from emulator.base.api.podvalidation import kubelet_annotation_problems

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


NOTE_KEYS = st.sampled_from(
    [
        "emulator.k8s.io/run-duration",
        "emulator.k8s.io/exit-code",
        "emulator.k8s.io/ready-after",
        "emulator.k8s.io/usage",
        "example.com/note",
        "Bad Key",
        "-x",
        "a" * 70,
    ]
)
NOTE_VALUES = st.sampled_from(["60s", "1m30s", "soon", "0", "3", "300", "-1", "", "x" * 40, "cpu=100m", "é"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(NOTE_KEYS, NOTE_VALUES, max_size=4), st.randoms(use_true_random=False))
def test_memoised_annotation_problems_equal_fresh_ones(notes: dict[str, str], rnd: object) -> None:
    items = list(notes.items())
    rnd.shuffle(items)  # type: ignore[attr-defined]
    shuffled = dict(items)
    want = annotations_problem_reference(notes)
    kubelet_want = next(kubelet_annotation_problems(notes), None)
    for _ in range(2):  # asked again: from the memo
        assert annotations_problem(shuffled) == want
        assert kubelet_annotation_problem(tuple(items)) == kubelet_want


def test_the_annotation_size_limit_is_kept() -> None:
    big = {"example.com/a": "x" * (256 * 1024)}
    assert annotations_problem(big) == annotations_problem_reference(big) is not None


class _Watched(str):
    """A str a weakref can watch."""


def test_a_large_annotations_map_is_checked_afresh_and_not_kept() -> None:
    """The memos keep only small maps: a refused 300 KiB annotation (say, a client's
    last-applied-configuration) is not held once its object is gone."""
    from emulator.base.api import metavalidation as validation

    for check in (validation.annotations_problem, validation.kubelet_annotations_problem):
        big = _Watched("x" * (300 * 1024))
        ref = weakref.ref(big)
        notes = {"example.com/a": big}
        assert check(notes) == (
            annotations_problem_reference(notes)
            if check is validation.annotations_problem
            else next(kubelet_annotation_problems(notes), None)
        )
        del big, notes
        gc.collect()
        assert ref() is None
