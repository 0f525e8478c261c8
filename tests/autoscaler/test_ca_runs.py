"""Cluster Autoscaler end to end, on the virtual clock: the shipped scenario's expectations, and
the timing rules of ``core/static_autoscaler.go`` (scan interval, ``scaleDownDelayAfterAdd``,
``scaleDownUnneededTime``, ``nodeDeleteDelayAfterTaint``), ``clusterstate/clusterstate.go``
(``maxNodeProvisionTime``: ``ScaleUpTimedOut``, backoff) and the Events of
``processors/status/eventing_scale_up_processor.go`` and ``core/scaledown/actuation``, 1.34."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from emulator.app.scenario.loader import load_scenario, load_scenario_text
from emulator.app.scenario.runner import RunOptions, RunResult, run_scenario
from emulator.base.apiserver.server import WriteRecord

ROOT = Path(__file__).resolve().parents[2]
Event = tuple[float, str, str, str, str]


def _run(scenario: Any) -> tuple[RunResult, list[Event], list[tuple[float, str, str]]]:
    events: list[Event] = []
    nodes: list[tuple[float, str, str]] = []

    def on_write(rec: WriteRecord) -> None:
        if rec.kind == "Event" and rec.verb == "create":
            e = rec.new
            events.append((rec.time, e.reason, e.involved_object.kind, e.involved_object.name, e.message))
        elif rec.kind == "Node" and rec.verb in ("create", "delete"):
            nodes.append((rec.time, rec.verb, (rec.new or rec.old).metadata.name))

    return run_scenario(scenario, RunOptions(on_write=on_write)), events, nodes


CA_REASONS = (
    "TriggeredScaleUp",
    "NotTriggerScaleUp",
    "ScaledUpGroup",
    "ScaleDown",
    "ScaleDownEmpty",
    "ScaleUpTimedOut",
)


def test_shipped_scenario_scales_up_then_down() -> None:
    result, events, nodes = _run(load_scenario(ROOT / "scenarios" / "cluster-autoscaler-burst.yaml"))
    assert result.passed
    m = result.extra["metrics"]
    assert m["autoscaler"] == {"scaleUps": 1, "scaleDowns": 4, "nodesCreated": 6, "nodesRemoved": 4, "podsDisrupted": 1}
    ca = [e for e in events if e[1] in CA_REASONS]
    # least-waste picks five small nodes for the ten pods that do not fit (not two large ones)
    triggered = [e for e in ca if e[1] == "TriggeredScaleUp"]
    assert len(triggered) == 10
    assert {e[4] for e in triggered} == {"pod triggered scale-up: [{small 1->6 (max: 10)}]"}
    assert [e[4] for e in ca if e[1] == "ScaledUpGroup"] == [
        "Scale-up: setting group small size to 6 instead of 1 (max: 10)",
        "Scale-up: group small size set to 6 instead of 1 (max: 10)",
    ]
    up = triggered[0][0]
    assert 20 <= up < 21  # the first loop (every 10 s, from the informers' sync) after the replicas were pending
    created = [t for t, verb, _ in nodes if verb == "create" and t > 1]  # the minSize node is there from the start
    assert len(created) == 5  # provisionDelay 45s +- 15s
    assert all(up + 30 <= t <= up + 60 for t in created)
    # scale-down: not before scaleDownDelayAfterAdd, after scaleDownUnneededTime; empty nodes
    # go 5 s after their taint (nodeDeleteDelayAfterTaint), the drained one after its eviction
    marked = [e for e in ca if e[1] == "ScaleDown" and e[4] == "marked the node as toBeDeleted/unschedulable"]
    assert len(marked) == 4
    assert min(e[0] for e in marked) >= up + 300
    empty = [e for e in ca if e[1] == "ScaleDownEmpty" and e[4].startswith("Scale-down: removing empty node")]
    drained = [e for e in ca if e[1] == "ScaleDown" and e[4].startswith("Scale-down: removing node")]
    assert len(empty) == 3
    assert len(drained) == 1
    # utilization.Info printed with %v: {CpuUtil MemUtil GpuUtil DynamicResourceUtil ResourceName Utilization}
    assert "utilization: {0.45 0.125 0 0 cpu 0.45}, pods to reschedule: default/web-" in drained[0][4]
    evicted = [e for e in events if e[1] == "ScaleDown" and e[2] == "Pod"]
    assert [e[4] for e in evicted] == ["deleting pod for node scale down"]
    deleted = {name: t for t, verb, name in nodes if verb == "delete"}
    for e in empty:
        name = e[4].split('"')[1]
        assert e[0] + 5.0 <= deleted[name] < e[0] + 5.1
    assert m["cost"]["perHour"]["max"] == 0.576  # six small nodes at $0.096
    assert 0 < m["cost"]["total"] < 0.576 * result.simulated_seconds / 3600


BASE = """name: ca-timing
kubelet: {{heartbeatInterval: 10s}}
autoscaling:
  clusterAutoscaler:
    maxNodeProvisionTime: {provision_limit}
    nodeGroups:
      - name: g
        minSize: 0
        maxSize: {max_size}
        pricePerHour: 1
        provisionDelay: {{mean: {delay}}}
        template: {{status: {{capacity: {{cpu: "2", memory: 4Gi, pods: "110"}}}}}}
