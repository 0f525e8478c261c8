"""Checking a scenario's ``expect`` list (and ``waitFor`` conditions) against the cluster.

Pure functions over the API server's final objects (and the overcommit monitor's
history). Each expectation gives an ``ExpectationResult(name, passed, detail)``; the
detail always says what was found, passed or not.

==================  ===============================================================
condition           a pod counts when
==================  ===============================================================
podsScheduled       it has ``spec.nodeName``
podsRunning         ``status.phase`` is Running
podsPending         ``status.phase`` is Pending (bound or not)
podsSucceeded       ``status.phase`` is Succeeded
podsFailed          ``status.phase`` is Failed
podsTerminal        Succeeded or Failed
==================  ===============================================================

``workloadsReady`` and ``jobsComplete`` count workload objects, not pods (``workloads``
has their rules), ``objectCount`` the objects of any kind; ``check`` gets those objects by kind.

``count: all`` means every pod the selector matches (at least one must match);
a number means exactly that many.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from emulator.app.scenario.monitor import Overcommit, WorkloadCounter
from emulator.app.scenario.schema import (
    Expectation,
    JobsComplete,
    MaxPodsPerNode,
    NoOvercommit,
    ObjectCount,
    PodCount,
    PodOnNode,
    PodsOnNodes,
    TopologySpread,
    WorkloadsReady,
)
from emulator.app.scenario.workload_status import READY_KINDS, WorkloadFilter, job_complete, workload_ready
from emulator.base.api.core import LabelSelector, Node, Pod
from emulator.base.api.labelparse import format_label_selector
from emulator.base.api.labelselector import label_selector_matches

__all__ = ["CONDITIONS", "ExpectationResult", "check", "condition_met", "count_pods", "count_reached"]

CONDITIONS: dict[str, Callable[[Pod], bool]] = {
    "podsScheduled": lambda p: bool(p.spec.node_name),
    "podsRunning": lambda p: p.status.phase == "Running",
    "podsPending": lambda p: p.status.phase == "Pending",
    "podsSucceeded": lambda p: p.status.phase == "Succeeded",
    "podsFailed": lambda p: p.status.phase == "Failed",
    "podsTerminal": lambda p: p.status.phase in ("Succeeded", "Failed"),
}


@dataclass(frozen=True, slots=True)
class ExpectationResult:
    name: str
    passed: bool
    detail: str


def _selected(pods: Sequence[Pod], selector: LabelSelector) -> list[Pod]:
    return [p for p in pods if label_selector_matches(selector, p.metadata.labels)]


def _sel_text(selector: LabelSelector) -> str:
    text = format_label_selector(selector)
    return f" matching {text!r}" if text else ""


def count_pods(pods: Sequence[Pod], condition: str, selector: LabelSelector) -> tuple[int, int]:
    """(pods meeting ``condition``, pods matching ``selector``)."""
    chosen = _selected(pods, selector)
    test = CONDITIONS[condition]
    return sum(1 for p in chosen if test(p)), len(chosen)


def count_reached(met: int, total: int, count: int | str) -> bool:
    """``met`` of ``total`` selected pods meet the condition: is that ``count`` (see above)?"""
    if count == "all":
        return total > 0 and met == total
    return met >= int(count)


def condition_met(pods: Sequence[Pod], condition: str, selector: LabelSelector, count: int | str) -> bool:
    met, total = count_pods(pods, condition, selector)
    return count_reached(met, total, count)


def _pod_count(e: PodCount, pods: Sequence[Pod]) -> ExpectationResult:
    met, total = count_pods(pods, e.condition, e.selector)
    want = e.count
    name = f"{e.condition}: {want}{_sel_text(e.selector)}"
    if want == "all":
        ok = total > 0 and met == total
    else:
        ok = met == want
    return ExpectationResult(name, ok, f"{met} of {total} pods{_sel_text(e.selector)}")


def _pod_on_node(e: PodOnNode, pods: Sequence[Pod]) -> ExpectationResult:
    name = f"podOnNode: {e.namespace}/{e.name} on {e.node}"
    pod = next((p for p in pods if p.metadata.namespace == e.namespace and p.metadata.name == e.name), None)
    if pod is None:
        return ExpectationResult(name, False, "pod not found")
    where = pod.spec.node_name or "<unscheduled>"
    return ExpectationResult(name, pod.spec.node_name == e.node, f"pod is on {where} ({pod.status.phase})")


def _max_per_node(e: MaxPodsPerNode, pods: Sequence[Pod]) -> ExpectationResult:
    counts: dict[str, int] = {}
    for p in _selected(pods, e.selector):
        if p.spec.node_name and p.status.phase not in ("Succeeded", "Failed"):
            counts[p.spec.node_name] = counts.get(p.spec.node_name, 0) + 1
    worst = max(sorted(counts.items()), key=lambda kv: kv[1], default=("", 0))
    name = f"maxPodsPerNode: {e.count}{_sel_text(e.selector)}"
    detail = f"at most {worst[1]} pods on one node" + (f" ({worst[0]})" if worst[0] else "")
    return ExpectationResult(name, worst[1] <= e.count, detail)


def _placed(pods: Sequence[Pod], selector: LabelSelector) -> list[Pod]:
    return [p for p in _selected(pods, selector) if p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")]


def _topology_spread(e: TopologySpread, pods: Sequence[Pod], nodes: Sequence[Node]) -> ExpectationResult:
    domain_of = {
        n.metadata.name: n.metadata.labels[e.topology_key] for n in nodes if e.topology_key in n.metadata.labels
    }
    counts = dict.fromkeys(sorted(set(domain_of.values())), 0)
    for p in _placed(pods, e.selector):
        d = domain_of.get(p.spec.node_name)
        if d is not None:
            counts[d] += 1
    name = f"topologySpread: {e.topology_key} maxSkew {e.max_skew}{_sel_text(e.selector)}"
    if not counts:
        return ExpectationResult(name, False, f"no node has the label {e.topology_key}")
    skew = max(counts.values()) - min(counts.values())
    detail = f"skew {skew} (" + ", ".join(f"{d}: {c}" for d, c in counts.items()) + ")"
    return ExpectationResult(name, skew <= e.max_skew, detail)


def _pods_on_nodes(e: PodsOnNodes, pods: Sequence[Pod], nodes: Sequence[Node]) -> ExpectationResult:
    wanted = {n.metadata.name for n in nodes if label_selector_matches(e.node_selector, n.metadata.labels)}
    chosen = _selected(pods, e.selector)
    on = sum(1 for p in chosen if p.spec.node_name in wanted)
    name = f"podsOnNodes: {e.count}{_sel_text(e.selector)} on nodes matching {format_label_selector(e.node_selector)!r}"
    ok = (len(chosen) > 0 and on == len(chosen)) if e.count == "all" else on == e.count
    return ExpectationResult(name, ok, f"{on} of {len(chosen)} pods on the {len(wanted)} matching nodes")


def _no_overcommit(violations: Sequence[Overcommit]) -> ExpectationResult:
    if not violations:
        return ExpectationResult("noOvercommit", True, "no node ran pods requesting more than its allocatable")
    v = violations[0]
    return ExpectationResult(
        "noOvercommit",
        False,
        f"{len(violations)} violation(s); first at t={v.time:g}s on {v.node}: {v.resource} requested "
        f"{v.requested} > allocatable {v.allocatable}",
    )


def _workloads_ready(e: WorkloadsReady, objects: Mapping[str, Sequence[Any]]) -> ExpectationResult:
    kinds = (e.kind,) if e.kind else READY_KINDS
    select = WorkloadFilter(kinds, name=e.name, namespace=e.namespace, selector=e.selector)
    chosen = [o for k in kinds for o in objects.get(k, ()) if select.selects(o)]
    counter = WorkloadCounter(select, workload_ready, chosen)
    not_ready = [f"{o.kind} {o.metadata.namespace}/{o.metadata.name}" for o in chosen if not workload_ready(o)]
    detail = f"{counter.met} of {counter.total} ready" + (
        f"; not ready: {', '.join(not_ready[:5])}" if not_ready else ""
    )
    return ExpectationResult(
        f"workloadsReady: {select.describe()}", count_reached(counter.met, counter.total, "all"), detail
    )


def _jobs_complete(e: JobsComplete, objects: Mapping[str, Sequence[Any]]) -> ExpectationResult:
    select = WorkloadFilter(("Job",), selector=e.selector)
    counter = WorkloadCounter(select, job_complete, objects.get("Job", ()))
    ok = count_reached(counter.met, counter.total, "all") if e.count == "all" else counter.met == e.count
    name = f"jobsComplete: {e.count}{_sel_text(e.selector)}"
    return ExpectationResult(name, ok, f"{counter.met} of {counter.total} Jobs{_sel_text(e.selector)} complete")


def _object_count(e: ObjectCount, objects: Mapping[str, Sequence[Any]]) -> ExpectationResult:
    found = [o for o in objects.get(e.kind, ()) if not e.namespace or o.metadata.namespace == e.namespace]
    where = f" in {e.namespace}" if e.namespace else ""
    return ExpectationResult(f"objectCount: {e.count} {e.kind}{where}", len(found) == e.count, f"{len(found)} found")


def check(
    expect: Sequence[Expectation],
    pods: Sequence[Pod],
    overcommits: Sequence[Overcommit],
    nodes: Sequence[Node] = (),
    workloads: Mapping[str, Sequence[Any]] | None = None,
) -> list[ExpectationResult]:
    """Each expectation's result; ``workloads`` maps a kind to its objects (the
    ``workloadsReady`` and ``jobsComplete`` expectations read it)."""
    objects = workloads or {}
    out: list[ExpectationResult] = []
    for e in expect:
        match e:
            case PodCount():
                out.append(_pod_count(e, pods))
            case PodOnNode():
                out.append(_pod_on_node(e, pods))
            case MaxPodsPerNode():
                out.append(_max_per_node(e, pods))
            case TopologySpread():
                out.append(_topology_spread(e, pods, nodes))
            case PodsOnNodes():
                out.append(_pods_on_nodes(e, pods, nodes))
            case NoOvercommit():
                out.append(_no_overcommit(overcommits))
            case WorkloadsReady():
                out.append(_workloads_ready(e, objects))
            case JobsComplete():
                out.append(_jobs_complete(e, objects))
            case ObjectCount():
                out.append(_object_count(e, objects))
    return out
