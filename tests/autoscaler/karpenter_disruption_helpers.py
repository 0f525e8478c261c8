"""Scenario builders for the Karpenter disruption tests: a generated kwok instance-types file
(twenty 1-CPU ``small-NN`` types, each a little dearer than the last, and a 4-CPU ``large``:
enough cheaper types for spot-to-spot consolidation's 15) and a one-NodePool scenario."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.apiserver.server import WriteRecord

ZONES = ("test-zone-a", "test-zone-b")


def _offerings(od: float) -> list[dict[str, Any]]:
    out = []
    for zone in ZONES:
        for ct, price in (("spot", round(od * 0.7, 6)), ("on-demand", od)):
            reqs = [
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [ct]},
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]},
            ]
            out.append({"Price": price, "Available": True, "Requirements": reqs})
    return out


def instance_types() -> list[dict[str, Any]]:
    def it(name: str, cpu: str, memory: str, od: float) -> dict[str, Any]:
        return {
            "name": name, "architecture": "amd64", "operatingSystems": ["linux"],
            "resources": {"cpu": cpu, "ephemeral-storage": "20Gi", "memory": memory, "pods": "32"},
            "offerings": _offerings(od),
        }  # fmt: skip

    small = [it(f"small-{i:02d}", "1", "2Gi", round(0.020 + 0.001 * i, 6)) for i in range(1, 21)]
    return [*small, it("large", "4", "8Gi", 0.2)]


@dataclass
class Run:
    result: Any
    last: dict[tuple[str, str], Any] = field(default_factory=dict)
    first: dict[tuple[str, str], float] = field(default_factory=dict)
    events: list[tuple[float, Any]] = field(default_factory=list)

    def kind(self, kind: str) -> dict[str, Any]:
        return {name: obj for (k, name), obj in self.last.items() if k == kind}

    def reasons(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for _, e in self.events:
            out[e.reason] = out.get(e.reason, 0) + 1
        return out

    def messages(self, reason: str) -> list[str]:
        return [e.message for _, e in self.events if e.reason == reason]

    @property
    def autoscaler(self) -> dict[str, Any]:
        return dict(self.result.extra["metrics"]["autoscaler"])


def run(path: Path) -> Run:
    out = Run(None)

    def on_write(rec: WriteRecord) -> None:
        if rec.new is None:
            return
        if rec.kind == "Event" and rec.verb == "create" and rec.new.reporting_component == "karpenter":
            out.events.append((rec.time, rec.new))
        if rec.kind in ("NodeClaim", "Node", "NodePool", "Pod"):
            out.last[(rec.kind, rec.new.metadata.name)] = rec.new
            out.first.setdefault((rec.kind, rec.new.metadata.name), rec.time)

    out.result = run_scenario(load_scenario(path), RunOptions(on_write=on_write))
    return out


def scenario(
    tmp: Path,
    *,
    capacity: str = "on-demand",
    replicas: int = 4,
    down_to: int = 1,
    disruption: dict[str, Any] | None = None,
    pod_annotations: dict[str, str] | None = None,
    objects: list[dict[str, Any]] | None = None,
    steps: list[dict[str, Any]] | None = None,
    spot_to_spot: bool = False,
    template_labels: dict[str, str] | None = None,
) -> Path:
    (tmp / "types.json").write_text(json.dumps(instance_types()))
    pool = {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
        "spec": {
            "disruption": disruption or {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "30s"},
            "template": {
                "metadata": {"labels": template_labels or {}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
                    "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": [capacity]}],
                },
            },
        },
    }  # fmt: skip
    pod_meta: dict[str, Any] = {"labels": {"app": "web"}}
    if pod_annotations:
        pod_meta["annotations"] = pod_annotations
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": pod_meta, "spec": {"containers": [
                {"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "900m", "memory": "1Gi"}}},
            ]}},
        },
    }  # fmt: skip
    scale = {"scale": {"kind": "Deployment", "name": "web", "namespace": "default", "replicas": down_to}}
    doc = {
        "name": "karpenter-disruption",
        "seed": 3,
        "kubelet": {"heartbeatInterval": "10s"},
        "autoscaling": {"karpenter": {
            "instanceTypes": {"file": "types.json"}, "provisionDelay": {"mean": "10s"}, "nodePools": [pool],
            **({"featureGates": {"SpotToSpotConsolidation": True}} if spot_to_spot else {}),
        }},
        "objects": [deployment, *(objects or [])],
        "steps": steps if steps is not None else [{"sleep": "2m"}, scale, {"sleep": "4m"}],
    }  # fmt: skip
    path = tmp / "s.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path
