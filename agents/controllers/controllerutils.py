"""What the workload controllers share, as upstream's ``pkg/controller/controller_utils.go``
and ``pkg/api/v1/pod`` give it to them:

- ``Expectations``: upstream's ``ControllerExpectations`` (with the UID tracking of
  deletions): a controller that has asked for N creations does not sync its object again
  until its informer has seen them (or 5 minutes passed), so it never double-creates;
- ``controller_ref``, ``owner_ref``, ``pod_from_template``: the ownership a controller
  writes on what it creates (``controller: true``, ``blockOwnerDeletion: true``; labels,
  annotations and finalizers copied from the template; ``generateName`` ``<owner>-``);
- pod predicates: ``is_pod_active``, ``is_pod_ready``, ``is_pod_available`` (ready for
  ``minReadySeconds``), ``pod_ready_time``;
- ``deletion_order``: upstream's ``ActivePodsWithRanks`` ordering of the pods a controller
  deletes first on scale-down (with ``LogarithmicScaleDown``, on by default since 1.22),
  and ``related_ranks`` for its rank (pods doubled up on one node go first);
- ``slow_start_batch``: creations in batches of 1, 2, 4, … stopping at the first batch
  with an error, so a quota or webhook failure costs one call, not thousands.

It does not own any controller's reconcile loop, nor how pods are written (the callers'
clients).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any, Final

from emulator.base.api.core import Pod, PodSpec
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.podtemplate import PodTemplateSpec
from emulator.base.runtime.clock import Clock, parse_timestamp

__all__ = [
    "EXPECTATIONS_TIMEOUT",
    "POD_DELETION_COST",
    "SLOW_START_INITIAL_BATCH_SIZE",
    "BatchError",
    "Expectations",
    "controller_ref",
    "deletion_order",
    "is_controlled_by",
    "is_pod_active",
    "is_pod_available",
    "is_pod_ready",
    "owner_ref",
    "pod_from_template",
    "pod_ready_time",
    "related_ranks",
    "slow_start_batch",
]

EXPECTATIONS_TIMEOUT: Final = 300.0
"""Upstream ``ExpectationsTimeout``: unmet expectations older than this are ignored."""
SLOW_START_INITIAL_BATCH_SIZE: Final = 1
"""Upstream ``SlowStartInitialBatchSize``."""
POD_DELETION_COST: Final = "controller.kubernetes.io/pod-deletion-cost"


# --- ownership ----------------------------------------------------------------------------


def owner_ref(owner: Any, *, controller: bool = True) -> OwnerReference:
    """The ownerReference naming ``owner`` (controller and blockOwnerDeletion set, as
    upstream's ``NewControllerRef``)."""
    return OwnerReference(
        api_version=owner.api_version,
        kind=owner.kind,
        name=owner.metadata.name,
        uid=owner.metadata.uid,
        controller=True if controller else None,
        block_owner_deletion=True if controller else None,
    )


def controller_ref(obj: Any) -> OwnerReference | None:
    """Upstream ``GetControllerOf``: the ownerReference with ``controller: true``."""
    return next((r for r in obj.metadata.owner_references if r.controller), None)


def is_controlled_by(obj: Any, owner: Any) -> bool:
    ref = controller_ref(obj)
    return ref is not None and ref.uid == owner.metadata.uid


def pod_from_template(
    template: PodTemplateSpec, owner: Any, namespace: str, *, name: str = "", generate_name: str | None = None
) -> Pod:
    """Upstream ``GetPodFromTemplate``: a pod of ``template`` owned by ``owner``. With no
    ``name``, ``generateName`` is ``generate_name`` (default ``<owner name>-``)."""
    meta = template.metadata
    return Pod(
        metadata=ObjectMeta(
            name=name,
            generate_name="" if name else (generate_name if generate_name is not None else f"{owner.metadata.name}-"),
            namespace=namespace,
            labels=dict(meta.labels),
            annotations=dict(meta.annotations),
            finalizers=list(meta.finalizers),
            owner_references=[owner_ref(owner)],
        ),
        spec=template.spec if isinstance(template.spec, PodSpec) else PodSpec(),
    )


# --- pod predicates -----------------------------------------------------------------------


def is_pod_active(pod: Pod) -> bool:
    """Upstream ``IsPodActive``: not Succeeded, not Failed, not being deleted."""
    return pod.status.phase not in ("Succeeded", "Failed") and pod.metadata.deletion_timestamp is None


def is_pod_ready(pod: Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)


def pod_ready_time(pod: Pod) -> float | None:
    """When the pod's Ready condition last turned True (clock seconds), or None."""
    for c in pod.status.conditions:
        if c.type == "Ready" and c.status == "True" and c.last_transition_time:
            return parse_timestamp(c.last_transition_time)
    return None


def is_pod_available(pod: Pod, min_ready_seconds: int, now: float) -> bool:
    """Upstream ``IsPodAvailable``: ready, and for ``min_ready_seconds`` already."""
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds == 0:
        return True
    since = pod_ready_time(pod)
    return since is not None and since + min_ready_seconds <= now


# --- which pods go first ------------------------------------------------------------------

_PHASE_ORDINAL: Final = {"Pending": 0, "Unknown": 1, "Running": 2}


def related_ranks(pods: Sequence[Pod], related: Sequence[Pod]) -> list[int]:
    """Upstream ``getPodsRankedByRelatedPodsOnSameNode``: for each pod, how many active
    ``related`` pods share its node (0 for an unbound pod)."""
    on_node: dict[str, int] = {}
    for p in related:
        if p.spec.node_name and is_pod_active(p):
            on_node[p.spec.node_name] = on_node.get(p.spec.node_name, 0) + 1
    return [on_node.get(p.spec.node_name, 0) if p.spec.node_name else 0 for p in pods]


def _deletion_cost(pod: Pod) -> int:
    raw = pod.metadata.annotations.get(POD_DELETION_COST)
    if raw is None:
        return 0
    try:
        return int(raw)
    except ValueError:
        return 0


def _log_rank(t: float, now: float) -> int:
    """Upstream ``logarithmicRankDiff``'s rank: ⌊log2(age in ns)⌋, -1 when not in the past."""
    age_ns = (now - t) * 1e9
    return int(math.log2(age_ns)) if age_ns > 0 else -1


def _max_restarts(pod: Pod) -> tuple[int, int]:
    """(most restarts of a regular container, of a sidecar)."""
    sidecars = {c.name for c in pod.spec.init_containers if c.restart_policy == "Always"}
    regular = max((s.restart_count for s in pod.status.container_statuses), default=0)
    sidecar = max(
        (s.restart_count for s in pod.status.init_container_statuses if s.name in sidecars),
        default=0,
    )
    return regular, sidecar


def _compare_times(ti: float | None, tj: float | None, ui: str, uj: str, now: float) -> int:
    """Newer first, on a log scale (equal rank: by UID); a missing time first."""
    if ti is None or tj is None:
        if ti is None and tj is not None:
            return -1
        if tj is None and ti is not None:
            return 1
        return 0
    diff = _log_rank(ti, now) - _log_rank(tj, now)
    if diff == 0:
        return -1 if ui < uj else (1 if ui > uj else 0)
    return -1 if diff < 0 else 1


def deletion_order(pods: Sequence[Pod], ranks: Sequence[int], now: float) -> list[Pod]:
    """``pods`` ordered as upstream's ``ActivePodsWithRanks.Less`` puts them, first to
    delete first: unbound, then Pending < Unknown < Running, not ready, lower deletion
    cost, more related pods on the node, ready for less time, more restarts, newer; ties
    keep a total order by UID so the result never depends on the input order."""
    entries = list(zip(pods, ranks, strict=True))

    def cmp(a: tuple[Pod, int], b: tuple[Pod, int]) -> int:
        pi, ri = a
        pj, rj = b
        if pi.spec.node_name != pj.spec.node_name and (not pi.spec.node_name or not pj.spec.node_name):
            return -1 if not pi.spec.node_name else 1
        oi, oj = _PHASE_ORDINAL.get(pi.status.phase, 0), _PHASE_ORDINAL.get(pj.status.phase, 0)
        if oi != oj:
            return -1 if oi < oj else 1
        ready_i, ready_j = is_pod_ready(pi), is_pod_ready(pj)
        if ready_i != ready_j:
            return -1 if not ready_i else 1
        ci, cj = _deletion_cost(pi), _deletion_cost(pj)
        if ci != cj:
            return -1 if ci < cj else 1
        if ri != rj:
            return -1 if ri > rj else 1
        if ready_i and ready_j:
            ti, tj = pod_ready_time(pi), pod_ready_time(pj)
            if ti != tj:
                c = _compare_times(ti, tj, pi.metadata.uid, pj.metadata.uid, now)
                if c:
                    return c
        (gi, si), (gj, sj) = _max_restarts(pi), _max_restarts(pj)
        if gi != gj:
            return -1 if gi > gj else 1
        if si != sj:
            return -1 if si > sj else 1
        created_i = parse_timestamp(pi.metadata.creation_timestamp) if pi.metadata.creation_timestamp else None
        created_j = parse_timestamp(pj.metadata.creation_timestamp) if pj.metadata.creation_timestamp else None
        if created_i != created_j:
            c = _compare_times(created_i, created_j, pi.metadata.uid, pj.metadata.uid, now)
            if c:
                return c
        return -1 if pi.metadata.uid < pj.metadata.uid else (1 if pi.metadata.uid > pj.metadata.uid else 0)

    entries.sort(key=cmp_to_key(cmp))
    return [p for p, _ in entries]


# --- creating in batches ------------------------------------------------------------------


async def slow_start_batch(count: int, fn: Callable[[int], Awaitable[None]], *, initial: int = 1) -> int:
    """Upstream ``slowStartBatch``: call ``fn(i)`` for ``i`` in ``range(count)`` in batches of
    ``initial``, then twice that, … (each batch concurrently); stop after the first batch
    in which a call raised, raising ``BatchError`` (how many succeeded, and the errors).
    Returns the number of calls made (all succeeded)."""
    done = 0
    remaining = count
    size = min(remaining, initial)
    while size > 0:
        results = await asyncio.gather(*(fn(done + i) for i in range(size)), return_exceptions=True)
        for r in results:
            if isinstance(r, asyncio.CancelledError):
                raise r
            if isinstance(r, BaseException) and not isinstance(r, Exception):
                raise r
        errors = [r for r in results if isinstance(r, Exception)]
        done += size - len(errors)
        if errors:
            raise BatchError(done, errors)
        remaining -= size
        size = min(2 * size, remaining)
    return done


class BatchError(Exception):
    """A ``slow_start_batch`` batch had errors: ``succeeded`` calls went through overall."""

    def __init__(self, succeeded: int, errors: list[Exception]) -> None:
        super().__init__(f"{len(errors)} of a batch failed: {errors[0]}")
        self.succeeded = succeeded
        self.errors = errors


# --- expectations -------------------------------------------------------------------------


@dataclass(slots=True)
class _Expectation:
    add: int
    delete: int
    at: float
    deleting: set[str] = field(default_factory=set)
    """UIDs (pod keys) whose deletion is expected (upstream's UID tracking)."""


class Expectations:
    """Upstream ``UIDTrackingControllerExpectations`` keyed by the controller's object key."""

    def __init__(self, clock: Clock, timeout: float = EXPECTATIONS_TIMEOUT) -> None:
        self._clock = clock
        self._timeout = timeout
        self._by_key: dict[Hashable, _Expectation] = {}

    def __repr__(self) -> str:
        return f"<Expectations {len(self._by_key)} keys>"

    def satisfied(self, key: Hashable) -> bool:
        """True when ``key`` may sync: no record, all observed, or the record expired."""
        e = self._by_key.get(key)
        if e is None:
            return True
        if e.add <= 0 and e.delete <= 0:
            return True
        return self._clock.now() - e.at > self._timeout

    def expect_creations(self, key: Hashable, n: int) -> None:
        self._by_key[key] = _Expectation(add=n, delete=0, at=self._clock.now())

    def expect_deletions(self, key: Hashable, pod_keys: Sequence[str]) -> None:
        self._by_key[key] = _Expectation(add=0, delete=len(pod_keys), at=self._clock.now(), deleting=set(pod_keys))

    def creation_observed(self, key: Hashable) -> None:
        e = self._by_key.get(key)
        if e is not None:
            e.add -= 1

    def lower_creations(self, key: Hashable, n: int) -> None:
        """Creations that will never be observed (they failed)."""
        e = self._by_key.get(key)
        if e is not None:
            e.add -= n

    def deletion_observed(self, key: Hashable, pod_key: str) -> None:
        e = self._by_key.get(key)
        if e is not None and pod_key in e.deleting:
            e.deleting.discard(pod_key)
            e.delete -= 1

    def delete(self, key: Hashable) -> None:
        self._by_key.pop(key, None)
