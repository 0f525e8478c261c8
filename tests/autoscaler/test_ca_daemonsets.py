"""DaemonSet pods on the Cluster Autoscaler's template nodes (cluster-autoscaler 1.34
utils/daemonset/daemonset_test.go ``TestGetDaemonSetPodsForNode``; the wiring:
simulator.SanitizedTemplateNodeInfoFromNodeGroup, kube-controller-manager's
``NodeShouldRunDaemonPod`` for the taints)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.autoscaler.clusterautoscaler.daemonsets import daemon_pods_for_node
from emulator.app.scenario.loader import load_scenario_text
from emulator.base.api.codec import object_from_dict
from emulator.base.api.core import Node
from tests.autoscaler.test_ca_runs import ROOT, _run


def _ds(name: str, cpu: str, memory: str, selector: dict[str, str] | None = None, **spec: Any) -> Any:
    labels = {"name": "simple-daemon", "type": "production"}
    template_spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "foo/bar", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
        **spec,
    }
    if selector:
        template_spec["nodeSelector"] = selector
    doc = {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": "default", "uid": name},
        "spec": {"selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": template_spec}},
    }  # fmt: skip
    return object_from_dict(doc, source="t")


def _node(taints: list[dict[str, str]] | None = None) -> Node:
    doc = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node"}, "spec": {"taints": taints or []},
           "status": {"capacity": {"cpu": "1", "memory": "1000"}}}  # fmt: skip
    node = object_from_dict(doc, source="t")
    assert isinstance(node, Node)
    return node


DS1 = _ds("ds1", "0.1", "100M")
DS2 = _ds("ds2", "0.1", "100M", {"foo": "bar"})
DS3 = _ds("ds1", "4", "4000M")
TAINT = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]


@pytest.mark.parametrize(
    ("daemonsets", "node", "expected"),
    [
        pytest.param([DS1, DS2], _node(), ["ds1"], id="selector-not-matched"),
        pytest.param([DS1], _node(), ["ds1"], id="one"),
        pytest.param([DS2], _node(), [], id="only-unmatched"),
        pytest.param([DS3], _node(), ["ds1"], id="larger-than-the-node-still-listed"),
        pytest.param([], _node(), [], id="none"),
        pytest.param([DS1], _node(TAINT), [], id="untolerated-taint"),
        pytest.param([_ds("t", "0.1", "1", tolerations=[{"key": "dedicated", "operator": "Exists"}])], _node(TAINT),
                     ["t"], id="tolerated-taint"),
        pytest.param([DS1], _node([{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]), ["ds1"],
                     id="daemon-tolerations"),
    ],
)  # fmt: skip
def test_get_daemonset_pods_for_node(daemonsets: list[Any], node: Node, expected: list[str]) -> None:
    pods = daemon_pods_for_node(node, daemonsets)
    assert [p.metadata.owner_references[0].name for p in pods] == expected
    assert all(p.metadata.name.startswith(n) for p, n in zip(pods, expected, strict=True))


SCENARIO = """name: ca-daemonsets
kubelet: {heartbeatInterval: 10s}
autoscaling:
  clusterAutoscaler:
    nodeGroups:
      - name: g
        minSize: 0
        maxSize: 3
        pricePerHour: 1
        provisionDelay: {mean: 30s}
        template: {status: {capacity: {cpu: "2", memory: 4Gi, pods: "110"}}}
objects:
  - apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: agent, namespace: default}
    spec:
      selector: {matchLabels: {app: agent}}
      template:
        metadata: {labels: {app: agent}}
        spec:
          containers: [{name: a, image: i, resources: {requests: {cpu: DAEMON_CPU}}}]
steps:
  - createPods:
      count: 1
      namePrefix: p
      template: {spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "1500m"}}}]}}
  - sleep: 2m
"""


@pytest.mark.parametrize(("daemon_cpu", "scaled"), [("100m", True), ("1", False)])
def test_template_node_carries_the_daemonset_pods(daemon_cpu: str, scaled: bool) -> None:
    """A 1.5-CPU pod fits a 2-CPU template with a 100m daemon, not with a 1-CPU one (upstream:
    "Insufficient cpu" on the template NodeInfo holding the DaemonSet pod)."""
    text = SCENARIO.replace("DAEMON_CPU", f'"{daemon_cpu}"')
    _, events, nodes = _run(load_scenario_text(text, source="s.yaml", base_dir=ROOT))
    created = [n for n in nodes if n[1] == "create"]
    if scaled:
        assert len(created) == 1
        return
    assert not created
    assert {e[4] for e in events if e[1] == "NotTriggerScaleUp"} == {"pod didn't trigger scale-up: 1 Insufficient cpu"}
