"""The DaemonSet overhead of a new NodeClaim (kubernetes-sigs/karpenter v1.9.1
``provisioning/provisioner.go`` ``getDaemonSetPods``, ``scheduling/scheduler.go``
``getDaemonOverhead`` and ``isDaemonPodCompatible``, ``pkg/utils/daemonset``).

``daemon_pods``: one pod per DaemonSet (by namespace and name): its newest live pod (the
cluster state's ``GetDaemonSetPod``), else a pod of its template with each container's limits
merged into its requests where a request is missing (``PodForDaemonSet``, as the API server's
defaulting would); either way its required node affinity is the template's (the DaemonSet
controller's per-node ``matchFields`` term is not the DaemonSet's choice).

``overhead``: for one NodePool, the summed requests (and ``pods``: their count) of the daemon
pods that tolerate its taints (``PreferNoSchedule`` taints are tolerated) and whose node
selector and required node affinity (any term: upstream drops terms one by one) some of its
instance-type options' labels satisfy — this project's stand-in for upstream's requirements
compatibility (``Requirements.IsCompatible`` against the NodeClaim template's requirements). A
new NodeClaim starts with these requests (``NewNodeClaim``: ``Spec.Resources.Requests`` the
daemon resources), so its options must hold them besides its pods.

``reservations``: ``calculateExistingNodeClaims`` and ``NewExistingNode``: on every existing or
in-flight node the provisioner simulates onto, the compatible daemon pods (tolerating the
node's cluster-state taints, their node selector and required affinity satisfied by its labels)
that have no pod of their DaemonSet bound there yet take their requests (and a pod slot each)
before any pending pod: as stand-in pods bound to the node, their containers' requests only (no
labels, ports or affinity: upstream subtracts resources only). Upstream subtracts the
resources of every DaemonSet pod already on the node from the compatible ones' sum; here a
DaemonSet's own pod there answers for it (the same unless a node runs DaemonSet pods the
labels no longer admit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from msgspec.structs import replace

from emulator.base.api.core import Affinity, Container, Node, NodeAffinity, Pod, PodSpec, ResourceRequirements, Taint
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.resources import pod_requests

__all__ = ["daemon_pods", "overhead", "reservations"]


def _owner_uid(pod: Pod) -> str:
    return next((o.uid for o in pod.metadata.owner_references if o.kind == "DaemonSet" and o.controller), "")


def _from_template(ds: Any) -> Pod:
    spec = ds.spec.template.spec

    def merged(containers: Sequence[Any]) -> list[Any]:
        out = []
        for c in containers:
            missing = {k: q for k, q in c.resources.limits.items() if k not in c.resources.requests}
            if missing:
                c = replace(c, resources=replace(c.resources, requests={**c.resources.requests, **missing}))
            out.append(c)
        return out

    spec = replace(spec, containers=merged(spec.containers), init_containers=merged(spec.init_containers))
    owner = OwnerReference(api_version="apps/v1", kind="DaemonSet", name=ds.metadata.name, uid=ds.metadata.uid,
                           controller=True)  # fmt: skip
    meta = ObjectMeta(name=ds.metadata.name, namespace=ds.metadata.namespace, owner_references=[owner])
    return Pod(metadata=meta, spec=spec)


def daemon_pods(daemonsets: Iterable[Any], pods: Iterable[Pod]) -> list[Pod]:
    """``getDaemonSetPods`` (module docstring)."""
    daemonsets = list(daemonsets)
    if not daemonsets:
        return []
    newest: dict[str, Pod] = {}
    for p in pods:
        uid = _owner_uid(p)
        if uid and p.metadata.deletion_timestamp is None:
            kept = newest.get(uid)
            key = (p.metadata.creation_timestamp or "", p.metadata.name)
            if kept is None or key > (kept.metadata.creation_timestamp or "", kept.metadata.name):
                newest[uid] = p
    out = []
    for ds in sorted(daemonsets, key=lambda d: (d.metadata.namespace, d.metadata.name)):
        pod = newest.get(ds.metadata.uid) or _from_template(ds)
        template = ds.spec.template.spec.affinity
        required = template.node_affinity if template is not None else None
        terms = required.required_during_scheduling_ignored_during_execution if required is not None else None
        affinity = pod.spec.affinity or Affinity()
        node_affinity = replace(
            affinity.node_affinity or NodeAffinity(), required_during_scheduling_ignored_during_execution=terms
        )
        out.append(replace(pod, spec=replace(pod.spec, affinity=replace(affinity, node_affinity=node_affinity))))
    return out


def overhead(
    daemons: Sequence[Pod],
    options: Sequence[Any],
    tolerates: Callable[[Pod], bool],
    matches: Callable[[Pod, Mapping[str, str]], bool],
) -> dict[str, int]:
    """``getDaemonOverhead`` for one NodePool (module docstring): ``options`` its instance-type
    options, ``tolerates`` whether a pod tolerates its taints, ``matches`` a pod's node
    selector and required affinity against labels. ``{}`` when no daemon pod is compatible."""
    total: dict[str, int] = {}
    for pod in daemons:
        if not tolerates(pod) or not any(matches(pod, o.labels) for o in options):
            continue
        for k, v in pod_requests(pod).items():
            total[k] = total.get(k, 0) + v
        total["pods"] = total.get("pods", 0) + 1
    return total


def _requests_only(containers: Sequence[Any]) -> list[Container]:
    return [Container(name=c.name, image="", resources=ResourceRequirements(requests=c.resources.requests))
            for c in containers]  # fmt: skip


def reservations(
    nodes: Sequence[Node],
    bound: Iterable[Pod],
    daemons: Sequence[Pod],
    taints: Callable[[Node], Sequence[Taint]],
    tolerates: Callable[[Pod, Sequence[Taint]], bool],
    matches: Callable[[Pod, Mapping[str, str]], bool],
) -> list[Pod]:
    """The stand-in pods of the daemon pods still to come on ``nodes`` (module docstring);
    ``bound`` the pods bound to nodes, ``taints`` a node's cluster-state taints."""
    if not daemons:
        return []
    present: dict[str, set[str]] = {}
    for p in bound:
        uid = _owner_uid(p)
        if uid and p.spec.node_name:
            present.setdefault(p.spec.node_name, set()).add(uid)
    out = []
    for node in nodes:
        name = node.metadata.name
        there = present.get(name, set())
        node_taints = taints(node)
        for d in daemons:
            if _owner_uid(d) in there or not tolerates(d, node_taints) or not matches(d, node.metadata.labels):
                continue
            spec = PodSpec(
                containers=_requests_only(d.spec.containers),
                init_containers=_requests_only(d.spec.init_containers),
                overhead=d.spec.overhead,
                node_name=name,
            )
            meta = ObjectMeta(name=f"{d.metadata.name}-daemon-{name}", namespace=d.metadata.namespace,
                              uid=f"karpenter-daemon/{_owner_uid(d)}/{name}")  # fmt: skip
            out.append(Pod(metadata=meta, spec=spec))
    return out
