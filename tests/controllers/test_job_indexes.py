"""Completion-index arithmetic of Indexed Jobs (``job/indexes``): the ``completedIndexes``
text round-trips, and pending indexes are the lowest free ones; properties by hypothesis,
plus the removal of duplicated and invalid indexes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.controllers.job.indexes import (
    COMPLETION_INDEX,
    completion_index,
    duplicated_index_pods,
    first_pending_indexes,
    format_intervals,
    parse_intervals,
)
from emulator.base.api.core import Pod
from tests.builders import pod

INDEXES = st.sets(st.integers(min_value=0, max_value=200), max_size=60)


@given(INDEXES)
def test_completed_indexes_round_trip(indexes: set[int]) -> None:
    text = format_intervals(indexes)
    assert parse_intervals(text, 201) == indexes
    parts = [p.split("-") for p in text.split(",")] if text else []
    flat = [int(x) for p in parts for x in p]
    assert flat == sorted(flat)  # ordered, and ranges only where consecutive
    assert all(int(p[1]) > int(p[0]) for p in parts if len(p) == 2)


@given(INDEXES, INDEXES, st.integers(min_value=0, max_value=50), st.integers(min_value=0, max_value=200))
def test_pending_indexes_are_the_lowest_free(done: set[int], running: set[int], count: int, completions: int) -> None:
    got = first_pending_indexes(done, running, count, completions)
    free = [i for i in range(completions) if i not in done and i not in running]
    assert got == free[:count]


def _indexed(name: str, ix: str | None) -> Pod:
    p = pod(name)
    if ix is None:
        return p
    return replace(p, metadata=replace(p.metadata, annotations={COMPLETION_INDEX: ix}))


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param("3", 3, id="index"),
        pytest.param(None, None, id="missing"),
        pytest.param("-1", None, id="negative"),
        pytest.param("x", None, id="not-a-number"),
    ],
)
def test_completion_index(raw: str | None, want: int | None) -> None:
    assert completion_index(_indexed("p", raw)) == want


def test_duplicates_and_invalid_indexes_are_removed_first() -> None:
    pods = [_indexed("a", "0"), _indexed("b", "0"), _indexed("c", "7"), _indexed("d", None), _indexed("e", "1")]
    remove, keep = duplicated_index_pods(pods, 5)
    assert [p.metadata.name for p in keep] == ["a", "e"]
    assert sorted(p.metadata.name for p in remove) == ["b", "c", "d"]
