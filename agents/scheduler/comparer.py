"""One scheduler instance held against the API server's truth (upstream
``backend/cache/debugger/comparer.go``, ``CacheComparer``).

What this module owns: ``CacheComparer``, the questions the run's invariant checker
(``emulator/app/scenario/invariants.py``) asks of one instance, so that the checker never drives the
cache or the queue itself:

- ``compare(pods, nodes)``: the cache against the API server's nodes and bound, non-terminal
  pods — nodes, pod UIDs per node, requested totals per node, and pods still assumed (upstream
  ``CompareNodes`` / ``ComparePods``, with requested totals added).
- ``missed_requeues(pods)``: pods parked in unschedulablePods that pass PreFilter + Filter (with
  nominated pods) on some node of the snapshot brought up to date; pods rejected by a plugin
  outside PreFilter/Filter/PostFilter are not judged, pods of identical namespace, labels and
  spec are judged once.
- ``working_on(pod, now, grace)``, ``queue_place(pod)``, ``not_quiescent(...)``,
  ``binds_sent()``: what the instance is still doing (informer revisions, queue, in flight,
  Permit, assumed pods, bind requests).

Each finding is one line prefixed with the instance's name, the invariant checker's wording.
It changes nothing but the instance's snapshot (``missed_requeues`` updates it, as the next
cycle would) and draws no random numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from agents.scheduler.cache import CacheError
from agents.scheduler.framework.interface import ExtensionPoint as Ep
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import CycleState, NodeInfo
from emulator.base.api.codec import to_builtins
from emulator.base.api.core import Node, Pod
from emulator.base.api.resources import pod_requests

if TYPE_CHECKING:
    from agents.scheduler.scheduler import Scheduler

__all__ = ["CacheComparer"]

_TERMINAL = ("Succeeded", "Failed")


def _key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def _amount(resource: str, v: int) -> str:
    return f"{v}m" if resource == "cpu" else str(v)


def _resources(amounts: dict[str, int]) -> str:
    return "{" + ", ".join(f"{r}: {_amount(r, amounts[r])}" for r in sorted(amounts)) + "}"


class CacheComparer:
    """The invariant checker's view of one scheduler instance."""

    def __init__(self, sched: Scheduler) -> None:
        self._sched = sched
        self.name = sched.name

    def __repr__(self) -> str:
        return f"<CacheComparer {self.name!r}>"

    # --- what the instance is doing ---------------------------------------------------------

    def responsible_for(self, pod: Pod) -> bool:
        return self._sched.responsible_for(pod)

    def binds_sent(self) -> int:
        """Bind requests sent that did not fail (some may still be on the wire)."""
        stats = self._sched.client.stats
        return stats.calls.get("bind", 0) - stats.errors.get("bind", 0)

    def queue_place(self, pod: Pod) -> str:
        """Where the queue holds ``pod``, as the checker words it."""
        qpi = self._sched.queue.get(_key(pod))
        return (
            f"{self.name}: in unschedulablePods since t={qpi.timestamp:g}s"
            if qpi is not None
            else f"{self.name}: in no queue"
        )

    def working_on(self, pod: Pod, now: float, report_grace: float) -> bool:
        """The instance may still bind or report ``pod``: its latest version not yet seen by
        the informer, in activeQ/backoffQ, in flight, at Permit, assumed, gated by PreEnqueue,
        or parked less than ``report_grace`` seconds ago."""
        sched = self._sched
        if sched.pods.revision < int(pod.metadata.resource_version or 0):
            return True
        key, uid = _key(pod), pod.metadata.uid
        where = sched.queue.where(key)
        if where in ("Active", "Backoff") or sched.queue.is_in_flight(uid) or sched.waiting_pods.get(uid) is not None:
            return True
        if sched.cache.is_assumed_pod(pod):
            return True
        qpi = sched.queue.get(key) if where == "Unschedulable" else None
        return qpi is not None and (qpi.gated or now - qpi.timestamp < report_grace)

    def not_quiescent(self, last_pod_revision: int, last_node_revision: int, binds_on_wire: int) -> str:
        """Why the instance is not quiescent ("" when it is)."""
        sched = self._sched
        if sched.pods.revision < last_pod_revision:
            return "its pod informer has not seen every pod write"
        if sched.nodes.revision < last_node_revision:
            return "its node informer has not seen every node write"
        inflight = sched.queue.statistics()["inflight"]
        if inflight:
            return f"{inflight} pod(s) in flight"
        if len(sched.waiting_pods):
            return f"{len(sched.waiting_pods)} pod(s) waiting at Permit"
        if binds_on_wire > 0:
            return f"{binds_on_wire} bind request(s) on the wire"
        return ""

    # --- the cache against the API server ---------------------------------------------------

    def compare(self, pods: list[Pod], nodes: list[Node]) -> list[str]:
        """The cache against the bound, non-terminal pods and the nodes of the API server."""
        names = {p.metadata.uid: _key(p) for p in pods}
        truth: dict[str, list[Pod]] = {}
        for p in pods:
            if p.spec.node_name and p.status.phase not in _TERMINAL:
                truth.setdefault(p.spec.node_name, []).append(p)
        api_nodes = {n.metadata.name for n in nodes}
        dump = self._sched.cache.dump()
        who = self.name
        out: list[str] = []
        for uid in dump.assumed_pods:
            out.append(f"{who}: pod {names.get(uid, uid)} is still assumed (never confirmed nor forgotten)")
        for name in sorted(api_nodes | set(truth) | set(dump.nodes)):
            nd = dump.nodes.get(name)
            has_node = nd is not None and nd.has_node
            if name in api_nodes and not has_node:
                out.append(f"{who}: node {name} exists but the cache does not have it")
            elif name not in api_nodes and has_node:
                out.append(f"{who}: node {name} was deleted but the cache still has it")
            want = sorted(p.metadata.uid for p in truth.get(name, []))
            have = list(nd.pod_uids) if nd is not None else []
            if want != have:
                missing = [names.get(u, u) for u in want if u not in have]
                extra = [names.get(u, u) for u in have if u not in want]
                out.append(f"{who}: node {name}: pods missing from the cache {missing}, extra in the cache {extra}")
                continue
            requested: dict[str, int] = {}
            for p in truth.get(name, []):
                for r, v in pod_requests(p).items():
                    requested[r] = requested.get(r, 0) + v
            requested = {r: v for r, v in requested.items() if v}
            cached = nd.requested if nd is not None else {}
            if requested != cached:
                out.append(
                    f"{who}: node {name}: cache requested {_resources(cached)}, pods request {_resources(requested)}"
                )
        return out

    # --- the queue against the API server ---------------------------------------------------

    def missed_requeues(self, pods: list[Pod]) -> tuple[list[str], str]:
        """(findings, why not judged): pods parked in unschedulablePods that fit a node now, or
        are bound or deleted in the API server; "why" is set when the snapshot could not be
        brought up to date (nothing judged)."""
        sched = self._sched
        parked = sched.queue.unschedulable_pods()
        if not parked:
            return [], ""
        try:
            sched.cache.update_snapshot(sched.snapshot)
        except CacheError as err:
            return [], f"{self.name}: snapshot not consistent: {err}"
        out: list[str] = []
        truth = {_key(p): p for p in pods}
        verdicts: dict[tuple[str, str, tuple[tuple[str, str], ...], bytes], str] = {}
        for stale in parked:
            key = _key(stale)
            qpi = sched.queue.get(key)
            pod = truth.get(key)
            if qpi is None or qpi.gated:
                continue
            if pod is None or pod.metadata.uid != stale.metadata.uid or pod.spec.node_name:
                state = f"bound to {pod.spec.node_name}" if pod is not None and pod.spec.node_name else "deleted"
                out.append(f"{self.name}: pod {key} waits in unschedulablePods but is {state} in the API server")
                continue
            fwk = sched.frameworks.get(pod.spec.scheduler_name)
            if fwk is None:
                continue
            points = fwk.list_plugins()
            judged = {n for pt in (Ep.PreFilter, Ep.Filter, Ep.PostFilter) for n in points.get(pt, ())}
            rejectors = qpi.rejector_plugins()
            if rejectors - judged:
                continue
            meta = pod.metadata
            cls = (
                pod.spec.scheduler_name,
                meta.namespace,
                tuple(sorted(meta.labels.items())),
                msgspec.json.encode(to_builtins(pod.spec)),
            )
            if cls not in verdicts:
                verdicts[cls] = _fits_somewhere(fwk, pod, sched.snapshot.node_info_list)
            node = verdicts[cls]
            if node:
                out.append(
                    f"{self.name}: pod {key} parked in unschedulablePods at t={qpi.timestamp:g}s "
                    f"(rejected by {sorted(rejectors)}) fits node {node} now"
                )
        return out, ""


def _fits_somewhere(fwk: Framework, pod: Pod, nodes: list[NodeInfo]) -> str:
    """The first node ``pod`` passes PreFilter + Filter (with nominated pods) on, or ""."""
    state = CycleState()
    pre, status, _ = fwk.run_pre_filter_plugins(state, pod, nodes)
    if not status.is_success():
        return ""
    if pre is not None and not pre.all_nodes():
        allowed = pre.node_names or frozenset()
        nodes = [n for n in nodes if n.name in allowed]
    for ni in nodes:
        if fwk.run_filter_plugins_with_nominated_pods(state, pod, ni).is_success():
            return ni.name
    return ""
