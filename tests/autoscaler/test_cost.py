"""``metrics.cost``: dollars integrated over each node's lifetime at its node group's price
(``kwok-nodegroup`` label); nodes without a priced group count node-hours only."""

from __future__ import annotations

from emulator.app.scenario.cost import NODE_GROUP_LABEL, CostMeter
from emulator.base.api.core import Node
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver.server import Verb, WriteRecord


def _node(name: str, group: str = "") -> Node:
    return Node(metadata=ObjectMeta(name=name, labels={NODE_GROUP_LABEL: group} if group else {}))


def _write(t: float, old: Node | None, new: Node | None) -> WriteRecord:
    verb: Verb = "create" if old is None else "delete" if new is None else "update"
    return WriteRecord(revision=0, time=t, verb=verb, kind="Node", old=old, new=new)


def test_cost_integrates_each_node_lifetime() -> None:
    meter = CostMeter({"small": 0.1, "big": 0.4})
    a, b, c = _node("a", "small"), _node("b", "big"), _node("c")
    meter(_write(0.0, None, a))
    meter(_write(1800.0, None, b))  # $/h 0.5 from here
    meter(_write(1800.0, None, c))  # no price: node-hours only
    meter(_write(3600.0, b, None))
    doc = meter.document(7200.0)
    # a: 2 h * 0.1; b: 0.5 h * 0.4; c: 1.5 h * 0
    assert doc["total"] == 0.4
    assert doc["nodeHours"] == 4.0
    assert doc["perHour"] == {"mean": 0.2, "max": 0.5}


def test_no_nodes_cost_nothing() -> None:
    assert CostMeter({}).document(0.0) == {"total": 0.0, "nodeHours": 0.0, "perHour": {"mean": 0.0, "max": 0.0}}
