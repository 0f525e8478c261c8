"""Taints and tolerations (upstream ``core/v1`` ``Toleration.ToleratesTaint`` and
``component-helpers/scheduling/corev1.FindMatchingUntoleratedTaint``).

What this module owns: whether a toleration tolerates a taint (an empty effect matches every
effect, an empty key every key; ``Exists`` ignores the value, ``Equal`` or no operator compares
it) and which taint of a node no toleration tolerates. It does not own which effects a caller
cares about (TaintToleration, NodeUnschedulable, the kubelet, taint eviction pass their own) nor
the API server's checks of tolerations (``podvalidation``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final

from emulator.base.api.core import PodSpec, Taint, Toleration

__all__ = [
    "TAINT_EFFECTS",
    "TOLERATION_OP_EQUAL",
    "TOLERATION_OP_EXISTS",
    "daemon_tolerations",
    "find_untolerated_taint",
    "toleration_tolerates_taint",
    "tolerations_tolerate_taint",
]

TOLERATION_OP_EQUAL: Final = "Equal"
TOLERATION_OP_EXISTS: Final = "Exists"
TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def toleration_tolerates_taint(tol: Toleration, taint: Taint) -> bool:
    """``Toleration.ToleratesTaint``: an empty effect matches every effect, an empty key
    every key; ``Exists`` ignores the value, ``Equal`` (or no operator) compares it."""
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    op = tol.operator
    if op == "" or op == TOLERATION_OP_EQUAL:
        return tol.value == taint.value
    return op == TOLERATION_OP_EXISTS


def tolerations_tolerate_taint(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    """Whether any of ``tolerations`` tolerates ``taint``."""
    return any(toleration_tolerates_taint(tol, taint) for tol in tolerations)


def find_untolerated_taint(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], effects: Collection[str]
) -> Taint | None:
    """The first taint, among those with an effect in ``effects``, that no toleration
    tolerates (``FindMatchingUntoleratedTaint``); ``None`` when all are tolerated."""
    for taint in taints:
        if taint.effect in effects and not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


_DAEMON_ALWAYS: Final = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
_DAEMON_HOST_NETWORK: Final = (("node.kubernetes.io/network-unavailable", "NoSchedule"),)


def _same(a: Toleration, b: Toleration) -> bool:
    """Upstream ``Toleration.MatchToleration``: key, operator, value and effect."""
    return (a.key, a.operator, a.value, a.effect) == (b.key, b.operator, b.value, b.effect)


def daemon_tolerations(spec: PodSpec) -> list[Toleration]:
    """``spec``'s tolerations with those every daemon pod gets added or updated (upstream
    ``pkg/controller/daemon/util`` ``AddOrUpdateDaemonPodTolerations``): NoExecute for
    not-ready and unreachable, NoSchedule for disk, memory and pid pressure and
    unschedulable, and network-unavailable for host-network pods. The DaemonSet controller
    and the Cluster Autoscaler's template nodes both use it."""
    out = list(spec.tolerations)
    extra = _DAEMON_ALWAYS + (_DAEMON_HOST_NETWORK if spec.host_network else ())
    for key, effect in extra:
        tol = Toleration(key=key, operator="Exists", effect=effect)
        for i, have in enumerate(out):
            if _same(have, tol):
                out[i] = tol
                break
        else:
            out.append(tol)
    return out
