"""One DaemonSet sync's decisions, pure: upstream's ``manage``/``podsShouldBeOnNode``,
``updateDaemonSetStatus`` and the failed-pod backoff (``daemon_controller.go``).

``nodes_to_daemon_pods`` maps each node name to the set's pods meant for it (by
``target_node``), leaving out pods both terminal and being deleted. ``manage`` then walks the
nodes in name order:

=================================================  ===========================================
node                                               decision
=================================================  ===========================================
should run, no daemon pod                          create one there
should continue running: a Failed pod              delete it (a ``FailedDaemonPod`` Warning),
                                                   unless the node's backoff (1 s doubling to
                                                   15 min) is running: sync again after it
should continue running: a Succeeded pod           delete it
should continue running: more than one running     no surge: keep the oldest; surge: keep the
                                                   oldest updated and the oldest old one
should not continue running, has daemon pods       delete them (not those already deleting)
=================================================  ===========================================

and unscheduled pods meant for a node that no longer exists are deleted (bound ones are the
pod GC's). ``daemon_status`` counts as upstream: per node that should run, the oldest pod
(scheduled first, then by creation time) decides ready, available and updated.

It does not own rolling updates (``update``) nor writes (``controller``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from msgspec.structs import replace

from agents.controllers.controllerutils import is_pod_available, is_pod_ready
from agents.controllers.daemonset.eligibility import is_pod_updated, node_should_run, target_node
from agents.controllers.history import CONTROLLER_REVISION_HASH
from emulator.base.api.apps import DaemonSet, DaemonSetStatus
from emulator.base.api.core import Node, Pod, Toleration
from emulator.base.runtime.clock import parse_timestamp

__all__ = [
    "FAILED_POD_BACKOFF_INITIAL",
    "FAILED_POD_BACKOFF_MAX",
    "Eligibility",
    "FailedPodBackoff",
    "ManagePlan",
    "daemon_status",
    "eligibility",
    "manage",
    "nodes_to_daemon_pods",
    "oldest_first",
]

FAILED_POD_BACKOFF_INITIAL: Final = 1.0
FAILED_POD_BACKOFF_MAX: Final = 15 * 60.0


class FailedPodBackoff:
    """client-go's ``flowcontrol.Backoff`` keyed by (DaemonSet UID, node): how long to wait
    before deleting the next failed daemon pod of a node."""

    def __init__(self, initial: float = FAILED_POD_BACKOFF_INITIAL, cap: float = FAILED_POD_BACKOFF_MAX) -> None:
        self._initial = initial
        self._cap = cap
        self._entries: dict[tuple[str, str], tuple[float, float]] = {}
        """key → (current backoff, last update)."""

    def __repr__(self) -> str:
        return f"<FailedPodBackoff {len(self._entries)} keys>"

    def in_backoff(self, key: tuple[str, str], now: float) -> bool:
        """``IsInBackOffSinceUpdate``."""
        entry = self._entries.get(key)
        return entry is not None and now - entry[1] < entry[0]

    def get(self, key: tuple[str, str]) -> float:
        entry = self._entries.get(key)
        return 0.0 if entry is None else entry[0]

    def next(self, key: tuple[str, str], now: float) -> None:
        """``Next``: start at the initial delay (or after ``2 × cap`` idle), else double."""
        entry = self._entries.get(key)
        if entry is None or now - entry[1] > 2 * self._cap:
            self._entries[key] = (self._initial, now)
        else:
            self._entries[key] = (min(entry[0] * 2, self._cap), now)

    def forget_owner(self, uid: str) -> None:
        for key in [k for k in self._entries if k[0] == uid]:
            del self._entries[key]


def _created(pod: Pod) -> float:
    ts = pod.metadata.creation_timestamp
    return parse_timestamp(ts) if ts else 0.0


def oldest_first(pods: list[Pod]) -> list[Pod]:
    """Upstream ``podByCreationTimestampAndPhase``: scheduled first, then oldest, then name."""
    return sorted(pods, key=lambda p: (not p.spec.node_name, _created(p), p.metadata.name))


def nodes_to_daemon_pods(pods: list[Pod]) -> dict[str, list[Pod]]:
    """Node name → the set's pods meant for it (not those terminal *and* being deleted)."""
    out: dict[str, list[Pod]] = {}
    for pod in pods:
        if pod.metadata.deletion_timestamp is not None and pod.status.phase in ("Succeeded", "Failed"):
            continue
        node = target_node(pod)
        if node is not None:
            out.setdefault(node, []).append(pod)
    return out


