"""The run observes itself: quality metrics and time series from the API server's writes.

``Observer`` is a write listener (``ApiServer.add_write_listener``) installed by the runner on
every run. It reads Pod and Node writes, and ResourceSlice and ResourceClaim writes for the
GPU allocation of DRA devices (``observe_devices``), and keeps, incrementally (O(1) per write, a
pod's few conditions aside):

- per live pod: its creation time, first bind, assigned node and effective requests
  (``pod_requests``: upstream's rule), phase, the last ``PodScheduled=False`` message while
  it is unbound; pods leave this table at their final delete;
- per node (every node ever created, in creation order; ``observe_nodes``): whether it exists,
  its allocatable (``status.allocatable``, else capacity: what the scheduler reads), the
  requests and count of its assigned pods, its not-Ready intervals, and its allocation
  buckets;
- cluster-wide: allocated and allocatable sums over the existing nodes and the number of
  nodes used, summarised over time as they change (``observe_metrics.TimeWeighted``);
- counters: pods bound at least once, preemption victims, evictions; a ``QuantileSketch`` of
  pending times (exact up to 4,096 bound pods, then within 1 %); the ten slowest pods.

*Assigned* pod: it has a ``nodeName``, its phase is not terminal and it was not deleted yet (a
terminating pod still holds its node, as in the scheduler's cache). *Preemption*: a pod's
``DisruptionTarget`` condition turns True with reason ``PreemptionByScheduler``. *Eviction*:
it turns True with ``EvictionByEvictionAPI``, ``DeletionByTaintManager`` or
``TerminationByKubelet``, or the kubelet fails the pod with reason ``Evicted``; each pod counts
once. PodGC's ``DeletionByPodGC`` (the node is gone) is neither. A pod's creation time is its
create write's simulated time (``creationTimestamp`` at full precision).

The metrics' window starts at the first pod's creation and ends at the run's end, or at the
last pod's end when every pod ended: while no pod is unfinished none is assigned, so every
time-weighted value is 0 and stays so; a piece is added to the summaries only when a value
changes, so that zero tail is never added and the window can end at the last pod's end.

Sampling, without a timer task (``observe_samples``, the ``Sampling`` mixin): pod phase counts
and scheduler queues at ``t[i] = i * interval``, every passed sample recorded *before* a write
applies. ``series`` fills the samples up to the run's end.

Memory, bounded whatever the run's length ("Bounded state" in ``docs/architecture.md``): live
pods; per node ever created ~10 kB of buckets plus its Ready transitions; at most
``observe_samples.MAX_SAMPLES`` samples of ten ints (past the cap the interval steps up); at
most ``RESOLUTION``-spaced keys per time-weighted summary; the last ``MAX_TIMELINE_BARS`` ended
timeline bars plus the live ones (runs of at most ``TIMELINE_MAX_NODES`` nodes only).

Cost, measured on this project's 2-vCPU machine shared with other jobs (wall times there vary
by ±30 % between identical runs, so the in-process figures are the ones to read):

=================================  ==========================================  ===========
run                                measure                                     overhead
=================================  ==========================================  ===========
``scenarios/trace-replay.yaml``    CPU time, one process, observer on vs a     +1.4 %
                                   no-op stand-in, median of 7 alternated
churn-1000nodes-1h ``--until 3m``  py-spy samples (200 Hz) inside this          4.9 %
                                   package's modules (listener 4.5 %, the
                                   documents at the end 0.4 %)
churn-1000nodes-1h ``--until 2m``  ``wallSeconds``, main's checkout vs this,    +5 %
                                   median of 5 alternated (CPU time +6 %)
=================================  ==========================================  ===========

The 1,000-node churn (50 pods/s, every pod bound, run and completed) is the worst case: per pod
its requests (``pod_requests``), two node-slot updates and two cluster summary updates. Before
tuning it was 7.7 % (a Python loop per bucket at the end, a min/max per slot).

This module does not build the documents: ``observe_metrics`` (metrics) and
``observe_series`` (series) do, from this state; nor take the samples (``observe_samples``).
"""

