"""``status_problems``: upstream's ``Validate<Kind>Status`` for the workload kinds
(``pkg/apis/apps/validation`` ``ValidateDeploymentStatus``, ``ValidateReplicaSetStatus``, the
StatefulSet's, DaemonSet's, Job's and PDB's status checks): every integer count ≥ 0, and for a
Deployment or ReplicaSet the replica counts' order (updated/fully labeled, ready and available
not above ``replicas``; available not above ready). Used by ``validation`` on every status
write; the spec checks are ``workloadvalidation``'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import msgspec

from emulator.base.api.apps import Deployment, ReplicaSet

__all__ = ["status_problems"]

Problem = tuple[str, str]


_ABOVE_REPLICAS: Final = "cannot be greater than status.replicas"


_STATUS_FIELDS: dict[type, tuple[tuple[str, str], ...]] = {}


def _status_fields(tp: type) -> tuple[tuple[str, str], ...]:
    """(name, wire name) of a status struct's fields, remembered per type:
    ``msgspec.structs.fields`` resolves the class's annotations on every call
    (milliseconds), and a status is checked on every controller's status write."""
    fields = _STATUS_FIELDS.get(tp)
    if fields is None:
        fields = _STATUS_FIELDS[tp] = tuple((f.name, f.encode_name) for f in msgspec.structs.fields(tp))
    return fields


def status_problems(obj: Any) -> Iterator[Problem]:
    """``Validate<Kind>Status``: counts ≥ 0, and the replica counts' order."""
    status = getattr(obj, "status", None)
    if status is None:
        return
    for name, wire in _status_fields(type(status)):
        value = getattr(status, name)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            yield f"status.{wire}", f"Invalid value: {value}: must be greater than or equal to 0"
    if isinstance(obj, Deployment | ReplicaSet):
        st = obj.status
        above = [("readyReplicas", st.ready_replicas), ("availableReplicas", st.available_replicas)]
        if isinstance(obj, Deployment):
            above.insert(0, ("updatedReplicas", obj.status.updated_replicas))
        else:
            above.insert(0, ("fullyLabeledReplicas", obj.status.fully_labeled_replicas))
        for name, value in above:
            if value > st.replicas:
                yield f"status.{name}", f"Invalid value: {value}: {_ABOVE_REPLICAS}"
        if st.available_replicas > st.ready_replicas:
            yield (
                "status.availableReplicas",
                f"Invalid value: {st.available_replicas}: cannot be greater than readyReplicas",
            )
