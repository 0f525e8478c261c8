"""apps/v1 objects: Deployment, ReplicaSet, StatefulSet, DaemonSet.

Upstream's field names (camelCase on the wire through ``rename="camel"``) for the spec, and
for the status fields kube-controller-manager writes. A pointer field upstream
(``replicas``, ``revisionHistoryLimit`` ...) is ``X | None = None`` here, so that defaulting
(``workloaddefaults``) can tell "unset" from zero, as upstream's ``SetDefaults_*`` do. The
controllers that act on these objects are not here (nor anywhere yet).
"""

from __future__ import annotations

from typing import Any

from emulator.base.api.core import LabelSelector
from emulator.base.api.intstr import IntOrString
from emulator.base.api.meta import K8s, ObjectMeta
from emulator.base.api.podtemplate import PodTemplateSpec
from emulator.base.api.storage import PersistentVolumeClaim

__all__ = [
    "ControllerRevision",
    "DaemonSet",
    "DaemonSetCondition",
    "DaemonSetSpec",
    "DaemonSetStatus",
    "DaemonSetUpdateStrategy",
    "Deployment",
    "DeploymentCondition",
    "DeploymentSpec",
    "DeploymentStatus",
    "DeploymentStrategy",
    "ReplicaSet",
    "ReplicaSetCondition",
    "ReplicaSetSpec",
    "ReplicaSetStatus",
    "RollingUpdateDaemonSet",
    "RollingUpdateDeployment",
    "RollingUpdateStatefulSetStrategy",
    "StatefulSet",
    "StatefulSetCondition",
    "StatefulSetOrdinals",
    "StatefulSetPersistentVolumeClaimRetentionPolicy",
    "StatefulSetSpec",
    "StatefulSetStatus",
    "StatefulSetUpdateStrategy",
]

APPS_V1 = "apps/v1"


# --- Deployment ---------------------------------------------------------------------------


class RollingUpdateDeployment(K8s, frozen=True):
    max_unavailable: IntOrString | None = None
    max_surge: IntOrString | None = None


class DeploymentStrategy(K8s, frozen=True):
    type: str = ""
    """``RollingUpdate`` (the default) or ``Recreate``."""
    rolling_update: RollingUpdateDeployment | None = None


class DeploymentSpec(K8s, frozen=True):
    replicas: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = PodTemplateSpec()
    strategy: DeploymentStrategy = DeploymentStrategy()
    min_ready_seconds: int = 0
    revision_history_limit: int | None = None
    paused: bool = False
    progress_deadline_seconds: int | None = None


class DeploymentCondition(K8s, frozen=True):
    type: str
    status: str
    last_update_time: str | None = None
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


class DeploymentStatus(K8s, frozen=True):
    observed_generation: int = 0
    replicas: int = 0
    updated_replicas: int = 0
    ready_replicas: int = 0
    available_replicas: int = 0
    unavailable_replicas: int = 0
    terminating_replicas: int | None = None
    conditions: list[DeploymentCondition] = []
    collision_count: int | None = None


class Deployment(K8s, frozen=True):
    api_version: str = APPS_V1
    kind: str = "Deployment"
    metadata: ObjectMeta = ObjectMeta()
    spec: DeploymentSpec = DeploymentSpec()
    status: DeploymentStatus = DeploymentStatus()


# --- ReplicaSet ---------------------------------------------------------------------------


class ReplicaSetSpec(K8s, frozen=True):
    replicas: int | None = None
    min_ready_seconds: int = 0
    selector: LabelSelector | None = None
    template: PodTemplateSpec = PodTemplateSpec()


class ReplicaSetCondition(K8s, frozen=True):
    type: str
    status: str
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


class ReplicaSetStatus(K8s, frozen=True):
    replicas: int = 0
    fully_labeled_replicas: int = 0
    ready_replicas: int = 0
    available_replicas: int = 0
    terminating_replicas: int | None = None
    observed_generation: int = 0
    conditions: list[ReplicaSetCondition] = []


class ReplicaSet(K8s, frozen=True):
    api_version: str = APPS_V1
    kind: str = "ReplicaSet"
    metadata: ObjectMeta = ObjectMeta()
    spec: ReplicaSetSpec = ReplicaSetSpec()
    status: ReplicaSetStatus = ReplicaSetStatus()


# --- StatefulSet --------------------------------------------------------------------------


class RollingUpdateStatefulSetStrategy(K8s, frozen=True):
    partition: int | None = None
    max_unavailable: IntOrString | None = None


