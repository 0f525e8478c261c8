"""The order in which the scheduler visits nodes: upstream ``backend/cache/node_tree.go``.

What this module owns: ``NodeTree``, node names grouped by zone, and ``get_zone_key``.
``NodeTree.list()`` gives the snapshot's ``node_info_list`` order: zones in the order they first
appeared, and within that, round-robin: the first node of every zone, then the second node of
every zone, and so on (a zone that runs out is skipped). With zones ``a`` = [a1, a2, a3] and
``b`` = [b1] the order is a1, b1, a2, a3. Together with ``nextStartNodeIndex`` this decides
which nodes a scheduling cycle evaluates when it stops after ``numFeasibleNodesToFind`` nodes.

The zone key is upstream ``component-helpers/node/topology.GetZoneKey``: the beta
``failure-domain.beta.kubernetes.io/{zone,region}`` labels win when present, else the
``topology.kubernetes.io/{zone,region}`` labels; ``region + ":\\x00:" + zone``; "" when both
are empty (all zone-less nodes share the "" zone).

What it does not own: NodeInfos (``cache.py``), the snapshot (``snapshot.py``).
Not thread-safe and needs not be: the cache owns it and runs in one task.
"""

from __future__ import annotations

from itertools import zip_longest
from typing import Final

from emulator.base.api.core import Node

__all__ = [
    "LABEL_FAILURE_DOMAIN_BETA_REGION",
    "LABEL_FAILURE_DOMAIN_BETA_ZONE",
    "LABEL_TOPOLOGY_REGION",
    "LABEL_TOPOLOGY_ZONE",
    "NodeTree",
    "get_zone_key",
]

LABEL_TOPOLOGY_ZONE: Final = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION: Final = "topology.kubernetes.io/region"
LABEL_FAILURE_DOMAIN_BETA_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION: Final = "failure-domain.beta.kubernetes.io/region"


def get_zone_key(node: Node) -> str:
    """Upstream ``GetZoneKey``: ``region + ":\\x00:" + zone``, or "" when the node has neither."""
    labels = node.metadata.labels
    if not labels:
        return ""
    zone = labels.get(LABEL_FAILURE_DOMAIN_BETA_ZONE)
    if zone is None:
        zone = labels.get(LABEL_TOPOLOGY_ZONE, "")
    region = labels.get(LABEL_FAILURE_DOMAIN_BETA_REGION)
    if region is None:
        region = labels.get(LABEL_TOPOLOGY_REGION, "")
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone


class NodeTree:
    """Node names per zone; zones kept in insertion order."""

    __slots__ = ("_num_nodes", "_tree")

    def __init__(self, nodes: list[Node] | None = None) -> None:
        self._tree: dict[str, list[str]] = {}
        """zone key -> node names in insertion order; dict order is the zone order."""
        self._num_nodes = 0
        for node in nodes or ():
            self.add_node(node)

    @property
    def num_nodes(self) -> int:
        return self._num_nodes

    @property
    def zones(self) -> list[str]:
        return list(self._tree)

    def __len__(self) -> int:
        return self._num_nodes

    def add_node(self, node: Node) -> bool:
        """Add the node to its zone; ``False`` (and no change) if it is already there."""
        zone = get_zone_key(node)
        name = node.metadata.name
        names = self._tree.get(zone)
        if names is None:
            self._tree[zone] = [name]
        elif name in names:
            return False
        else:
            names.append(name)
        self._num_nodes += 1
        return True

    def remove_node(self, node: Node) -> bool:
        """Remove the node from the zone its labels name; ``False`` if it is not there.

        Upstream's error for the ``False`` case: ``node "<name>" in group "<zone>" was not found``.
        """
        zone = get_zone_key(node)
        names = self._tree.get(zone)
        if names is None:
            return False
        try:
            names.remove(node.metadata.name)
        except ValueError:
            return False
        if not names:
            del self._tree[zone]
        self._num_nodes -= 1
        return True

    def update_node(self, old: Node | None, new: Node) -> None:
        """Move the node when its zone key changed (its name cannot change in an update).

        ``old=None`` just adds ``new`` (upstream would skip a zone-less node there).
        """
        if old is None:
            self.add_node(new)
            return
        if get_zone_key(old) == get_zone_key(new):
            return
        self.remove_node(old)  # as upstream: whether the old node was there does not matter
        self.add_node(new)

    def list(self) -> list[str]:
        """All node names, round-robin across zones (see the module docstring)."""
        rows = self._tree.values()
        if len(rows) == 1:
            return list(next(iter(rows)))
        return [name for row in zip_longest(*rows) for name in row if name is not None]

    def __repr__(self) -> str:
        return f"<NodeTree zones={len(self._tree)} nodes={self._num_nodes}>"
