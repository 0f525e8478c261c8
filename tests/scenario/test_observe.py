"""``Observer`` fed write records by hand: the metrics of the contract, exactly, and the series'
per-node buckets, markers and samples. Pure: no event loop."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import pytest
from msgspec.structs import replace

from emulator.app.scenario.observe import Observer
from emulator.app.scenario.observe_samples import INTERVALS, MAX_SAMPLES
from emulator.app.scenario.observe_series import series
from emulator.base.api.core import Node, Pod, PodCondition
from emulator.base.apiserver.server import WriteRecord
from emulator.base.runtime.stats import QuantileSketch
from tests import builders


class Feed:
    """Writes to an ``Observer`` as the API server would record them (old and new object)."""

    def __init__(self, observer: Observer) -> None:
        self.obs = observer
        self.pods: dict[str, Pod] = {}
        self.nodes: dict[str, Node] = {}
        self.rev = 0

    def _write(self, t: float, kind: str, old: Any, new: Any) -> None:
        self.rev += 1
        verb = "create" if old is None else "delete" if new is None else "update"
        self.obs(WriteRecord(self.rev, t, verb, kind, old, new))

    def node(self, t: float, name: str, **kw: Any) -> None:
        new = builders.node(name, ready=kw.pop("ready", "True"), **kw)
        self._write(t, "Node", self.nodes.get(name), new)
        self.nodes[name] = new

    def node_ready(self, t: float, name: str, status: str) -> None:
        old = self.nodes[name]
        new = builders.node(name, ready=status)
        new = replace(new, status=replace(old.status, conditions=new.status.conditions))
        self._write(t, "Node", old, new)
        self.nodes[name] = new

    def delete_node(self, t: float, name: str) -> None:
        self._write(t, "Node", self.nodes.pop(name), None)

    def pod(self, t: float, name: str, **kw: Any) -> None:
        new = builders.pod(name, uid=f"uid-{name}", phase="Pending", **kw)
        self._write(t, "Pod", None, new)
        self.pods[name] = new

    def change(self, t: float, name: str, **status: Any) -> None:
        old = self.pods[name]
        spec = replace(old.spec, node_name=status.pop("node")) if "node" in status else old.spec
        conditions = status.pop("conditions", None)
        st = replace(old.status, **status)
        if conditions is not None:
            st = replace(st, conditions=[*old.status.conditions, *conditions])
        new = replace(old, spec=spec, status=st)
        self._write(t, "Pod", old, new)
        self.pods[name] = new

    def delete_pod(self, t: float, name: str) -> None:
        self._write(t, "Pod", self.pods.pop(name), None)


def disruption(reason: str) -> PodCondition:
    return PodCondition(type="DisruptionTarget", status="True", reason=reason)


@dataclass
class FakeMetrics:
    scheduled: int = 0
    unschedulable: int = 0
    errors: int = 0
    e2e_seconds: QuantileSketch = field(default_factory=QuantileSketch)


@dataclass
class FakeQueue:
    active: int = 0

    def sizes(self) -> tuple[int, int, int]:
        return self.active, 0, 0


@dataclass
class FakeScheduler:
    queue: FakeQueue = field(default_factory=FakeQueue)
    metrics: FakeMetrics = field(default_factory=FakeMetrics)


def one_pod_run() -> Feed:
    """A node from 0; a pod of 1 CPU and 8Gi created at 0, bound at 2, Running at 3,
    Succeeded at 10."""
    feed = Feed(Observer())
    feed.node(0.0, "n1")
    feed.pod(0.0, "p", cpu="1", memory="8Gi")
    feed.change(2.0, "p", node="n1")
    feed.change(3.0, "p", phase="Running")
    feed.change(10.0, "p", phase="Succeeded")
    return feed


def test_one_pod_metrics_exactly() -> None:
    feed = one_pod_run()
    m = feed.obs.metrics(20.0)
    assert m == {
        "podsScheduled": 1,
        "podsUnschedulable": 0,
        "pendingSeconds": {"p50": 2.0, "p90": 2.0, "p99": 2.0},
        "nodesUsed": {"mean": 0.8, "max": 1},
        "cpuAllocation": {"mean": 0.2, "p50": 0.25, "p90": 0.25},
        "memoryAllocation": {"mean": 0.2, "p50": 0.25, "p90": 0.25},
        "gpuAllocation": None,
        "preemptions": 0,
        "evictions": 0,
        "makespanSeconds": 10.0,
    }


def test_one_pod_series() -> None:
    feed = one_pod_run()
    s = series(feed.obs, 20.0)
    assert s["t"] == [float(i) for i in range(21)]
    # samples at t include the writes at t: bound at 2, Running from 3, Succeeded from 10
    assert s["pods"]["Pending"] == [1, 1, 1] + [0] * 18
    assert s["pods"]["Running"] == [0, 0, 0] + [1] * 7 + [0] * 11
    assert s["pods"]["Succeeded"] == [0] * 10 + [1] * 11
    assert s["queues"] is None
    assert s["attempts"] is None
    assert s["e2eSeconds"] is None
    nodes = s["nodes"]
    assert nodes["names"] == ["n1"]
    assert nodes["edges"] == [float(i) for i in range(21)]
    assert list(base64.b64decode(nodes["allocation"]["cpu"][0])) == [0, 0] + [50] * 8 + [0] * 10
    assert nodes["pods"][0] == [0, 1, 1, 1, 1, 1, 1, 1, 1, 0] + [0] * 10
    assert nodes["notReady"] == [[]]
    assert s["timeline"] == [{"pod": "default/p", "node": "n1", "start": 2.0, "end": 10.0, "phase": "Succeeded"}]
    assert s["pendingSeconds"]["counts"][-1] == 1
    assert s["pendingSeconds"]["edges"][-2:] == [2.0, 4.0]
    assert s["slowest"] == [{"pod": "default/p", "pendingSeconds": 2.0, "bound": True, "node": "n1", "message": ""}]


def test_node_deleted_mid_window() -> None:
    """Two nodes of 4 CPUs; a pod of 2 CPUs on n1 from 0 to the end; n2 deleted at 5."""
    feed = Feed(Observer())
    feed.node(0.0, "n1")
    feed.node(0.0, "n2")
    feed.pod(0.0, "p", cpu="2")
    feed.change(0.0, "p", node="n1", phase="Running")
    feed.delete_node(5.0, "n2")
    m = feed.obs.metrics(10.0)
    assert m["cpuAllocation"] == {"mean": 0.375, "p50": 0.25, "p90": 0.5}
    assert m["nodesUsed"] == {"mean": 1.0, "max": 1}
    assert m["makespanSeconds"] == 10.0
    s = series(feed.obs, 10.0)
    rows = [list(base64.b64decode(r)) for r in s["nodes"]["allocation"]["cpu"]]
    assert rows == [[100] * 10, [0] * 5 + [255] * 5]
    assert s["timeline"][0]["end"] is None
    assert s["timeline"][0]["phase"] == "Running"


def test_gpu_node() -> None:
    feed = Feed(Observer())
    feed.node(0.0, "gpu", extra={"nvidia.com/gpu": 4})
    feed.pod(0.0, "p", requests={"cpu": "1", "nvidia.com/gpu": 1})
    feed.change(0.0, "p", node="gpu", phase="Running")
    m = feed.obs.metrics(10.0)
    assert m["gpuAllocation"] == {"mean": 0.25, "p50": 0.25, "p90": 0.25}
    s = series(feed.obs, 10.0)
    assert s["nodes"]["resources"] == ["cpu", "memory", "nvidia.com/gpu"]
    assert list(base64.b64decode(s["nodes"]["allocation"]["nvidia.com/gpu"][0])) == [50] * 10


@pytest.mark.parametrize(
    ("writes", "preemptions", "evictions"),
    [
        pytest.param([("a", {"conditions": [disruption("PreemptionByScheduler")]})], 1, 0, id="preempted"),
        pytest.param([("a", {"conditions": [disruption("DeletionByTaintManager")]})], 0, 1, id="taint-eviction"),
        pytest.param([("a", {"conditions": [disruption("EvictionByEvictionAPI")]})], 0, 1, id="eviction-api"),
        pytest.param([("a", {"conditions": [disruption("TerminationByKubelet")]})], 0, 1, id="kubelet"),
        pytest.param([("a", {"phase": "Failed", "reason": "Evicted"})], 0, 1, id="kubelet-evicted-phase"),
        pytest.param([("a", {"conditions": [disruption("DeletionByPodGC")]})], 0, 0, id="podgc-is-neither"),
        pytest.param(
            [
                ("a", {"conditions": [disruption("EvictionByEvictionAPI")]}),
                ("a", {"phase": "Failed", "reason": "Evicted"}),
            ],
            0,
            1,
            id="one-pod-counts-once",
        ),
        pytest.param(
            [
                ("a", {"conditions": [disruption("PreemptionByScheduler")]}),
                ("b", {"conditions": [disruption("DeletionByTaintManager")]}),
            ],
            1,
            1,
            id="one-of-each",
        ),
    ],
)
def test_preemptions_and_evictions(writes: list[tuple[str, dict[str, Any]]], preemptions: int, evictions: int) -> None:
    feed = Feed(Observer())
    feed.node(0.0, "n1")
    for name in ("a", "b"):
        feed.pod(0.0, name, cpu="1")
        feed.change(1.0, name, node="n1", phase="Running")
    for t, (name, status) in enumerate(writes, start=2):
        feed.change(float(t), name, **status)
    m = feed.obs.metrics(10.0)
    assert (m["preemptions"], m["evictions"]) == (preemptions, evictions)


def test_empty_run() -> None:
    obs = Observer()
    assert obs.metrics(30.0) == {
        "podsScheduled": 0,
        "podsUnschedulable": 0,
        "pendingSeconds": {"p50": None, "p90": None, "p99": None},
        "nodesUsed": {"mean": 0.0, "max": 0},
        "cpuAllocation": {"mean": 0.0, "p50": 0.0, "p90": 0.0},
        "memoryAllocation": {"mean": 0.0, "p50": 0.0, "p90": 0.0},
        "gpuAllocation": None,
        "preemptions": 0,
        "evictions": 0,
        "makespanSeconds": 0.0,
    }
    s = series(obs, 30.0)
    assert len(s["t"]) == 31
    assert s["nodes"]["names"] == []
    assert s["slowest"] == []
    assert s["timeline"] == []
    assert s["pendingSeconds"]["counts"] == [0]


def test_never_bound_pod_and_last_message() -> None:
    feed = Feed(Observer())
    feed.node(0.0, "n1")
    feed.pod(1.0, "stuck", cpu="100")
    msg = "0/1 nodes are available: 1 Insufficient cpu."
    feed.change(1.5, "stuck", conditions=[PodCondition(type="PodScheduled", status="False", message=msg)])
    m = feed.obs.metrics(11.0)
    assert m["podsUnschedulable"] == 1
    assert m["podsScheduled"] == 0
    assert m["pendingSeconds"]["p50"] is None
    assert m["makespanSeconds"] == 10.0
    s = series(feed.obs, 11.0)
    assert s["slowest"] == [
        {"pod": "default/stuck", "pendingSeconds": 10.0, "bound": False, "node": None, "message": msg}
    ]


def test_deleted_pod_frees_its_node_and_ends_the_window() -> None:
    feed = Feed(Observer())
    feed.node(0.0, "n1")
    feed.pod(0.0, "p", cpu="2")
    feed.change(0.0, "p", node="n1", phase="Running")
    feed.delete_pod(4.0, "p")
    m = feed.obs.metrics(30.0)
    assert m["makespanSeconds"] == 4.0
    assert m["cpuAllocation"]["mean"] == 0.5
    s = series(feed.obs, 30.0)
    assert s["timeline"][0]["phase"] == "Deleted"
    assert s["pods"]["Running"][3:6] == [1, 0, 0]


def test_not_ready_intervals() -> None:
    feed = Feed(Observer())
    feed.node(0.0, "n1")
    feed.node_ready(50.0, "n1", "Unknown")
    feed.node_ready(70.0, "n1", "True")
    feed.node_ready(90.0, "n1", "False")
    s = series(feed.obs, 100.0)
    assert s["nodes"]["notReady"] == [[[50.0, 70.0], [90.0, 100.0]]]


def test_markers_in_time_order() -> None:
    obs = Observer()
    obs.mark(5.0, "step", "steps[1].cordon n1")
    obs.mark(0.0, "step", "steps[0].createPods web x2")
    s = series(obs, 10.0, [(5.0, "fault nodeHeartbeatStop n1"), (20.0, "fault late")])
    assert s["markers"] == [
        {"t": 0.0, "kind": "step", "label": "steps[0].createPods web x2"},
        {"t": 5.0, "kind": "step", "label": "steps[1].cordon n1"},
        {"t": 5.0, "kind": "fault", "label": "fault nodeHeartbeatStop n1"},
    ]


def test_queues_and_attempts_sampled_at_writes() -> None:
    sched = FakeScheduler()
    obs = Observer(lambda: [sched])
    feed = Feed(obs)
    feed.node(0.0, "n1")  # records nothing: the sample at 0 waits for a later write
    sched.queue.active = 3
    sched.metrics.scheduled = 2
    feed.pod(1.5, "p")  # records t=0 and t=1 with the values read now
    sched.queue.active = 1
    sched.metrics.scheduled = 5
    sched.metrics.unschedulable = 1
    sched.metrics.e2e_seconds.add(0.5)
    s = series(obs, 3.0)  # records 2 and 3
    assert s["queues"]["activeQ"] == [3, 3, 1, 1]
    assert s["attempts"]["scheduled"] == [2, 0, 3, 0]
    assert s["attempts"]["unschedulable"] == [0, 0, 1, 0]
    assert s["e2eSeconds"]["edges"][-2:] == [0.5, 1.0]
    assert s["e2eSeconds"]["counts"][-1] == 1


def test_samples_coarsen_past_the_cap() -> None:
    sched = FakeScheduler()
    obs = Observer(lambda: [sched])
    feed = Feed(obs)
    feed.pod(0.5, "p")
    sched.metrics.scheduled = 7
    end = float(MAX_SAMPLES + 100)
    s = series(obs, end)
    assert s["interval"] == INTERVALS[1]
    assert len(s["t"]) == len(s["pods"]["Pending"]) == len(s["attempts"]["scheduled"])
    assert s["t"][-1] <= end < s["t"][-1] + s["interval"]
    assert all(b - a == s["interval"] for a, b in zip(s["t"], s["t"][1:], strict=False))
    assert sum(s["attempts"]["scheduled"]) == 7
    edges = s["nodes"]["edges"]
    assert len(edges) <= 241
    assert edges[0] == 0.0
    assert edges[-1] == end
    assert all(len(base64.b64decode(r)) == len(edges) - 1 for r in s["nodes"]["allocation"]["cpu"])