class StatefulSetUpdateStrategy(K8s, frozen=True):
    type: str = ""
    """``RollingUpdate`` (the default) or ``OnDelete``."""
    rolling_update: RollingUpdateStatefulSetStrategy | None = None


class StatefulSetPersistentVolumeClaimRetentionPolicy(K8s, frozen=True):
    """``Retain`` (the default of both) or ``Delete``: what becomes of the replicas' claims
    when the set is deleted / when a replica is scaled away (StatefulSetAutoDeletePVC, GA 1.32)."""

    when_deleted: str = ""
    when_scaled: str = ""


class StatefulSetOrdinals(K8s, frozen=True):
    """``spec.ordinals`` (GA 1.31): the replicas are numbered ``start .. start+replicas-1``."""

    start: int = 0


class StatefulSetSpec(K8s, frozen=True):
    replicas: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = PodTemplateSpec()
    volume_claim_templates: list[PersistentVolumeClaim] = []
    """Each replica gets the claim ``<template name>-<set>-<ordinal>`` made from each
    (``agents/controllers/statefulset/claims.py``)."""
    service_name: str = ""
    pod_management_policy: str = ""
    """``OrderedReady`` (the default) or ``Parallel``."""
    update_strategy: StatefulSetUpdateStrategy = StatefulSetUpdateStrategy()
    revision_history_limit: int | None = None
    min_ready_seconds: int = 0
    persistent_volume_claim_retention_policy: StatefulSetPersistentVolumeClaimRetentionPolicy | None = None
    ordinals: StatefulSetOrdinals | None = None


class StatefulSetCondition(K8s, frozen=True):
    type: str
    status: str
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


class StatefulSetStatus(K8s, frozen=True):
    observed_generation: int = 0
    replicas: int = 0
    ready_replicas: int = 0
    current_replicas: int = 0
    updated_replicas: int = 0
    current_revision: str = ""
    update_revision: str = ""
    collision_count: int | None = None
    conditions: list[StatefulSetCondition] = []
    available_replicas: int = 0


class StatefulSet(K8s, frozen=True):
    api_version: str = APPS_V1
    kind: str = "StatefulSet"
    metadata: ObjectMeta = ObjectMeta()
    spec: StatefulSetSpec = StatefulSetSpec()
    status: StatefulSetStatus = StatefulSetStatus()


# --- DaemonSet ----------------------------------------------------------------------------


class RollingUpdateDaemonSet(K8s, frozen=True):
    max_unavailable: IntOrString | None = None
    max_surge: IntOrString | None = None


class DaemonSetUpdateStrategy(K8s, frozen=True):
    type: str = ""
    """``RollingUpdate`` (the default) or ``OnDelete``."""
    rolling_update: RollingUpdateDaemonSet | None = None


class DaemonSetSpec(K8s, frozen=True):
    selector: LabelSelector | None = None
    template: PodTemplateSpec = PodTemplateSpec()
    update_strategy: DaemonSetUpdateStrategy = DaemonSetUpdateStrategy()
    min_ready_seconds: int = 0
    revision_history_limit: int | None = None


class DaemonSetCondition(K8s, frozen=True):
    type: str
    status: str
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


class DaemonSetStatus(K8s, frozen=True):
    current_number_scheduled: int = 0
    number_misscheduled: int = 0
    desired_number_scheduled: int = 0
    number_ready: int = 0
    observed_generation: int = 0
    updated_number_scheduled: int = 0
    number_available: int = 0
    number_unavailable: int = 0
    collision_count: int | None = None
    conditions: list[DaemonSetCondition] = []


class DaemonSet(K8s, frozen=True):
    api_version: str = APPS_V1
    kind: str = "DaemonSet"
    metadata: ObjectMeta = ObjectMeta()
    spec: DaemonSetSpec = DaemonSetSpec()
    status: DaemonSetStatus = DaemonSetStatus()


# --- ControllerRevision -------------------------------------------------------------------


class ControllerRevision(K8s, frozen=True):
    """An immutable snapshot of a StatefulSet's or DaemonSet's template (upstream
    ``apps/v1.ControllerRevision``, written by ``pkg/controller/history``): ``data`` is the
    strategic merge patch that restores it (``{"spec": {"template": {..., "$patch": "replace"}}}``),
    ``revision`` its number (the newest is the highest)."""

    api_version: str = APPS_V1
    kind: str = "ControllerRevision"
    metadata: ObjectMeta = ObjectMeta()
    data: dict[str, Any] | None = None
    revision: int = 0