from __future__ import annotations

import heapq
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from emulator.app.scenario.observe_devices import WHOLE, DeviceUse
from emulator.app.scenario.observe_metrics import TimeWeighted, add_pieces
from emulator.app.scenario.observe_metrics import metrics as metrics_document
from emulator.app.scenario.observe_nodes import MAX_BUCKETS, NodeBuckets, NodeState
from emulator.app.scenario.observe_samples import PHASES, Sampling
from emulator.base.api.core import Node, Pod
from emulator.base.api.resources import node_allocatable, pod_requests
from emulator.base.apiserver.server import Verb, WriteRecord
from emulator.base.runtime.stats import QuantileSketch

__all__ = ["EVICTION_REASONS", "GPU", "Observer"]

GPU: Final = "nvidia.com/gpu"
RESOURCES: Final = ("cpu", "memory", GPU)
PREEMPTION_REASON: Final = "PreemptionByScheduler"
EVICTION_REASONS: Final = frozenset({"EvictionByEvictionAPI", "DeletionByTaintManager", "TerminationByKubelet"})
TERMINAL: Final = frozenset({"Succeeded", "Failed"})
TIMELINE_MAX_NODES: Final = 200
MAX_TIMELINE_BARS: Final = 20_000
"""Ended timeline bars kept (the latest); live pods' bars are always there."""
MAX_PIECES = 5 << 15
"""The cluster's logged pieces (five numbers each: ``Observer.pieces``, logged by
``Observer._changed`` and ``bookkeeping.RunBook._assign``) are added to its summaries by this
many numbers at most (a fixed size: ``tests/scenario/test_bounded_state.py`` sets it small)."""
_WATCHED: Final = frozenset({"Pod", "Node", "ResourceClaim", "ResourceSlice"})
"""The kinds ``__call__`` reads beyond the sampling check."""
SLOWEST: Final = 10

Resources = tuple[int, int, int]
"""(cpu millicores, memory bytes, GPU milli-devices)."""


def _resources(amounts: dict[str, int], devices: int = 0) -> Resources:
    """GPUs in milli-devices: ``nvidia.com/gpu`` and DRA ``devices`` (``observe_devices``)."""
    return amounts.get("cpu", 0), amounts.get("memory", 0), amounts.get(GPU, 0) * WHOLE + devices


@dataclass(slots=True)
class PodState:
    key: str
    created: float
    phase: str
    bound_at: float | None = None
    node: str | None = None
    """The node it is assigned to (None: unbound, terminal or gone)."""
    requests: Resources = (0, 0, 0)
    finished: bool = False
    message: str = ""
    disrupted: bool = False
    bound_to: tuple[str, float] | None = None
    """The invariant checker's first bind (node, time), kept here by ``bookkeeping.RunBook``
    (the checker's own ``_bound`` otherwise)."""
    admitted: Any = None
    """The invariant checker's admission record (``invariants._Admitted``), kept here by
    ``bookkeeping.RunBook`` (the checker's own ``_admitted`` otherwise)."""


def _condition(conditions: Any, kind: str) -> Any:
    for c in conditions:
        if c.type == kind:
            return c
    return None