@dataclass(slots=True)
class ManagePlan:
    create_on: list[str] = field(default_factory=list)
    """Node names needing a daemon pod, in node name order."""
    delete: list[Pod] = field(default_factory=list)
    failed: list[tuple[Pod, str]] = field(default_factory=list)
    """Failed pods deleted (with their node), for the ``FailedDaemonPod`` Events."""
    requeue_after: float | None = None


Eligibility = dict[str, tuple[bool, bool]]
"""Node name → ``node_should_run`` of that node, for every node, in name order."""


def eligibility(ds: DaemonSet, nodes: list[Node], tolerations: list[Toleration]) -> Eligibility:
    """``node_should_run`` of each of ``nodes`` (name order), computed once per sync."""
    ordered = sorted(nodes, key=lambda n: n.metadata.name)
    return {n.metadata.name: node_should_run(n, ds, tolerations) for n in ordered}


def manage(
    ds: DaemonSet,
    eligible: Eligibility,
    by_node: dict[str, list[Pod]],
    hash_: str,
    backoff: FailedPodBackoff,
    now: float,
    *,
    surge: bool,
) -> ManagePlan:
    plan = ManagePlan()
    for name, (should_run, should_continue) in eligible.items():
        daemon_pods = by_node.get(name)
        if should_run and not daemon_pods:
            plan.create_on.append(name)
        elif should_continue:
            running: list[Pod] = []
            for pod in daemon_pods or ():
                if pod.metadata.deletion_timestamp is not None:
                    continue
                if pod.status.phase == "Failed":
                    key = (ds.metadata.uid, name)
                    if backoff.in_backoff(key, now):
                        delay = backoff.get(key)
                        plan.requeue_after = delay if plan.requeue_after is None else min(plan.requeue_after, delay)
                        continue
                    backoff.next(key, now)
                    plan.failed.append((pod, name))
                    plan.delete.append(pod)
                elif pod.status.phase == "Succeeded":
                    plan.delete.append(pod)
                else:
                    running.append(pod)
            if len(running) > 1:
                ordered = oldest_first(running)
                if not surge:
                    plan.delete.extend(ordered[1:])
                else:
                    kept_new = kept_old = False
                    for pod in ordered:
                        if pod.metadata.labels.get(CONTROLLER_REVISION_HASH) == hash_:
                            if not kept_new:
                                kept_new = True
                                continue
                        elif not kept_old:
                            kept_old = True
                            continue
                        plan.delete.append(pod)
        elif daemon_pods:
            plan.delete.extend(p for p in daemon_pods if p.metadata.deletion_timestamp is None)
    for name in sorted(by_node):
        if name not in eligible:
            plan.delete.extend(p for p in by_node[name] if not p.spec.node_name)
    return plan


def daemon_status(
    ds: DaemonSet,
    eligible: Eligibility,
    by_node: dict[str, list[Pod]],
    hash_: str,
    generation: int,
    now: float,
    *,
    observe: bool = True,
) -> DaemonSetStatus:
    """Upstream ``updateDaemonSetStatus``; ``observe`` False (expectations pending) keeps
    ``observedGeneration``: the controller has not acted on this generation yet."""
    desired = current = misscheduled = ready = updated = available = 0
    for name, (should_run, _) in eligible.items():
        pods = by_node.get(name)
        if should_run:
            desired += 1
            if not pods:
                continue
            current += 1
            pod = pods[0] if len(pods) == 1 else oldest_first(pods)[0]
            if is_pod_ready(pod):
                ready += 1
                if is_pod_available(pod, ds.spec.min_ready_seconds, now):
                    available += 1
            if is_pod_updated(pod, hash_, generation):
                updated += 1
        elif pods:
            misscheduled += 1
    return replace(
        ds.status,
        observed_generation=ds.metadata.generation if observe else ds.status.observed_generation,
        desired_number_scheduled=desired,
        current_number_scheduled=current,
        number_misscheduled=misscheduled,
        number_ready=ready,
        updated_number_scheduled=updated,
        number_available=available,
        number_unavailable=desired - available,
    )
