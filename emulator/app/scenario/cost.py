"""What the run's nodes cost: ``metrics.cost`` and ``metrics.autoscaler`` of every report.

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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from emulator.base.api.core import Node
from emulator.base.apiserver.server import Verb, WriteRecord

__all__ = ["COUNTERS", "NODE_GROUP_LABEL", "CostMeter"]

NODE_GROUP_LABEL: Final = "kwok-nodegroup"
PRICE_LABEL: Final = "eks-node-viewer/instance-price"
"""Karpenter's kwok provider's price label (``NodeViewerLabelKey``), on every node it creates."""
COUNTERS: Final = ("scaleUps", "scaleDowns", "nodesCreated", "nodesRemoved", "podsDisrupted")


class CostMeter:
    """Dollars and node-hours integrated over each node's lifetime (module docstring)."""

    def __init__(self, prices: Mapping[str, float]) -> None:
        self.prices = dict(prices)
        self.live: dict[str, tuple[float, float]] = {}
        """Existing node -> (created at, price per hour)."""
        self.rate = 0.0
        self.max_rate = 0.0
        self.dollars = 0.0
        self.seconds = 0.0

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
        self.live[node.metadata.name] = (t, price)
        self.rate += price
        self.max_rate = max(self.max_rate, self.rate)

    def _gone(self, t: float, name: str) -> None:
        entry = self.live.pop(name, None)
        if entry is None:
            return
        start, price = entry
        self.seconds += t - start
        self.dollars += (t - start) / 3600.0 * price
        self.rate -= price

    def document(self, end: float) -> dict[str, Any]:
        """``metrics.cost`` at the run's end ``end`` (the live nodes counted up to it)."""
        dollars, seconds = self.dollars, self.seconds
        for start, price in self.live.values():
            seconds += end - start
            dollars += (end - start) / 3600.0 * price
        hours = end / 3600.0
        return {
            "total": round(dollars, 6),
            "nodeHours": round(seconds / 3600.0, 6),
            "perHour": {"mean": round(dollars / hours, 6) if hours > 0 else 0.0, "max": round(self.max_rate, 6)},
        }
