"""A StatefulSet pod's identity, as upstream's ``stateful_set_utils.go`` gives it.

What this module owns (pure functions):

- the first ordinal (``spec.ordinals.start``, GA 1.31; 0 without it);
- the name of ordinal ``i``, ``<set>-<i>``, and the ordinal of a pod's name (-1 when the
  name is not ``<set>-<number>``: upstream's ``getParentNameAndOrdinal``);
- ``new_versioned_pod`` (upstream ``newVersionedStatefulSetPod``): ordinals below the
  RollingUpdate ``partition`` (counted from the first ordinal) are made from the *current*
  revision's template, the others from the update revision's; the pod gets ``hostname`` =
  its name, ``subdomain`` = the set's ``serviceName``, and the labels ``statefulset.kubernetes.io/pod-name``,
  ``apps.kubernetes.io/pod-index`` (PodIndexLabel, on by default since 1.28) and
  ``controller-revision-hash``;
- ``pod_revision``: that label.

It does not own when a pod is made (``control``) nor its claims and claim volumes
(``claims``, applied to the new pod by ``control``).
"""

from __future__ import annotations

from typing import Final

from msgspec.structs import replace

from agents.controllers.controllerutils import pod_from_template
from agents.controllers.history import CONTROLLER_REVISION_HASH
from emulator.base.api.apps import StatefulSet
from emulator.base.api.core import Pod
from emulator.base.api.podtemplate import PodTemplateSpec

__all__ = [
    "POD_INDEX_LABEL",
    "POD_NAME_LABEL",
    "new_versioned_pod",
    "ordinal_of",
    "pod_name",
    "pod_revision",
    "start_ordinal",
]

POD_NAME_LABEL: Final = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL: Final = "apps.kubernetes.io/pod-index"


def start_ordinal(sts: StatefulSet) -> int:
    """Upstream ``getStartOrdinal``: ``spec.ordinals.start``, else 0."""
    return sts.spec.ordinals.start if sts.spec.ordinals is not None else 0


def pod_name(set_name: str, ordinal: int) -> str:
    return f"{set_name}-{ordinal}"


def ordinal_of(set_name: str, name: str) -> int:
    """The ordinal in ``name`` when it is ``<set_name>-<digits>``, else -1."""
    prefix = f"{set_name}-"
    if not name.startswith(prefix):
        return -1
    digits = name[len(prefix) :]
    if not digits.isascii() or not digits.isdigit():
        return -1
    return int(digits)


def pod_revision(pod: Pod) -> str:
    return pod.metadata.labels.get(CONTROLLER_REVISION_HASH, "")


def new_versioned_pod(
    current: PodTemplateSpec,
    update: PodTemplateSpec,
    current_revision: str,
    update_revision: str,
    sts: StatefulSet,
    ordinal: int,
) -> Pod:
    """The pod of ``ordinal``: from the current revision below the partition, else the update one."""
    strategy = sts.spec.update_strategy
    partition = (
        strategy.rolling_update.partition
        if strategy.rolling_update is not None and strategy.rolling_update.partition is not None
        else 0
    )
    old = strategy.type == "RollingUpdate" and ordinal < start_ordinal(sts) + partition
    template, revision = (current, current_revision) if old else (update, update_revision)
    name = pod_name(sts.metadata.name, ordinal)
    pod = pod_from_template(template, sts, sts.metadata.namespace, name=name)
    labels = {
        **pod.metadata.labels,
        POD_NAME_LABEL: name,
        POD_INDEX_LABEL: str(ordinal),
        CONTROLLER_REVISION_HASH: revision,
    }
    spec = replace(pod.spec, hostname=name, subdomain=sts.spec.service_name)
    return replace(pod, metadata=replace(pod.metadata, labels=labels), spec=spec)
