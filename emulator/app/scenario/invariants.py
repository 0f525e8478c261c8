"""The invariant checker: what must hold in every run, whatever the scenario and the seed.

What it owns: the history-based checks, fed every API write as a write listener
(``__call__``), and the final checks of ``finish(cluster)`` against the scheduler instances'
own state. It does not own expectations (the scenario's ``expect``, ``scenario/expectations``),
the report (``report.py``), or deciding whether a run passed (the runner, which fails a run on
any violation). Results list every invariant, violated or not, in this order:

=======================  ================  ===============================================
invariant                checked           a violation is
=======================  ================  ===============================================
noOvercommit             every write       a kubelet admits a pod and the admitted pods'
                                           requests on its node exceed an allocatable
                                           resource the Node declares
noDoubleBinding          every write       a bound pod bound again, moved or unbound
noHostPortClash          every write       two admitted pods of a node share a protocol
                                           and hostPort on the same IP (or 0.0.0.0)
cacheMatchesApiServer    end, quiescent    a scheduler's cache differs from the API server:
                                           nodes, pod UIDs per node, requested totals per
                                           node (bound non-terminal pods), or a pod still
                                           assumed
noMissedRequeue          end, quiescent    a pod waits in unschedulablePods although it
                                           fits a node now
everyPodResolved         end               an unbound, non-terminal pod that no scheduler
                                           is working on has no ``PodScheduled=False``
                                           condition with a reason
=======================  ================  ===============================================

*Admitted* (the kubelet's view): bound, not terminal, and the kubelet has written its
``startTime`` (the Pending status it writes on admission) or phase Running. A pod the kubelet
rejects goes straight to Failed and is never counted. The ``noOvercommit`` expectation reads
the same records (``InvariantChecker.overcommits``).

*Quiescent* scheduler: its Pod and Node informers have applied the last Pod and Node writes,
no pod is in flight in its queue or waiting at Permit, and no bind request of any scheduler
is still on the wire (bind calls started = bind errors + bind writes seen). A run stopped
at ``until`` in the middle of work usually is not; the two quiescent-only checks are then
reported with 0 violations and ``skipped`` saying why.

*noMissedRequeue* is an approximation: the queue does not record which events reached a pod
after it was parked, so the rule is "a pod parked in unschedulablePods fits some node now"
(PreFilter + Filter with nominated pods, the pod's profile, the scheduler's snapshot brought
up to date): whatever made it fit was an event the queue should have requeued it on. Not
judged: gated pods, and pods rejected by a plugin outside PreFilter/Filter/PostFilter (a Permit
gang, Reserve; PostFilter counts because a preemption that found nothing is listed as a
rejector). Pods of identical namespace, labels and spec are judged once.

*everyPodResolved* leaves out pods with ``schedulingGates`` (upstream's API server reports
them with reason SchedulingGated; ours sets no condition), pods whose ``schedulerName`` no
instance serves, and pods a responsible scheduler is still working on: the latest version not
yet seen by its informer, in activeQ/backoffQ, in flight, at Permit, assumed, gated by
PreEnqueue, or parked less than ``report_grace`` seconds ago (its failure report may still be
on the wire).

Memory: the per-pod records (``_admitted``, ``_bound``, ``_created``; under the run's
``bookkeeping.RunBook`` the first two are fields of the observer's per-pod record) are dropped when the
pod is deleted and the per-node ones follow the nodes, so a long run with pod GC keeps them
at the size of the live set; ``overcommits`` grows only with violations.

The final checks ask each scheduler instance's ``CacheComparer`` (``agents.scheduler``): the
cache against the API server, the parked pods that fit now, what the instance is still doing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Protocol

from emulator.app.scenario.monitor import Overcommit
from emulator.base.api.core import Node, Pod
from emulator.base.api.resources import HostPort, node_allocatable, pod_host_ports, pod_requests
from emulator.base.apiserver.server import ApiServer, Verb, WriteRecord
from emulator.base.runtime.clock import Clock

if TYPE_CHECKING:
    from agents.scheduler import CacheComparer, Scheduler

__all__ = [
    "CACHE_MATCHES_API_SERVER",
    "EVERY_POD_RESOLVED",
    "INVARIANTS",
    "NO_DOUBLE_BINDING",
    "NO_HOST_PORT_CLASH",
    "NO_MISSED_REQUEUE",
    "NO_OVERCOMMIT",
    "ClusterLike",
    "InvariantChecker",
    "InvariantResult",
    "install",
    "scheduler_instances",
]

NO_OVERCOMMIT: Final = "noOvercommit"
NO_DOUBLE_BINDING: Final = "noDoubleBinding"
NO_HOST_PORT_CLASH: Final = "noHostPortClash"
CACHE_MATCHES_API_SERVER: Final = "cacheMatchesApiServer"
NO_MISSED_REQUEUE: Final = "noMissedRequeue"
EVERY_POD_RESOLVED: Final = "everyPodResolved"
INVARIANTS: Final = (
    NO_OVERCOMMIT,
    NO_DOUBLE_BINDING,
    NO_HOST_PORT_CLASH,
    CACHE_MATCHES_API_SERVER,
    NO_MISSED_REQUEUE,
    EVERY_POD_RESOLVED,
)
_TERMINAL: Final = ("Succeeded", "Failed")
_ANY_IP: Final = "0.0.0.0"
_NO_ALLOC: Final[Mapping[str, int]] = MappingProxyType({})
"""The allocatable of a node the checker has not seen: nothing to overcommit."""


@dataclass(frozen=True, slots=True)
class InvariantResult:
    name: str
    violations: int
    first_time: float | None = None
    first_detail: str = ""
    skipped: str = ""
    """Non-empty when the check could not be made (e.g. the run ended before quiescence)."""

    @property
    def passed(self) -> bool:
        return self.violations == 0

    def to_json(self) -> dict[str, Any]:
        """``{name, violations, first: {time, detail} | null}`` (+ ``skipped`` when set)."""
        first = None
        if self.first_time is not None:
            first = {"time": round(self.first_time, 6), "detail": self.first_detail}
        doc: dict[str, Any] = {"name": self.name, "violations": self.violations, "first": first}
        if self.skipped:
            doc["skipped"] = self.skipped
        return doc


class ClusterLike(Protocol):
    """What ``finish`` reads of the runner's ``Cluster`` (read-only)."""

    @property
    def server(self) -> ApiServer: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def agents(self) -> list[Any]: ...


