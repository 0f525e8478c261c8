"""PrioritySort: higher priority first, then earlier queue timestamp."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.scheduler.framework.interface import QueueSortPlugin
from agents.scheduler.plugins.queuesort import NAME, PrioritySort, pod_priority
from emulator.base.api.core import Pod
from tests import builders


@dataclass(frozen=True)
class Queued:
    pod: Pod
    timestamp: float


def queued(priority: int | None, timestamp: float) -> Queued:
    return Queued(builders.pod("p", namespace="", image="", priority=priority), timestamp)


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param(queued(10, 5.0), queued(1, 1.0), True, id="higher-priority-first-even-if-later"),
        pytest.param(queued(1, 1.0), queued(10, 5.0), False, id="lower-priority-after"),
        pytest.param(queued(3, 1.0), queued(3, 2.0), True, id="same-priority-earlier-first"),
        pytest.param(queued(3, 2.0), queued(3, 1.0), False, id="same-priority-later-after"),
        pytest.param(queued(3, 2.0), queued(3, 2.0), False, id="equal-is-not-less"),
        pytest.param(queued(None, 1.0), queued(0, 2.0), True, id="unset-priority-is-zero"),
        pytest.param(queued(None, 1.0), queued(-1, 0.0), True, id="negative-priority-after-zero"),
    ],
)
def test_less(a: Queued, b: Queued, want: bool) -> None:
    pl = PrioritySort(None, None)
    assert pl.less(a, b) is want
    assert (pl.sort_key(a) < pl.sort_key(b)) is want  # the key orders exactly as less


@settings(max_examples=300, deadline=None)
@given(
    st.tuples(st.one_of(st.none(), st.integers(-3, 3)), st.sampled_from([0.0, 0.5, 1.0, 2.0])),
    st.tuples(st.one_of(st.none(), st.integers(-3, 3)), st.sampled_from([0.0, 0.5, 1.0, 2.0])),
)
def test_sort_key_orders_exactly_as_less(a: tuple[int | None, float], b: tuple[int | None, float]) -> None:
    pl = PrioritySort(None, None)
    qa, qb = queued(*a), queued(*b)
    assert (pl.sort_key(qa) < pl.sort_key(qb)) is pl.less(qa, qb)


def test_plugin_shape() -> None:
    pl = PrioritySort(None, None)
    assert pl.name == NAME == "PrioritySort"
    assert isinstance(pl, QueueSortPlugin)
    assert pod_priority(queued(None, 0).pod) == 0
