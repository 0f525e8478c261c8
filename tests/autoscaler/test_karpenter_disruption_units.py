"""Karpenter's disruption pieces one at a time (kubernetes-sigs/karpenter v1.9.1), cases ported
from upstream's tables: ``pkg/controllers/nodeclaim/disruption/consolidation_test.go``
(Consolidatable), ``nodeclaim/disruption/drift_test.go`` (static and requirements drift, the
template fields that drift), ``pkg/utils/pdb/suite_test.go`` (``CanEvictPods``,
``IsCurrentlyReschedulable``), ``disruption/multinodeconsolidation.go``
``filterOutSameInstanceType`` (its doc comment's examples), ``pkg/utils/disruption``
(``EvictionCost``)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from msgspec.structs import replace

from agents.autoscaler.karpenter.candidates import PdbLimits, _eviction_cost
from agents.autoscaler.karpenter.consolidation import _without_same_type
from agents.autoscaler.karpenter.disruption import Disruption
from agents.autoscaler.karpenter.nodepoolhash import NODEPOOL_HASH, NODEPOOL_HASH_VERSION_KEY, template_hash
from emulator.base.api.codec import object_from_dict, to_builtins
from emulator.base.api.core import Container, Pod, PodCondition, PodSpec, PodStatus
from emulator.base.api.karpenter import NodeClaim, NodeClaimStatus, NodePool, default_karpenter
from emulator.base.api.meta import Condition, LabelSelector, ObjectMeta
from emulator.base.api.policy import PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus
from emulator.base.runtime.clock import format_timestamp

NOW = 1000.0


class _Clock:
    def now(self) -> float:
        return NOW

    def timestamp(self, t: float | None = None) -> str:
        return format_timestamp(NOW if t is None else t)


class _Objects:
    def __init__(self, items: list[Any] | None = None) -> None:
        self.items = items or []

    def objects(self) -> list[Any]:
        return self.items


@dataclass
class _Agent:
    clock: Any
    pods: Any
    written: list[Any]

    async def write_status(self, claim: NodeClaim) -> None:
        self.written.append(claim)


def _pool(**spec: Any) -> NodePool:
    doc = {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "p"},
        "spec": {"template": {"spec": {
            "nodeClassRef": {"group": "g", "kind": "K", "name": "n"}, "requirements": spec.pop("requirements", []),
        }}, **spec},
    }  # fmt: skip
    pool: NodePool = default_karpenter(object_from_dict(doc, source="t"))
    return pool


def _claim(
    conditions: dict[str, tuple[str, float]], *, labels: dict[str, str] | None = None, **status: Any
) -> NodeClaim:
    conds = [
        Condition(type=t, status=s, reason=t, last_transition_time=format_timestamp(at))
        for t, (s, at) in conditions.items()
    ]
    return NodeClaim(
        metadata=ObjectMeta(name="c", labels={"karpenter.sh/nodepool": "p", **(labels or {})}),
        status=NodeClaimStatus(node_name="c", conditions=conds, **status),
    )


def _reconcile(claim: NodeClaim, pool: NodePool) -> NodeClaim:
    agent = _Agent(_Clock(), _Objects(), [])
    d = Disruption(agent)
    asyncio.run(d._conditions(claim, pool, NOW))
    return agent.written[-1] if agent.written else claim


def _types(claim: NodeClaim) -> dict[str, str]:
    return {c.type: c.status for c in claim.status.conditions}


@pytest.mark.parametrize(
    ("consolidate_after", "initialized", "last_pod_event", "had", "expected"),
    [
        pytest.param("30s", ("True", NOW - 60), None, False, True, id="marks-consolidatable-by-initialized-time"),
        pytest.param("30s", ("True", NOW - 600), NOW - 60, False, True, id="marks-consolidatable"),
        pytest.param("30s", ("True", NOW - 600), NOW - 10, True, False, id="removes-when-last-pod-event-too-recent"),
        pytest.param("Never", ("True", NOW - 600), None, True, False, id="removes-when-consolidate-after-never"),
        pytest.param("30s", ("Unknown", NOW - 600), None, True, False, id="removes-when-initialization-unknown"),
        pytest.param("30s", ("False", NOW - 600), None, True, False, id="removes-when-not-initialized"),
    ],
)
def test_consolidatable(
    consolidate_after: str, initialized: tuple[str, float], last_pod_event: float | None, had: bool, expected: bool
) -> None:
    """nodeclaim/disruption/consolidation_test.go."""
    conds = {"Launched": ("True", NOW - 700), "Initialized": initialized}
    if had:
        conds["Consolidatable"] = ("True", NOW - 100)
    claim = _claim(conds, last_pod_event_time=format_timestamp(last_pod_event) if last_pod_event else None)
    out = _reconcile(claim, _pool(disruption={"consolidateAfter": consolidate_after}))
    assert (_types(out).get("Consolidatable") == "True") is expected


REQ = {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}
OS = {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}


@pytest.mark.parametrize(
    ("requirements", "labels", "drifted"),
    [
        pytest.param(
            [{**REQ, "values": ["spot"]}], {"karpenter.sh/capacity-type": "on-demand"}, True, id="requirement-updated"
        ),
        pytest.param(
            [REQ, OS, {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
            {"karpenter.sh/capacity-type": "on-demand", "kubernetes.io/os": "linux"},
            True,
            id="requirement-added",
        ),
        pytest.param(
            [REQ, {**OS, "values": ["windows"]}],
            {"karpenter.sh/capacity-type": "on-demand", "kubernetes.io/os": "linux"},
            True,
            id="requirement-reduced",
        ),
        pytest.param(
            [REQ, {**OS, "values": ["linux", "windows"]}],
            {"karpenter.sh/capacity-type": "on-demand", "kubernetes.io/os": "linux"},
            False,
            id="requirement-expanded",
        ),
        pytest.param(
            [REQ, {"key": "kubernetes.io/os", "operator": "Exists", "values": []}],
            {"karpenter.sh/capacity-type": "on-demand", "kubernetes.io/os": "linux"},
            False,
            id="exists",
        ),
        pytest.param(
            [REQ, {"key": "kubernetes.io/os", "operator": "DoesNotExist", "values": []}],
            {"karpenter.sh/capacity-type": "on-demand", "kubernetes.io/os": "linux"},
            True,
            id="does-not-exist",
        ),
    ],
)
def test_requirements_drift(requirements: list[dict[str, Any]], labels: dict[str, str], drifted: bool) -> None:
    """nodeclaim/disruption/drift_test.go "Node Requirement Drift"."""
    claim = _claim({"Launched": ("True", NOW - 10)}, labels=labels)
    out = _reconcile(claim, _pool(requirements=requirements))
    assert (_types(out).get("Drifted") == "True") is drifted


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"metadata": {"annotations": {"keyAnnotationTest": "valueAnnotationTest"}}}, id="annotations"),
        pytest.param({"metadata": {"labels": {"keyLabelTest": "valueLabelTest"}}}, id="labels"),
        pytest.param({"spec": {"taints": [{"key": "keytest2taint", "effect": "NoExecute"}]}}, id="taints"),
        pytest.param(
            {"spec": {"startupTaints": [{"key": "keytest2taint", "effect": "NoExecute"}]}}, id="startup-taints"
        ),
        pytest.param(
            {"spec": {"nodeClassRef": {"group": "g", "kind": "K", "name": "testName"}}}, id="node-class-ref-name"
        ),
        pytest.param({"spec": {"expireAfter": "100m"}}, id="expire-after"),
        pytest.param({"spec": {"terminationGracePeriod": "100m"}}, id="termination-grace-period"),
    ],
)
def test_static_drift(change: dict[str, Any]) -> None:
    """drift_test.go "Static Drift": each hashed template field drifts the NodeClaim; the
    requirements do not take part in the hash."""
    base = _pool()
    raw = to_builtins(base)
    template = raw["spec"]["template"]
    for part, fields in change.items():
        template.setdefault(part, {}).update(fields)
    changed: NodePool = object_from_dict(raw, source="t")
    assert template_hash(changed) != template_hash(base)
    moved = object_from_dict(
        {**raw, "spec": {**raw["spec"], "template": {**to_builtins(base)["spec"]["template"]}}}, source="t"
    )
    reqs = to_builtins(moved)
    reqs["spec"]["template"]["spec"]["requirements"] = [REQ]
    assert template_hash(object_from_dict(reqs, source="t")) == template_hash(base)
    annotations = {NODEPOOL_HASH: template_hash(changed), NODEPOOL_HASH_VERSION_KEY: "v3"}
    pool = replace(changed, metadata=replace(changed.metadata, annotations=annotations))
    claim = _claim({"Launched": ("True", NOW - 10)})
    stale = replace(
        claim, metadata=replace(claim.metadata, annotations={**annotations, NODEPOOL_HASH: template_hash(base)})
    )
    out = _reconcile(stale, pool)
    assert next(c for c in out.status.conditions if c.type == "Drifted").reason == "NodePoolDrifted"
    # another hash version, or no annotation on either side: no static drift
    other = replace(
        stale,
        metadata=replace(stale.metadata, annotations={**stale.metadata.annotations, NODEPOOL_HASH_VERSION_KEY: "v2"}),
    )
    assert "Drifted" not in _types(_reconcile(other, pool))
    assert "Drifted" not in _types(_reconcile(replace(stale, metadata=replace(stale.metadata, annotations={})), pool))
    # not launched: the condition goes
    unlaunched = replace(stale, status=replace(stale.status, conditions=[Condition(type="Drifted", status="True")]))
    assert "Drifted" not in _types(_reconcile(unlaunched, pool))


def _pod(name: str, *, ready: bool = True, annotations: dict[str, str] | None = None) -> Pod:
    return Pod(
        metadata=ObjectMeta(
            name=name, namespace="default", uid=name, labels={"app": "a"}, annotations=annotations or {}
        ),
        spec=PodSpec(containers=[Container(name="c", image="i")], node_name="n"),
        status=PodStatus(phase="Running", conditions=[PodCondition(type="Ready", status="True" if ready else "False")]),
    )


def _pdb(name: str, *, allowed: int = 1, policy: str | None = None, **spec: Any) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=PodDisruptionBudgetSpec(
            selector=LabelSelector(match_labels={"app": "a"}), unhealthy_pod_eviction_policy=policy, **spec
        ),
        status=PodDisruptionBudgetStatus(disruptions_allowed=allowed),
    )


@pytest.mark.parametrize(
    ("pdbs", "pod", "can_evict", "reschedulable"),
    [
        pytest.param(
            [_pdb("p", allowed=0, policy="AlwaysAllow")],
            _pod("x", ready=False),
            True,
            True,
            id="unhealthy-always-allow",
        ),
        pytest.param([_pdb("p", allowed=0)], _pod("x", ready=False), False, True, id="unhealthy-policy-unset"),
        pytest.param([], _pod("x"), True, True, id="no-pdb-matches"),
        pytest.param([_pdb("p", allowed=0, min_available="100%")], _pod("x"), False, False, id="100%-min-available"),
        pytest.param([_pdb("p", allowed=0, max_unavailable="0%")], _pod("x"), False, False, id="0%-max-unavailable"),
        pytest.param([_pdb("p", allowed=0, max_unavailable=0)], _pod("x"), False, False, id="0-max-unavailable"),
        pytest.param([_pdb("p"), _pdb("q")], _pod("x"), False, False, id="multiple-pdbs"),
        pytest.param(
            [], _pod("x", annotations={"karpenter.sh/do-not-disrupt": "true"}), True, False, id="do-not-disrupt"
        ),
    ],
)
def test_pdb_limits(pdbs: list[PodDisruptionBudget], pod: Pod, can_evict: bool, reschedulable: bool) -> None:
    """pkg/utils/pdb/suite_test.go: CanEvictPods and IsCurrentlyReschedulable."""
    limits = PdbLimits(pdbs)
    assert (not limits.can_evict([pod])) is can_evict
    assert limits.currently_reschedulable(pod) is reschedulable


@dataclass(frozen=True)
class _Offering:
    price: float
    requirements: tuple[Any, ...] = ()


@dataclass(frozen=True)
class _Type:
    name: str
    offerings: tuple[_Offering, ...]


@dataclass(frozen=True)
class _Option:
    instance_type: _Type
    offering: _Offering
    labels: dict[str, str]

    @property
    def price(self) -> float:
        return self.offering.price


PRICES = {"t3a.nano": 0.0047, "t3a.small": 0.0188, "t3a.xlarge": 0.1504, "t3a.2xlarge": 0.3008}
TYPES = {n: _Type(n, (_Offering(p),)) for n, p in PRICES.items()}


@dataclass
class _Cand:
    instance_type: _Type

    @property
    def price(self) -> float:
        return self.instance_type.offerings[0].price


@pytest.mark.parametrize(
    ("removing", "options", "kept"),
    [
        pytest.param(
            ["t3a.2xlarge", "t3a.2xlarge", "t3a.small"],
            ["t3a.small", "t3a.xlarge", "t3a.2xlarge"],
            [],
            id="same-type-dearer",
        ),
        pytest.param(
            ["t3a.2xlarge", "t3a.2xlarge", "t3a.small"],
            ["t3a.nano", "t3a.small", "t3a.xlarge", "t3a.2xlarge"],
            ["t3a.nano"],
            id="cheaper-than-the-cheapest-removed",
        ),
        pytest.param(
            ["t3a.2xlarge", "t3a.2xlarge"], ["t3a.small", "t3a.xlarge"], ["t3a.small", "t3a.xlarge"], id="no-overlap"
        ),
    ],
)
def test_filter_out_same_instance_type(removing: list[str], options: list[str], kept: list[str]) -> None:
    """multinodeconsolidation.go filterOutSameInstanceType (its doc comment's two examples)."""
    opts = [_Option(TYPES[n], TYPES[n].offerings[0], {}) for n in options]
    out = _without_same_type(opts, [_Cand(TYPES[n]) for n in removing])  # type: ignore[arg-type]
    assert [o.instance_type.name for o in out] == kept


@pytest.mark.parametrize(
    ("annotations", "priority", "cost"),
    [
        pytest.param({}, None, 1.0, id="default"),
        pytest.param({"controller.kubernetes.io/pod-deletion-cost": str(2**27)}, None, 2.0, id="deletion-cost"),
        pytest.param({}, 2**25, 2.0, id="priority"),
        pytest.param({"controller.kubernetes.io/pod-deletion-cost": "2147483647"}, 1000000000, 10.0, id="clamped-high"),
        pytest.param({"controller.kubernetes.io/pod-deletion-cost": "-2147483647"}, None, -10.0, id="clamped-low"),
        pytest.param({"controller.kubernetes.io/pod-deletion-cost": "nope"}, None, 1.0, id="unparsable"),
    ],
)
def test_eviction_cost(annotations: dict[str, str], priority: int | None, cost: float) -> None:
    """pkg/utils/disruption EvictionCost."""
    pod = _pod("x", annotations=annotations)
    pod = replace(pod, spec=replace(pod.spec, priority=priority))
    assert _eviction_cost(pod) == pytest.approx(cost)
