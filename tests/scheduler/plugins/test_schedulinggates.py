"""SchedulingGates: a gated pod stays out of activeQ until its gates are removed."""

from __future__ import annotations

import pytest

from agents.scheduler.framework.interface import PreEnqueuePlugin
from agents.scheduler.framework.types import ActionType, ClusterEvent, Code, EventResource, QueueingHint
from agents.scheduler.plugins.schedulinggates import NAME, SchedulingGates
from emulator.base.api.core import Pod
from tests import builders


def pod(*gates: str, uid: str = "u1") -> Pod:
    return builders.pod("p", namespace="", uid=uid, image="", gates=gates)


@pytest.mark.parametrize(
    ("p", "want_code", "want_reasons"),
    [
        pytest.param(pod(), Code.Success, (), id="no-gates"),
        pytest.param(
            pod("gate-a"), Code.UnschedulableAndUnresolvable, ("waiting for scheduling gates: [gate-a]",), id="one"
        ),
        pytest.param(
            pod("gate-a", "gate-b"),
            Code.UnschedulableAndUnresolvable,
            ("waiting for scheduling gates: [gate-a gate-b]",),
            id="two-in-order",
        ),
    ],
)
def test_pre_enqueue(p: Pod, want_code: Code, want_reasons: tuple[str, ...]) -> None:
    status = SchedulingGates(None, None).pre_enqueue(p)
    assert (status.code, status.reasons) == (want_code, want_reasons)


def test_events() -> None:
    pl = SchedulingGates(None, None)
    assert isinstance(pl, PreEnqueuePlugin)
    assert pl.name == NAME == "SchedulingGates"
    (ev,) = pl.events_to_register()
    assert ev.event == ClusterEvent(EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated)


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param(pod(), QueueingHint.Queue, id="target-gates-removed"),
        pytest.param(pod(uid="other"), QueueingHint.QueueSkip, id="other-pod"),
    ],
)
def test_hint(new: Pod, want: QueueingHint) -> None:
    assert SchedulingGates.is_schedulable_after_gates_eliminated(pod("g"), pod("g"), new) is want
