"""Pure helpers of the Deployment controller: upstream's ``pkg/controller/deployment/util``.

What it owns: the ``pod-template-hash`` (``compute_hash``), the revision and replica
annotations, resolving ``maxSurge``/``maxUnavailable`` (surge rounds up, unavailable down;
both zero → unavailable 1), which ReplicaSet is new and which are old, how many replicas
the new one may have (``new_rs_new_replicas``), proportional scaling's share
(``replica_set_proportion``), the replica counts summed over ReplicaSets, the status
(``calculate_status``) and the condition helpers. No I/O: every function is over the
objects given.

Not here: writing anything (``sync``), the rollout algorithms (``rolling``, ``recreate``),
the progress conditions' decisions (``progress``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Final

import msgspec
from msgspec.structs import replace

from emulator.base.api.apps import Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet
from emulator.base.api.codec import enc_hook
from emulator.base.api.intstr import scaled_value
from emulator.base.api.podtemplate import PodTemplateSpec
from emulator.base.runtime.clock import parse_timestamp

__all__ = [
    "DESIRED_REPLICAS",
    "MAX_REPLICAS",
    "MAX_REV_HISTORY_LENGTH",
    "POD_TEMPLATE_HASH",
    "REVISION",
    "REVISION_HISTORY",
    "active",
    "available_replicas",
    "by_creation",
    "calculate_status",
    "compute_hash",
    "deployment_complete",
    "equal_ignore_hash",
    "find_active_or_latest",
    "find_new_rs",
    "find_old_rss",
    "get_condition",
    "has_progress_deadline",
    "is_saturated",
    "max_revision",
    "max_surge",
    "max_unavailable",
    "new_condition",
    "new_rs_annotations",
    "new_rs_new_replicas",
    "ready_replicas",
    "remove_condition",
    "replica_set_proportion",
    "replicas_annotations",
    "resolve_fenceposts",
    "revision",
    "set_condition",
    "spec_replicas",
    "status_replicas",
]

POD_TEMPLATE_HASH: Final = "pod-template-hash"
REVISION: Final = "deployment.kubernetes.io/revision"
REVISION_HISTORY: Final = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS: Final = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS: Final = "deployment.kubernetes.io/max-replicas"
MAX_REV_HISTORY_LENGTH: Final = 2000
"""Upstream ``maxRevHistoryLengthInChars``."""
_NOT_COPIED: Final = frozenset(
    {"kubectl.kubernetes.io/last-applied-configuration", REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS}
)
"""Annotations of a Deployment not copied to its ReplicaSets (``skipCopyAnnotation``)."""
_MAX_INT32: Final = 2**31 - 1
_ALPHANUMS: Final = "bcdfghjklmnpqrstvwxz2456789"
"""Upstream ``rand.SafeEncodeString``'s alphabet (no vowels, no 0/1/3: no words)."""
_ENCODER: Final = msgspec.json.Encoder(order="deterministic", enc_hook=enc_hook)


# --- pod-template-hash --------------------------------------------------------------------


def _fnv32a(data: bytes, h: int = 0x811C9DC5) -> int:
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def compute_hash(template: PodTemplateSpec, collision_count: int | None) -> str:
    """Upstream ``controller.ComputeHash``: FNV-32a of the template (here its canonical JSON,
    where upstream hashes a spew dump), then of ``collisionCount`` as 4 little-endian bytes
    when set, printed in decimal and mapped onto ``SafeEncodeString``'s alphabet."""
    h = _fnv32a(_ENCODER.encode(template))
    if collision_count is not None:
        h = _fnv32a((collision_count & 0xFFFFFFFF).to_bytes(4, "little"), h)
    return "".join(_ALPHANUMS[ord(ch) % len(_ALPHANUMS)] for ch in str(h))


