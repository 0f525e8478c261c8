"""The run's own bookkeeping on every API write, in one listener: ``RunBook``.

The runner keeps five write listeners of its own: the invariant checker (``invariants``),
the trace recorder (``event_trace``), the pod activity (``monitor``), the report observer
(``observe``) and the cost meter (``cost``). Each, called on its own, reads the write again:
its kind, the object's metadata, the pod's node, phase and conditions, a pod's requests (the
observer at the bind, the checker at the admission), a node's allocatable (the checker on every
Node write), the pod's record in a dict of the live pods (the observer's, the checker's two).

``RunBook`` is the one listener that owns the five objects and feeds them from a single read
of each write:

- one dispatch on the kind; a kind none of them reads beyond the trace (Events, Leases,
  Namespaces) costs its trace line and the observer's sampling check;
- a pod's fields read once for the trace line, the checker and the observer, one pass over
  its conditions, one lookup of its record: the observer's ``PodState``, which also keeps the
  checker's first bind and admission (``bound_to``, ``admitted``);
- its requests kept per container list (``_Requests``: the pods of one template share
  theirs), for the observer's bind and the checker's admission;
- a node's allocatable parsed only when its status' allocatable or capacity object changed;
- the observer's assignment with its node slot, shares and summaries written out in one
  function (the same arithmetic in the same order).

The five objects keep the state they keep as listeners (their documents, ``finish`` and
``hexdigest`` read it at the end as before), the checker's per-pod bind and admission aside,
and their own ``__call__``\\ s stay the plain path (``RunOptions(plain_listeners=True)``):
``tests/scenario/test_bookkeeping.py`` feeds the same writes to both (runs of several
scenarios, random write sequences) and compares every state and document.

What is different is only where the work happens: the effects on each object are the ones its
own ``__call__`` has, in its order, and the objects do not read each other's state within a
write, except the observer's samples, which read the cost meter (its sampler) and the
schedulers; ``RunBook`` takes the sample before any state changes, as the plain order did
(the checker and the trace recorder, called first there, keep nothing a sample reads).

The API server calls it directly (``ApiServer.add_write_listener(..., direct=True)``):
``self(revision, time, verb, kind, old, new, agent)``, no ``WriteRecord`` built for it;
``record(record)`` is the same entry for a record, ``write_many`` for a batch.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from emulator.app.scenario.cost import CostMeter
from emulator.app.scenario.event_trace import TraceLine, TraceRecorder
from emulator.app.scenario.invariants import NO_DOUBLE_BINDING, InvariantChecker, _key
from emulator.app.scenario.monitor import PodActivity
from emulator.app.scenario.observe import (
    EVICTION_REASONS,
    MAX_PIECES,
    PREEMPTION_REASON,
    TERMINAL,
    Observer,
    PodState,
    _resources,
)
from emulator.app.scenario.observe_metrics import add_pieces
from emulator.app.scenario.observe_nodes import MAX_BUCKETS
from emulator.base.api.core import Pod
from emulator.base.api.resources import _uses_status, node_allocatable, pod_requests
from emulator.base.apiserver.server import Verb, WriteRecord

__all__ = ["RunBook"]

_encoder: Final = msgspec.json.Encoder()
_HASH_CHUNK: Final = 1 << 16
_MEMO: Final = 64
"""Container lists whose requests ``_Requests`` keeps (a run's templates, a few at most)."""


class _Requests:
    """``pod_requests`` of the common pod (no init containers, no overhead, a status that does
    not change its requests) kept per container list, by identity: the API server hands the
    pods of one template one spec's lists, and binding and status writes keep them."""

    __slots__ = ("memo",)

    def __init__(self) -> None:
        self.memo: dict[int, tuple[Any, dict[str, int]]] = {}

    def of(self, pod: Pod) -> dict[str, int]:
        """``pod_requests(pod)``; the dict is shared: read it, never change it."""
        spec = pod.spec
        if spec.init_containers or spec.overhead or (pod.status.container_statuses and _uses_status(pod)):
            return pod_requests(pod)
        containers = spec.containers
        hit = self.memo.get(id(containers))
        if hit is not None and hit[0] is containers:
            return hit[1]
        reqs = pod_requests(pod)
        if len(self.memo) >= _MEMO:
            self.memo.clear()
        self.memo[id(containers)] = (containers, reqs)  # the list is kept alive: its id stays its own
        return reqs


class RunBook:
    """The run's five write listeners as one (see the module docstring)."""

    def __init__(
        self,
        checker: InvariantChecker,
        tracer: TraceRecorder,
        activity: PodActivity,
        observer: Observer,
        cost: CostMeter,
    ) -> None:
        self.checker = checker
        self.tracer = tracer
        self.activity = activity
        self.observer = observer
        self.cost = cost
        self._requests = _Requests()

    def record(self, rec: WriteRecord) -> None:
        """``self(...)`` for a ``WriteRecord``."""
        self(rec.revision, rec.time, rec.verb, rec.kind, rec.old, rec.new, rec.agent)

    def write_many(self, verb: Verb, kind: str, time: float, agent: str, writes: list[tuple[Any, Any, int]]) -> None:
        """A batch of writes of one kind at one instant (the Lease renewals of an instant):
        the trace recorder's batch, and each write of a kind another reads one by one."""
        activity = self.activity
        if kind in ("Pod", "Node", "ResourceClaim", "ResourceSlice") or any(
            kind in wc.kinds for wc in activity.workload_counters
        ):
            for old, new, rev in writes:
                self(rev, time, verb, kind, old, new, agent)
            return
        self.tracer.write_many(verb, kind, time, agent, writes)
        if time > self.observer.next_sample:
            self.observer.sample_until(time, inclusive=False)

    # --- one write ----------------------------------------------------------------------------

    def _emit(self, line: TraceLine) -> None:
        tracer = self.tracer
        if tracer._out is None:
            buf = tracer._buf
            _encoder.encode_into(line, buf, -1)
            buf.append(10)  # "\n"
            if len(buf) >= _HASH_CHUNK:
                tracer._hash.update(buf)
                buf.clear()
            return
        data = _encoder.encode(line) + b"\n"
        tracer._hash.update(data)
        tracer._out.write(data)

    def __call__(self, rev: int, t: float, verb: Verb, kind: str, old: Any, new: Any, agent: str) -> None:
        """One write, as the five listeners take it (the module docstring)."""
        tracer = self.tracer
        tracer.lines += 1
        if t != tracer._time:
            tracer._time = t
            tracer._t = round(t, 6)
        if kind == "Pod":
            self._pod(rev, t, verb, old, new, agent)
            return
        meta = (new if new is not None else old).metadata
        line = TraceLine(rev, tracer._t, verb, kind, meta.namespace, meta.name)
        if agent:
            line.agent = agent
        self._emit(line)
        if kind == "Node":
            self._node_allocatable(rev, old, new)
        activity = self.activity
        if activity.workload_counters:
            activity(WriteRecord(rev, t, verb, kind, old, new, agent))
        observer = self.observer
        if t > observer.next_sample:
            observer.sample_until(t, inclusive=False)
        if kind == "Node":
            observer._reach(t)
            observer._node(t, old, new)
            if old is None:
                self.cost._created(t, new)
            elif new is None:
                self.cost._gone(t, old.metadata.name)
        elif kind == "ResourceClaim" or kind == "ResourceSlice":
            observer(WriteRecord(rev, t, verb, kind, old, new, agent))

    def _node_allocatable(self, rev: int, old: Any, new: Any) -> None:
        """The checker's part of a Node write: its allocatable, parsed again only when the
        status' allocatable or capacity object changed (``node_allocatable`` reads no more)."""
        checker = self.checker
        checker.last_revision["Node"] = rev
        if new is None:
            checker._alloc.pop(old.metadata.name, None)
            return
        name = new.metadata.name
        if (
            old is None
            or new.status.allocatable is not old.status.allocatable
            or new.status.capacity is not old.status.capacity
            or name not in checker._alloc
        ):
            checker._alloc[name] = node_allocatable(new)

    def _pod(self, rev: int, t: float, verb: Verb, old: Pod | None, new: Pod | None, agent: str) -> None:
        checker, observer, activity = self.checker, self.observer, self.activity
        checker.last_revision["Pod"] = rev
        if verb == "bind":
            checker.bind_writes += 1
        activity.last_write = t
        if activity.counters:
            moved = False
            for counter in activity.counters:
                moved = counter.update(old, new) or moved
            if moved:
                activity.changed.set()
        if t > observer.next_sample:  # before any of the observer's state changes
            observer.sample_until(t, inclusive=False)
        if t > observer.buckets.width * MAX_BUCKETS:
            observer._reach(t)
        if new is None:
            self._pod_gone(rev, t, verb, old, agent)
            return
        meta = new.metadata
        uid = meta.uid
        node = new.spec.node_name
        st = new.status
        phase = st.phase
        pods = observer.pods
        state = pods.get(uid)  # the observer's record, and the checker's bind and admission
        if state is None:
            state = PodState(f"{meta.namespace}/{meta.name}", t, phase)
            pods[uid] = state
            observer.phases[phase] = observer.phases.get(phase, 0) + 1
            observer.unfinished += 1
            if observer.first_created is None:
                observer.first_created = observer.values_since = t
        line = TraceLine(rev, self.tracer._t, verb, "Pod", meta.namespace, meta.name)
        if agent:
            line.agent = agent
        ost = None if old is None else old.status
        scheduled = unscheduled = disruption = None
        conditions = st.conditions
        if ost is not st:
            # one pass over the conditions: the first PodScheduled (the trace line's), the
            # last PodScheduled=False and the first DisruptionTarget=True that counts (the
            # observer's ``_conditions``)
            for c in conditions:
                ctype = c.type
                if ctype == "PodScheduled":
                    if scheduled is None:
                        scheduled = c
                    if c.status == "False":
                        unscheduled = c
                elif (
                    ctype == "DisruptionTarget"
                    and disruption is None
                    and c.status == "True"
                    and (c.reason == PREEMPTION_REASON or c.reason in EVICTION_REASONS)
                ):
                    disruption = c
        # the trace line (``fast_trace_line``)
        if old is None:
            old_node = ""
            if node:
                line.node_name = node
            line.phase = phase
            reason, message = st.reason, st.message
            if scheduled is not None and (scheduled.reason or scheduled.message):
                reason, message = scheduled.reason, scheduled.message
            if reason or message:
                line.reason = reason
                line.message = message
            checker._created[uid] = t
        else:
            old_node = old.spec.node_name
            if node and old_node != node:
                line.node_name = node
            if ost is not st:
                assert ost is not None
                if ost.phase != phase:
                    line.phase = phase
                reason, message = st.reason, st.message
                changed = ost.reason != reason or ost.message != message
                if scheduled is not None and (scheduled.reason or scheduled.message):
                    prev = None
                    for c in ost.conditions:
                        if c.type == "PodScheduled":
                            prev = c
                            break
                    if prev is None or (prev.status, prev.reason, prev.message) != (
                        scheduled.status,
                        scheduled.reason,
                        scheduled.message,
                    ):
                        reason, message, changed = scheduled.reason, scheduled.message, True
                if changed and (reason or message):
                    line.reason = reason
                    line.message = message
        tracer = self.tracer
        if tracer._out is None:  # ``_emit``, written out for the most frequent kind
            buf = tracer._buf
            _encoder.encode_into(line, buf, -1)
            buf.append(10)  # "\n"
            if len(buf) >= _HASH_CHUNK:
                tracer._hash.update(buf)
                buf.clear()
        else:
            self._emit(line)
        # the checker (``InvariantChecker.__call__``, ``_binding``; its ``_bound`` and
        # ``_admitted`` are the record's ``bound_to`` and ``admitted``)
        if old_node:
            if verb == "bind":
                checker._tallies[NO_DOUBLE_BINDING].add(
                    t, f"pod {_key(new)} bound to {node} while already bound to {old_node}"
                )
            elif node != old_node:
                checker._tallies[NO_DOUBLE_BINDING].add(
                    t, f"pod {_key(new)} moved from node {old_node} to {node or '(none)'}"
                )
        elif node:
            bound_to = state.bound_to
            if bound_to is not None:
                checker._tallies[NO_DOUBLE_BINDING].add(
                    t, f"pod {_key(new)} bound to {node}, already bound to {bound_to[0]} at t={bound_to[1]:g}s"
                )
            else:
                state.bound_to = (node, t)
        admitted = bool(node) and phase not in TERMINAL and (phase == "Running" or bool(st.start_time))
        if state.admitted is not None:
            if not admitted:
                checker._free(state.admitted)
                state.admitted = None
        elif admitted:
            req = dict(self._requests.of(new))
            req["pods"] = 1
            state.admitted = checker._enter(t, new, req)
        # the observer (``Observer._pod``)
        if state.bound_at is None and node:
            self._bind(t, state, new, node)
        if phase != state.phase:
            phases = observer.phases
            phases[state.phase] -= 1
            phases[phase] = phases.get(phase, 0) + 1
            state.phase = phase
            if phase in TERMINAL:
                self._finish(t, state, phase)
            if phase == "Failed" and st.reason == "Evicted" and not state.disrupted:
                state.disrupted = True
                observer.evictions += 1
        if ost is None or conditions is not ost.conditions:  # ``Observer._conditions``
            if unscheduled is not None and state.bound_at is None:
                state.message = unscheduled.message
            if disruption is not None and not state.disrupted:
                state.disrupted = True
                if disruption.reason == PREEMPTION_REASON:
                    observer.preemptions += 1
                else:
                    observer.evictions += 1

    def _pod_gone(self, rev: int, t: float, verb: Verb, old: Any, agent: str) -> None:
        """A pod's final delete (the trace line, the checker, the observer)."""
        checker, observer = self.checker, self.observer
        meta = old.metadata
        line = TraceLine(rev, self.tracer._t, verb, "Pod", meta.namespace, meta.name)
        if agent:
            line.agent = agent
        self._emit(line)
        uid = meta.uid
        checker._created.pop(uid, None)
        state = observer.pods.get(uid)
        if state is not None:
            if state.admitted is not None:
                checker._free(state.admitted)
                state.admitted = None
            observer._gone(t, uid, state)

    def _bind(self, t: float, state: PodState, pod: Pod, node: str) -> None:
        """``Observer._bind``, the requests from ``_Requests``."""
        observer = self.observer
        state.bound_at = t
        observer.scheduled += 1
        wait = t - state.created
        observer.pending.add(max(wait, 0.0))
        observer._slow(wait, state.key, True, node, state.message)
        state.message = ""
        if state.phase in TERMINAL:
            return
        state.requests = requests = _resources(self._requests.of(pod), observer.devices.pod_devices(pod))
        state.node = node
        self._assign(t, node, requests[0], requests[1], requests[2], 1)

    def _finish(self, t: float, state: PodState, phase: str) -> None:
        """``Observer._finish`` through ``_assign``."""
        observer = self.observer
        if not state.finished:
            state.finished = True
            observer.unfinished -= 1
            observer.last_finished = max(observer.last_finished, t)
        node = state.node
        if node is not None:
            requests = state.requests
            self._assign(t, node, -requests[0], -requests[1], -requests[2], -1)
            state.node = None
            timeline = observer.timeline
            if timeline is not None and state.bound_at is not None:
                timeline.append((state.key, node, state.bound_at, t, phase))

    def _assign(self, t: float, name: str, r0: int, r1: int, r2: int, sign: int) -> None:
        """``Observer._assign`` (``r``: the requests times ``sign``) with what it calls written
        out, the same arithmetic in the same order: ``NodeState.advance`` inside one slot
        (the usual case; the others call it), ``reshare`` and ``Observer._changed``, whose
        four ``TimeWeighted.add`` are logged as one piece in ``observer.pieces`` and made by
        ``add_pieces`` (numpy, the same float operations in the same order) by the batch, at
        the observer's next ``_changed`` of its own and at ``metrics``."""
        observer = self.observer
        node = observer.nodes.get(name)
        if node is None:
            node = observer._node_state(name)
        width = observer.buckets.width
        since = node.since
        if t > since:
            ka = int(since // width)
            if ka == int(t // width) and ka * width != since:
                if node.exists:
                    d = t - since
                    s0, s1, s2 = node.shares
                    sums = node.sums
                    node.alive[ka] += d
                    sums[0][ka] += d * s0
                    sums[1][ka] += d * s1
                    sums[2][ka] += d * s2
                node.since = t
            else:
                node.advance(t, width)
        a = node.allocated
        a0 = a[0] = a[0] + r0
        a1 = a[1] = a[1] + r1
        a2 = a[2] = a[2] + r2
        pods = node.pods = node.pods + sign
        c0, c1, c2 = node.allocatable
        node.shares = (
            (1.0 if a0 / c0 > 1.0 else a0 / c0) if c0 > 0 else (1.0 if a0 > 0 else 0.0),
            (1.0 if a1 / c1 > 1.0 else a1 / c1) if c1 > 0 else (1.0 if a1 > 0 else 0.0),
            (1.0 if a2 / c2 > 1.0 else a2 / c2) if c2 > 0 else (1.0 if a2 > 0 else 0.0),
        )
        if not node.exists:
            return
        a = observer.allocated
        a0 = a[0] = a[0] + r0
        a1 = a[1] = a[1] + r1
        a2 = a[2] = a[2] + r2
        if pods == (1 if sign > 0 else 0):
            observer.used += sign
        c = observer.allocatable
        c0, c1, c2 = c
        values = (
            a0 / c0 if c0 > 0 else 0.0,
            a1 / c1 if c1 > 0 else 0.0,
            a2 / c2 if c2 > 0 else 0.0,
            float(observer.used),
        )
        previous = observer.values
        if values == previous:
            return
        if observer.first_created is not None:
            d = t - observer.values_since
            if d > 0:  # the piece, logged for ``add_pieces`` (four ``TimeWeighted.add`` at once)
                pieces = observer.pieces
                pieces.append(d)
                pieces.extend(previous)
                if len(pieces) >= MAX_PIECES:
                    add_pieces(observer.summaries, pieces)
        observer.values = values
        observer.values_since = t
