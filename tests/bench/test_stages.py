"""Barrier stages (``emulator/app/bench/stages.py``): upstream scheduler_perf's scheduled / attempted /
unattempted sorting, kept per namespace and selector write by write, without an event loop."""

from __future__ import annotations

from typing import Any

import pytest

from emulator.app.bench.stages import ATTEMPTED, SCHEDULED, UNATTEMPTED, Stage, StageCounts, matches, selector, stage
from emulator.base.api.core import Pod, PodCondition
from tests.builders import pod

UNSCHEDULABLE = PodCondition(type="PodScheduled", status="False", reason="Unschedulable")
READY = PodCondition(type="Ready", status="True")


@pytest.mark.parametrize(
    ("obj", "before", "expected"),
    [
        pytest.param(pod("p"), None, UNATTEMPTED, id="new"),
        pytest.param(pod("p", node="n1"), None, SCHEDULED, id="bound"),
        pytest.param(pod("p", conditions=[UNSCHEDULABLE]), None, ATTEMPTED, id="unschedulable"),
        pytest.param(pod("p", conditions=[READY]), None, UNATTEMPTED, id="other-condition"),
        pytest.param(pod("p", gates=["example.com/hold"]), None, ATTEMPTED, id="gated-at-creation"),
        pytest.param(pod("p"), ATTEMPTED, ATTEMPTED, id="ungated-stays-attempted"),
        pytest.param(pod("p", node="n1"), ATTEMPTED, SCHEDULED, id="attempted-then-bound"),
    ],
)
def test_stage_of_a_pod(obj: Pod, before: Stage | None, expected: Stage) -> None:
    assert stage(obj, before) == expected


@pytest.mark.parametrize(
    ("labels", "sel", "expected"),
    [
        pytest.param({}, (), True, id="empty-selects-all"),
        pytest.param({"a": "1", "b": "2"}, (("a", "1"),), True, id="subset"),
        pytest.param({"a": "2"}, (("a", "1"),), False, id="other-value"),
        pytest.param({}, (("a", "1"),), False, id="missing"),
    ],
)
def test_label_selector_is_upstreams_labels_match(labels: dict[str, str], sel: Any, expected: bool) -> None:
    assert matches(labels, sel) is expected


WEB = selector({"app": "web"})


@pytest.mark.parametrize(
    ("versions", "everything", "web"),
    [
        pytest.param([pod("p", uid="u", labels={"app": "web"})], (0, 0, 1), (0, 0, 1), id="created"),
        pytest.param(
            [pod("p", uid="u", labels={"app": "web"}), pod("p", uid="u", labels={"app": "web"}, node="n")],
            (1, 0, 0),
            (1, 0, 0),
            id="bound",
        ),
        pytest.param(
            [pod("p", uid="u"), pod("p", uid="u", conditions=[UNSCHEDULABLE])], (0, 1, 0), (0, 0, 0), id="no-label"
        ),
        pytest.param(
            [pod("p", uid="u", gates=["g"]), pod("p", uid="u", labels={"app": "web"})],
            (0, 1, 0),
            (0, 1, 0),
            id="ungated-and-labelled-stays-attempted",
        ),
        pytest.param(
            [pod("p", uid="u", labels={"app": "web"}, node="n"), None], (0, 0, 0), (0, 0, 0), id="deleted-uncounted"
        ),
    ],
)
def test_counts_follow_the_writes(versions: list[Pod | None], everything: Any, web: Any) -> None:
    counts = StageCounts([WEB])
    previous: Pod | None = None
    for version in versions:
        counts.update(previous, version)
        previous = version
    got = tuple(counts.count("default", (), s) for s in (SCHEDULED, ATTEMPTED, UNATTEMPTED))
    got_web = tuple(counts.count("default", WEB, s) for s in (SCHEDULED, ATTEMPTED, UNATTEMPTED))
    assert (got, got_web) == (everything, web)


def test_a_write_that_changes_no_stage_changes_nothing() -> None:
    counts = StageCounts()
    assert counts.update(None, pod("p", uid="u"))
    assert not counts.update(pod("p", uid="u"), pod("p", uid="u", conditions=[READY]))


def test_an_unregistered_selector_is_refused() -> None:
    with pytest.raises(KeyError, match="was not registered"):
        StageCounts().count("default", WEB, SCHEDULED)
