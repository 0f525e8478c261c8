"""The provisioner's scheduling simulation (kubernetes-sigs/karpenter v1.9.1
``pkg/controllers/provisioning/scheduling``): pending pods packed onto existing capacity and new
NodeClaims, each NodeClaim keeping the instance-type options every pod on it still fits.

``Scheduler.solve`` follows ``Scheduler.Solve``: pods ordered by CPU then memory, descending
(``byCPUAndMemoryDescending``); each tries the existing and in-flight nodes first (this
project's own Filter plugins through ``SchedulingSimulator``), then the NodeClaims opened in this
batch (``add`` to an in-flight NodeClaim: the options narrowed to those that still fit), then a
new NodeClaim from the first NodePool, in weight order (heaviest first, then by name:
``NodePoolList.OrderByWeight``), that has an option for it. An option is one (instance type,
offering) pair: its labels (the template's, the NodePool's single-valued ``In`` requirements,
the instance type's and the offering's zone and capacity type) must satisfy the NodePool's
requirements and the pod's node selector and required node affinity; the pod must tolerate
the NodePool's taints (startup taints are ignored, as upstream); its allocatable (capacity
minus the provider's overhead) must hold the pods' requests plus the daemon overhead; a
NodePool's ``limits`` must hold its usage plus the instance type's capacity, a new NodeClaim
reserving the largest capacity of its options (``subtractMax``). Options are
ordered by price, cheapest first (``InstanceTypes.OrderByPrice``); at launch the cheapest
remaining one is the NodeClaim's instance type and offering.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from msgspec.structs import replace

from agents.autoscaler.karpenter.minvalues import MIN_VALUES_ERROR, TRUNCATE_ERROR, satisfies, truncated_satisfies
from emulator.base.api.core import Node, NodeSpec, NodeStatus, Pod, Taint
from emulator.base.api.karpenter import (
    CAPACITY_TYPE_LABEL,
    NODEPOOL_LABEL,
    NodeClaimTemplate,
    NodeClaimTemplateSpec,
    NodePool,
)
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.resources import pod_requests

__all__ = ["MAX_INSTANCE_TYPES", "NewNodeClaim", "Option", "Scheduler", "option_labels", "req_matches", "template_of"]

MAX_INSTANCE_TYPES: Final = 60
"""``MaxInstanceTypes``: a launched NodeClaim lists at most this many instance types."""
ZONE: Final = "topology.kubernetes.io/zone"
HOSTNAME: Final = "kubernetes.io/hostname"


@dataclass(frozen=True, slots=True)
class Option:
    instance_type: Any
    offering: Any
    labels: Mapping[str, str]
    allocatable: Mapping[str, int]
    capacity: Mapping[str, int]

    @property
    def price(self) -> float:
        return float(self.offering.price)


@dataclass(slots=True)
class NewNodeClaim:
    pool: NodePool
    name: str
    options: list[Option]
    pods: list[Pod] = field(default_factory=list)
    requests: dict[str, int] = field(default_factory=dict)
    spot_only: bool = False
    """A consolidation replacement restricted to spot (``karpenter.sh/capacity-type In [spot]``)."""


def _amounts(rl: Mapping[str, Any]) -> dict[str, int]:
    return {k: (q.milli if k == "cpu" else -((-q.milli) // 1000)) for k, q in rl.items()}


def req_matches(key: str, op: str, values: Sequence[str], labels: Mapping[str, str]) -> bool:
    present = key in labels
    value = labels.get(key, "")
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt", "Gte", "Lte"):
        try:
            have, want = int(value), int(values[0])
        except (ValueError, IndexError):
            return False
        return {"Gt": have > want, "Lt": have < want, "Gte": have >= want, "Lte": have <= want}[op]
    return False


def _pod_matches(pod: Pod, labels: Mapping[str, str]) -> bool:
    """The pod's node selector and required node affinity (any term) against ``labels``."""
    if any(labels.get(k) != v for k, v in pod.spec.node_selector.items()):
        return False
    affinity = pod.spec.affinity
    na = affinity.node_affinity if affinity is not None else None
    required = na.required_during_scheduling_ignored_during_execution if na is not None else None
    if required is None or not required.node_selector_terms:
        return True
    return any(
        all(req_matches(r.key, r.operator, r.values, labels) for r in term.match_expressions)
        for term in required.node_selector_terms
    )


