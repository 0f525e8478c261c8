"""``nodePartition``: the kubelet of a node cannot reach the API server, and a StatefulSet
pod on it is re-created elsewhere only after a non-graceful node shutdown.

Upstream sources the story follows: ``pkg/controller/nodelifecycle`` (``monitorNodeHealth``
marks the node Unknown and, through ``pkg/controller/util/node/controller_utils.go``
``MarkPodsNotReady``, its pods Ready=False), ``pkg/controller/tainteviction`` (deletes the pod
after its ``tolerationSeconds``), ``pkg/controller/statefulset`` (at most one pod per
identity: a terminating db-1 is not replaced), ``pkg/controller/podgc/gc_controller.go``
``gcTerminating`` (force-deletes terminating pods of a not-Ready node tainted
``node.kubernetes.io/out-of-service``), and the kubelet's reconnect (reflector relist,
Lease renewal).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from emulator.app.scenario.faults import FaultPlan
from emulator.app.scenario.loader import ScenarioError, load_scenario, load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.app.scenario.schema import NodePartition
from emulator.base.api.errors import Timeout
from emulator.base.apiserver.records import WriteRecord
from emulator.base.runtime.rng import Seeds

ROOT = Path(__file__).resolve().parents[2]


def _ready(pod: Any) -> str:
    return next((c.status for c in pod.status.conditions if c.type == "Ready"), "")


@pytest.mark.slow
def test_node_partition_story() -> None:
    writes: list[WriteRecord] = []
    result = run_scenario(load_scenario(ROOT / "scenarios" / "node-partition.yaml"), RunOptions(on_write=writes.append))
    assert result.passed

    def db1(w: WriteRecord) -> bool:
        return w.kind == "Pod" and w.obj.metadata.name == "db-1"

    first_uid = next(w.new.metadata.uid for w in writes if db1(w) and w.verb == "create")
    assert next(w.obj.spec.node_name for w in writes if db1(w) and w.verb == "bind") == "node-1"

    # the partition (60 s .. 360 s): no Lease renewal and no status from node-1's kubelet
    leases = [round(w.time) for w in writes if w.kind == "Lease" and w.obj.metadata.name == "node-1"]
    assert not [t for t in leases if 60 < t < 360]
    assert next(t for t in leases if t >= 360) in range(360, 391)  # its next retry after the heal

    # MarkPodsNotReady: node-1 Unknown at 110 s, db-1 Ready=False at once; the set reports 2 ready
    unknown = [
        round(w.time) for w in writes if w.kind == "Node" and w.verb == "updateStatus" and _node_ready(w) == "Unknown"
    ]
    assert unknown == [110]
    marked = [w for w in writes if db1(w) and w.verb == "updateStatus" and _ready(w.new) == "False" and w.time > 100]
    assert round(marked[0].time) == 110
    assert marked[0].new.metadata.uid == first_uid
    sts_ready = [
        (round(w.time), w.new.status.ready_replicas)
        for w in writes
        if w.kind == "StatefulSet" and w.verb == "updateStatus"
    ]
    assert (110, 2) in sts_ready

    # taint eviction after 30 s of toleration: a deletionTimestamp, but no kubelet to confirm it
    deleting = [w for w in writes if db1(w) and w.verb == "delete" and w.new is not None]
    assert round(deleting[0].time) == 145
    gone = [round(w.time) for w in writes if db1(w) and w.verb == "delete" and w.new is None]
    assert gone == [240]  # only once out-of-service lets pod GC force-delete it
    creates = [round(w.time) for w in writes if db1(w) and w.verb == "create"]
    assert creates == [1, 240]  # no second db-1 while the first one was terminating

    # the out-of-service taint at 240 s: gcTerminating marks it Failed and deletes it with grace 0
    forced = [w for w in writes if db1(w) and w.verb == "updateStatus" and w.new.status.phase == "Failed"]
    assert [round(w.time) for w in forced] == [240]
    assert forced[0].new.metadata.uid == first_uid
    new_db1 = [w for w in writes if db1(w) and w.verb == "bind" and w.obj.metadata.uid != first_uid]
    assert [w.obj.spec.node_name for w in new_db1] == ["node-3"]

    # the heal: node-1 Ready again, its unreachable taints lifted (out-of-service stays)
    ready_again = [
        round(w.time)
        for w in writes
        if w.kind == "Node" and w.verb == "updateStatus" and w.time > 300 and _node_ready(w) == "True"
    ]
    assert ready_again[0] in range(360, 391)
    last = [w.new for w in writes if w.kind == "Node" and w.obj.metadata.name == "node-1"][-1]
    assert [(t.key, t.effect) for t in last.spec.taints] == [("node.kubernetes.io/out-of-service", "NoExecute")]
    faults = next(a["faults"] for a in result.extra["agents"] if "faults" in a)
    assert faults[0]["type"] == "nodePartition"
    assert faults[0]["injected"] > 0


def _node_ready(w: WriteRecord) -> str:
    if w.obj.metadata.name != "node-1":
        return ""
    return next((c.status for c in w.new.status.conditions if c.type == "Ready"), "")


@pytest.mark.parametrize(
    ("now", "agent", "cut"),
    [
        (59.0, "kubelet:node-1", False),
        (60.0, "kubelet:node-1", True),
        (359.0, "kubelet:node-1", True),
        (360.0, "kubelet:node-1", False),  # stop is exclusive
        (100.0, "kubelet:node-2", False),
        (100.0, "controller:nodelifecycle", False),
    ],
)
def test_partition_window_and_agent(now: float, agent: str, cut: bool) -> None:
    plan = FaultPlan([("faults[0]", NodePartition(node="node-1", start=60.0, stop=360.0), True)], Seeds(1))
    err = plan.partition_error(now, agent, "updateStatus", "Pod")
    assert (err is not None) == cut
    if err is not None:
        assert isinstance(err, Timeout)
        assert err.message == (
            "updateStatus pods: the server could not be reached: node node-1 is partitioned (injected by faults[0])"
        )


def test_partition_of_missing_node_is_bad_input() -> None:
    text = """
