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

from emulator.base.api.core import Taint, Toleration

__all__ = [
    "TAINT_EFFECTS",
    "TOLERATION_OP_EQUAL",
    "TOLERATION_OP_EXISTS",
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
