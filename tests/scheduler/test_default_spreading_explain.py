"""``explain`` counts the workload objects the scheduler reads, as a run does: a ReplicaSet or
Service in the inputs gives a pod PodTopologySpread's system-default constraints, and a
PodDisruptionBudget in the inputs reprieves its pods from preemption."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from emulator.app.commands.explain import explain, load_inputs

WEB = {"app": "web"}


def _node(name: str, zone: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": name}},
        "status": {"capacity": {"cpu": cpu, "memory": "64Gi", "pods": "110"}},
    }


def _pod(name: str, node: str = "", *, labels: dict[str, str], owner: str = "", **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if owner:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": f"uid-{owner}", "controller": True}
        ]
    body: dict[str, Any] = {
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
        **spec,
    }
    if node:
        body["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": body,
        "status": {"phase": "Running"} if node else {},
    }


REPLICA_SET = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": WEB},
        "template": {"metadata": {"labels": WEB}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
    },
}
SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"selector": WEB, "ports": [{"port": 80}]},
}


def _write(tmp_path: Path, docs: list[dict[str, Any]]) -> Path:
    path = tmp_path / "in.yaml"
    path.write_text("\n---\n".join(json.dumps(d) for d in docs), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("extra", "selected"),
    [
        pytest.param([REPLICA_SET], "n-b", id="replicaset-spreads"),
        pytest.param([SERVICE], "n-b", id="service-spreads"),
        pytest.param([], "n-a", id="nothing-selects-resources-decide"),
    ],
)
def test_explain_applies_default_spreading(tmp_path: Path, extra: list[dict[str, Any]], selected: str) -> None:
    docs = [
        _node("n-a", "a", "64"),
        _node("n-b", "b", "8"),
        *extra,
        _pod("web-0", "n-a", labels=WEB, owner="web"),
        _pod("web-1", "n-a", labels=WEB, owner="web"),
        _pod("web-2", labels=WEB, owner="web"),
    ]
    exp = explain(load_inputs([_write(tmp_path, docs)], "web-2", None))
    assert exp.selected == selected


def _priority_class(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def _pdb(app: str, allowed: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": app, "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": allowed, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1},
    }


@pytest.mark.parametrize(
    ("pdbs", "nominated"),
    [
        pytest.param([], "n2", id="no-budget"),
        pytest.param([_pdb("b", 0)], "n1", id="budget-reprieves-b"),
        pytest.param([_pdb("b", 1)], "n2", id="budget-allows-one"),
        pytest.param([_pdb("a", 0)], "n2", id="budget-on-the-other-node"),
    ],
)
def test_explain_preemption_honours_budgets(tmp_path: Path, pdbs: list[dict[str, Any]], nominated: str) -> None:
    docs = [
        _priority_class("low", 10),
        _priority_class("high", 1000),
        _node("n1", "a", "1"),
        _node("n2", "a", "1"),
        *pdbs,
        _pod("a", "n1", labels={"app": "a"}, priorityClassName="low"),
        _pod("b", "n2", labels={"app": "b"}, priorityClassName="low"),
        _pod("p", labels={}, priorityClassName="high"),
    ]
    exp = explain(load_inputs([_write(tmp_path, docs)], "p", None))
    assert exp.preemption is not None
    assert exp.preemption.nominated_node == nominated
