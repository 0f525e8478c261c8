"""``ConditionCounter`` (the incremental counts behind ``waitFor``) and ``PodActivity``:
pure, fed with write records, no event loop."""

from __future__ import annotations

from typing import Any

import pytest

from emulator.app.scenario.expectations import CONDITIONS, count_pods, count_reached
from emulator.app.scenario.monitor import ConditionCounter, PodActivity
from emulator.base.api.core import LabelSelector, Pod
from emulator.base.apiserver.server import WriteRecord
from tests import builders

WEB = LabelSelector(match_labels={"app": "web"})


def pod(name: str, app: str = "web", phase: str = "Pending", node: str = "") -> Pod:
    return builders.pod(name, uid=f"uid-{name}", labels={"app": app}, image="i", node=node, phase=phase)


# Each case: the pods before, then (old, new) writes, then the expected (met, total) of
# podsRunning for app=web.
CASES = [
    pytest.param([], [(None, pod("a"))], (0, 1), id="create-pending"),
    pytest.param([pod("a")], [(pod("a"), pod("a", phase="Running", node="n"))], (1, 1), id="enters-condition"),
    pytest.param(
        [pod("a", phase="Running", node="n")],
        [(pod("a", phase="Running", node="n"), pod("a", phase="Succeeded", node="n"))],
        (0, 1),
        id="leaves-condition",
    ),
    pytest.param([pod("a", phase="Running")], [(pod("a", phase="Running"), None)], (0, 0), id="final-delete"),
    pytest.param([pod("a")], [(pod("a"), pod("a", app="db"))], (0, 0), id="leaves-selector"),
    pytest.param(
        [pod("a", app="db", phase="Running")],
        [(pod("a", app="db", phase="Running"), pod("a", phase="Running"))],
        (1, 1),
        id="enters-selector-already-running",
    ),
    pytest.param([], [(None, pod("x", app="db", phase="Running"))], (0, 0), id="other-pods-ignored"),
    pytest.param(
        [pod("a"), pod("b", phase="Running"), pod("c", app="db", phase="Running")],
        [(pod("a"), pod("a", phase="Running")), (pod("b", phase="Running"), None), (None, pod("d"))],
        (1, 2),
        id="several",
    ),
]


@pytest.mark.parametrize(("before", "writes", "expected"), CASES)
def test_counter_follows_writes(before: list[Pod], writes: list[tuple[Any, Any]], expected: tuple[int, int]) -> None:
    counter = ConditionCounter(CONDITIONS["podsRunning"], WEB, before)
    for old, new in writes:
        counter.update(old, new)
    assert (counter.met, counter.total) == expected
    # the same answer as counting the final pods from scratch
    final = {p.metadata.name: p for p in before}
    for old, new in writes:
        if new is None:
            del final[old.metadata.name]
        else:
            final[new.metadata.name] = new
    assert (counter.met, counter.total) == count_pods(list(final.values()), "podsRunning", WEB)


def test_update_says_whether_a_count_moved() -> None:
    counter = ConditionCounter(CONDITIONS["podsScheduled"], LabelSelector(), [pod("a")])
    assert counter.update(pod("a"), pod("a", phase="Pending")) is False  # a status write that changes nothing
    assert counter.update(pod("a"), pod("a", node="n")) is True
    assert repr(counter) == "<ConditionCounter met=1 total=1>"


@pytest.mark.parametrize(
    ("met", "total", "count", "reached"),
    [
        pytest.param(0, 0, "all", False, id="all-of-none"),
        pytest.param(2, 3, "all", False, id="all-not-yet"),
        pytest.param(3, 3, "all", True, id="all"),
        pytest.param(2, 5, 2, True, id="number-reached"),
        pytest.param(1, 5, 2, False, id="number-not-reached"),
        pytest.param(0, 0, 0, True, id="zero"),
    ],
)
def test_count_reached(met: int, total: int, count: int | str, reached: bool) -> None:
    assert count_reached(met, total, count) is reached


def test_pod_activity_feeds_counters_and_wakes_only_when_a_count_moves() -> None:
    activity = PodActivity()
    counter = ConditionCounter(CONDITIONS["podsRunning"], WEB)
    activity.counters.append(counter)
    activity(WriteRecord(1, 2.0, "create", "Pod", None, pod("x", app="db")))
    assert (activity.last_write, activity.changed.is_set()) == (2.0, False)
    activity(WriteRecord(2, 3.0, "create", "Node", None, None))
    assert activity.last_write == 2.0
    activity(WriteRecord(3, 4.0, "create", "Pod", None, pod("a")))
    assert activity.changed.is_set()
    assert (counter.met, counter.total, activity.last_write) == (0, 1, 4.0)