steps:
  - createPods:
      count: 1
      namePrefix: p
      template: {{spec: {{containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: {cpu}}}}}}}]}}}}
  - sleep: {sleep}
"""


def _timing(**kw: Any) -> tuple[RunResult, list[Event], list[tuple[float, str, str]]]:
    args = {"provision_limit": "15m", "max_size": 3, "delay": "30s", "cpu": "1", "sleep": "2m"} | kw
    return _run(load_scenario_text(BASE.format(**args), source="s.yaml", base_dir=ROOT))


def test_max_node_provision_time_times_out_and_backs_off() -> None:
    result, events, nodes = _timing(provision_limit="1m", delay="5m", sleep="3m")
    timed_out = [e for e in events if e[1] == "ScaleUpTimedOut"]
    assert len(timed_out) == 1
    t, _, kind, name, message = timed_out[0]
    assert (kind, name) == ("ConfigMap", "cluster-autoscaler-status")
    assert message.startswith("Nodes added to group g failed to register within 1m")
    assert 60 < t <= 80  # the first loop past maxNodeProvisionTime
    assert not [n for n in nodes if n[1] == "create"]  # the pending creation was given up
    backoff = [e for e in events if e[1] == "NotTriggerScaleUp"]
    assert backoff
    assert backoff[-1][4] == "pod didn't trigger scale-up: 1 in backoff after failed scale-up"
    assert result.extra["metrics"]["autoscaler"]["scaleUps"] == 1


def test_pod_that_fits_no_template_does_not_trigger_scale_up() -> None:
    _, events, nodes = _timing(cpu="3", sleep="30s")
    not_triggered = {e[4] for e in events if e[1] == "NotTriggerScaleUp"}
    assert not_triggered == {"pod didn't trigger scale-up: 1 Insufficient cpu"}
    assert not [n for n in nodes if n[1] == "create"]


def test_max_size_reached() -> None:
    _, events, _ = _timing(max_size=0, sleep="30s")
    assert {e[4] for e in events if e[1] == "NotTriggerScaleUp"} == {
        "pod didn't trigger scale-up: 1 max node group size reached"
    }


def test_status_config_map_is_written() -> None:
    scenario = load_scenario_text(
        BASE.format(provision_limit="15m", max_size=3, delay="30s", cpu="1", sleep="2m"), source="s.yaml", base_dir=ROOT
    )
    writes: list[Any] = []

    def on_write(rec: WriteRecord) -> None:
        if rec.kind == "ConfigMap" and rec.new is not None and rec.new.metadata.name == "cluster-autoscaler-status":
            writes.append(rec.new)

    run_scenario(scenario, RunOptions(on_write=on_write))
    last = writes[-1]
    assert last.metadata.namespace == "kube-system"
    assert "cluster-autoscaler.kubernetes.io/last-updated" in last.metadata.annotations
    status = last.data["status"]
    assert "autoscalerStatus: Running" in status
    assert "name: g" in status
    assert "cloudProviderTarget: 1" in status


def test_same_seed_same_trace() -> None:
    path = ROOT / "scenarios" / "cluster-autoscaler-burst.yaml"
    a = run_scenario(load_scenario(path)).trace_hash
    b = run_scenario(load_scenario(path)).trace_hash
    assert a == b


ZONES = """name: ca-balance
kubelet: {{heartbeatInterval: 10s}}
autoscaling:
  clusterAutoscaler:
    balanceSimilarNodeGroups: {balance}
    balancingIgnoreLabels: [kwok-nodegroup]
    expander: most-pods
    nodeGroups:
{groups}
steps:
  - createPods:
      count: 6
      namePrefix: p
      template: {{spec: {{containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: 1500m}}}}}}]}}}}
  - sleep: 2m
"""
GROUP = """      - name: {name}
        maxSize: {max}
        provisionDelay: {{mean: 30s}}
        template:
          metadata: {{labels: {{topology.kubernetes.io/zone: {name}, tier: {tier}}}}}
          status: {{capacity: {{cpu: "{cpu}", memory: 4Gi, pods: "110"}}}}
