"""``explain`` keeps ``metadata.deletionTimestamp`` of its input pods: a terminating pod still
occupies its node but is not counted by PodTopologySpread (upstream skips pods with a
deletionTimestamp when counting matching pods)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from emulator.app.commands.explain import explain, load_inputs

NODES = [
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"n-{z}", "labels": {"zone": z}},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
    }
    for z in ("a", "b")
]


def _pod(name: str, node: str = "", **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    if node:
        spec["nodeName"] = node
    else:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}, **meta},
        "spec": spec,
        "status": {"phase": "Running"} if node else {},
    }


@pytest.mark.parametrize(
    ("terminating", "feasible"),
    [
        # a=1 (terminating, not counted), b=1: only zone a keeps the skew at 1.
        pytest.param(
            {"deletionTimestamp": "2025-01-01T00:00:00Z", "deletionGracePeriodSeconds": 30},
            ["n-a"],
            id="terminating-not-counted",
        ),
        pytest.param({}, ["n-a", "n-b"], id="running-counted"),
    ],
)
def test_terminating_pod_does_not_count_toward_spreading(
    tmp_path: Path, terminating: dict[str, Any], feasible: list[str]
) -> None:
    docs = [*NODES, _pod("old", "n-a", **terminating), _pod("other", "n-b"), _pod("new")]
    path = tmp_path / "in.yaml"
    path.write_text("\n---\n".join(json.dumps(d) for d in docs), encoding="utf-8")
    inputs = load_inputs([path], "new", None)
    old = next(p for p in inputs.running if p.metadata.name == "old")
    assert old.metadata.deletion_timestamp == terminating.get("deletionTimestamp")
    exp = explain(inputs)
    assert [n.name for n in exp.nodes if n.feasible] == feasible
