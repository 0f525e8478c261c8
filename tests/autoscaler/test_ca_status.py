"""The status ConfigMap's document, after upstream (cluster-autoscaler 1.34):
``clusterstate/utils/status_test.go`` ``TestWriteStatusConfigMapMarshal`` with
``status_test.yaml`` (the field order and names, ``time`` in ``ConfigMapLastUpdateFormat``,
condition times in RFC 3339 with nanoseconds), ``clusterstate/clusterstate.go`` ``GetStatus``
(``buildHealthStatus*``, ``buildScaleUpStatus*``, ``buildScaleDownStatus*``: a transition time
kept while the status stays, ``Backoff`` with its ``backoffInfo``) and
``updateReadinessStats`` (``notStarted`` within ``MaxNodeStartupTime``, else ``unready``)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from agents.autoscaler.clusterautoscaler.scaledown import Removal
from agents.autoscaler.clusterautoscaler.status import (
    Counts,
    GroupState,
    StatusBuilder,
    counts_of,
    initializing_yaml,
    last_update_format,
    rfc3339_nano,
)
from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.apiserver.server import WriteRecord
from emulator.base.runtime.clock import calendar_epoch_at
from tests.builders import node

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM_EPOCH = datetime(2023, 11, 24, 4, 28, 19, tzinfo=UTC)


def test_time_formats_are_upstreams() -> None:
    with calendar_epoch_at(UPSTREAM_EPOCH):
        assert last_update_format(0.546750398) == "2023-11-24 04:28:19.54675 +0000 UTC"  # microseconds here
        assert rfc3339_nano(0.000048) == "2023-11-24T04:28:19.000048Z"
        assert rfc3339_nano(0.0) == "2023-11-24T04:28:19Z"
        assert rfc3339_nano(-52577.99) == "2023-11-23T13:52:01.01Z"


def _group(**kw: Any) -> GroupState:
    base: dict[str, Any] = {
        "name": "sample-node-group",
        "counts": Counts(registered=10, ready=4, not_started=3, unready=3, unregistered=2),
        "target": 8,
        "min_size": 2,
        "max_size": 12,
        "candidates": 2,
        "scaling_up": False,
    }
    return GroupState(**(base | kw))


def test_document_follows_status_test_yaml() -> None:
    with calendar_epoch_at(UPSTREAM_EPOCH):
        text = StatusBuilder().build(0.0, [_group(backoff="Scale-up timed out for node group g after 1m0s")], Counts())
    doc = yaml.safe_load(text)
    assert list(doc) == ["time", "autoscalerStatus", "clusterWide", "nodeGroups"]
    assert doc["time"] == "2023-11-24 04:28:19 +0000 UTC"
    assert doc["autoscalerStatus"] == "Running"
    counts = {
        "registered": {"total": 10, "ready": 4, "notStarted": 3, "unready": {"total": 3, "resourceUnready": 0}},
        "longUnregistered": 0,
        "unregistered": 2,
    }
    probe = {"lastProbeTime": "2023-11-24T04:28:19Z", "lastTransitionTime": "2023-11-24T04:28:19Z"}
    assert doc["clusterWide"] == {
        "health": {"status": "Healthy", "nodeCounts": counts, **probe},
        "scaleUp": {"status": "NoActivity", **probe},
        "scaleDown": {"status": "CandidatesPresent", "candidates": 2, **probe},
    }
    (group,) = doc["nodeGroups"]
    assert list(group) == ["name", "health", "scaleUp", "scaleDown"]
    assert group["health"] == {
        "status": "Healthy",
        "nodeCounts": counts,
        "cloudProviderTarget": 8,
        "minSize": 2,
        "maxSize": 12,
        **probe,
    }
    assert group["scaleUp"] == {
        "status": "Backoff",
        "backoffInfo": {"errorCode": "timeout", "errorMessage": "Scale-up timed out for node group g after 1m0s"},
        **probe,
    }


def test_unready_is_left_out_while_zero() -> None:
    doc = yaml.safe_load(StatusBuilder().build(0.0, [_group(counts=Counts(1, 1))], Counts()))
    assert doc["clusterWide"]["health"]["nodeCounts"]["registered"] == {"total": 1, "ready": 1, "notStarted": 0}


def test_transition_time_kept_while_the_status_stays() -> None:
    b = StatusBuilder()
    with calendar_epoch_at(UPSTREAM_EPOCH):
        b.build(0.0, [_group(candidates=0)], Counts())
        second = yaml.safe_load(b.build(10.0, [_group(candidates=0, scaling_up=True)], Counts()))
        third = yaml.safe_load(b.build(20.0, [_group(candidates=1)], Counts()))
    down = second["nodeGroups"][0]["scaleDown"]
    assert (down["status"], down["lastProbeTime"], down["lastTransitionTime"]) == (
        "NoCandidates",
        "2023-11-24T04:28:29Z",
        "2023-11-24T04:28:19Z",
    )
    assert second["clusterWide"]["scaleUp"]["status"] == "InProgress"
    assert second["clusterWide"]["scaleUp"]["lastTransitionTime"] == "2023-11-24T04:28:29Z"
    assert third["nodeGroups"][0]["scaleDown"]["lastTransitionTime"] == "2023-11-24T04:28:39Z"
    assert third["clusterWide"]["health"]["lastTransitionTime"] == "2023-11-24T04:28:19Z"


def test_readiness_counts() -> None:
    # (ready, registered at): one Ready, one registered 10 min ago, one 20 min ago
    assert counts_of([(True, 0.0), (False, 1200.0), (False, 0.0)], 1800.0, target=5) == Counts(3, 1, 1, 1, 2)


TIMEOUT = """name: ca-status
kubelet: {heartbeatInterval: 10s}
autoscaling:
  clusterAutoscaler:
    maxNodeProvisionTime: 1m
    nodeGroups:
      - name: g
        maxSize: 3
        provisionDelay: {mean: 5m}
        template: {status: {capacity: {cpu: "2", memory: 4Gi, pods: "110"}}}