"""


def _zones(balance: bool, *groups: tuple[str, int, str, str]) -> list[str]:
    text = ZONES.format(
        balance=str(balance).lower(),
        groups="".join(GROUP.format(name=n, max=m, tier=t, cpu=c) for n, m, t, c in groups),
    )
    _, events, _ = _run(load_scenario_text(text, source="s.yaml", base_dir=ROOT))
    return [e[4] for e in events if e[1] == "ScaledUpGroup" and "size set to" in e[4]]


def test_balance_similar_node_groups_splits_the_scale_up() -> None:
    """``core/scaleup/orchestrator/orchestrator.go`` ``balanceScaleUps`` with
    ``processors/nodegroupset`` (1.34): six 1.5-CPU pods need six 2-CPU nodes; three zones'
    groups differ only in the zone label (and the group label ``kwok-nodegroup``, which upstream's
    kwok provider puts on its templates too: ignored through ``balancingIgnoreLabels``), so the
    six are spread (the max of one caps it)."""
    zones = [("zone-a", 10, "web", "2"), ("zone-b", 10, "web", "2"), ("zone-c", 1, "web", "2")]
    assert _zones(False, *zones) == ["Scale-up: group zone-a size set to 6 instead of 0 (max: 10)"]
    balanced = _zones(True, *zones)
    sizes = {m.split()[2]: int(m.split()[6]) for m in balanced}  # the most-pods tie is drawn at random
    assert sizes["zone-c"] == 1
    assert sorted(sizes.values()) == [1, 2, 3]
    # a different label (not an ignored one) or a different capacity: not similar
    other = [("zone-a", 10, "web", "2"), ("zone-b", 10, "batch", "2"), ("zone-c", 10, "web", "4")]
    assert _zones(True, *other) == ["Scale-up: group zone-a size set to 6 instead of 0 (max: 10)"]


NEW_PODS = """name: ca-new-pods
kubelet: {{heartbeatInterval: 10s}}
autoscaling:
  clusterAutoscaler:
    nodeGroups:
      - name: g
        maxSize: 3
        provisionDelay: {{mean: 30s}}
        template: {{status: {{capacity: {{cpu: "2", memory: 4Gi, pods: "110", nvidia.com/gpu: "1"}}}}}}
steps:
  - at: {at}
    createPods:
      count: 1
      namePrefix: p
      template: {{spec: {{containers: [{{name: c, image: busybox, resources: {{requests: {requests}}}}}]}}}}
  - sleep: 1m
"""


@pytest.mark.parametrize(
    ("at", "requests", "first"),
    [
        pytest.param("5s", "{cpu: 1}", 10, id="old-enough-at-the-next-loop"),
        pytest.param("9s", "{cpu: 1}", 20, id="less-than-2s-old-waits-a-loop"),
        pytest.param("5s", "{cpu: 1, nvidia.com/gpu: 1}", 40, id="gpu-pod-waits-30s"),
    ],
)
def test_all_pods_are_new_waits_one_iteration(at: str, requests: str, first: float) -> None:
    """``core/static_autoscaler.go`` ``allPodsAreNew`` (1.34): no scale-up while the oldest pod
    to help is younger than ``unschedulablePodTimeBuffer`` (2 s), or the oldest GPU pod younger
    than ``unschedulablePodWithGpuTimeBuffer`` (30 s); loops every 10 s from the informers' sync."""
    text = NEW_PODS.format(at=at, requests=requests)
    _, events, _ = _run(load_scenario_text(text, source="s.yaml", base_dir=ROOT))
    triggered = [e[0] for e in events if e[1] == "TriggeredScaleUp"]
    assert triggered
    assert first <= triggered[0] < first + 1


def test_max_nodes_total_reached() -> None:
    """``core/static_autoscaler.go`` (1.34): the Ready nodes at ``maxNodesTotal``: a Warning
    ``MaxNodesTotalReached`` on the status ConfigMap each loop, the pods told why."""
    text = BASE.format(provision_limit="15m", max_size=3, delay="30s", cpu="3", sleep="30s")
    text = text.replace("    maxNodeProvisionTime", "    maxNodesTotal: 1\n    maxNodeProvisionTime")
    text = text.replace("        minSize: 0\n", "        minSize: 1\n")
    _, events, nodes = _run(load_scenario_text(text, source="s.yaml", base_dir=ROOT))
    warned = [e for e in events if e[1] == "MaxNodesTotalReached"]
    assert warned
    assert {(e[2], e[3], e[4]) for e in warned} == {
        ("ConfigMap", "cluster-autoscaler-status", "Max total nodes in cluster reached: 1")
    }
    assert {e[4] for e in events if e[1] == "NotTriggerScaleUp"} == {
        "pod didn't trigger scale-up: max total nodes in cluster reached"
    }
    assert len([n for n in nodes if n[1] == "create"]) == 1  # the minSize node only
