"""PodTopologySpread's soft constraints: PreScore state, Score, NormalizeScore (upstream
``podtopologyspread/scoring.go``, v1.34).

What this module owns, as pure functions:

* ``init_pre_score_state`` over the *filtered* nodes: ``ignored_nodes`` (filtered nodes missing a
  topology key, only when ``require_all_topologies``), one counter per topology value seen among the
  other filtered nodes (a node without the key counts as the value ``""``, as upstream reads a
  missing label), and per constraint the weight ``ln(size + 2)`` with ``size`` the number of such
  values (hostname: the number of non-ignored filtered nodes).
* ``count_all_nodes`` over *all* nodes of the snapshot: adds each eligible node's matching pods to
  its value's counter when that value has one (hostname constraints are skipped: Score counts the
  node's own pods).
* ``score_node``: ``round(Σ_c cnt_c · w_c + (maxSkew_c − 1))`` over the constraints whose key the
  node carries (Go ``math.Round``: half away from zero); ignored nodes score 0.
* ``normalize_scores``: over non-ignored nodes, ``max == 0`` → 100, else
  ``100 · (max + min − s) // max``; ignored nodes → 0.

Floats are IEEE doubles computed in upstream's order, so the rounded raw scores are upstream's.

``PreScoreState`` is what PreScore writes. The plugin's PreScore only parses the constraints
and records its inputs (``PreScoreInputs``); the fields above are computed from them on their
first read (``PreScoreState.deferred``), which the per-node Score makes and the vectorised
Score (``vector.py``, tested against this module) does not.

What it does not own: constraint parsing and counting (``common.py``), the plugin (``plugin.py``),
the vectorised path (``vector.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.scheduler.framework.types import MAX_NODE_SCORE, NodeInfo, NodeScore
from emulator.base.api.core import Pod

from .common import (
    LABEL_HOSTNAME,
    Constraint,
    NodeEligibility,
    count_pods_match_selector,
    node_labels_match_spread_constraints,
    selector_slots,
)

__all__ = [
    "BoolArray",
    "PreScoreInputs",
    "PreScoreState",
    "count_all_nodes",
    "go_round",
    "init_pre_score_state",
    "normalize_scores",
    "score_for_count",
    "score_node",
    "topology_normalizing_weight",
]


BoolArray = np.ndarray[Any, np.dtype[np.bool_]]


def topology_normalizing_weight(size: int) -> float:
    """``ln(size + 2)``: keeps small topologies' counts from being watered down by big ones."""
    return math.log(size + 2)


def score_for_count(cnt: int, max_skew: int, weight: float) -> float:
    """``cnt · weight + (maxSkew − 1)``: a larger maxSkew tolerates more skew."""
    return float(cnt) * weight + float(max_skew - 1)


def go_round(x: float) -> int:
    """Go ``math.Round``: to the nearest integer, halves away from zero."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += int(math.copysign(1, x))
    return int(t)


@dataclass(frozen=True, slots=True)
class PreScoreInputs:
    """What PreScore saw: enough to compute the state later, per node or over the node table."""

    pod: Pod
    filtered: Sequence[NodeInfo]
    all_nodes: Sequence[NodeInfo]
    require_all_topologies: bool


class PreScoreState:
    """Written at PreScore under ``PreScorePodTopologySpread``; read-only afterwards.

    Built whole by ``init_pre_score_state`` (the reference), or by the plugin's PreScore with
    ``inputs`` and a ``fill`` function: the reference fields (``ignored_nodes``,
    ``tp_value_to_pod_counts``, ``weights``) are then computed on their first read, which the
    vectorised Score (``vector.py``) never makes."""

    __slots__ = ("_counts", "_fill", "_ignored", "_weights", "constraints", "inputs", "scored_ignored", "vector_scored")

    def __init__(
        self,
        constraints: list[Constraint],
        ignored_nodes: set[str],
        tp_value_to_pod_counts: list[dict[str, int]],
        weights: list[float],
    ) -> None:
        self.constraints = constraints
        self._ignored = ignored_nodes
        self._counts = tp_value_to_pod_counts
        self._weights = weights
        self._fill: Callable[[], PreScoreState] | None = None
        self.inputs: PreScoreInputs | None = None
        self.vector_scored = False
        """Whether the vectorised Score ran; then ``scored_ignored`` is the ignored mask of the
        rows it scored (None: none ignored)."""
        self.scored_ignored: BoolArray | None = None

    @classmethod
    def deferred(
        cls, constraints: list[Constraint], inputs: PreScoreInputs, fill: Callable[[], PreScoreState]
    ) -> PreScoreState:
        """A state whose reference fields are ``fill()``'s, computed on first read."""
        s = cls(constraints, set(), [], [])
        s.inputs = inputs
        s._fill = fill
        return s

    def _resolve(self) -> None:
        fill = self._fill
        if fill is not None:
            self._fill = None
            whole = fill()
            self._ignored, self._counts, self._weights = whole._ignored, whole._counts, whole._weights

    @property
    def ignored_nodes(self) -> set[str]:
        """Filtered nodes missing a topology key (only when all topologies are required)."""
        self._resolve()
        return self._ignored

    @property
    def tp_value_to_pod_counts(self) -> list[dict[str, int]]:
        """Per constraint: topology value (of a non-ignored filtered node) → matching pods;
        hostname constraints keep an empty map."""
        self._resolve()
        return self._counts

    @property
    def weights(self) -> list[float]:
        self._resolve()
        return self._weights

    def clone(self) -> PreScoreState:
        return self

    def __repr__(self) -> str:
        how = "deferred" if self._fill is not None else "computed"
        return f"<PreScoreState constraints={len(self.constraints)} {how}>"