class _Tally:
    __slots__ = ("count", "first_detail", "first_time", "skipped")

    def __init__(self) -> None:
        self.count = 0
        self.first_time: float | None = None
        self.first_detail = ""
        self.skipped: list[str] = []

    def add(self, t: float, detail: str) -> None:
        self.count += 1
        if self.first_time is None:
            self.first_time, self.first_detail = t, detail

    def result(self, name: str) -> InvariantResult:
        return InvariantResult(name, self.count, self.first_time, self.first_detail, "; ".join(self.skipped))


@dataclass(slots=True)
class _Admitted:
    node: str
    key: str
    requests: dict[str, int]
    ports: list[HostPort]


def _key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def _admitted(pod: Pod | None) -> bool:
    if pod is None or not pod.spec.node_name or pod.status.phase in _TERMINAL:
        return False
    return pod.status.phase == "Running" or bool(pod.status.start_time)


def _clash(a: HostPort, b: HostPort) -> bool:
    return a[1:] == b[1:] and (a[0] == b[0] or _ANY_IP in (a[0], b[0]))


def _amount(resource: str, v: int) -> str:
    return f"{v}m" if resource == "cpu" else str(v)


def _unschedulable_reason(pod: Pod) -> str:
    for c in pod.status.conditions:
        if c.type == "PodScheduled" and c.status == "False" and c.reason:
            return c.reason
    return ""


def scheduler_instances(cluster: ClusterLike) -> list[Scheduler]:
    """Every scheduler instance of the run (the agents that group them expose ``schedulers``)."""
    out: list[Scheduler] = []
    for agent in cluster.agents:
        out.extend(getattr(agent, "schedulers", ()))
    return out


def _comparers(cluster: ClusterLike) -> list[CacheComparer]:
    """One ``CacheComparer`` per scheduler instance: the checker asks them, never the cache or
    the queue itself."""
    schedulers = scheduler_instances(cluster)
    if not schedulers:
        return []
    from agents.scheduler import CacheComparer

    return [CacheComparer(s) for s in schedulers]


