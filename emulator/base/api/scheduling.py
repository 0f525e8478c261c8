"""scheduling.k8s.io/v1 PriorityClass and coordination.k8s.io/v1 Lease."""

from __future__ import annotations

from emulator.base.api.meta import K8s, ObjectMeta

__all__ = ["Lease", "LeaseSpec", "PriorityClass"]


class PriorityClass(K8s, frozen=True):
    value: int
    api_version: str = "scheduling.k8s.io/v1"
    kind: str = "PriorityClass"
    metadata: ObjectMeta = ObjectMeta()
    global_default: bool = False
    description: str = ""
    preemption_policy: str | None = None


class LeaseSpec(K8s, frozen=True):
    holder_identity: str | None = None
    lease_duration_seconds: int | None = None
    acquire_time: str | None = None
    renew_time: str | None = None
    lease_transitions: int | None = None


class Lease(K8s, frozen=True):
    api_version: str = "coordination.k8s.io/v1"
    kind: str = "Lease"
    metadata: ObjectMeta = ObjectMeta()
    spec: LeaseSpec = LeaseSpec()
