"""Which pods a node's removal must move, and which block it: upstream's drainability rules
(``simulator/drainability/rules/rules.go`` ``Default``, 1.34) and ``simulator/drain.go``
``GetPodsToMove``.

Rules in upstream's order, the first with an outcome wins:

=================  ===========  ===============================================================
rule               outcome      when
=================  ===========  ===============================================================
mirror             skip         the pod is a static pod's mirror (``kubernetes.io/config.mirror``)
longterminating    skip         deleted more than its grace period + 30 s ago
daemonset          drain        controlled by a DaemonSet (not moved: ``daemonSetPods``)
safetoevict        drain        ``cluster-autoscaler.kubernetes.io/safe-to-evict: "true"``
terminal           drain        Failed, or Succeeded with restartPolicy Never / OnFailure
replicated         block        no controller (``NotReplicated``: "<ns>/<name> is not replicated")
system             block        in kube-system without a matching PDB (``UnmovableKubeSystemPod``)
notsafetoevict     block        ``safe-to-evict: "false"`` (``NotSafeToEvictAnnotation``)
localstorage       block        a hostPath or non-memory emptyDir volume not named in
                                ``safe-to-evict-local-volumes`` (``LocalStorageRequested``)
pdb                block        a matching PDB allows no more disruptions (``NotEnoughPdb``)
=================  ===========  ===============================================================

``system`` and ``localstorage`` apply only with ``skipNodesWith{SystemPods,LocalStorage}``
(both default true). ``RemainingPdbs`` is upstream's ``RemainingPdbTracker``: what each PDB
still allows as the planner moves pods off several nodes in one pass.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from emulator.base.api.core import Pod
from emulator.base.api.labelselector import label_selector_matches
from emulator.base.api.policy import PodDisruptionBudget
from emulator.base.runtime.clock import parse_timestamp

__all__ = [
    "BLOCKING_REASONS",
    "LOCAL_VOLUMES_ANNOTATION",
    "SAFE_TO_EVICT_ANNOTATION",
    "BlockingPod",
    "RemainingPdbs",
    "pods_to_move",
]

SAFE_TO_EVICT_ANNOTATION: Final = "cluster-autoscaler.kubernetes.io/safe-to-evict"
LOCAL_VOLUMES_ANNOTATION: Final = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
MIRROR_ANNOTATION: Final = "kubernetes.io/config.mirror"
LONG_TERMINATING_EXTRA: Final = 30.0
"""Upstream ``PodLongTerminatingExtraThreshold``."""
BLOCKING_REASONS: Final = (
    "NotReplicated",
    "UnmovableKubeSystemPod",
    "NotSafeToEvictAnnotation",
    "LocalStorageRequested",
    "NotEnoughPdb",
)


@dataclass(frozen=True, slots=True)
class BlockingPod:
    pod: Pod
    reason: str
    """Upstream's ``drain.BlockingPodReason`` name."""
    message: str


class RemainingPdbs:
    """The PDBs' remaining disruptions while a pass plans several moves."""

    def __init__(self, pdbs: Sequence[PodDisruptionBudget]) -> None:
        self.pdbs = list(pdbs)
        self.remaining = [p.status.disruptions_allowed for p in self.pdbs]

    def matching(self, pod: Pod) -> list[int]:
        out = []
        for i, p in enumerate(self.pdbs):
            sel = p.spec.selector
            if p.metadata.namespace != pod.metadata.namespace or sel is None:
                continue
            if (sel.match_labels or sel.match_expressions) and label_selector_matches(sel, pod.metadata.labels):
                out.append(i)
        return out

    def allows(self, pod: Pod) -> bool:
        return all(self.remaining[i] >= 1 for i in self.matching(pod))

    def take(self, pods: Sequence[Pod]) -> None:
        for pod in pods:
            for i in self.matching(pod):
                self.remaining[i] -= 1