name: t
nodes: [{count: 1, namePrefix: n, template: {}}]
faults: [{nodePartition: {node: n-1}}]
"""
    with pytest.raises(ScenarioError) as info:
        load_scenario_text(text, source="s.yaml", base_dir=ROOT)
    assert str(info.value) == (
        's.yaml:4:27: faults[0].nodePartition.node: no node "n-1" in the scenario '
        "(nodes, objects, create and createNodes steps make them)"
    )


HEAL = """
name: heal
seed: 2
latency: {api: {mean: 2ms, jitter: 1ms}, watch: {mean: 5ms, jitter: 2ms}}
kubelet: {containerStart: {mean: 1s}, termination: {mean: 2s}, heartbeatInterval: 10s}
nodes:
  - count: 2
    namePrefix: n
    template: {status: {capacity: {cpu: "4", memory: 16Gi, pods: "110"}}}
    labelValues: {kubernetes.io/hostname: [n-0, n-1]}
faults:
  - nodePartition: {node: n-1, start: 30s, stop: 150s}
objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          affinity:
            podAntiAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}
          containers: [{name: app, image: nginx:1.27, resources: {requests: {cpu: 100m}}}]
steps:
%s
expect:
  - podsRunning: {count: 2, selector: app=web}
"""


def _run(text: str) -> list[WriteRecord]:
    writes: list[WriteRecord] = []
    result = run_scenario(load_scenario_text(text, source="s.yaml", base_dir=ROOT), RunOptions(on_write=writes.append))
    assert result.passed
    return writes


def _on_n1(writes: list[WriteRecord]) -> str:
    return next(w.obj.metadata.name for w in writes if w.verb == "bind" and w.obj.spec.node_name == "n-1")


@pytest.mark.slow
def test_partition_heals_and_the_kubelet_writes_its_ready_back() -> None:
    """Default tolerations (300 s): the pod on n-1 is only marked not Ready (upstream
    ``MarkPodsNotReady``), the Deployment counts 1 available; after the heal the kubelet
    relists and writes its own Ready back (``pkg/kubelet/status`` ``needsReconcile``)."""
    writes = _run(HEAL % "  - sleep: 4m")
    pod = _on_n1(writes)
    readiness = [
        (round(w.time), _ready(w.new))
        for w in writes
        if w.kind == "Pod" and w.verb == "updateStatus" and w.obj.metadata.name == pod and w.time > 20
    ]
    assert readiness[0] == (80, "False")  # Unknown 50 s after the last Lease renewal (30 s)
    assert readiness[1][1] == "True"
    assert 150 <= readiness[1][0] <= 180  # the kubelet's relist after the heal
    available = [
        (round(w.time), w.new.status.available_replicas)
        for w in writes
        if w.kind == "Deployment" and w.verb == "updateStatus" and w.time > 20
    ]
    assert available[0] == (80, 1)
    assert available[-1][1] == 2
    deletes = [w for w in writes if w.kind == "Pod" and w.verb == "delete"]
    assert deletes == []


@pytest.mark.slow
def test_force_delete_step_removes_a_pod_its_kubelet_cannot_confirm() -> None:
    """``delete: {gracePeriodSeconds: 0}`` (``kubectl delete --force --grace-period=0``): the pod
    of the partitioned node is gone at once; after the heal its kubelet finds it gone."""
    writes = _run(
        HEAL % "  - sleep: 100s\n  - delete: {kind: Pod, selector: app=web, gracePeriodSeconds: 0}\n  - sleep: 3m"
    )
    gone = sorted((round(w.time), w.obj.spec.node_name) for w in writes if w.kind == "Pod" and w.verb == "delete")
    assert gone == [(100, "n-0"), (100, "n-1")]
    assert all(w.new is None for w in writes if w.kind == "Pod" and w.verb == "delete")
    old = {w.obj.metadata.uid for w in writes if w.kind == "Pod" and w.verb == "delete"}
    assert not [w for w in writes if w.kind == "Pod" and w.time > 101 and w.obj.metadata.uid in old]


@pytest.mark.slow
def test_without_out_of_service_the_pod_goes_only_when_the_kubelet_is_back() -> None:
    """No out-of-service taint: db-1 stays terminating for the whole partition; after the heal
    the kubelet relists, sees the deletionTimestamp, stops the container and confirms the
    deletion (grace 0 with its UID), and only then is db-1 re-created."""
    text = (ROOT / "scenarios" / "node-partition.yaml").read_text()
    start = text.index("  - at: 4m\n    update:")
    end = text.index("  - waitFor: {condition: workloadsReady, kind: StatefulSet, name: db, timeout: 2m}")
    text = text[:start] + "  - sleep: 5m\n" + text[end:]
    text = text[: text.index("expect:")] + "expect:\n  - workloadsReady: {kind: StatefulSet, name: db}\n"
    writes = _run(text)
    db1 = [w for w in writes if w.kind == "Pod" and w.obj.metadata.name == "db-1"]
    gone = [round(w.time) for w in db1 if w.verb == "delete" and w.new is None]
    assert len(gone) == 1
    assert 360 <= gone[0] <= 395  # the kubelet's relist after the heal, plus its 2 s termination
    assert [round(w.time) for w in db1 if w.verb == "create"] == [1, gone[0]]