steps:
  - createPods:
      count: 1
      namePrefix: p
      template: {spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]}}
  - sleep: 3m
"""


def test_status_config_map_through_a_timed_out_scale_up() -> None:
    """In progress while the node is awaited, Backoff once ``maxNodeProvisionTime`` passed."""
    docs: list[tuple[float, dict[str, Any]]] = []

    def on_write(rec: WriteRecord) -> None:
        if rec.kind == "ConfigMap" and rec.new is not None and rec.new.metadata.name == "cluster-autoscaler-status":
            docs.append((rec.time, yaml.safe_load(rec.new.data["status"])))

    run_scenario(load_scenario_text(TIMEOUT, source="s.yaml", base_dir=ROOT), RunOptions(on_write=on_write))
    docs = [(t, d) for t, d in docs if d["autoscalerStatus"] == "Running"]  # after the Initializing one
    states = [(t, d["nodeGroups"][0]["scaleUp"]) for t, d in docs]
    in_progress = [t for t, up in states if up["status"] == "InProgress"]
    backoff = [(t, up) for t, up in states if up["status"] == "Backoff"]
    assert in_progress
    assert backoff
    assert max(in_progress) < backoff[0][0]
    info = backoff[0][1]["backoffInfo"]
    assert info["errorCode"] == "timeout"
    assert info["errorMessage"].startswith("Scale-up timed out for node group g after 1m")
    last = docs[-1][1]["nodeGroups"][0]["health"]
    assert last["cloudProviderTarget"] == 0
    assert last["nodeCounts"]["unregistered"] == 0


@pytest.mark.parametrize(
    ("cpu", "mem", "text"),
    [
        (0.45, 0.125, "{0.45 0.125 0 0 cpu 0.45}"),
        (0.05, 0.05, "{0.05 0.05 0 0 memory 0.05}"),  # a tie is memory (cpu > mem is false)
        (1.0, 0.0, "{1 0 0 0 cpu 1}"),
        (1e-05, 0.0, "{1e-05 0 0 0 cpu 1e-05}"),
    ],
)
def test_scale_down_event_prints_utilization_info_as_go(cpu: float, mem: float, text: str) -> None:
    """``actuator.go`` ``deleteAsyncDrain``: "utilization: %v" of a ``utilization.Info``."""
    r = Removal(node("n"), "g", utilization=max(cpu, mem), cpu_util=cpu, mem_util=mem)
    assert r.util_info() == text


def test_initializing_status_is_empty_cluster_autoscaler_status() -> None:
    """``EmptyClusterAutoscalerStatus`` (``status.go``): only ``time`` and ``Initializing``."""
    with calendar_epoch_at(UPSTREAM_EPOCH):
        assert yaml.safe_load(initializing_yaml(1.5)) == {
            "time": "2023-11-24 04:28:20.5 +0000 UTC",
            "autoscalerStatus": "Initializing",
        }


def test_status_config_map_is_initializing_before_the_first_loop() -> None:
    """``NewStatusMapRecorder`` (``clusterstate/utils/status.go``, built with the autoscaling
    context before the informers start): the ConfigMap is created ``Initializing`` at start;
    the first loop's status is an update of it."""
    writes: list[tuple[float, str, str]] = []

    def on_write(rec: WriteRecord) -> None:
        if rec.kind == "ConfigMap" and rec.new is not None and rec.new.metadata.name == "cluster-autoscaler-status":
            writes.append((rec.time, rec.verb, yaml.safe_load(rec.new.data["status"])["autoscalerStatus"]))

    run_scenario(load_scenario_text(TIMEOUT, source="s.yaml", base_dir=ROOT), RunOptions(on_write=on_write))
    assert writes[0] == (0.0, "create", "Initializing")
    assert writes[1][1:] == ("update", "Running")
    assert all(status == "Running" for _, _, status in writes[1:])