class InvariantChecker:
    """A write listener for the history-based invariants; ``finish`` adds the final ones."""

    def __init__(self, *, report_grace: float = 5.0) -> None:
        self.report_grace = report_grace
        self._tallies = {name: _Tally() for name in (NO_OVERCOMMIT, NO_DOUBLE_BINDING, NO_HOST_PORT_CLASH)}
        self._alloc: dict[str, dict[str, int]] = {}
        self._used: dict[str, dict[str, int]] = {}
        self._ports: dict[str, list[tuple[HostPort, str]]] = {}
        self._admitted: dict[str, _Admitted] = {}
        self._bound: dict[str, tuple[str, float]] = {}
        self._created: dict[str, float] = {}
        self.overcommits: list[Overcommit] = []
        """Every overcommit seen, for the ``noOvercommit`` expectation."""
        self.last_revision: dict[str, int] = {"Pod": 0, "Node": 0}
        self.bind_writes = 0

    def __repr__(self) -> str:
        counts = " ".join(f"{n}={t.count}" for n, t in self._tallies.items() if t.count)
        return f"<InvariantChecker admitted={len(self._admitted)} {counts or 'no violations'}>"

    # --- history ----------------------------------------------------------------------------

    def __call__(self, rec: WriteRecord) -> None:
        # Mirrored in ``bookkeeping.RunBook``: change both (``test_bookkeeping``).
        kind, old, new = rec.kind, rec.old, rec.new
        if kind == "Node":
            self.last_revision["Node"] = rec.revision
            if new is None:
                self._alloc.pop(old.metadata.name, None)
            else:
                self._alloc[new.metadata.name] = node_allocatable(new)
            return
        if kind != "Pod":
            return
        self.last_revision["Pod"] = rec.revision
        if rec.verb == "bind":
            self.bind_writes += 1
        uid = (new if new is not None else old).metadata.uid
        if old is None:
            self._created[uid] = rec.time
        self._binding(rec, uid)
        was, now = uid in self._admitted, _admitted(new)
        if was and not now:
            self._release(uid)
        elif now and not was:
            self._admit(rec.time, uid, new)
        if new is None:
            self._created.pop(uid, None)

    def write_many(self, verb: Verb, kind: str, time: float, agent: str, writes: list[tuple[Any, Any, int]]) -> None:
        """A batch of writes of one kind (the Lease renewals of an instant): ``__call__`` for
        each, nothing for a kind other than Pod and Node."""
        if kind == "Pod" or kind == "Node":
            for old, new, rev in writes:
                self(WriteRecord(rev, time, verb, kind, old, new, agent))

    def _binding(self, rec: WriteRecord, uid: str) -> None:
        # Mirrored in ``bookkeeping.RunBook``: change both (``test_bookkeeping``).
        old, new = rec.old, rec.new
        if new is None:
            self._bound.pop(uid, None)
            return
        old_node = old.spec.node_name if old is not None else ""
        new_node = new.spec.node_name
        tally = self._tallies[NO_DOUBLE_BINDING]
        if rec.verb == "bind" and old_node:
            tally.add(rec.time, f"pod {_key(new)} bound to {new_node} while already bound to {old_node}")
        elif old_node and new_node != old_node:
            tally.add(rec.time, f"pod {_key(new)} moved from node {old_node} to {new_node or '(none)'}")
        elif new_node and not old_node:
            prev = self._bound.get(uid)
            if prev is not None:
                tally.add(
                    rec.time, f"pod {_key(new)} bound to {new_node}, already bound to {prev[0]} at t={prev[1]:g}s"
                )
            else:
                self._bound[uid] = (new_node, rec.time)

    def _admit(self, t: float, uid: str, pod: Pod) -> None:
        req = pod_requests(pod)
        req["pods"] = 1
        self._admitted[uid] = self._enter(t, pod, req)

    def _enter(self, t: float, pod: Pod, req: dict[str, int]) -> _Admitted:
        """``pod`` admitted with requests ``req`` (``pods`` included; the checker keeps it):
        its node's sums and ports checked and taken; the record ``_free`` gives back."""
        node, key = pod.spec.node_name, _key(pod)
        ports = pod_host_ports(pod)
        adm = _Admitted(node, key, req, ports)
        used = self._used.get(node)
        if used is None:
            used = self._used[node] = {}
        alloc = self._alloc.get(node, _NO_ALLOC)
        over = False
        for r, v in req.items():
            u = used[r] = used.get(r, 0) + v
            if u > alloc.get(r, u):
                over = True
        if over:  # reported in resource-name order
            for r in sorted(req):
                if r in alloc and used[r] > alloc[r]:
                    self.overcommits.append(Overcommit(t, node, r, used[r], alloc[r]))
                    self._tallies[NO_OVERCOMMIT].add(
                        t,
                        f"node {node}: {r} requested {_amount(r, used[r])} > allocatable {_amount(r, alloc[r])} "
                        f"after admitting {key}",
                    )
        if not ports:
            return adm
        taken = self._ports.setdefault(node, [])
        for port in ports:
            other = next((k for p, k in taken if _clash(p, port)), None)
            if other is not None:
                ip, proto, number = port
                self._tallies[NO_HOST_PORT_CLASH].add(
                    t, f"node {node}: pods {other} and {key} both use hostPort {proto}/{number} on {ip}"
                )
        taken.extend((p, key) for p in ports)
        return adm

    def _release(self, uid: str) -> None:
        self._free(self._admitted.pop(uid))

    def _free(self, adm: _Admitted) -> None:
        """An admitted pod's requests and ports given back to its node."""
        used = self._used[adm.node]
        for r, v in adm.requests.items():
            used[r] -= v
        taken = self._ports.get(adm.node, [])
        for port in adm.ports:
            taken.remove((port, adm.key))

    # --- the end of the run -------------------------------------------------------------------

    def finish(self, cluster: ClusterLike) -> list[InvariantResult]:
        """Run the final checks against ``cluster`` (stopped, or at least not moving) and return
        every invariant's result, in ``INVARIANTS`` order. Calling it again checks again."""
        now = cluster.clock.now()
        pods: list[Pod] = cluster.server.list("Pod")[0]
        nodes: list[Node] = cluster.server.list("Node")[0]
        schedulers = _comparers(cluster)
        tallies = {**self._tallies, **{n: _Tally() for n in INVARIANTS if n not in self._tallies}}
        cache, requeue, resolved = (
            tallies[n] for n in (CACHE_MATCHES_API_SERVER, NO_MISSED_REQUEUE, EVERY_POD_RESOLVED)
        )
        if not schedulers:
            for tally in (cache, requeue, resolved):
                tally.skipped.append("no scheduler instance")
        on_wire = sum(s.binds_sent() for s in schedulers) - self.bind_writes
        for sched in schedulers:
            why = self.not_quiescent(sched, on_wire)
            if why:
                cache.skipped.append(f"{sched.name} not quiescent: {why}")
                requeue.skipped.append(f"{sched.name} not quiescent: {why}")
                continue
            for detail in sched.compare(pods, nodes):
                cache.add(now, detail)
            missed, skipped = sched.missed_requeues(pods)
            if skipped:
                requeue.skipped.append(skipped)
            for detail in missed:
                requeue.add(now, detail)
        if schedulers:
            self._check_resolved(schedulers, pods, now, resolved)
        return [tallies[name].result(name) for name in INVARIANTS]

    def quiescent(self, cluster: ClusterLike) -> bool:
        """Whether every scheduler instance is quiescent now (the runner waits for it)."""
        schedulers = _comparers(cluster)
        on_wire = sum(s.binds_sent() for s in schedulers) - self.bind_writes
        return not any(self.not_quiescent(s, on_wire) for s in schedulers)

    def _check_resolved(self, schedulers: list[CacheComparer], pods: list[Pod], now: float, tally: _Tally) -> None:
        for pod in pods:
            if pod.spec.node_name or pod.status.phase in _TERMINAL or pod.metadata.deletion_timestamp is not None:
                continue
            if pod.spec.scheduling_gates or _unschedulable_reason(pod):
                continue
            responsible = [s for s in schedulers if s.responsible_for(pod)]
            if not responsible or any(s.working_on(pod, now, self.report_grace) for s in responsible):
                continue
            created = self._created.get(pod.metadata.uid)
            since = f" (created at t={created:g}s)" if created is not None else ""
            where = [s.queue_place(pod) for s in responsible]
            tally.add(
                now, f"pod {_key(pod)}{since} is pending without PodScheduled=False and a reason; {'; '.join(where)}"
            )

    def not_quiescent(self, sched: CacheComparer, binds_on_wire: int) -> str:
        """Why ``sched`` is not quiescent ("" when it is)."""
        return sched.not_quiescent(self.last_revision["Pod"], self.last_revision["Node"], binds_on_wire)


def install(cluster: ClusterLike, *, report_grace: float = 5.0) -> InvariantChecker:
    """A checker listening to every write of ``cluster.server`` from now on."""
    checker = InvariantChecker(report_grace=report_grace)
    cluster.server.add_write_listener(checker)
    return checker
