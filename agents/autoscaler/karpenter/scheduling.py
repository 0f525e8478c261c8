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
the NodePool's taints (startup taints are ignored, as upstream); its labels must also satisfy the
pod's volume topology requirements (``volumetopology``: a bound volume's node affinity, an
unbound claim's StorageClass ``allowedTopologies``); its allocatable (capacity
minus the provider's overhead) must hold the pods' requests plus the daemon overhead
(``daemonoverhead``: the NodePool's compatible DaemonSet pods, ``daemons``); a
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

from agents.autoscaler.karpenter.daemonoverhead import overhead
from agents.autoscaler.karpenter.minvalues import MIN_VALUES_ERROR, TRUNCATE_ERROR, satisfies, truncated_satisfies
from agents.autoscaler.karpenter.volumetopology import Requirement, VolumeLookupError, has_claims, requirements
from emulator.base.api.core import Node, NodeSpec, NodeStatus, Pod, Taint
from emulator.base.api.karpenter import (
    CAPACITY_TYPE_LABEL,
    NODEPOOL_LABEL,
    NodeClaim,
    NodeClaimTemplate,
    NodeClaimTemplateSpec,
    NodePool,
)
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.resources import pod_requests, pods_alike

__all__ = [
    "MAX_INSTANCE_TYPES",
    "NewNodeClaim",
    "Option",
    "Scheduler",
    "claim_usage",
    "inflight_node",
    "option_labels",
    "pod_matches",
    "req_matches",
    "template_of",
    "tolerates",
]

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


def claim_usage(claim: NodeClaim) -> tuple[str, dict[str, int]]:
    """What a launched NodeClaim adds to its NodePool's usage (the limits are checked against
    it): its NodePool's name, and its capacity (cpu in millis, the rest in whole units, rounded
    down) with ``nodes: 1``."""
    amounts = {k: (q.milli if k == "cpu" else q.milli // 1000) for k, q in claim.status.capacity.items()}
    amounts["nodes"] = 1
    return claim.metadata.labels.get(NODEPOOL_LABEL, ""), amounts


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


def pod_matches(pod: Pod, labels: Mapping[str, str]) -> bool:
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


def tolerates(pod: Pod, taints: Sequence[Taint]) -> bool:
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


def _monotone(pod: Pod) -> bool:
    """Whether the pod's fit on a node can only shrink while pods are added to the simulation:
    no required pod affinity and no topology spread constraints (a pod placed elsewhere can
    satisfy those), no resource claims."""
    affinity = pod.spec.affinity
    pa = affinity.pod_affinity if affinity is not None else None
    return (
        not (pa is not None and pa.required_during_scheduling_ignored_during_execution)
        and not pod.spec.topology_spread_constraints
        and not pod.spec.resource_claims
    )


@dataclass(slots=True)
class _Shape:
    """Pods alike for every Filter (``pods_alike``) and
    ``_monotone``: what the last of them found (``Scheduler.solve``)."""

    pod: Pod
    failed_at: int = -1
    """``Scheduler._on_existing`` when the last one fitted no existing node (-1: it fitted one)."""
    claims_from: int = 0
    """The new NodeClaims before this index rejected the last one."""

    def matches(self, pod: Pod) -> bool:
        return pods_alike(self.pod, pod)


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


def inflight_node(claim: NodeClaim) -> Node:
    """An in-flight NodeClaim (launched, no node yet) as a node of the simulator."""
    labels = {**claim.metadata.labels, "kubernetes.io/hostname": claim.metadata.name}
    spec = claim.spec
    return Node(
        metadata=ObjectMeta(name=claim.metadata.name, labels=labels),
        spec=NodeSpec(taints=list(spec.taints) if spec is not None else []),
        status=NodeStatus(capacity=claim.status.capacity, allocatable=claim.status.allocatable),
    )


class Scheduler:
    """One batch's simulation (module docstring). ``sim``: a ``SchedulingSimulator`` holding the
    existing and in-flight nodes; ``usage``: NodePool -> resources of its NodeClaims so far;
    ``options``: a memo of each NodePool's options the caller keeps between simulations (filled
    here; a NodePool's entry is used again for the same NodePool object and instance types)."""

    def __init__(
        self,
        sim: Any,
        pools: Sequence[NodePool],
        instance_types: Sequence[Any],
        usage: Mapping[str, Mapping[str, int]],
        new_name: Callable[[str], str],
        *,
        options: dict[str, Any] | None = None,
        daemons: Sequence[Pod] = (),
    ) -> None:
        self.sim = sim
        self.pools = sorted(pools, key=lambda p: (-((p.spec.weight if p.spec else None) or 0), p.metadata.name))
        memo = options if options is not None else {}
        self.options: dict[str, list[Option]] = {}
        for p in self.pools:
            kept = memo.get(p.metadata.name)
            if kept is None or kept[0] is not p or kept[1] is not instance_types:
                kept = memo[p.metadata.name] = (p, instance_types, pool_options(p, instance_types))
            self.options[p.metadata.name] = kept[2]
        self.overhead = {
            p.metadata.name: overhead(daemons, self.options[p.metadata.name], self._tolerator(p), pod_matches)
            for p in self.pools
        }
        """NodePool -> what its new NodeClaims start with: the compatible DaemonSet pods' requests."""
        self.usage = {name: dict(u) for name, u in usage.items()}
        self.new_name = new_name
        self.claims: list[NewNodeClaim] = []
        self.errors: dict[str, str] = {}
        self.why = ""
        """Pod uid -> why no NodePool could take it."""
        self.placed: dict[str, str] = {}
        """Pod uid -> the existing (or in-flight) node it fits on."""
        self.gave_up = False
        """``solve`` stopped once more than ``most_claims`` NodeClaims were needed."""
        self._on_existing = 0
        self._shapes: list[_Shape] = []
        self._volume_reqs: dict[str, list[Requirement] | None] = {}
        """Pod uid -> its volume topology requirements (None: a lookup failed)."""
        self.searcher: Any = sim
        """What ``solve`` asks for a pod's existing node (``schedule_anywhere``): the simulator,
        or a stand-in answering for it (``fits``)."""

    @staticmethod
    def _tolerator(pool: NodePool) -> Callable[[Pod], bool]:
        taints = template_of(pool)[1].taints
        return lambda pod: tolerates(pod, taints)

    def _volumes(self, pod: Pod) -> list[Requirement] | None:
        """``getVolumeTopologyRequirements``: what the pod's claims add to a NodeClaim's
        requirements (``volumetopology.requirements``); None (and the pod's error) when a
        lookup fails, which leaves the pod out of the simulation."""
        if not has_claims(pod):
            return []
        uid = pod.metadata.uid
        if uid not in self._volume_reqs:
            try:
                self._volume_reqs[uid] = requirements(pod, self.sim.volumes)
            except VolumeLookupError as err:
                self._volume_reqs[uid] = None
                self.errors[uid] = f"getting volume topology requirements, {err}"
        return self._volume_reqs[uid]

    def _matches(self, pod: Pod, labels: Mapping[str, str]) -> bool:
        """The pod's node selector, required node affinity and volume requirements."""
        reqs = self._volume_reqs.get(pod.metadata.uid) or ()
        return pod_matches(pod, labels) and all(req_matches(k, op, vs, labels) for k, op, vs in reqs)

    def _shape(self, pod: Pod) -> _Shape | None:
        if not _monotone(pod):
            return None
        for shape in self._shapes:
            if shape.matches(pod):
                return shape
        shape = _Shape(pod)
        self._shapes.append(shape)
        return shape

    def solve(self, pods: Sequence[Pod], most_claims: int | None = None) -> list[NewNodeClaim]:
        """The pods placed (module docstring). Pods alike (``_Shape``) skip what their like
        already found: no existing node fits one while no pod was placed on an existing node
        since the last one fitted none; the NodeClaims that rejected the last one reject it
        (fit only shrinks as pods are added). With ``most_claims``, the solve stops once more
        NodeClaims are open and every pod left is known to fit no existing node: the rest of
        the solve could only open more or add to them, leaving the simulator's round-robin
        position as it is (``gave_up``; the caller only needs to know it failed)."""

        def size(p: Pod) -> tuple[int, int, str, str]:
            r = pod_requests(p)
            return (-r.get("cpu", 0), -r.get("memory", 0), p.metadata.namespace, p.metadata.name)

        existing = set(self.sim.node_names())
        ordered = sorted(pods, key=size)
        for i, pod in enumerate(ordered):
            if self._volumes(pod) is None:
                continue
            shape = self._shape(pod)
            if shape is None or shape.failed_at != self._on_existing:
                if (node := self.searcher.schedule_anywhere(pod, lambda name: name in existing)) is not None:
                    self.placed[pod.metadata.uid] = node
                    self._on_existing += 1
                    if shape is not None:
                        shape.failed_at = -1
                    continue
                if shape is not None:
                    shape.failed_at = self._on_existing
            used = self._add_to_new(pod, shape.claims_from if shape is not None else 0)
            if used < 0 and self._open(pod):
                used = len(self.claims) - 1
            if used < 0:
                self.errors.setdefault(pod.metadata.uid, self.why)
            if shape is not None:
                shape.claims_from = used if used >= 0 else len(self.claims)
            if most_claims is not None and len(self.claims) > most_claims and self._settled(ordered[i + 1 :]):
                self.gave_up = True
                break
        for claim in [c for c in self.claims if not truncated_satisfies(c.pool, c.options, MAX_INSTANCE_TYPES)]:
            self.claims.remove(claim)  # Results.TruncateInstanceTypes (minvalues)
            self.errors.update((p.metadata.uid, TRUNCATE_ERROR) for p in claim.pods)
        return self.claims

    def _settled(self, rest: Sequence[Pod]) -> bool:
        """Every pod in ``rest`` is known to fit no existing node."""
        for pod in rest:
            shape = self._shape(pod)
            if shape is None or shape.failed_at != self._on_existing:
                return False
        return True

    def _narrowed(self, claim: NewNodeClaim, pod: Pod, requests: Mapping[str, int]) -> list[Option]:
        return [o for o in claim.options if _fits(o, requests) and self._matches(pod, o.labels)]

    def _add_to_new(self, pod: Pod, start: int = 0) -> int:
        """The index of the NodeClaim (from ``start`` on) the pod was added to, or -1."""
        for i in range(start, len(self.claims)):
            claim = self.claims[i]
            requests = _plus(claim.requests, {**pod_requests(pod), "pods": 1})
            options = self._narrowed(claim, pod, requests)
            if not options or not satisfies(claim.pool, options) or self.sim.check(pod, claim.name):
                continue
            self.sim.add_pod(pod, claim.name)
            claim.options, claim.requests = options, requests
            claim.pods.append(pod)
            return i
        return -1

    def _within_limits(self, pool: NodePool, option: Option) -> bool:
        limits = pool.spec.limits if pool.spec is not None else {}
        if not limits:
            return True
        used = self.usage.get(pool.metadata.name, {})
        after = _plus(used, {**option.capacity, "nodes": 1})
        return all(after.get(k, 0) <= v for k, v in _amounts(limits).items())

    def _open(self, pod: Pod) -> bool:
        own = {**pod_requests(pod), "pods": 1}
        self.why = "incompatible with all nodepools"
        for pool in self.pools:
            if not tolerates(pod, template_of(pool)[1].taints):
                continue
            requests = _plus(self.overhead[pool.metadata.name], own)
            options = [
                o
                for o in self.options[pool.metadata.name]
                if _fits(o, requests) and self._matches(pod, o.labels) and self._within_limits(pool, o)
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