def _without_hash(template: PodTemplateSpec) -> PodTemplateSpec:
    labels = template.metadata.labels
    if POD_TEMPLATE_HASH not in labels:
        return template
    rest = {k: v for k, v in labels.items() if k != POD_TEMPLATE_HASH}
    return replace(template, metadata=replace(template.metadata, labels=rest))


def equal_ignore_hash(a: PodTemplateSpec, b: PodTemplateSpec) -> bool:
    """Upstream ``EqualIgnoreHash``: equal templates, but for the ``pod-template-hash`` label."""
    return _without_hash(a) == _without_hash(b)


# --- which ReplicaSets ----------------------------------------------------------------------


def by_creation(rs: ReplicaSet) -> tuple[float, str]:
    """Upstream ``ReplicaSetsByCreationTimestamp``: oldest first, then by name."""
    ts = rs.metadata.creation_timestamp
    return (parse_timestamp(ts) if ts else 0.0, rs.metadata.name)


def find_new_rs(d: Deployment, rss: Sequence[ReplicaSet]) -> ReplicaSet | None:
    """Upstream ``FindNewReplicaSet``: the oldest ReplicaSet whose template is the Deployment's."""
    for rs in sorted(rss, key=by_creation):
        if equal_ignore_hash(rs.spec.template, d.spec.template):
            return rs
    return None


def find_old_rss(d: Deployment, rss: Sequence[ReplicaSet], new_rs: ReplicaSet | None) -> list[ReplicaSet]:
    """Upstream ``FindOldReplicaSets`` (its all-old list): every other ReplicaSet."""
    new_uid = new_rs.metadata.uid if new_rs is not None else None
    return [rs for rs in rss if rs.metadata.uid != new_uid]


def active(rss: Iterable[ReplicaSet | None]) -> list[ReplicaSet]:
    """Upstream ``FilterActiveReplicaSets``: those with ``spec.replicas > 0``."""
    return [rs for rs in rss if rs is not None and (rs.spec.replicas or 0) > 0]


def find_active_or_latest(new_rs: ReplicaSet | None, old_rss: Sequence[ReplicaSet]) -> ReplicaSet | None:
    """Upstream ``FindActiveOrLatest``: the one active ReplicaSet, or the newest when none
    is active; None when several are."""
    if new_rs is None and not old_rss:
        return None
    olds = sorted(old_rss, key=by_creation, reverse=True)
    live = active([*olds, new_rs])
    if not live:
        return new_rs if new_rs is not None else olds[0]
    return live[0] if len(live) == 1 else None


# --- counts -------------------------------------------------------------------------------


def spec_replicas(rss: Iterable[ReplicaSet | None]) -> int:
    """Upstream ``GetReplicaCountForReplicaSets``."""
    return sum(rs.spec.replicas or 0 for rs in rss if rs is not None)


def status_replicas(rss: Iterable[ReplicaSet | None]) -> int:
    """Upstream ``GetActualReplicaCountForReplicaSets``."""
    return sum(rs.status.replicas for rs in rss if rs is not None)


def ready_replicas(rss: Iterable[ReplicaSet | None]) -> int:
    return sum(rs.status.ready_replicas for rs in rss if rs is not None)


def available_replicas(rss: Iterable[ReplicaSet | None]) -> int:
    return sum(rs.status.available_replicas for rs in rss if rs is not None)


# --- surge and unavailability -------------------------------------------------------------


def resolve_fenceposts(surge: int | str | None, unavailable: int | str | None, desired: int) -> tuple[int, int]:
    """Upstream ``ResolveFenceposts``: surge rounded up, unavailable down; both 0 → (0, 1)."""
    s = scaled_value(surge if surge is not None else 0, desired, round_up=True)
    u = scaled_value(unavailable if unavailable is not None else 0, desired, round_up=False)
    if s == 0 and u == 0:
        u = 1
    return s, u


def _rolling(d: Deployment) -> tuple[int | str | None, int | str | None] | None:
    ru = d.spec.strategy.rolling_update
    if d.spec.strategy.type != "RollingUpdate" or ru is None:
        return None
    return ru.max_surge, ru.max_unavailable