def _tolerates(pod: Pod, taints: Sequence[Taint]) -> bool:
    for t in taints:
        if t.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(
            (tol.key == t.key or not tol.key)
            and (tol.effect in ("", t.effect))
            and (tol.operator == "Exists" or (tol.value or "") == t.value)
            for tol in pod.spec.tolerations
        ):
            return False
    return True


def template_of(pool: NodePool) -> tuple[NodeClaimTemplate, NodeClaimTemplateSpec]:
    """The NodePool's template and its spec (both required: a stored NodePool has them)."""
    template = pool.spec.template if pool.spec is not None else None
    if template is None or template.spec is None:
        raise ValueError(f"NodePool {pool.metadata.name} has no template spec")
    return template, template.spec


def option_labels(pool: NodePool, it: Any, offering: Any) -> dict[str, str]:
    """The labels a node of ``it`` at ``offering`` from ``pool`` gets (kwok's ``addInstanceLabels``)."""
    template, spec = template_of(pool)
    labels = dict(template.metadata.labels)
    for r in spec.requirements or []:
        if r.operator == "In" and len(r.values) == 1:
            labels[r.key] = r.values[0]
    labels.update(it.labels())
    for r in offering.requirements:
        if r.operator == "In" and len(r.values) == 1:
            labels[r.key] = r.values[0]
    labels[NODEPOOL_LABEL] = pool.metadata.name
    return labels


def pool_options(pool: NodePool, instance_types: Sequence[Any]) -> list[Option]:
    """Every available (instance type, offering) the NodePool's requirements allow, cheapest first."""
    reqs = template_of(pool)[1].requirements or []
    out: list[Option] = []
    for it in instance_types:
        allocatable, capacity = _amounts(it.allocatable()), _amounts(it.capacity())
        for off in it.offerings:
            if not off.available:
                continue
            labels = option_labels(pool, it, off)
            if all(req_matches(r.key, r.operator, r.values, labels) for r in reqs):
                out.append(Option(it, off, labels, allocatable, capacity))
    out.sort(
        key=lambda o: (o.price, o.instance_type.name, o.labels.get(ZONE, ""), o.labels.get(CAPACITY_TYPE_LABEL, ""))
    )
    return out


def _fits(option: Option, requests: Mapping[str, int]) -> bool:
    return all(option.allocatable.get(k, 0) >= v for k, v in requests.items() if v > 0)


