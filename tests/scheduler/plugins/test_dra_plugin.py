"""``DynamicResources`` with claims: upstream ``dynamicresources_test.go`` (``TestPlugin``) as a
table — each case a pod, its claims, classes and slices, and the status of each extension point
(PreEnqueue, PreFilter, Filter per node, PostFilter, Reserve) — plus the queueing hints and
the in-flight bookkeeping that keeps two pods off one device."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from agents.scheduler.dra_manager import static_dra_manager
from agents.scheduler.framework.interface import NodeToStatus
from agents.scheduler.framework.types import Code, CycleState, NodeInfo, QueueingHint
from agents.scheduler.plugins.dynamicresources import DynamicResources, Features
from tests.scheduler.plugins.dra_api import (
    CLASS,
    DRIVER,
    allocated,
    api_claim,
    api_class,
    api_node,
    api_slice,
    claim_pod,
    reserved_for,
    template_pod,
)
from tests.scheduler.plugins.dra_helpers import FakeCel

UU = Code.UnschedulableAndUnresolvable
U = Code.Unschedulable


class Handle:
    def __init__(self, objects: list[Any], features: Features | None = None) -> None:
        self.dra_manager = static_dra_manager(objects, features=features, cel=FakeCel())
        self.client = None


@dataclass
class Case:
    pod: Any
    objects: list[Any]
    nodes: list[str] = field(default_factory=lambda: ["worker"])
    pre_enqueue: tuple[Code, str] | None = None
    pre_filter: tuple[Code, str] | None = None
    filter: dict[str, tuple[Code, str]] = field(default_factory=dict)
    post_filter: tuple[Code, str] | None = None
    reserved: list[tuple[str, str, str, str]] | None = None  # (claim, driver/pool, device, request)


POD = claim_pod("my-pod", "my-claim")
CLAIM = api_claim("my-claim")
SLICE = api_slice("worker", devices=1)

CASES = {
    "empty": Case(claim_pod("plain"), [], pre_filter=(Code.Skip, ""), post_filter=(U, "no new claims to deallocate")),
    "claim-reference": Case(
        POD,
        [CLAIM, api_class(), SLICE],
        reserved=[("my-claim", f"{DRIVER}/worker", "device-0", "req-0")],
    ),
    "claim-template": Case(
        template_pod("my-pod", "my-claim", claim_name="my-pod-my-claim-abcde"),
        [api_claim("my-pod-my-claim-abcde", owner="my-pod"), api_class(), SLICE],
        reserved=[("my-pod-my-claim-abcde", f"{DRIVER}/worker", "device-0", "req-0")],
    ),
    "template-claim-not-created": Case(
        template_pod("my-pod", "my-claim", claim_name=None),
        [api_class(), SLICE],
        pre_enqueue=(UU, 'pod "default/my-pod": ResourceClaim not created yet'),
        pre_filter=(UU, 'pod "default/my-pod": ResourceClaim not created yet'),
    ),
    "missing-claim": Case(
        POD,
        [api_class(), SLICE],
        pre_enqueue=(UU, 'resourceclaim.resource.k8s.io "my-claim" not found'),
        pre_filter=(UU, 'resourceclaim.resource.k8s.io "my-claim" not found'),
    ),
    "deleted-claim": Case(
        POD,
        [api_claim("my-claim", deleted=True), api_class(), SLICE],
        pre_enqueue=(UU, 'resourceclaim "my-claim" is being deleted'),
        pre_filter=(UU, 'resourceclaim "my-claim" is being deleted'),
    ),
    "wrong-claim": Case(
        template_pod("my-pod", "my-claim", claim_name="other-claim"),
        [api_claim("other-claim", owner="someone-else"), api_class(), SLICE],
        pre_enqueue=(UU, "ResourceClaim default/other-claim was not created for pod default/my-pod (pod is not owner)"),
        pre_filter=(UU, "ResourceClaim default/other-claim was not created for pod default/my-pod (pod is not owner)"),
    ),
    "no-class": Case(
        POD,
        [CLAIM, SLICE],
        pre_filter=(UU, f"request req-0: device class {CLASS} does not exist"),
    ),
    "not-enough-resources": Case(
        POD,
        [CLAIM, api_class(), api_slice("worker", devices=0)],
        filter={"worker": (UU, "cannot allocate all claims")},
        post_filter=(U, "still not schedulable"),
    ),
    "device-in-use": Case(
        POD,
        [CLAIM, api_claim("other", allocation=("worker", "device-0")), api_class(), SLICE],
        filter={"worker": (UU, "cannot allocate all claims")},
        post_filter=(U, "still not schedulable"),
    ),
    "structured-with-allocation": Case(
        POD,
        [api_claim("my-claim", allocation=("worker", "device-0")), api_class(), SLICE],
        reserved=[],
    ),
    "in-use-by-other": Case(
        POD,
        [api_claim("my-claim", allocation=("worker", "device-0"), reserved=256), api_class(), SLICE],
        pre_filter=(UU, "resourceclaim in use"),
    ),
    "wrong-topology": Case(
        POD,
        [api_claim("my-claim", allocation=("other-node", "device-0")), api_class(), SLICE],
        filter={"worker": (UU, "resourceclaim not available on the node")},
        post_filter=(U, "deallocation of ResourceClaim completed"),
    ),
    "wrong-topology-reserved-by-other": Case(
        POD,
        [api_claim("my-claim", allocation=("other-node", "device-0"), reserved=1), api_class(), SLICE],
        filter={"worker": (UU, "resourceclaim not available on the node")},
        post_filter=(U, "still not schedulable"),
    ),
    "two-nodes-one-fits": Case(
        POD,
        [CLAIM, api_class(), api_slice("worker", devices=0), api_slice("worker-2", devices=1)],
        nodes=["worker", "worker-2"],
        filter={"worker": (UU, "cannot allocate all claims")},
        reserved=[("my-claim", f"{DRIVER}/worker-2", "device-0", "req-0")],
    ),
    "bad-cel": Case(
        POD,
        [CLAIM, api_class(selector="error"), SLICE],
        filter={"worker": (Code.Error, "class my-resource-class: selector #0: CEL compile error")},
    ),
}


def _status(s: Any) -> tuple[Code, str]:
    return (s.code, "; ".join(s.reasons))


@pytest.mark.parametrize("case", [pytest.param(c, id=n) for n, c in CASES.items()])
def test_plugin(case: Case) -> None:
    plugin = DynamicResources(None, Handle(case.objects))  # type: ignore[arg-type]
    try:
        _run_case(plugin, case)
    finally:
        for coro in plugin.pending:  # API work (deallocation, unreserve): no client here
            coro.close()


def _run_case(plugin: DynamicResources, case: Case) -> None:
    want_enqueue = case.pre_enqueue or (Code.Success, "")
    assert _status(plugin.pre_enqueue(case.pod)) == want_enqueue
    state = CycleState()
    _, status = plugin.pre_filter(state, case.pod, [])
    want_pre = case.pre_filter or (Code.Success, "")
    if want_pre[0] is Code.Error:
        assert status.code is Code.Error
    else:
        assert _status(status) == want_pre
    if case.pre_filter is not None:
        if case.post_filter is not None:
            assert _status(plugin.post_filter(state, case.pod, NodeToStatus())[1]) == case.post_filter
        return
    feasible = []
    for name in case.nodes:
        got = plugin.filter(state, case.pod, NodeInfo(api_node(name)))
        want = case.filter.get(name, (Code.Success, ""))
        if want[0] is Code.Error:
            assert got.code is Code.Error
            assert want[1] in got.reasons[0]
        else:
            assert _status(got) == want, name
        if got.is_success():
            feasible.append(name)
    if not feasible:
        if case.post_filter is not None:
            assert _status(plugin.post_filter(state, case.pod, NodeToStatus())[1]) == case.post_filter
        return
    assert case.reserved is not None
    assert plugin.reserve(state, case.pod, feasible[0]).is_success()
    manager = plugin.manager
    got_reserved = []
    for claim in case.objects:
        if getattr(claim, "kind", "") == "ResourceClaim" and manager.has_pending_allocation(claim.metadata.uid):
            pending = manager._in_flight[claim.metadata.uid]
            for r in pending.status.allocation.devices.results:
                got_reserved.append((claim.metadata.name, f"{r.driver}/{r.pool}", r.device, r.request))
    assert got_reserved == case.reserved
    plugin.unreserve(state, case.pod, feasible[0])
    assert not any(manager.has_pending_allocation(c.metadata.uid) for c in case.objects if c.kind == "ResourceClaim")


def test_reserve_keeps_the_device_from_the_next_pod() -> None:
    """In flight after Reserve: the next pod's PreFilter counts the device as used (one device)."""
    objects = [api_claim("a"), api_claim("b"), api_class(), api_slice("worker", devices=1)]
    plugin = DynamicResources(None, Handle(objects))  # type: ignore[arg-type]
    first, second = claim_pod("p1", "a"), claim_pod("p2", "b")
    s1 = CycleState()
    plugin.pre_filter(s1, first, [])
    assert plugin.filter(s1, first, NodeInfo(api_node("worker"))).is_success()
    assert plugin.reserve(s1, first, "worker").is_success()
    s2 = CycleState()
    plugin.pre_filter(s2, second, [])
    assert _status(plugin.filter(s2, second, NodeInfo(api_node("worker")))) == (UU, "cannot allocate all claims")
    plugin.unreserve(s1, first, "worker")
    s3 = CycleState()
    plugin.pre_filter(s3, second, [])
    assert plugin.filter(s3, second, NodeInfo(api_node("worker"))).is_success()


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, api_claim("my-claim"), QueueingHint.Queue, id="claim created"),
        pytest.param(None, api_claim("other"), QueueingHint.QueueSkip, id="unrelated claim created"),
        pytest.param(None, api_claim("my-claim"), QueueingHint.Queue, id="claim of the pod created"),
        pytest.param(
            api_claim("my-claim"),
            api_claim("my-claim", finalizers=["x"]),
            QueueingHint.QueueSkip,
            id="status unchanged",
        ),
        pytest.param(
            api_claim("my-claim"),
            api_claim("my-claim", allocation=("worker", "device-0")),
            QueueingHint.Queue,
            id="status changed",
        ),
        pytest.param(
            api_claim("other", allocation=("worker", "device-0")),
            api_claim("other"),
            QueueingHint.Queue,
            id="other claim deallocated",
        ),
    ],
)
def test_claim_change_hint(old: Any, new: Any, want: QueueingHint) -> None:
    objects = [new, api_class()] if new.metadata.name == "my-claim" else [new, api_claim("my-claim"), api_class()]
    plugin = DynamicResources(None, Handle(objects))  # type: ignore[arg-type]
    assert plugin.is_schedulable_after_claim_change(POD, old, new) is want


def test_pod_change_hint() -> None:
    waiting = template_pod("my-pod", "my-claim", claim_name=None)
    created = template_pod("my-pod", "my-claim", claim_name="my-pod-my-claim-abcde")
    plugin = DynamicResources(None, Handle([api_claim("my-pod-my-claim-abcde", owner="my-pod")]))  # type: ignore[arg-type]
    assert plugin.is_schedulable_after_pod_change(waiting, waiting, created) is QueueingHint.Queue
    assert plugin.is_schedulable_after_pod_change(waiting, None, waiting) is QueueingHint.QueueSkip
    other = template_pod("other", "my-claim", claim_name=None)
    assert plugin.is_schedulable_after_pod_change(waiting, None, other) is QueueingHint.QueueSkip


_ = (allocated, reserved_for)
