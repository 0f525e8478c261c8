"""Manifests as kubectl 1.32 writes them run unchanged: the output of ``kubectl create
deployment|job|cronjob|service|poddisruptionbudget --dry-run=client -o yaml`` (copied here
verbatim, with its ``creationTimestamp: null``, ``strategy: {}``, ``resources: {}`` and
``status: {}``), and a StatefulSet and a DaemonSet in the shape ``kubectl get -o yaml``
prints (kubectl has no ``create`` for those). Each is reconciled by its controller.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import run_scenario
from tests.api.test_workload_kinds import KUBECTL_CREATE_DEPLOYMENT

KUBECTL_OUTPUT = (
    KUBECTL_CREATE_DEPLOYMENT
    + """---
apiVersion: batch/v1
kind: Job
metadata:
  creationTimestamp: null
  name: pi
spec:
  template:
    metadata:
      creationTimestamp: null
    spec:
      containers:
      - image: perl
        name: pi
        resources: {}
      restartPolicy: Never
status: {}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  creationTimestamp: null
  name: cj
spec:
  jobTemplate:
    metadata:
      creationTimestamp: null
      name: cj
    spec:
      template:
        metadata:
          creationTimestamp: null
        spec:
          containers:
          - image: busybox
            name: cj
            resources: {}
          restartPolicy: OnFailure
  schedule: '*/5 * * * *'
status: {}
---
apiVersion: v1
kind: Service
metadata:
  creationTimestamp: null
  labels:
    app: web
  name: web
spec:
  ports:
  - name: 80-8080
    port: 80
    protocol: TCP
    targetPort: 8080
  selector:
    app: web
  type: ClusterIP
status:
  loadBalancer: {}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  creationTimestamp: null
  name: web-pdb
spec:
  minAvailable: 2
  selector:
    matchLabels:
      app: web
status:
  currentHealthy: 0
  desiredHealthy: 0
  disruptionsAllowed: 0
  expectedPods: 0
"""
)

GET_OUTPUT_SHAPE = """
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: default
spec:
  serviceName: db
  replicas: 2
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: postgres
        image: postgres:16
        resources: {}
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: node-agent
  namespace: kube-system
spec:
  selector:
    matchLabels: {app: node-agent}
  template:
    metadata:
      labels: {app: node-agent}
    spec:
      containers:
      - name: agent
        image: busybox
        resources: {}
"""


def _scenario(tmp_path: Path) -> Path:
    objects = [*yaml.safe_load_all(KUBECTL_OUTPUT), *yaml.safe_load_all(GET_OUTPUT_SHAPE)]
    scenario: dict[str, Any] = {
        "name": "kubectl-manifests",
        "seed": 7,
        "nodes": [
            {
                "count": 3,
                "namePrefix": "node",
                "template": {"status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}},
                "labelValues": {"topology.kubernetes.io/zone": ["zone-a", "zone-b", "zone-c"]},
            }
        ],
        "objects": objects,
        "steps": [
            {"waitFor": {"condition": "workloadsReady", "timeout": "5m"}},
            {"at": "11m", "sleep": "1s"},
        ],
        "expect": [{"workloadsReady": {}}],
    }
    path = tmp_path / "kubectl.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    return path


def test_kubectl_written_manifests_run_unchanged(tmp_path: Path) -> None:
    result = run_scenario(load_scenario(_scenario(tmp_path)))
    assert result.passed, [e.detail for e in result.expectations if not e.passed]
    rows = {(w["kind"], w["name"]): w for w in result.extra["workloads"]}
    assert rows[("Deployment", "web")]["ready"] == 3
    assert rows[("StatefulSet", "db")]["ready"] == 2
    assert rows[("DaemonSet", "node-agent")]["ready"] == 3  # one per node
    # The CronJob fired at 00:05 and 00:10 (its pods run on: nothing ends them).
    cron_jobs = sorted(name for kind, name in rows if kind == "Job" and name.startswith("cj-"))
    assert len(cron_jobs) == 2, cron_jobs
    assert ("Job", "pi") in rows
    # web (3) + db (2) + node-agent (3) + pi (1) + two CronJob runs (1 each): 11, all running.
    assert result.pods["running"] == 11, result.pods
