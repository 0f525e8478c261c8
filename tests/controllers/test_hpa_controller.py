"""The HPA controller (upstream ``horizontal.go``) on runs of small scenarios: a metric no
metrics API of the emulator serves (a Pods metric) is reported as upstream reports it without a
custom metrics adapter, and warned about when the manifest is read; a target that does not exist
is ``FailedGetScale``; an HPA with a Resource metric beside it still scales."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.api.codec import object_from_dict, yaml_documents

SCENARIO = """name: hpa-controller
until: 2m
objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}, annotations: {emulator.k8s.io/usage: '{"cpu": "100m"}'}}
        spec: {containers: [{name: web, image: nginx, resources: {requests: {cpu: 500m}}}]}
  - apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    metadata: {name: web}
    spec:
      scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: TARGET}
      minReplicas: 1
      maxReplicas: 5
      metrics: METRICS
nodes:
  - count: 2
    namePrefix: node
    template: {status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}}
steps:
  - at: 90s
    waitFor: {condition: podsRunning, selector: app=web, count: 1, timeout: 10s}
"""
PODS = "[{type: Pods, pods: {metric: {name: requests_per_second}, target: {type: AverageValue, averageValue: '10'}}}]"
CPU = "[{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]"


def _run(tmp_path: Path, metrics: str, target: str = "web") -> tuple[Any, list[Any]]:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.replace("METRICS", metrics).replace("TARGET", target))
    writes: list[Any] = []

    def on_write(rec: Any) -> None:
        if rec.new is not None and rec.kind in ("Event", "HorizontalPodAutoscaler"):
            writes.append(rec.new)

    run_scenario(load_scenario(path), RunOptions(on_write=on_write))
    hpa = [w for w in writes if w.kind == "HorizontalPodAutoscaler"][-1]
    return hpa, [w for w in writes if w.kind == "Event" and w.involved_object.kind == "HorizontalPodAutoscaler"]


def test_a_pods_metric_is_reported_not_acted_on(tmp_path: Path) -> None:
    hpa, events = _run(tmp_path, PODS)
    active = next(c for c in hpa.status.conditions if c.type == "ScalingActive")
    assert (active.status, active.reason) == ("False", "FailedGetPodsMetric")
    assert active.message == (
        "the HPA was unable to compute the replica count: unable to get metric requests_per_second: unable to fetch "
        "metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered"
    )
    reasons = {e.reason for e in events}
    assert {"FailedGetPodsMetric", "FailedComputeMetricsReplicas"} <= reasons
    assert "SuccessfulRescale" not in reasons


def test_a_resource_metric_beside_it_is_acted_on(tmp_path: Path) -> None:
    hpa, _ = _run(tmp_path, PODS.rstrip("]") + ", " + CPU.lstrip("["))
    active = next(c for c in hpa.status.conditions if c.type == "ScalingActive")
    assert (active.status, active.reason) == ("True", "ValidMetricFound")
    able = next(c for c in hpa.status.conditions if c.type == "AbleToScale")
    # 100m of 500m is 20 %: ceil(0.4 x 2) = 1, held at 2 by the 5-min downscale stabilization
    assert (able.reason, hpa.status.desired_replicas) == ("ScaleDownStabilized", 2)
    assert hpa.status.current_metrics[1].resource.current.average_utilization == 20
    assert hpa.status.current_metrics[0].type == ""  # the Pods metric: no status, as upstream


def test_missing_target_is_failed_get_scale(tmp_path: Path) -> None:
    hpa, events = _run(tmp_path, CPU, target="nope")
    able = next(c for c in hpa.status.conditions if c.type == "AbleToScale")
    assert (able.status, able.reason) == ("False", "FailedGetScale")
    expected = "the HPA controller was unable to get the target's current scale: "
    assert able.message == expected + 'deployments.apps "nope" not found'
    assert events[0].reason == "FailedGetScale"


def test_the_loader_warns_about_a_metric_it_cannot_serve() -> None:
    text = SCENARIO.split("  - apiVersion: autoscaling/v2\n")[1].split("nodes:")[0]
    doc = "apiVersion: autoscaling/v2\n" + "\n".join(line[4:] for line in text.splitlines())
    doc = doc.replace("METRICS", PODS).replace("TARGET", "web")
    warnings: list[str] = []
    (raw,) = yaml_documents(doc, source="h")
    object_from_dict(raw, source="h", warn=warnings.append)
    assert len(warnings) == 1
    assert warnings[0].startswith("h: spec.metrics[0].pods: not acted on: the emulator serves no custom or external")