class Observer(Sampling):
    """The write listener collecting a run's metrics and series (see the module docstring).

    ``schedulers()`` gives the run's scheduler instances at that moment (each with ``queue``
    and ``metrics``); ``[]`` without a scheduler."""

    def __init__(self, schedulers: Callable[[], list[Any]] = list) -> None:
        self.schedulers = schedulers
        self.pods: dict[str, PodState] = {}
        self.nodes: dict[str, NodeState] = {}
        self.buckets = NodeBuckets()
        self.first_created: float | None = None
        self.last_finished = 0.0
        self.unfinished = 0
        self.scheduled = 0
        self.preemptions = 0
        self.evictions = 0
        self.pending = QuantileSketch()
        self.slowest: list[tuple[float, str, bool, str | None, str]] = []
        """Min-heap of the slowest pods that were bound or deleted unbound."""
        self.gpu = False
        self.devices = DeviceUse()
        self.node_base: dict[str, dict[str, int]] = {}
        """Each existing node's allocatable as its status says (DRA devices are added to it)."""
        self.allocated = [0, 0, 0]
        self.allocatable = [0, 0, 0]
        self.used = 0
        self.values: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
        """The cluster's cpu, memory, gpu allocation and nodes used, since ``values_since``."""
        self.values_since = 0.0
        self.summaries = [TimeWeighted() for _ in range(4)]
        self.pieces: array[float] = array("d")
        """Pieces ``(d, *values)`` not yet in ``summaries`` (``RunBook`` logs them; read
        ``summaries`` after ``add_pieces``, as ``_changed`` and ``metrics`` do)."""
        self.phases = dict.fromkeys(PHASES, 0)
        self.timeline: deque[tuple[str, str, float, float, str]] | None = deque(maxlen=MAX_TIMELINE_BARS)
        """Ended bars (pod, node, start, end, phase); None past ``TIMELINE_MAX_NODES``."""
        self.markers: list[tuple[float, int, str, str]] = []
        self.node_count = 0
        self._init_samples()  # last: the attributes in the order they always had

    # --- the listener ---------------------------------------------------------------------

    def __call__(self, rec: WriteRecord) -> None:
        t = rec.time
        if t > self.next_sample:
            self.sample_until(t, inclusive=False)
        kind = rec.kind
        if kind == "Pod":
            if t > self.buckets.width * MAX_BUCKETS:  # ``_reach``, inlined for the most frequent kind
                self._reach(t)
            self._pod(t, rec.old, rec.new)
        elif kind == "Node":
            self._reach(t)
            self._node(t, rec.old, rec.new)
        elif kind == "ResourceClaim":
            self.devices.claim(rec.old, rec.new)
        elif kind == "ResourceSlice" and (name := self.devices.slice(rec.old, rec.new)) is not None:
            self._reach(t)
            self._allocatable(t, name, self.node_base.get(name))

    def write_many(self, verb: Verb, kind: str, time: float, agent: str, writes: list[tuple[Any, Any, int]]) -> None:
        """A batch of writes of one kind at one instant (the Lease renewals of an instant):
        ``__call__`` for each, the sampling check made once (it is a no-op after the first)."""
        if kind in _WATCHED:
            for old, new, rev in writes:
                self(WriteRecord(rev, time, verb, kind, old, new, agent))
        elif time > self.next_sample:
            self.sample_until(time, inclusive=False)

    def _reach(self, t: float) -> None:
        if t > self.buckets.width * MAX_BUCKETS:
            self.buckets.reach(t, list(self.nodes.values()))

    def mark(self, t: float, kind: str, label: str) -> None:
        """A marker on the time axis (a step that played, a fault that started)."""
        self.markers.append((t, len(self.markers), kind, label))

    # --- pods -------------------------------------------------------------------------------

    def _pod(self, t: float, old: Pod | None, new: Pod | None) -> None:
        # Mirrored in ``bookkeeping.RunBook``: change both (``test_bookkeeping``).
        obj = new if new is not None else old
        assert obj is not None
        uid = obj.metadata.uid
        state = self.pods.get(uid)
        if state is None:
            if new is None:
                return
            meta = new.metadata
            state = PodState(f"{meta.namespace}/{meta.name}", t, new.status.phase)
            self.pods[uid] = state
            self.phases[state.phase] = self.phases.get(state.phase, 0) + 1
            self.unfinished += 1
            if self.first_created is None:
                self.first_created = self.values_since = t
        if new is None:
            self._gone(t, uid, state)
            return
        if state.bound_at is None and new.spec.node_name:
            self._bind(t, state, new)
        phase = new.status.phase
        if phase != state.phase:
            self.phases[state.phase] -= 1
            self.phases[phase] = self.phases.get(phase, 0) + 1
            state.phase = phase
            if phase in TERMINAL:
                self._finish(t, state, phase)
            if phase == "Failed" and new.status.reason == "Evicted" and not state.disrupted:
                state.disrupted = True
                self.evictions += 1
        if old is None or new.status.conditions is not old.status.conditions:
            self._conditions(state, new)

    def _conditions(self, state: PodState, pod: Pod) -> None:
        for c in pod.status.conditions:
            if c.type == "PodScheduled":
                if c.status == "False" and state.bound_at is None:
                    state.message = c.message
            elif c.type == "DisruptionTarget" and c.status == "True" and not state.disrupted:
                if c.reason == PREEMPTION_REASON:
                    state.disrupted = True
                    self.preemptions += 1
                elif c.reason in EVICTION_REASONS:
                    state.disrupted = True
                    self.evictions += 1

    def _bind(self, t: float, state: PodState, pod: Pod) -> None:
        node = pod.spec.node_name
        state.bound_at = t
        self.scheduled += 1
        wait = t - state.created
        self.pending.add(max(wait, 0.0))
        self._slow(wait, state.key, True, node, state.message)
        state.message = ""
        if state.phase in TERMINAL:
            return
        state.requests = _resources(pod_requests(pod), self.devices.pod_devices(pod))
        state.node = node
        self._assign(t, node, state.requests, 1)

    def _finish(self, t: float, state: PodState, phase: str) -> None:
        """The pod reached a terminal phase or was deleted (``phase`` "Deleted")."""
        if not state.finished:
            state.finished = True
            self.unfinished -= 1
            self.last_finished = max(self.last_finished, t)
        if state.node is not None:
            node = state.node
            self._assign(t, node, state.requests, -1)
            state.node = None
            if self.timeline is not None and state.bound_at is not None:
                self.timeline.append((state.key, node, state.bound_at, t, phase))

    def _gone(self, t: float, uid: str, state: PodState) -> None:
        self._finish(t, state, "Deleted")
        self.phases[state.phase] -= 1
        if state.bound_at is None:
            self._slow(t - state.created, state.key, False, None, state.message)
        del self.pods[uid]

    def _slow(self, wait: float, key: str, bound: bool, node: str | None, message: str) -> None:
        slowest = self.slowest
        if len(slowest) < SLOWEST:
            heapq.heappush(slowest, (wait, key, bound, node, message))
            return
        low = slowest[0]
        if wait < low[0] or (wait == low[0] and key < low[1]):
            return  # below the tenth on the first field that differs (most pods: no tuple built)
        entry = (wait, key, bound, node, message)
        if entry > low:
            heapq.heapreplace(slowest, entry)

    # --- nodes ------------------------------------------------------------------------------

    def _node_state(self, name: str) -> NodeState:
        state = self.nodes.get(name)
        if state is None:
            state = self.nodes[name] = NodeState(name)
        return state

    def _assign(self, t: float, name: str, requests: Resources, sign: int) -> None:
        # Mirrored in ``bookkeeping.RunBook``: change both (``test_bookkeeping``).
        node = self.nodes.get(name)
        if node is None:
            node = self._node_state(name)
        node.advance(t, self.buckets.width)
        r0, r1, r2 = sign * requests[0], sign * requests[1], sign * requests[2]
        a = node.allocated
        a[0] += r0
        a[1] += r1
        a[2] += r2
        node.pods += sign
        node.reshare()
        if node.exists:
            a = self.allocated
            a[0] += r0
            a[1] += r1
            a[2] += r2
            if node.pods == (1 if sign > 0 else 0):
                self.used += sign
            self._changed(t)

    def _node(self, t: float, old: Node | None, new: Node | None) -> None:
        obj = new if new is not None else old
        assert obj is not None
        node = self._node_state(obj.metadata.name)
        width = self.buckets.width
        if new is None:
            if node.exists:
                node.advance(t, width)
                self._existence(t, node, -1)
                node.exists = False
                self.node_base.pop(node.name, None)
                if node.not_ready_since is not None:
                    node.not_ready.append([node.not_ready_since, t])
                node.not_ready_since = None
            return
        if old is None or not node.exists:
            if not node.existed:
                self.node_count += 1
                if self.node_count > TIMELINE_MAX_NODES:
                    self.timeline = None
            node.advance(t, width)
            node.exists = node.existed = True
            self.node_base[node.name] = base = node_allocatable(new)
            node.allocatable = _resources(base, self.devices.node_devices(node.name))
            node.reshare()
            self._existence(t, node, 1)
        elif new.status.allocatable is not old.status.allocatable or new.status.capacity is not old.status.capacity:
            self._allocatable(t, node.name, node_allocatable(new))
        if old is None or new.status.conditions is not old.status.conditions:
            ready = _condition(new.status.conditions, "Ready")
            is_ready = ready is not None and ready.status == "True"
            if is_ready and node.not_ready_since is not None:
                if t > node.not_ready_since:
                    node.not_ready.append([node.not_ready_since, t])
                node.not_ready_since = None
            elif not is_ready and node.not_ready_since is None:
                node.not_ready_since = t
            node.ready = is_ready

    def _allocatable(self, t: float, name: str, base: dict[str, int] | None) -> None:
        """An existing node's allocatable (``base``: its status') or its DRA devices changed."""
        node = self.nodes.get(name)
        if node is None or not node.exists or base is None:
            return
        self.node_base[name] = base
        allocatable = _resources(base, self.devices.node_devices(name))
        if allocatable != node.allocatable:
            node.advance(t, self.buckets.width)
            self._existence(t, node, -1)
            node.allocatable = allocatable
            node.reshare()
            self._existence(t, node, 1)

    def _existence(self, t: float, node: NodeState, sign: int) -> None:
        """Add (+1) or remove (-1) the node's allocatable and assigned pods to the cluster's sums."""
        for i in range(3):
            self.allocatable[i] += sign * node.allocatable[i]
            self.allocated[i] += sign * node.allocated[i]
        if node.allocatable[2] > 0:
            self.gpu = True
        if node.pods > 0:
            self.used += sign
        self._changed(t)

    def _changed(self, t: float) -> None:
        """The cluster's sums changed at ``t``: close the piece of the previous values."""
        a, c = self.allocated, self.allocatable
        values = (
            a[0] / c[0] if c[0] > 0 else 0.0,
            a[1] / c[1] if c[1] > 0 else 0.0,
            a[2] / c[2] if c[2] > 0 else 0.0,
            float(self.used),
        )
        if values == self.values:
            return
        if self.first_created is not None:
            d = t - self.values_since
            if d > 0:  # (``TimeWeighted.add`` ignores an empty piece) logged as ``RunBook._assign`` logs
                pieces = self.pieces  # its own: in order after them; one numpy batch, not one a change
                pieces.append(d)
                pieces.extend(self.values)
                if len(pieces) >= MAX_PIECES:
                    add_pieces(self.summaries, pieces)
        self.values = values
        self.values_since = t

    # --- results ----------------------------------------------------------------------------

    def window(self, end: float) -> tuple[float, float] | None:
        """The metrics' window: first pod creation to the makespan end (None: no pod)."""
        if self.first_created is None:
            return None
        stop = self.last_finished if self.unfinished == 0 else end
        return self.first_created, max(stop, self.first_created)

    def unschedulable(self) -> int:
        return sum(1 for p in self.pods.values() if p.bound_at is None)

    def metrics(self, end: float) -> dict[str, Any]:
        """The contract's ``metrics`` of the run ending at ``end`` (changes nothing it reports:
        the logged pieces are added to the summaries first)."""
        window = self.window(end)
        tail = 0.0 if window is None else max(0.0, window[1] - self.values_since)
        add_pieces(self.summaries, self.pieces)
        cpu, memory, gpu, used = (s.with_piece(v, tail) for s, v in zip(self.summaries, self.values, strict=True))
        return metrics_document(
            scheduled=self.scheduled,
            unschedulable=self.unschedulable(),
            pending=self.pending,
            window=window,
            nodes_used=used,
            allocation={"cpu": cpu, "memory": memory, GPU: gpu},
            gpu=self.gpu,
            preemptions=self.preemptions,
            evictions=self.evictions,
        )
