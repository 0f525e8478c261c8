"""Similar node groups and the balanced scale-up (``processors/nodegroupset/``, 1.34).

With ``--balance-similar-node-groups`` (default false) a scale-up is split between the chosen
group and the groups *similar* to it, so that zones (or any other groups that differ only in
labels that do not matter) stay the same size.

Similarity is a ``Comparator`` over two node infos (a node and the pods on it; here a group's
template node with its DaemonSet pods, ``daemonsets``):

- ``generic_comparator`` (``compare_nodegroups.go`` ``CreateGenericNodeInfoComparator``):
  every capacity resource present on both, equal — but memory, within
  ``memoryDifferenceRatio`` (0.015) of the larger; allocatable within
  ``maxAllocatableDifferenceRatio`` (0.05) resource by resource, and free (allocatable minus
  the pods' requests, over cpu, memory, pods, ephemeral-storage and the requested scalar
  resources) within ``maxFreeDifferenceRatio`` (0.05) — "within r" meaning
  ``larger - smaller <= larger * r`` in milli-units, a resource missing on one side failing;
  every label equal on both but ``BASIC_IGNORED_LABELS`` (hostname, the zone and region
  labels, ``beta.kubernetes.io/fluentd-ds-ready``, ``kops.k8s.io/instancegroup``) and the
  ``--balancing-ignore-label`` ones. A node without ``status.allocatable`` is read with its
  capacity as allocatable (as the scheduler here reads it).
- ``label_comparator`` (``label_nodegroups.go``): with ``--balancing-label`` only those labels
  count: each present on both nodes, with equal values.

``find_similar_node_groups`` (``balancing_processor.go`` ``FindSimilarNodeGroups``): the other
groups, in the cloud's order, whose node info the comparator finds similar to the group's.
``balance_scale_up`` (``BalanceScaleUpBetweenGroups``): the new nodes go one at a time to the
smallest group with room, so sizes even out (groups at their max are left out; more nodes than
the groups' room are capped to it). Upstream sorts by current size with ``sort.Slice``, stable
for the few groups it sees; the sort here is stable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from emulator.base.api.core import Node, Pod
from emulator.base.api.quantity import Quantity
from emulator.base.api.resources import pod_requests

__all__ = [
    "BASIC_IGNORED_LABELS",
    "Comparator",
    "DifferenceRatios",
    "NodeInfo",
    "ScaleUpInfo",
    "balance_scale_up",
    "find_similar_node_groups",
    "generic_comparator",
    "label_comparator",
]

BASIC_IGNORED_LABELS: Final = (
    "kubernetes.io/hostname",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "beta.kubernetes.io/fluentd-ds-ready",
    "kops.k8s.io/instancegroup",
)
"""``BasicIgnoredLabels``: labels expected to differ between otherwise similar groups."""

DEFAULT_MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO: Final = 0.015
DEFAULT_MAX_ALLOCATABLE_DIFFERENCE_RATIO: Final = 0.05
DEFAULT_MAX_FREE_DIFFERENCE_RATIO: Final = 0.05
FREE_RESOURCES: Final = ("cpu", "memory", "pods", "ephemeral-storage")
"""``ResourceToResourceList``: the resources a node info's requests always list."""


@dataclass(frozen=True, slots=True)
class DifferenceRatios:
    """``config.NodeGroupDifferenceRatios`` (flags ``--memory-difference-ratio``,
    ``--max-allocatable-difference-ratio``, ``--max-free-difference-ratio``)."""

    max_capacity_memory: float = DEFAULT_MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO
    max_allocatable: float = DEFAULT_MAX_ALLOCATABLE_DIFFERENCE_RATIO
    max_free: float = DEFAULT_MAX_FREE_DIFFERENCE_RATIO


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """A node and the pods on it (upstream ``framework.NodeInfo``, reduced)."""

    node: Node
    pods: Sequence[Pod] = ()


Comparator = Callable[[NodeInfo, NodeInfo], bool]


@dataclass(slots=True)
class ScaleUpInfo:
    """``nodegroupset.ScaleUpInfo``: one group's resize, printed ``{group 1->3 (max: 10)}``."""

    group: str
    current: int
    new: int
    max: int

    def __str__(self) -> str:
        return f"{{{self.group} {self.current}->{self.new} (max: {self.max})}}"


def _within(values: Sequence[int], ratio: float) -> bool:
    """``resourceListWithinTolerance``: two values, the smaller within ``ratio`` of the larger."""
    if len(values) != 2:
        return False
    larger, smaller = float(max(values)), float(min(values))
    return larger - smaller <= larger * ratio


