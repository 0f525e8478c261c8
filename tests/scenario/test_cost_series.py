"""``series.cost``: the nodes and their $/h per node group or instance type, sampled on the
observer's clock (``CostMeter`` as an ``Observer`` sampler). Fed by hand (exact values,
coarsening, the group cap), then on the shipped autoscaler scenarios (every sample checked
against the Node writes of the run; the totals against ``metrics.cost``; determinism)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from emulator.app.scenario import cost as cost_module
from emulator.app.scenario import observe_samples
from emulator.app.scenario.cost import NODE_GROUP_LABEL, PRICE_LABEL, CostMeter, group_of
from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.observe import Observer
from emulator.app.scenario.observe_series import series
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.api.core import Node
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver.server import WriteRecord

ROOT = Path(__file__).resolve().parents[2]
CA_BURST = ROOT / "scenarios" / "cluster-autoscaler-burst.yaml"
KARPENTER_BURST = ROOT / "scenarios" / "karpenter-burst.yaml"


def _ca(name: str, group: str) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels={NODE_GROUP_LABEL: group}))


def _karpenter(name: str, instance_type: str, capacity: str, price: str) -> Node:
    labels = {
        "node.kubernetes.io/instance-type": instance_type,
        "karpenter.sh/capacity-type": capacity,
        PRICE_LABEL: price,
    }
    return Node(metadata=ObjectMeta(name=name, labels=labels))


class Feed:
    """Node writes to an ``Observer`` and its ``CostMeter``, in the runner's listener order."""

    def __init__(self, prices: dict[str, float]) -> None:
        self.obs = Observer()
        self.meter = CostMeter(prices)
        self.obs.samplers.append(self.meter)
        self.rev = 0
        self.nodes: dict[str, Node] = {}

    def _write(self, t: float, old: Node | None, new: Node | None) -> None:
        self.rev += 1
        rec = WriteRecord(self.rev, t, "create" if old is None else "delete", "Node", old, new)
        self.obs(rec)
        self.meter(rec)

    def create(self, t: float, node: Node) -> None:
        self.nodes[node.metadata.name] = node
        self._write(t, None, node)

    def delete(self, t: float, name: str) -> None:
        self._write(t, self.nodes.pop(name), None)

    def document(self, end: float) -> tuple[dict[str, Any], dict[str, Any]]:
        doc = series(self.obs, end)
        return doc, self.meter.series_document(end)


def test_groups_sampled_at_each_t_before_the_write_that_passes_it() -> None:
    feed = Feed({"small": 0.1, "large": 0.4})
    feed.create(0.0, Node(metadata=ObjectMeta(name="static")))
    feed.create(1.5, _ca("small-0", "small"))
    feed.create(2.0, _ca("small-1", "small"))  # at exactly t[2]: in sample 2
    feed.create(3.5, _karpenter("spot-a", "c-2x", "spot", "0.05"))
    feed.delete(4.0, "small-0")
    doc, cost = feed.document(5.0)
    assert doc["t"] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    by_name = {g["name"]: g for g in cost["groups"]}
    assert [g["name"] for g in cost["groups"]] == ["small", "large", "c-2x/spot", "unmanaged"]
    assert [g["kind"] for g in cost["groups"]] == ["nodeGroup", "nodeGroup", "instanceType", "unmanaged"]
    assert by_name["c-2x/spot"]["instanceType"] == "c-2x"
    assert by_name["c-2x/spot"]["capacityType"] == "spot"
    assert by_name["small"]["nodes"] == [0, 0, 2, 2, 1, 1]
    assert by_name["small"]["perHour"] == [0.0, 0.0, 0.2, 0.2, 0.1, 0.1]
    assert by_name["large"]["nodes"] == [0] * 6
    assert by_name["c-2x/spot"]["nodes"] == [0, 0, 0, 0, 1, 1]
    assert by_name["unmanaged"]["nodes"] == [1] * 6
    assert by_name["unmanaged"]["perHour"] == [0.0] * 6
    assert cost["nodes"] == [1, 1, 3, 3, 3, 3]
    assert cost["perHour"] == [0.0, 0.0, 0.2, 0.2, 0.15, 0.15]
    # small-0 1.5 s to 4 s, small-1 2 s to 5 s: 5.5 s at $0.1/h
    assert by_name["small"]["nodeHours"] == round(5.5 / 3600, 6)
    assert by_name["small"]["total"] == round(5.5 / 3600 * 0.1, 6)
    assert sum(g["total"] for g in cost["groups"]) == pytest.approx(feed.meter.document(5.0)["total"], abs=1e-6)


def test_group_of_a_node() -> None:
    assert group_of(_ca("n", "small")) == ("nodeGroup", "small", "")
    assert group_of(_karpenter("n", "c-1x", "on-demand", "0.1")) == ("instanceType", "c-1x", "on-demand")
    assert group_of(Node(metadata=ObjectMeta(name="n"))) == ("unmanaged", "unmanaged", "")


def test_samples_coarsen_with_the_observer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(observe_samples, "MAX_SAMPLES", 16)
    feed = Feed({"small": 1.0})
    for i in range(40):
        feed.create(i + 0.5, _ca(f"small-{i}", "small"))
    doc, cost = feed.document(40.0)
    assert doc["interval"] == 10.0
    assert doc["t"] == [0.0, 10.0, 20.0, 30.0, 40.0]
    (small,) = cost["groups"]
    assert small["nodes"] == [0, 10, 20, 30, 40]
    assert small["perHour"] == [0.0, 10.0, 20.0, 30.0, 40.0]
    assert cost["nodes"] == small["nodes"]


