"""``ImageLocality`` (upstream ``plugins/imagelocality/image_locality.go``): Score.

What this module owns: preferring nodes that already hold the pod's container images, weighted
by image size and damped by how widely each image has spread (to avoid piling pods onto the few
nodes that have it: the "node heating" problem).

For each init and regular container whose image, normalized (``normalized_image_name``:
``:latest`` appended when no tag follows the last ``/``), is in ``node_info.image_states``::

    scaled = int(size * (num_nodes_with_image / total_nodes))     # float64, as upstream
    sum    = Σ scaled
    max_threshold = 1000 MiB × (number of init + regular containers)
    sum    = clamp(sum, 23 MiB, max_threshold)
    score  = 100 * (sum - 23 MiB) // (max_threshold - 23 MiB)

``total_nodes`` is the node count of the cycle's snapshot
(``handle.snapshot_shared_lister().node_info_list``). No NormalizeScore: the score is already in
[0, 100]. No events: a Score plugin never rejects a pod.

``score_all`` (vectorised): per image, the scaled score of every node as a ``NodeTable`` derived
column (``depends="images"``: re-evaluated when a node's re-snapshotted image counts differ from
the row's last ones, or its Node object is new), summed over the containers and clamped/scaled on arrays.

It does not own the image bookkeeping (``ImageStateSummary`` per node, kept by the cache and
snapshot) nor the name normalization (``agents.scheduler.cache``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from agents.scheduler.cache import normalized_image_name
from agents.scheduler.framework.interface import Handle, RowScore
from agents.scheduler.framework.node_table import IntArray, NodeTable
from agents.scheduler.framework.types import (
    MAX_NODE_SCORE,
    SUCCESS,
    Code,
    CycleState,
    ImageStateSummary,
    NodeInfo,
    Status,
)
from agents.scheduler.plugins.helper import RowScoreMemo
from emulator.base.api.core import Pod

__all__ = [
    "MAX_CONTAINER_THRESHOLD",
    "MB",
    "MIN_THRESHOLD",
    "NAME",
    "ImageLocality",
    "calculate_priority",
    "scaled_image_score",
    "sum_image_scores",
]

NAME: Final = "ImageLocality"
MB: Final = 1024 * 1024
MIN_THRESHOLD: Final = 23 * MB
MAX_CONTAINER_THRESHOLD: Final = 1000 * MB


def scaled_image_score(state: ImageStateSummary, total_num_nodes: int) -> int:
    """The image's size scaled by the fraction of nodes holding it (float64 then truncated)."""
    spread = float(state.num_nodes) / float(total_num_nodes)
    return int(float(state.size) * spread)


def sum_image_scores(node_info: NodeInfo, pod: Pod, total_num_nodes: int) -> int:
    """Σ of ``scaled_image_score`` over the pod's init and regular containers present on the node."""
    names = [normalized_image_name(c.image) for c in (*pod.spec.init_containers, *pod.spec.containers)]
    return _sum_scores(node_info, names, total_num_nodes)


def _sum_scores(node_info: NodeInfo, names: Sequence[str], total_num_nodes: int) -> int:
    states = node_info.image_states
    total = 0
    for name in names:
        state = states.get(name)
        if state is not None:
            total += scaled_image_score(state, total_num_nodes)
    return total


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Clamp ``sum_scores`` to [23 MiB, 1000 MiB × containers] and scale it to [0, 100]."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def _scaled(image: str, total_num_nodes: int) -> Callable[[NodeInfo], int]:
    def fn(node_info: NodeInfo) -> int:
        state = node_info.image_states.get(image)
        return scaled_image_score(state, total_num_nodes) if state is not None else 0

    return fn


def _score_rows(names: tuple[str, ...], total_num_nodes: int, table: NodeTable, rows: IntArray) -> IntArray | None:
    """``score_all`` for a pod with these (normalized) container images."""
    num_containers = len(names)
    if total_num_nodes == 0:
        return np.zeros(len(rows), dtype=np.int64)
    if num_containers == 0:
        return None
    if not table.any_images:
        # Every sum is 0, below the threshold: the lowest score everywhere.
        return np.zeros(len(rows), dtype=np.int64)
    sums = np.zeros(len(rows), dtype=np.int64)
    for name in names:
        sums += table.derived(("ImageLocality", name, total_num_nodes), _scaled(name, total_num_nodes), "images")[rows]
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = np.where(sums < MIN_THRESHOLD, MIN_THRESHOLD, np.minimum(sums, max_threshold))
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        self._handle = handle
        self._row_scores = RowScoreMemo()
        """``score_row``'s answer per (container images, number of nodes)."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        if self._handle is None:
            return 0, Status(Code.Error, "ImageLocality needs a framework handle for the snapshot")
        total_num_nodes = len(self._handle.snapshot_shared_lister().node_info_list)
        if total_num_nodes == 0:
            return 0, SUCCESS
        num_containers = len(pod.spec.init_containers) + len(pod.spec.containers)
        return calculate_priority(sum_image_scores(node_info, pod, total_num_nodes), num_containers), SUCCESS

    def score_all(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None:
        if self._handle is None:
            return None
        total_num_nodes = len(self._handle.snapshot_shared_lister().node_info_list)
        names = tuple(normalized_image_name(c.image) for c in (*pod.spec.init_containers, *pod.spec.containers))
        return _score_rows(names, total_num_nodes, table, rows)

    def score_row(self, state: CycleState, pod: Pod, table: NodeTable) -> RowScore | None:
        """No NormalizeScore: a node's score is a function of its image states (frozen when the
        snapshot cloned it), the pod's images and the number of nodes."""
        if self._handle is None:
            return None  # ``score`` fails
        total_num_nodes = len(self._handle.snapshot_shared_lister().node_info_list)
        spec = pod.spec
        if spec.init_containers:
            images = tuple([c.image for c in (*spec.init_containers, *spec.containers)])
        else:
            images = tuple([c.image for c in spec.containers])
        if not images:
            return None
        kept = self._row_scores.peek((images, total_num_nodes))
        if kept is not None:
            return kept

        def make() -> RowScore:
            names = tuple(normalized_image_name(image) for image in images)

            def one(info: NodeInfo) -> int:
                if total_num_nodes == 0:
                    return 0
                return calculate_priority(_sum_scores(info, names, total_num_nodes), len(names))

            return RowScore(
                (self, names, total_num_nodes),
                one,
                lambda t, at: _score_rows(names, total_num_nodes, t, at),
                reads_node=False,  # image states only
            )

        return self._row_scores.get((images, total_num_nodes), make)

    def score_extensions(self) -> None:
        return None

    def __repr__(self) -> str:
        return "<ImageLocality>"
