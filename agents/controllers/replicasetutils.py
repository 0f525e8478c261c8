"""What the ReplicaSet controller keeps and computes per ReplicaSet, as upstream's
``replica_set_utils.go``: ``PodCounts`` (the pods a ReplicaSet controls and the counts of
its status, kept current by the pod handlers in O(1) per event) and ``calculate_status``
(``replicas``, ``fullyLabeledReplicas``, ``readyReplicas``, ``availableReplicas`` and the
``ReplicaFailure`` condition: set with reason FailedCreate or FailedDelete when managing
the replicas failed, removed by the next good sync).

Pure: no I/O, no queue. It does not own when a status is written (``replicaset``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.controllerutils import is_pod_active, is_pod_available, is_pod_ready
from emulator.base.api.apps import ReplicaSet, ReplicaSetCondition, ReplicaSetStatus
from emulator.base.api.core import Pod
from emulator.base.runtime.clock import Clock

__all__ = ["REPLICA_FAILURE", "Key", "PodCounts", "calculate_status"]

REPLICA_FAILURE: Final = "ReplicaFailure"

Key = tuple[str, str]


def _labels_match(template_labels: dict[str, str], labels: dict[str, str]) -> bool:
    """``labels.SelectorFromSet(template labels).Matches``: every template label is there."""
    return all(labels.get(k) == v for k, v in template_labels.items())


@dataclass(slots=True)
class PodCounts:
    """The pods one ReplicaSet controls and the counts of its status, kept current by the
    pod handlers: each pod's contribution (active, ready, fully labeled) is remembered so
    that an update replaces it in O(1)."""

    template_labels: dict[str, str]
    pods: dict[Key, tuple[bool, bool, bool]] = field(default_factory=dict)
    active: int = 0
    ready: int = 0
    labeled: int = 0

    def put(self, key: Key, pod: Pod) -> None:
        self.drop(key)
        active = is_pod_active(pod)
        c = (active, active and is_pod_ready(pod), active and _labels_match(self.template_labels, pod.metadata.labels))
        self.pods[key] = c
        self.active += c[0]
        self.ready += c[1]
        self.labeled += c[2]

    def drop(self, key: Key) -> None:
        c = self.pods.pop(key, None)
        if c is not None:
            self.active -= c[0]
            self.ready -= c[1]
            self.labeled -= c[2]

    def relabel(self, template_labels: dict[str, str], store: dict[Key, Any]) -> None:
        """The template's labels changed: count fully labeled pods again."""
        self.template_labels = dict(template_labels)
        for key in list(self.pods):
            pod = store.get(key)
            if pod is None:
                self.drop(key)
            else:
                self.put(key, pod)


def calculate_status(
    rs: ReplicaSet, counts: PodCounts, store: Mapping[Key, Pod], err: Exception | None, diff: int, clock: Clock
) -> ReplicaSetStatus:
    """Upstream ``calculateStatus``."""
    min_ready = rs.spec.min_ready_seconds
    if min_ready == 0:
        available = counts.ready
    else:
        now = clock.now()
        available = sum(
            1
            for k, (_, ready, _) in counts.pods.items()
            if ready and (p := store.get(k)) is not None and is_pod_available(p, min_ready, now)
        )
    conditions = list(rs.status.conditions)
    failure = next((c for c in conditions if c.type == REPLICA_FAILURE), None)
    if err is not None and failure is None:
        reason = "FailedCreate" if diff < 0 else "FailedDelete"
        conditions.append(
            ReplicaSetCondition(
                type=REPLICA_FAILURE,
                status="True",
                reason=reason,
                message=str(err),
                last_transition_time=clock.timestamp(),
            )
        )
    elif err is None and failure is not None:
        conditions = [c for c in conditions if c.type != REPLICA_FAILURE]
    return replace(
        rs.status,
        replicas=counts.active,
        fully_labeled_replicas=counts.labeled,
        ready_replicas=counts.ready,
        available_replicas=available,
        conditions=conditions,
    )