def test_a_group_appearing_after_coarsening_is_padded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(observe_samples, "MAX_SAMPLES", 8)
    feed = Feed({})
    feed.create(0.5, Node(metadata=ObjectMeta(name="static")))
    feed.create(25.0, _karpenter("k", "c-1x", "spot", "0.5"))
    doc, cost = feed.document(30.0)
    n = len(doc["t"])
    for g in cost["groups"]:
        assert len(g["nodes"]) == len(g["perHour"]) == n
    assert cost["groups"][0]["nodes"][-1] == 1


def test_past_the_cap_the_smallest_groups_are_summed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cost_module, "MAX_GROUPS", 3)
    feed = Feed({})
    for i, start in enumerate((0.0, 1.0, 2.0, 3.0)):  # type-0 lives longest
        feed.create(start, _karpenter(f"k{i}", f"type-{i}", "spot", "1"))
    _, cost = feed.document(4.0)
    assert [g["name"] for g in cost["groups"]] == ["type-0/spot", "type-1/spot", "other"]
    other = cost["groups"][-1]
    assert other["kind"] == "other"
    assert other["members"] == 2
    assert other["nodes"] == [0, 0, 1, 2, 2]  # created at exactly t[2] and t[3]
    assert other["nodeHours"] == round(3.0 / 3600, 6)


def _expected_counts(writes: list[tuple[float, str, str, str]], t: list[float]) -> dict[str, list[int]]:
    """Per group, the nodes whose create is at or before each ``t`` and whose delete is after it."""
    spans: dict[str, list[float]] = {}
    groups: dict[str, str] = {}
    for time, verb, name, group in writes:
        if verb == "create":
            spans[name] = [time, float("inf")]
            groups[name] = group
        else:
            spans[name][1] = time
    out: dict[str, list[int]] = {}
    for name, (start, stop) in spans.items():
        row = out.setdefault(groups[name], [0] * len(t))
        for i, ti in enumerate(t):
            if start <= ti < stop:
                row[i] += 1
    return out


def _run(path: Path) -> tuple[Any, list[tuple[float, str, str, str]]]:
    writes: list[tuple[float, str, str, str]] = []

    def on_write(rec: WriteRecord) -> None:
        if rec.kind == "Node" and rec.verb in ("create", "delete"):
            node = rec.new or rec.old
            _, name, capacity = group_of(node)
            writes.append((rec.time, rec.verb, node.metadata.name, f"{name}/{capacity}" if capacity else name))

    return run_scenario(load_scenario(path), RunOptions(on_write=on_write)), writes


@pytest.mark.parametrize(
    ("path", "names"),
    [
        pytest.param(CA_BURST, ["small", "large"], id="cluster-autoscaler"),
        pytest.param(
            KARPENTER_BURST,
            ["c-1x-amd64-linux/spot", "c-2x-amd64-linux/spot", "c-4x-amd64-linux/on-demand", "c-4x-amd64-linux/spot"],
            id="karpenter",
        ),
    ],
)
def test_shipped_scenarios_series_match_their_node_writes(path: Path, names: list[str]) -> None:
    result, writes = _run(path)
    s, metrics = result.extra["series"], result.extra["metrics"]
    cost = s["cost"]
    assert [g["name"] for g in cost["groups"]] == names
    expected = _expected_counts(writes, s["t"])
    for g in cost["groups"]:
        assert len(g["nodes"]) == len(g["perHour"]) == len(s["t"])
        assert g["nodes"] == expected.get(g["name"], [0] * len(s["t"])), g["name"]
    assert cost["nodes"] == [sum(col) for col in zip(*(g["nodes"] for g in cost["groups"]), strict=True)]
    assert sum(g["total"] for g in cost["groups"]) == pytest.approx(metrics["cost"]["total"], abs=1e-5)
    assert sum(g["nodeHours"] for g in cost["groups"]) == pytest.approx(metrics["cost"]["nodeHours"], abs=1e-5)
    assert max(cost["perHour"]) == pytest.approx(metrics["cost"]["perHour"]["max"])
    # the same seed, the same series
    again, _ = _run(path)
    assert again.extra["series"]["cost"] == cost


def test_a_day_of_twenty_instance_types_stays_small() -> None:
    """Bounded whatever the run's length: at most ``MAX_SAMPLES`` samples, ``MAX_GROUPS`` groups."""
    feed = Feed({})
    for i in range(24 * 60):  # a node a minute, each living 20 minutes, over 20 instance types
        t = 60.0 * i
        feed.create(t, _karpenter(f"k{i}", f"type-{i % 20:02d}", "spot" if i % 3 else "on-demand", "0.1"))
        if i >= 20:
            feed.delete(t, f"k{i - 20}")
    doc, cost = feed.document(86400.0)
    assert len(doc["t"]) <= observe_samples.MAX_SAMPLES
    assert len(cost["groups"]) == cost_module.MAX_GROUPS
    assert cost["groups"][-1]["kind"] == "other"
    for g in cost["groups"]:
        assert len(g["nodes"]) == len(g["perHour"]) == len(doc["t"])
    assert max(cost["nodes"]) == 20
    assert len(json.dumps(cost)) < 400_000
