"""What the run's nodes cost: ``metrics.cost``, ``metrics.autoscaler`` and ``series.cost`` of every report.

``CostMeter`` is a write listener (installed by the runner on every run) reading Node writes
only. A node costs from its create write to its delete write (or the run's end), at the
``pricePerHour`` of its node group: the group is the node's ``kwok-nodegroup`` label (the
label Cluster Autoscaler's kwok cloud provider reads, ``nodegroups.fromNodeLabelKey``),
which the simulated cloud provider sets on every node it creates. A node without a priced
group (the ``nodes`` section's, or a group without ``pricePerHour``) counts in ``nodeHours``
only, at $0. A node of Karpenter's kwok provider costs the price of its offering (its
``eks-node-viewer/instance-price`` label, as the kwok provider writes it).

``metrics.cost``: ``total`` (dollars), ``nodeHours`` (every node's lifetime), ``perHour``
{``mean``: total over the run's hours, ``max``: the highest $/h the existing nodes reached}.
``metrics.autoscaler``: the Cluster Autoscaler's counters (``scaleUps``, ``scaleDowns``,
``nodesCreated``, ``nodesRemoved``, ``podsDisrupted``), zeros without one. O(1) per Node write.

``series.cost`` (``series_document``): the existing nodes and their $/h over time, per *group*:
a Cluster Autoscaler node group (``kind: nodeGroup``, its ``kwok-nodegroup`` label), a Karpenter
instance type and capacity type (``kind: instanceType``, ``name`` ``<instanceType>/<capacityType>``,
from the node's ``node.kubernetes.io/instance-type`` and ``karpenter.sh/capacity-type`` labels), or
the nodes no autoscaler manages (``kind: unmanaged``, at $0). The meter is a sampler of the
``Observer`` (``Observer.samplers``): it records every group's node count and $/h at each of the
series' samples ``t[i]``, as the observer records the pods (before the write that passes
``t[i]`` applies), and keeps every k-th when the observer coarsens, so the lists align with
``series.t``. $/h is summed in integer micro-dollars (no drift from adding and removing float
prices). Memory: two ints per group per sample (groups: the scenario's node groups, or the
instance types × capacity types Karpenter used). The document keeps at most ``MAX_GROUPS``
groups: past it the ones with the fewest node-hours are summed into one ``kind: other`` group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from emulator.base.api.core import Node
from emulator.base.apiserver.server import Verb, WriteRecord

__all__ = ["COUNTERS", "MAX_GROUPS", "NODE_GROUP_LABEL", "CostMeter"]

NODE_GROUP_LABEL: Final = "kwok-nodegroup"
PRICE_LABEL: Final = "eks-node-viewer/instance-price"
"""Karpenter's kwok provider's price label (``NodeViewerLabelKey``), on every node it creates."""
INSTANCE_TYPE_LABEL: Final = "node.kubernetes.io/instance-type"
CAPACITY_TYPE_LABEL: Final = "karpenter.sh/capacity-type"
COUNTERS: Final = ("scaleUps", "scaleDowns", "nodesCreated", "nodesRemoved", "podsDisrupted")
MAX_GROUPS: Final = 12
"""Groups in ``series.cost`` at most (the last one ``other`` past it): a page's legend stays readable."""
KIND_ORDER: Final = {"nodeGroup": 0, "instanceType": 1, "unmanaged": 2}
MICRO: Final = 1_000_000

GroupKey = tuple[str, str, str]
"""(kind, name, capacity type): ``("nodeGroup", "small", "")``, ``("instanceType", "c-4x", "spot")``."""
UNMANAGED: Final[GroupKey] = ("unmanaged", "unmanaged", "")


@dataclass(slots=True)
class _Group:
    """One group's nodes now, its exact totals, and its samples."""

    nodes: int = 0
    rate: int = 0
    """$/h of its existing nodes, in micro-dollars."""
    seconds: float = 0.0
    dollars: float = 0.0
    counts: list[int] = field(default_factory=list)
    rates: list[int] = field(default_factory=list)


def group_of(node: Node) -> GroupKey:
    """The group a node is counted in (module docstring)."""
    labels = node.metadata.labels
    if group := labels.get(NODE_GROUP_LABEL):
        return "nodeGroup", group, ""
    if PRICE_LABEL in labels:  # a node of Karpenter's kwok provider
        return "instanceType", labels.get(INSTANCE_TYPE_LABEL, ""), labels.get(CAPACITY_TYPE_LABEL, "")
    return UNMANAGED