def max_surge(d: Deployment) -> int:
    """Upstream ``MaxSurge``: 0 unless RollingUpdate."""
    fence = _rolling(d)
    return 0 if fence is None else resolve_fenceposts(*fence, d.spec.replicas or 0)[0]


def max_unavailable(d: Deployment) -> int:
    """Upstream ``MaxUnavailable``: 0 unless RollingUpdate with replicas; at most replicas."""
    fence = _rolling(d)
    replicas = d.spec.replicas or 0
    if fence is None or replicas == 0:
        return 0
    return min(resolve_fenceposts(*fence, replicas)[1], replicas)


def new_rs_new_replicas(d: Deployment, all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet) -> int:
    """Upstream ``NewRSNewReplicas``: how far the new ReplicaSet may be scaled up now."""
    replicas = d.spec.replicas or 0
    new = new_rs.spec.replicas or 0
    if d.spec.strategy.type == "Recreate":
        return replicas
    ceiling = replicas + max_surge(d)
    current = spec_replicas(all_rss)
    if current >= ceiling:
        return new
    return new + min(ceiling - current, replicas - new)


def is_saturated(d: Deployment, rs: ReplicaSet | None) -> bool:
    """Upstream ``IsSaturated``: ``rs`` has all the replicas, all available."""
    if rs is None:
        return False
    try:
        desired = int(rs.metadata.annotations.get(DESIRED_REPLICAS, ""))
    except ValueError:
        return False
    replicas = d.spec.replicas or 0
    return rs.spec.replicas == replicas and desired == replicas and rs.status.available_replicas == replicas


def _round(x: float) -> int:
    """Go's ``math.Round``: halves away from zero."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def replica_set_proportion(rs: ReplicaSet, d: Deployment, to_add: int, added: int) -> int:
    """Upstream ``GetReplicaSetProportion``: ``rs``'s share of ``to_add`` replicas
    (``added`` already handed out), by its size against the Deployment's size before the
    scale (its ``max-replicas`` annotation)."""
    size = rs.spec.replicas or 0
    if size == 0 or to_add == 0 or to_add == added:
        return 0
    allowed = to_add - added
    fraction = _fraction(rs, d)
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _fraction(rs: ReplicaSet, d: Deployment) -> int:
    replicas = d.spec.replicas or 0
    size = rs.spec.replicas or 0
    if replicas == 0:
        return -size
    now_max = replicas + max_surge(d)
    try:
        before = int(rs.metadata.annotations.get(MAX_REPLICAS, ""))
    except ValueError:
        before = 0
    if before == 0:
        before = d.status.replicas
        if before == 0:
            return 0
    return _round(size * now_max / before) - size


# --- annotations --------------------------------------------------------------------------


def revision(rs: ReplicaSet) -> int:
    """Upstream ``Revision``: the ReplicaSet's revision annotation (0 when absent or bad)."""
    try:
        return int(rs.metadata.annotations.get(REVISION, "0"))
    except ValueError:
        return 0


def max_revision(rss: Iterable[ReplicaSet]) -> int:
    return max((revision(rs) for rs in rss), default=0)


def replicas_annotations(annotations: dict[str, str], desired: int, maximum: int) -> bool:
    """Upstream ``SetReplicasAnnotations`` on ``annotations`` (changed in place); whether
    anything changed (``ReplicasAnnotationsNeedUpdate`` when used on a copy)."""
    changed = False
    for key, value in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(maximum))):
        if annotations.get(key) != value:
            annotations[key] = value
            changed = True
    return changed


