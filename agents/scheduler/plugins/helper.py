"""Helpers shared by several score plugins, as upstream's ``framework/plugins/helper`` package.

What it owns: ``default_normalize_score`` (upstream ``helper.DefaultNormalizeScore``), the
normalization used by TaintToleration (reversed), NodeAffinity and InterPodAffinity-style
plugins whose raw scores are unbounded counts or weight sums.

``default_normalize_score_all`` is the same over a NumPy array (the vectorised Score path).

It does not own any plugin state; it rewrites the ``NodeScore`` list in place and returns a
Status, like a ``ScoreExtensions.normalize_score`` would.

Arithmetic (integers only, as upstream's int64):

=======================  ============================  ===============================
highest raw score        ``reverse=False``             ``reverse=True``
=======================  ============================  ===============================
0                        scores left unchanged         every score = ``max_priority``
m > 0                    ``max_priority * s // m``     ``max_priority - max_priority * s // m``
=======================  ============================  ===============================

Scores are non-negative here, so floor division equals Go's truncating division; a negative
score would be truncated toward zero as upstream does.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple

import numpy as np

from agents.scheduler.framework.interface import RowScore
from agents.scheduler.framework.node_table import IntArray
from agents.scheduler.framework.types import NodeScore, Status
from emulator.base.api.core import Pod

__all__ = [
    "DefaultNormalizeScore",
    "PodClaim",
    "default_normalize_score",
    "default_normalize_score_all",
    "go_div_all",
    "pod_claims",
    "volume_listers",
]


def _go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero (Go's ``/`` on int64)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def default_normalize_score(max_priority: int, reverse: bool, scores: Sequence[NodeScore]) -> Status:
    """Scale ``scores`` in place to ``[0, max_priority]`` by the highest score; optionally reversed."""
    max_count = 0
    for s in scores:
        if s.score > max_count:
            max_count = s.score
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return Status.success()
    for s in scores:
        v = _go_div(max_priority * s.score, max_count)
        s.score = max_priority - v if reverse else v
    return Status.success()


def go_div_all(a: IntArray, b: int) -> IntArray:
    """``a / b`` element-wise, truncated toward zero (Go's int64 division); ``b > 0``."""
    q = np.abs(a) // b
    return np.where(a >= 0, q, -q)


def default_normalize_score_all(max_priority: int, reverse: bool, scores: IntArray) -> IntArray:
    """``default_normalize_score`` over an array: a new array, the same integers."""
    max_count = max(int(np.maximum.reduce(scores)), 0) if len(scores) else 0
    if max_count == 0:
        return np.full(len(scores), max_priority, dtype=np.int64) if reverse else scores.copy()
    v = go_div_all(max_priority * scores, max_count)
    return max_priority - v if reverse else v


DefaultNormalizeScore = default_normalize_score
"""Upstream's spelling, for readers coming from ``helper.DefaultNormalizeScore``."""


class RowScoreMemo:
    """A Score plugin's ``RowScore``s by key (a pod shape: requests, images), so later pods of
    the same shape reuse the one whose cached column the node table keeps. Emptied once it holds
    ``limit`` keys: bounded by shapes, never by pods."""

    __slots__ = ("_limit", "_scores", "peek")

    def __init__(self, limit: int = 256) -> None:
        self._limit = limit
        self._scores: dict[Hashable, RowScore] = {}
        self.peek: Callable[[Hashable], RowScore | None] = self._scores.get
        """``peek(key)``: the kept RowScore or None (the dict's own ``get``: callers ask it
        before building ``make``, and call ``get`` only on a miss)."""

    def get(self, key: Hashable, make: Callable[[], RowScore]) -> RowScore:
        rs = self._scores.get(key)
        if rs is None:
            if len(self._scores) >= self._limit:
                self._scores.clear()
            rs = self._scores[key] = make()
        return rs

    def __len__(self) -> int:
        return len(self._scores)


# --- volumes (shared by the four volume plugins) ----------------------------------------------


class PodClaim(NamedTuple):
    """A claim a pod's volume names: ``persistentVolumeClaim.claimName``, or the generic
    ephemeral volume's ``<pod>-<volume>`` (upstream ``ephemeral.VolumeClaimName``)."""

    name: str
    ephemeral: bool
    volume: str


_NO_CLAIMS: tuple[PodClaim, ...] = ()


def pod_claims(pod: Pod) -> tuple[PodClaim, ...]:
    """The pod's claims in volume order; empty (and allocation-free) without volumes."""
    volumes = pod.spec.volumes
    if not volumes:
        return _NO_CLAIMS
    out: list[PodClaim] = []
    for v in volumes:
        if v.persistent_volume_claim is not None:
            out.append(PodClaim(v.persistent_volume_claim.claim_name, False, v.name))
        elif v.ephemeral is not None:
            out.append(PodClaim(f"{pod.metadata.name}-{v.name}", True, v.name))
    return tuple(out)


def volume_listers(handle: Any) -> Any:
    """The handle's storage informers (``agents.scheduler.volume_listers.VolumeListers``),
    or None (a handle without them: unit tests, ``explain`` without storage objects)."""
    return getattr(handle, "volume_listers", None) if handle is not None else None