class CostMeter:
    """Dollars and node-hours integrated over each node's lifetime, and their series (module docstring)."""

    def __init__(self, prices: Mapping[str, float]) -> None:
        self.prices = dict(prices)
        self.live: dict[str, tuple[float, float, GroupKey]] = {}
        """Existing node -> (created at, price per hour, its group)."""
        self.rate = 0.0
        self.max_rate = 0.0
        self.dollars = 0.0
        self.seconds = 0.0
        self.groups: dict[GroupKey, _Group] = {("nodeGroup", name, ""): _Group() for name in self.prices}
        """The scenario's node groups first (in its order, even unused), then as nodes appear."""
        self.samples = 0

    def __call__(self, rec: WriteRecord) -> None:
        if rec.kind != "Node":
            return
        if rec.old is None and rec.new is not None:
            self._created(rec.time, rec.new)
        elif rec.new is None and rec.old is not None:
            self._gone(rec.time, rec.old.metadata.name)

    def write_many(self, verb: Verb, kind: str, time: float, agent: str, writes: list[tuple[Any, Any, int]]) -> None:
        """A batch of writes of one kind (the Lease renewals of an instant): only Nodes count."""
        if kind == "Node":
            for old, new, rev in writes:
                self(WriteRecord(rev, time, verb, kind, old, new, agent))

    def _created(self, t: float, node: Node) -> None:
        price = self.prices.get(node.metadata.labels.get(NODE_GROUP_LABEL, ""), 0.0)
        if PRICE_LABEL in node.metadata.labels:  # a node of Karpenter's kwok provider: its offering's price
            try:
                price = float(node.metadata.labels[PRICE_LABEL])
            except ValueError:
                price = 0.0
        key = group_of(node)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = _Group(counts=[0] * self.samples, rates=[0] * self.samples)
        group.nodes += 1
        group.rate += round(price * MICRO)
        self.live[node.metadata.name] = (t, price, key)
        self.rate += price
        self.max_rate = max(self.max_rate, self.rate)

    def _gone(self, t: float, name: str) -> None:
        entry = self.live.pop(name, None)
        if entry is None:
            return
        start, price, key = entry
        group = self.groups[key]
        self.seconds += t - start
        self.dollars += (t - start) / 3600.0 * price
        self.rate -= price
        group.nodes -= 1
        group.rate -= round(price * MICRO)
        group.seconds += t - start
        group.dollars += (t - start) / 3600.0 * price

    # --- the Observer's sampler -------------------------------------------------------------

    def record(self) -> None:
        """One sample of every group (the observer's sample ``t[i]``)."""
        for g in self.groups.values():
            g.counts.append(g.nodes)
            g.rates.append(g.rate)
        self.samples += 1

    def keep_every(self, k: int) -> None:
        """The observer coarsened: keep samples 0, k, 2k, ..."""
        for g in self.groups.values():
            g.counts[:] = g.counts[::k]
            g.rates[:] = g.rates[::k]
        self.samples = len(range(0, self.samples, k))

    # --- documents --------------------------------------------------------------------------

    def document(self, end: float) -> dict[str, Any]:
        """``metrics.cost`` at the run's end ``end`` (the live nodes counted up to it)."""
        dollars, seconds = self.dollars, self.seconds
        for start, price, _ in self.live.values():
            seconds += end - start
            dollars += (end - start) / 3600.0 * price
        hours = end / 3600.0
        return {
            "total": round(dollars, 6),
            "nodeHours": round(seconds / 3600.0, 6),
            "perHour": {"mean": round(dollars / hours, 6) if hours > 0 else 0.0, "max": round(self.max_rate, 6)},
        }

    def series_document(self, end: float) -> dict[str, Any]:
        """``series.cost`` at the run's end ``end``, after the observer filled its samples up to it."""
        totals: dict[GroupKey, tuple[float, float]] = {key: (g.seconds, g.dollars) for key, g in self.groups.items()}
        for start, price, key in self.live.values():
            seconds, dollars = totals[key]
            totals[key] = (seconds + end - start, dollars + (end - start) / 3600.0 * price)
        index = {key: i for i, key in enumerate(self.groups)}
        order = sorted(self.groups, key=lambda k: (KIND_ORDER[k[0]], index[k] if k[0] == "nodeGroup" else 0, k[1:]))
        if len(order) > MAX_GROUPS:
            rank = {key: i for i, key in enumerate(order)}
            ranked = sorted(order, key=lambda k: (-totals[k][0], rank[k]))
            kept = set(ranked[: MAX_GROUPS - 1])
            folded = [k for k in order if k not in kept]
            order = [k for k in order if k in kept]
        else:
            folded = []
        n = self.samples
        groups = [self._entry(key, totals[key], [self.groups[key]], n) for key in order]
        if folded:
            members = [self.groups[k] for k in folded]
            groups.append(self._entry(("other", "other", ""), _sum(totals, folded), members, n))
            groups[-1]["members"] = len(folded)
        every = [*self.groups.values()]
        return {
            "groups": groups,
            "nodes": [sum(g.counts[i] for g in every) for i in range(n)],
            "perHour": [round(sum(g.rates[i] for g in every) / MICRO, 6) for i in range(n)],
        }

    @staticmethod
    def _entry(key: GroupKey, total: tuple[float, float], members: list[_Group], n: int) -> dict[str, Any]:
        kind, name, capacity = key
        entry: dict[str, Any] = {"name": f"{name}/{capacity}" if kind == "instanceType" else name, "kind": kind}
        if kind == "instanceType":
            entry["instanceType"], entry["capacityType"] = name, capacity
        entry["nodes"] = [sum(g.counts[i] for g in members) for i in range(n)]
        entry["perHour"] = [round(sum(g.rates[i] for g in members) / MICRO, 6) for i in range(n)]
        entry["nodeHours"] = round(total[0] / 3600.0, 6)
        entry["total"] = round(total[1], 6)
        return entry


def _sum(totals: Mapping[GroupKey, tuple[float, float]], keys: list[GroupKey]) -> tuple[float, float]:
    return sum(totals[k][0] for k in keys), sum(totals[k][1] for k in keys)