def _controller_kind(pod: Pod) -> str | None:
    ref = next((r for r in pod.metadata.owner_references if r.controller), None)
    return None if ref is None else ref.kind


def _terminal(pod: Pod) -> bool:
    phase, restart = pod.status.phase, pod.spec.restart_policy
    if phase == "Failed":
        return True
    return phase == "Succeeded" and restart in ("Never", "OnFailure")


def _long_terminating(pod: Pod, now: float) -> bool:
    if pod.metadata.deletion_timestamp is None:
        return False
    grace = pod.spec.termination_grace_period_seconds
    grace = 30 if grace is None else grace
    return parse_timestamp(pod.metadata.deletion_timestamp) + grace + LONG_TERMINATING_EXTRA < now


def _local_sources(pod: Pod) -> dict[str, dict[str, Any]]:
    """Volume name -> its emptyDir / hostPath source, read from the spec's unmodelled overlay
    (``emulator.base.api.unmodelled``: the struct models neither source)."""
    by = pod.spec.unmodelled.get("by", {}).get("volumes")
    if not by:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for ident, overlay in by.get("items", {}).items():
        if by.get("key") == "name":
            name = json.loads(ident)
        elif ident.isdigit() and int(ident) < len(pod.spec.volumes):
            name = pod.spec.volumes[int(ident)].name
        else:
            continue
        out[name] = overlay.get("set", {})
    return out


def _local_storage(pod: Pod) -> bool:
    """Upstream ``HasLocalStorage`` minus the volumes named in ``safe-to-evict-local-volumes``:
    a hostPath, or an emptyDir not in memory."""
    allowed = {v.strip() for v in pod.metadata.annotations.get(LOCAL_VOLUMES_ANNOTATION, "").split(",")}
    for name, source in _local_sources(pod).items():
        empty = source.get("emptyDir")
        local = "hostPath" in source or (isinstance(empty, dict) and empty.get("medium") != "Memory")
        if local and name not in allowed:
            return True
    return False


def _blocking(pod: Pod, pdbs: RemainingPdbs, *, system: bool, local: bool) -> BlockingPod | None:
    ns, name = pod.metadata.namespace, pod.metadata.name
    if _controller_kind(pod) is None:
        return BlockingPod(pod, "NotReplicated", f"{ns}/{name} is not replicated")
    if system and ns == "kube-system" and not pdbs.matching(pod):
        return BlockingPod(
            pod,
            "UnmovableKubeSystemPod",
            f"non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: {name}",
        )
    if pod.metadata.annotations.get(SAFE_TO_EVICT_ANNOTATION) == "false":
        return BlockingPod(pod, "NotSafeToEvictAnnotation", f"pod annotated as not safe to evict present: {name}")
    if local and _local_storage(pod):
        return BlockingPod(pod, "LocalStorageRequested", f"pod with local storage present: {name}")
    if not pdbs.allows(pod):
        return BlockingPod(pod, "NotEnoughPdb", f"not enough pod disruption budget to move {ns}/{name}")
    return None


def pods_to_move(
    pods: Sequence[Pod], pdbs: RemainingPdbs, now: float, *, system: bool = True, local: bool = True
) -> tuple[list[Pod], list[Pod], BlockingPod | None]:
    """``GetPodsToMove``: (pods to move, DaemonSet pods, the first blocking pod or None)."""
    move: list[Pod] = []
    daemons: list[Pod] = []
    for pod in pods:
        if MIRROR_ANNOTATION in pod.metadata.annotations or _long_terminating(pod, now):
            continue
        if _controller_kind(pod) == "DaemonSet":
            daemons.append(pod)
            continue
        drainable = pod.metadata.annotations.get(SAFE_TO_EVICT_ANNOTATION) == "true" or _terminal(pod)
        if not drainable:
            blocking = _blocking(pod, pdbs, system=system, local=local)
            if blocking is not None:
                return [], [], blocking
        move.append(pod)
    return move, daemons, None