def new_rs_annotations(d: Deployment, rs_annotations: dict[str, str], new_revision: int, exists: bool) -> bool:
    """Upstream ``SetNewReplicaSetAnnotations`` on ``rs_annotations`` (changed in place):
    the Deployment's annotations copied, the revision raised to ``new_revision`` (an older
    revision kept in ``revision-history``, as a rollback does), and for a ReplicaSet
    about to be created the replica annotations. Whether anything changed."""
    changed = False
    for k, v in d.metadata.annotations.items():
        if k not in _NOT_COPIED and rs_annotations.get(k) != v:
            rs_annotations[k] = v
            changed = True
    had = REVISION in rs_annotations
    old_text = rs_annotations.get(REVISION, "")
    try:
        old = int(old_text) if had else 0
    except ValueError:
        return changed
    if old < new_revision:
        rs_annotations[REVISION] = str(new_revision)
        changed = True
        if had:
            history = rs_annotations.get(REVISION_HISTORY, "")
            olds = history.split(",") if history else []
            total = len(history) + len(old_text) + 1
            start = 0
            while total > MAX_REV_HISTORY_LENGTH and start < len(olds):
                total -= len(olds[start]) + 1
                start += 1
            if total <= MAX_REV_HISTORY_LENGTH:
                rs_annotations[REVISION_HISTORY] = ",".join([*olds[start:], old_text])
    if not exists:
        replicas = d.spec.replicas or 0
        if replicas_annotations(rs_annotations, replicas, replicas + max_surge(d)):
            changed = True
    return changed


# --- conditions and status ----------------------------------------------------------------


def has_progress_deadline(d: Deployment) -> bool:
    p = d.spec.progress_deadline_seconds
    return p is not None and p != _MAX_INT32


def get_condition(status: DeploymentStatus, type_: str) -> DeploymentCondition | None:
    return next((c for c in status.conditions if c.type == type_), None)


def new_condition(type_: str, status: str, reason: str, message: str, now: str) -> DeploymentCondition:
    return DeploymentCondition(
        type=type_, status=status, reason=reason, message=message, last_update_time=now, last_transition_time=now
    )


def set_condition(status: DeploymentStatus, cond: DeploymentCondition) -> DeploymentStatus:
    """Upstream ``SetDeploymentCondition``: nothing when status and reason are the same;
    the transition time kept when only the reason changes; the condition moved last."""
    current = get_condition(status, cond.type)
    if current is not None and current.status == cond.status and current.reason == cond.reason:
        return status
    if current is not None and current.status == cond.status:
        cond = replace(cond, last_transition_time=current.last_transition_time)
    return replace(status, conditions=[*(c for c in status.conditions if c.type != cond.type), cond])


def remove_condition(status: DeploymentStatus, type_: str) -> DeploymentStatus:
    if get_condition(status, type_) is None:
        return status
    return replace(status, conditions=[c for c in status.conditions if c.type != type_])


def calculate_status(
    all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet | None, d: Deployment, now: str
) -> DeploymentStatus:
    """Upstream ``calculateStatus``: the counts summed over the ReplicaSets, and the
    Available condition (``minAvailable = replicas - maxUnavailable``)."""
    available = available_replicas(all_rss)
    unavailable = max(0, spec_replicas(all_rss) - available)
    status = DeploymentStatus(
        observed_generation=d.metadata.generation,
        replicas=status_replicas(all_rss),
        updated_replicas=status_replicas([new_rs]),
        ready_replicas=ready_replicas(all_rss),
        available_replicas=available,
        unavailable_replicas=unavailable,
        terminating_replicas=d.status.terminating_replicas,
        conditions=list(d.status.conditions),
        collision_count=d.status.collision_count,
    )
    if available >= (d.spec.replicas or 0) - max_unavailable(d):
        cond = new_condition(
            "Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.", now
        )
    else:
        cond = new_condition(
            "Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.", now
        )
    return set_condition(status, cond)


def deployment_complete(d: Deployment, status: DeploymentStatus) -> bool:
    """Upstream ``DeploymentComplete``."""
    replicas = d.spec.replicas or 0
    return (
        status.updated_replicas == replicas
        and status.replicas == replicas
        and status.available_replicas == replicas
        and status.observed_generation >= d.metadata.generation
    )
