"""Helpers shared by several score plugins, as upstream's ``framework/plugins/helper`` package.

What it owns: ``default_normalize_score`` (upstream ``helper.DefaultNormalizeScore``), the
normalization used by TaintToleration (reversed), NodeAffinity and InterPodAffinity-style
plugins whose raw scores are unbounded counts or weight sums.

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

from collections.abc import Sequence

from agents.scheduler.framework.types import NodeScore, Status

__all__ = ["DefaultNormalizeScore", "default_normalize_score"]


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


DefaultNormalizeScore = default_normalize_score
"""Upstream's spelling, for readers coming from ``helper.DefaultNormalizeScore``."""