def _plus(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def template_node(claim: NewNodeClaim) -> Node:
    """A node standing for the NodeClaim in the simulator: the cheapest option's labels and the
    largest option's allocatable (the options are narrowed by resources here, not there)."""
    spec = template_of(claim.pool)[1]
    best = claim.options[0]
    largest = max(claim.options, key=lambda o: (o.allocatable.get("cpu", 0), o.allocatable.get("memory", 0)))
    alloc = largest.instance_type.allocatable()
    labels = {**best.labels, HOSTNAME: claim.name}
    return Node(
        metadata=ObjectMeta(name=claim.name, labels=labels),
        spec=NodeSpec(taints=list(spec.taints)),
        status=NodeStatus(capacity=alloc, allocatable=alloc),
    )


class Scheduler:
    """One batch's simulation (module docstring). ``sim``: a ``SchedulingSimulator`` holding the
    existing and in-flight nodes; ``usage``: NodePool -> resources of its NodeClaims so far."""

    def __init__(
        self,
        sim: Any,
        pools: Sequence[NodePool],
        instance_types: Sequence[Any],
        usage: Mapping[str, Mapping[str, int]],
        new_name: Callable[[str], str],
    ) -> None:
        self.sim = sim
        self.pools = sorted(pools, key=lambda p: (-((p.spec.weight if p.spec else None) or 0), p.metadata.name))
        self.options = {p.metadata.name: pool_options(p, instance_types) for p in self.pools}
        self.usage = {name: dict(u) for name, u in usage.items()}
        self.new_name = new_name
        self.claims: list[NewNodeClaim] = []
        self.errors: dict[str, str] = {}
        self.why = ""
        """Pod uid -> why no NodePool could take it."""
        self.placed: dict[str, str] = {}
        """Pod uid -> the existing (or in-flight) node it fits on."""

    def solve(self, pods: Sequence[Pod]) -> list[NewNodeClaim]:
        def size(p: Pod) -> tuple[int, int, str, str]:
            r = pod_requests(p)
            return (-r.get("cpu", 0), -r.get("memory", 0), p.metadata.namespace, p.metadata.name)

        existing = set(self.sim.node_names())
        for pod in sorted(pods, key=size):
            if (node := self.sim.schedule_anywhere(pod, lambda name: name in existing)) is not None:
                self.placed[pod.metadata.uid] = node
                continue
            if not self._add_to_new(pod) and not self._open(pod):
                self.errors.setdefault(pod.metadata.uid, self.why)
        for claim in [c for c in self.claims if not truncated_satisfies(c.pool, c.options, MAX_INSTANCE_TYPES)]:
            self.claims.remove(claim)  # Results.TruncateInstanceTypes (minvalues)
            self.errors.update((p.metadata.uid, TRUNCATE_ERROR) for p in claim.pods)
        return self.claims

    def _narrowed(self, claim: NewNodeClaim, pod: Pod, requests: Mapping[str, int]) -> list[Option]:
        return [o for o in claim.options if _fits(o, requests) and _pod_matches(pod, o.labels)]

    def _add_to_new(self, pod: Pod) -> bool:
        for claim in self.claims:
            requests = _plus(claim.requests, {**pod_requests(pod), "pods": 1})
            options = self._narrowed(claim, pod, requests)
            if not options or not satisfies(claim.pool, options) or self.sim.check(pod, claim.name):
                continue
            self.sim.add_pod(pod, claim.name)
            claim.options, claim.requests = options, requests
            claim.pods.append(pod)
            return True
        return False

    def _within_limits(self, pool: NodePool, option: Option) -> bool:
        limits = pool.spec.limits if pool.spec is not None else {}
        if not limits:
            return True
        used = self.usage.get(pool.metadata.name, {})
        after = _plus(used, {**option.capacity, "nodes": 1})
        return all(after.get(k, 0) <= v for k, v in _amounts(limits).items())

    def _open(self, pod: Pod) -> bool:
        requests = {**pod_requests(pod), "pods": 1}
        self.why = "incompatible with all nodepools"
        for pool in self.pools:
            if not _tolerates(pod, template_of(pool)[1].taints):
                continue
            options = [
                o
                for o in self.options[pool.metadata.name]
                if _fits(o, requests) and _pod_matches(pod, o.labels) and self._within_limits(pool, o)
            ]
            if not options:
                continue
            if not satisfies(pool, options):
                self.why = MIN_VALUES_ERROR  # filterInstanceTypesByRequirements' minValuesIncompatibleErr
                continue
            claim = NewNodeClaim(pool, self.new_name(pool.metadata.name), options)
            self.sim.add_node(template_node(claim))
            if self.sim.check(pod, claim.name):
                self.sim.remove_node(claim.name)
                continue
            self.sim.add_pod(pod, claim.name)
            claim.requests = requests
            claim.pods.append(pod)
            self.claims.append(claim)
            # upstream's subtractMax: the NodeClaim reserves the most any of its options could use
            most: dict[str, int] = {"nodes": 1}
            for o in options:
                for k, v in o.capacity.items():
                    most[k] = max(most.get(k, 0), v)
            self.usage[pool.metadata.name] = _plus(self.usage.get(pool.metadata.name, {}), most)
            return True
        return False


def launched(claim: NewNodeClaim) -> tuple[Option, list[str]]:
    """The cheapest remaining option and the instance types the NodeClaim still allows."""
    names: list[str] = []
    for o in claim.options:
        if o.instance_type.name not in names:
            names.append(o.instance_type.name)
    return claim.options[0], names[:MAX_INSTANCE_TYPES]


def with_hostname(node: Node, name: str) -> Node:
    return replace(node, metadata=replace(node.metadata, name=name, labels={**node.metadata.labels, HOSTNAME: name}))