def _milli(resources: Mapping[str, Quantity]) -> dict[str, int]:
    return {name: q.milli for name, q in resources.items()}


def _requested_milli(pods: Sequence[Pod]) -> dict[str, int]:
    total: dict[str, int] = {}
    for p in pods:
        for name, v in pod_requests(p).items():
            total[name] = total.get(name, 0) + (v if name == "cpu" else v * 1000)
    return total


def _collect(into: dict[str, list[int]], values: Mapping[str, int]) -> None:
    for name, v in values.items():
        into.setdefault(name, []).append(v)


def is_similar(n1: NodeInfo, n2: NodeInfo, ignored: frozenset[str], ratios: DifferenceRatios) -> bool:
    """``IsCloudProviderNodeInfoSimilar`` (module docstring)."""
    capacity: dict[str, list[int]] = {}
    allocatable: dict[str, list[int]] = {}
    free: dict[str, list[int]] = {}
    for info in (n1, n2):
        status = info.node.status
        _collect(capacity, _milli(status.capacity))
        alloc = _milli(status.allocatable or status.capacity)
        _collect(allocatable, alloc)
        requested = _requested_milli(info.pods)
        names = [*FREE_RESOURCES, *(r for r in requested if r not in FREE_RESOURCES)]
        _collect(free, {r: alloc.get(r, 0) - requested.get(r, 0) for r in names})
    for name, values in capacity.items():
        if len(values) != 2:
            return False
        if name == "memory":
            if not _within(values, ratios.max_capacity_memory):
                return False
        elif values[0] != values[1]:
            return False
    if not all(_within(v, ratios.max_allocatable) for v in allocatable.values()):
        return False
    if not all(_within(v, ratios.max_free) for v in free.values()):
        return False
    return _labels_equal(n1.node, n2.node, ignored)


def _labels_equal(a: Node, b: Node, ignored: frozenset[str]) -> bool:
    """``compareLabels``: every label not ignored is on both nodes with one value."""
    la = {k: v for k, v in a.metadata.labels.items() if k not in ignored}
    lb = {k: v for k, v in b.metadata.labels.items() if k not in ignored}
    return la == lb


def generic_comparator(extra_ignored: Sequence[str] = (), ratios: DifferenceRatios | None = None) -> Comparator:
    """``CreateGenericNodeInfoComparator``."""
    ignored = frozenset((*BASIC_IGNORED_LABELS, *extra_ignored))
    r = ratios if ratios is not None else DifferenceRatios()
    return lambda n1, n2: is_similar(n1, n2, ignored, r)


def label_comparator(labels: Sequence[str]) -> Comparator:
    """``CreateLabelNodeInfoComparator``: each of ``labels`` on both nodes, equal."""

    def same(n1: NodeInfo, n2: NodeInfo) -> bool:
        l1, l2 = n1.node.metadata.labels, n2.node.metadata.labels
        return all(k in l1 and k in l2 and l1[k] == l2[k] for k in labels)

    return same


def find_similar_node_groups(
    comparator: Comparator, group: str, groups: Sequence[str], infos: Mapping[str, NodeInfo]
) -> list[str]:
    """``FindSimilarNodeGroups``: the groups (of ``groups``, in order, not ``group`` itself)
    whose node info is similar to ``group``'s; a group without one is skipped."""
    mine = infos[group]
    return [g for g in groups if g != group and g in infos and comparator(mine, infos[g])]


def balance_scale_up(groups: Sequence[tuple[str, int, int]], new_nodes: int) -> list[ScaleUpInfo]:
    """``BalanceScaleUpBetweenGroups`` over ``(group, target size, max size)``: the resizes
    (groups that grow only), ``new_nodes`` capped to the groups' room."""
    if not groups:
        raise ValueError("Can't balance scale up between 0 groups")
    infos = [ScaleUpInfo(g, current, current, mx) for g, current, mx in groups if current != mx]
    capacity = sum(max(0, i.max - i.current) for i in infos)
    new_nodes = min(new_nodes, capacity)
    infos.sort(key=lambda i: i.current)
    start = current = 0
    while new_nodes > 0:
        info = infos[current]
        if info.new < info.max:
            info.new += 1
            new_nodes -= 1
        else:  # full: out of the rotation
            infos[start], infos[current] = infos[current], infos[start]
            start += 1
        info = infos[current]  # upstream's pointer is to the slot, which now holds the swapped one
        if current < len(infos) - 1 and info.new > infos[current + 1].new:
            current += 1
        else:
            current = start
    return [i for i in infos if i.new != i.current]
