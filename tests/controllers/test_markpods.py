"""``MarkPodsNotReady`` (upstream ``pkg/controller/util/node/controller_utils.go``) as a pure
step, and the kubelet's answer to it (``pkg/kubelet/status/status_manager.go``
``needsReconcile`` / ``mergePodStatus``), as tables."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from agents.controllers.markpods import mark_not_ready
from agents.kubelet.podstatus import needs_reconcile, reconciled_status
from emulator.base.api.core import Pod, PodCondition, PodStatus
from tests.builders import pod as build_pod

T0 = "2026-01-01T00:00:00Z"
NOW = "2026-01-01T00:02:00Z"


def cond(type_: str, status: str, since: str = T0, reason: str = "") -> PodCondition:
    return PodCondition(type=type_, status=status, last_transition_time=since, reason=reason)


def with_conditions(*conditions: PodCondition) -> Pod:
    p = build_pod("p", node="n-1")
    return replace(p, status=PodStatus(phase="Running", conditions=list(conditions)))


@pytest.mark.parametrize(
    ("conditions", "want"),
    [
        pytest.param(
            [cond("Initialized", "True"), cond("Ready", "True"), cond("ContainersReady", "True")],
            [cond("Initialized", "True"), cond("Ready", "False", NOW), cond("ContainersReady", "True")],
            id="ready-only-turns-false",
        ),
        pytest.param([cond("Ready", "False", reason="PodCompleted")], None, id="already-not-ready"),
        pytest.param([cond("PodScheduled", "True")], None, id="no-ready-condition"),
        pytest.param([], None, id="no-conditions"),
    ],
)
def test_mark_not_ready(conditions: list[PodCondition], want: list[PodCondition] | None) -> None:
    marked = mark_not_ready(with_conditions(*conditions), NOW)
    assert (None if marked is None else marked.status.conditions) == want


def test_mark_keeps_reason_and_message() -> None:
    ready = replace(cond("Ready", "True"), reason="R", message="M")
    marked = mark_not_ready(with_conditions(ready), NOW)
    assert marked is not None
    assert marked.status.conditions == [replace(ready, status="False", last_transition_time=NOW)]


REPORTED = PodStatus(
    phase="Running",
    conditions=[cond("Initialized", "True"), cond("Ready", "True"), cond("ContainersReady", "True")],
)


@pytest.mark.parametrize(
    ("current", "want"),
    [
        pytest.param(REPORTED, False, id="same-object"),
        pytest.param(replace(REPORTED, conditions=list(REPORTED.conditions)), False, id="equal"),
        pytest.param(
            replace(REPORTED, conditions=[*REPORTED.conditions, cond("DisruptionTarget", "True")]),
            False,
            id="someone-elses-condition",
        ),
        pytest.param(
            replace(
                REPORTED,
                conditions=[cond("Initialized", "True"), cond("Ready", "False", NOW), cond("ContainersReady", "True")],
            ),
            True,
            id="ready-marked-false",
        ),
    ],
)
def test_needs_reconcile(current: PodStatus, want: bool) -> None:
    assert needs_reconcile(current, REPORTED) is want
    assert needs_reconcile(current, None) is False


def test_reconciled_status_restores_the_kubelets_own_conditions() -> None:
    current = replace(
        REPORTED,
        conditions=[
            cond("Initialized", "True"),
            cond("Ready", "False", NOW),
            cond("ContainersReady", "True"),
            cond("DisruptionTarget", "True", NOW),
        ],
    )
    assert reconciled_status(current, REPORTED).conditions == [
        *REPORTED.conditions,
        cond("DisruptionTarget", "True", NOW),
    ]
