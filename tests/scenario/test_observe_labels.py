"""The series' marker labels: a step's path and what it acts on; a fault's type, target and
start."""

from __future__ import annotations

import pytest

from emulator.app.scenario.faults import FaultPlan
from emulator.app.scenario.observe_labels import fault_label, fault_markers, step_label
from emulator.app.scenario.schema import (
    ApiError,
    Cordon,
    CreatePods,
    Delete,
    Drain,
    Fault,
    FaultSpec,
    NodeHeartbeatStop,
    Scale,
    SchedulerInstances,
    Sleep,
    Step,
    WaitFor,
    WatchCut,
)
from emulator.base.api.core import LabelSelector, Pod
from emulator.base.runtime.rng import Seeds

WEB = LabelSelector(match_labels={"app": "web"})


@pytest.mark.parametrize(
    ("index", "step", "label"),
    [
        pytest.param(0, CreatePods(count=6, name_prefix="web", template=Pod()), "steps[0].createPods web x6",
                     id="pods"),
        pytest.param(3, Cordon(node="node-2"), "steps[3].cordon node-2", id="cordon"),
        pytest.param(4, Drain(node="node-1"), "steps[4].drain node-1", id="drain"),
        pytest.param(1, Delete(kind="Pod", selector=WEB), "steps[1].delete Pod app=web", id="delete-selector"),
        pytest.param(1, Delete(kind="Pod", name="p"), "steps[1].delete Pod p", id="delete-name"),
        pytest.param(2, Scale(kind="Deployment", name="web", replicas=3), "steps[2].scale Deployment/web -> 3",
                     id="scale"),
        pytest.param(5, Sleep(duration=30.0), "steps[5].sleep 30s", id="sleep"),
        pytest.param(6, WaitFor(condition="podsRunning", timeout=60.0, selector=WEB),
                     "steps[6].waitFor podsRunning app=web", id="wait"),
        pytest.param(7, Fault(fault=NodeHeartbeatStop(node="n")), "steps[7].fault nodeHeartbeatStop n", id="fault"),
    ],
)  # fmt: skip
def test_step_label(index: int, step: Step, label: str) -> None:
    assert step_label(index, step) == label


@pytest.mark.parametrize(
    ("spec", "label"),
    [
        pytest.param(NodeHeartbeatStop(node="node-2"), "fault nodeHeartbeatStop node-2", id="heartbeat"),
        pytest.param(ApiError(verb="bind", error="Conflict"), "fault apiError bind Conflict", id="api-error"),
        pytest.param(SchedulerInstances(instances=2), "fault scheduler +2", id="scheduler"),
        pytest.param(WatchCut(agent="kubelet:*", at=5.0), "fault watchCut kubelet:*", id="watch-cut"),
    ],
)
def test_fault_label(spec: FaultSpec, label: str) -> None:
    assert fault_label(spec) == label


def test_fault_markers_start_when_the_fault_does() -> None:
    plan = FaultPlan(
        [
            ("faults[0]", NodeHeartbeatStop(node="a", start=60.0), True),
            ("faults[1]", SchedulerInstances(at=30.0), True),
            ("faults[2]", WatchCut(agent="x", every=10.0, start=5.0), True),
            ("steps[1].fault", NodeHeartbeatStop(node="b"), False),
            ("steps[2].fault", NodeHeartbeatStop(node="c", start=10.0), False),
        ],
        Seeds(1),
    )
    plan.arm("steps[2].fault", 40.0)
    assert fault_markers(plan) == [
        (60.0, "fault nodeHeartbeatStop a"),
        (30.0, "fault scheduler +1"),
        (15.0, "fault watchCut x"),
        (40.0, "fault nodeHeartbeatStop c"),
    ]
    assert fault_markers(None) == []
