"""The Horizontal Pod Autoscaler and the resource metrics API through ``serve`` as kubectl uses
them: ``kubectl top pod`` / ``kubectl top node`` read ``metrics.k8s.io/v1beta1`` (computed from
the pods' ``emulator.k8s.io/usage`` annotations); ``kubectl autoscale``-style HPAs are applied,
listed with upstream's columns (``printHorizontalPodAutoscaler``: NAME REFERENCE TARGETS MINPODS
MAXPODS REPLICAS AGE) and act on the Deployment; an HPA targeting a kind the emulator cannot
scale is a 422 (issue 28, "Bad input")."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.http.conftest import KUBECTL, NO_KUBECTL, Server, failed, ok

pytestmark = [
    pytest.mark.skipif(not KUBECTL.exists(), reason=NO_KUBECTL),
    pytest.mark.real_time,
    pytest.mark.slow,
]

MANIFEST = """
apiVersion: v1
kind: Namespace
metadata: {name: hpa}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: hpa}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations: {emulator.k8s.io/usage: '{"cpu": "450m", "memory": "200Mi"}'}
    spec:
      containers:
        - name: web
          image: registry.example.com/web:1.0
          resources: {requests: {cpu: 500m, memory: 256Mi}}
"""
HPA = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: hpa}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 4
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
"""


def _rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line.strip()]


def _until(check, timeout: float = 30.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(0.3)


def test_top_and_hpa(kubectl_server: Server, tmp_path: Path) -> None:
    k = kubectl_server.kubectl
    path = tmp_path / "web.yaml"
    path.write_text(MANIFEST)
    ok(k("apply", "-f", str(path)))
    ok(k("rollout", "status", "deployment/web", "-n", "hpa", "--timeout=60s"))

    def top_pods() -> list[list[str]]:
        result = k("top", "pod", "-n", "hpa")
        return _rows(result.stdout) if result.returncode == 0 else []

    rows = _until(lambda: [r for r in top_pods() if r[0] != "NAME"])
    assert rows, k("top", "pod", "-n", "hpa").stderr
    assert all(r[1:] == ["450m", "200Mi"] for r in rows), rows
    assert _rows(ok(k("top", "pod", "-n", "hpa")))[0] == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    nodes = _rows(ok(k("top", "node")))
    assert nodes[0] == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    assert sum(int(r[1].removesuffix("m")) for r in nodes[1:]) == 900  # the two web pods, the agents use 0
    raw = json.loads(ok(k("get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/hpa/pods")))
    assert raw["kind"] == "PodMetricsList"
    assert raw["items"][0]["containers"][0]["usage"]["cpu"] == "450m"

    hpa_path = tmp_path / "hpa.yaml"
    hpa_path.write_text(HPA)
    assert "horizontalpodautoscaler.autoscaling/web created" in ok(k("apply", "-f", str(hpa_path)))
    header = _rows(ok(k("get", "hpa", "-n", "hpa")))[0]
    assert header == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]

    def scaled() -> list[str] | None:
        rows = _rows(ok(k("get", "hpa", "web", "-n", "hpa")))
        return rows[1] if rows[1][3] == "90%/50%" and rows[1][6] == "4" else None

    row = _until(scaled, timeout=60.0)
    assert row is not None, ok(k("describe", "hpa", "web", "-n", "hpa"))
    assert row[:7] == ["web", "Deployment/web", "cpu:", "90%/50%", "2", "4", "4"]
    described = ok(k("describe", "hpa", "web", "-n", "hpa"))
    assert "SuccessfulRescale" in described
    assert "New size: 4; reason: cpu resource utilization (percentage of request) above target" in described
    assert ok(k("get", "deployment", "web", "-n", "hpa", "-o", "jsonpath={.spec.replicas}")) == "4"


def test_hpa_targeting_a_missing_kind_is_422(kubectl_server: Server, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        HPA.replace("kind: Deployment", "kind: Rollout").replace("name: web, namespace", "name: bad, namespace")
    )
    err = failed(kubectl_server.kubectl("apply", "-f", str(path)))
    assert 'The HorizontalPodAutoscaler "bad" is invalid: spec.scaleTargetRef.kind: Unsupported value: "Rollout"' in err