def init_pre_score_state(
    constraints: list[Constraint], filtered: Sequence[NodeInfo], require_all_topologies: bool
) -> PreScoreState:
    """Upstream ``initPreScoreState`` once the soft constraints are known (non-empty)."""
    n = len(constraints)
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in range(n)]
    for node_info in filtered:
        node = node_info.node
        if node is None:
            continue
        labels = node.metadata.labels
        if require_all_topologies and not node_labels_match_spread_constraints(labels, constraints):
            ignored.add(node.metadata.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key != LABEL_HOSTNAME:
                counts[i].setdefault(labels.get(c.topology_key, ""), 0)
    weights = []
    for i, c in enumerate(constraints):
        size = len(filtered) - len(ignored) if c.topology_key == LABEL_HOSTNAME else len(counts[i])
        weights.append(topology_normalizing_weight(size))
    return PreScoreState(constraints, ignored, counts, weights)


def count_all_nodes(s: PreScoreState, pod: Pod, all_nodes: Sequence[NodeInfo], require_all_topologies: bool) -> None:
    """Upstream PreScore's pass over every node: fill the per-value counters."""
    eligibility = NodeEligibility(pod)
    namespace = pod.metadata.namespace
    constraints = s.constraints
    slot_of, n_slots = selector_slots(constraints)
    for node_info in all_nodes:
        node = node_info.node
        if node is None:
            continue
        labels = node.metadata.labels
        if require_all_topologies and not node_labels_match_spread_constraints(labels, constraints):
            continue
        per_slot: list[int | None] = [None] * n_slots
        for i, c in enumerate(constraints):
            counter = s.tp_value_to_pod_counts[i]
            value = labels.get(c.topology_key, "")
            if value not in counter or not eligibility.includes(c, node):
                continue  # no filtered node in that domain (or a hostname constraint), or not eligible
            got = per_slot[slot_of[i]]
            if got is None:
                got = per_slot[slot_of[i]] = count_pods_match_selector(node_info.pods, c.selector, namespace)
            counter[value] += got


def score_node(s: PreScoreState, pod: Pod, node_info: NodeInfo) -> int:
    """Upstream ``Score``: the node's raw (lower is better) spreading score."""
    node = node_info.node
    if node is None or node.metadata.name in s.ignored_nodes:
        return 0
    labels = node.metadata.labels
    score = 0.0
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            continue
        if c.topology_key == LABEL_HOSTNAME:
            cnt = count_pods_match_selector(node_info.pods, c.selector, pod.metadata.namespace)
        else:
            cnt = s.tp_value_to_pod_counts[i][value]
        score += score_for_count(cnt, c.max_skew, s.weights[i])
    return go_round(score)


def normalize_scores(s: PreScoreState, scores: list[NodeScore]) -> None:
    """Upstream ``NormalizeScore``, in place: fewer matching pods → higher score."""
    valid = [ns.score for ns in scores if ns.name not in s.ignored_nodes]
    min_score = min(valid, default=0)
    max_score = max([0, *valid])
    for ns in scores:
        if ns.name in s.ignored_nodes:
            ns.score = 0
        elif max_score == 0:
            ns.score = MAX_NODE_SCORE
        else:
            ns.score = MAX_NODE_SCORE * (max_score + min_score - ns.score) // max_score
