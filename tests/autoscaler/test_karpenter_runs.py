"""Karpenter's provisioner end to end and its scheduling simulation (kubernetes-sigs/karpenter
v1.9.1): the batcher (pkg/controllers/provisioning/batcher.go: 1s idle, 10s max), the scheduler
(pkg/controllers/provisioning/scheduling/scheduler.go: NodePools by weight, requirements and
taints, instance types by price, NodePool limits with subtractMax), NodeClaim names
(``<nodepool>-<5 random>``), the lifecycle conditions (pkg/controllers/nodeclaim/lifecycle:
Launched, Registered, Initialized, Ready), the kwok provider's node labels and price
(kwok/cloudprovider/cloudprovider.go ``addInstanceLabels``), the cost metric, determinism."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from agents.autoscaler.karpenter.budgets import allowed_disruptions
from agents.autoscaler.karpenter.scheduling import Scheduler
from agents.scheduler import SchedulingSimulator
from emulator.app.scenario.karpentercloud import _Type
from emulator.app.scenario.loader import load_scenario, load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.api.codec import object_from_dict, to_builtins
from emulator.base.api.core import Container, Pod, PodSpec, ResourceRequirements, Toleration
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import parse_quantity
from emulator.base.apiserver.server import WriteRecord
from emulator.base.runtime.clock import parse_timestamp

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "scenarios" / "karpenter-burst.yaml"


def _run(path: Path) -> tuple[Any, dict[tuple[str, str], Any], dict[tuple[str, str], float]]:
    last: dict[tuple[str, str], Any] = {}
    first: dict[tuple[str, str], float] = {}

    def on_write(rec: WriteRecord) -> None:
        if rec.kind in ("NodeClaim", "Node", "NodePool") and rec.new is not None:
            last[(rec.kind, rec.new.metadata.name)] = rec.new
            first.setdefault((rec.kind, rec.new.metadata.name), rec.time)

    return run_scenario(load_scenario(path), RunOptions(on_write=on_write)), last, first


def test_shipped_scenario_provisions_nodeclaims() -> None:
    result, last, first = _run(SHIPPED)
    assert result.passed
    claims = {name: obj for (kind, name), obj in last.items() if kind == "NodeClaim"}
    assert len(claims) == 5
    assert all(re.fullmatch(r"(spot|on-demand)-[a-z0-9]{5}", name) for name in claims)
    for name, claim in claims.items():
        conditions = {c.type: c.status for c in claim.status.conditions}
        assert {k: conditions[k] for k in ("Launched", "Registered", "Initialized", "Ready")} == dict.fromkeys(
            ("Launched", "Registered", "Initialized", "Ready"), "True"
        )
        assert claim.status.node_name == name  # the kwok provider names the node after its NodeClaim
        assert claim.status.provider_id == f"kwok://{name}"
        node = last[("Node", name)]
        for key in ("node.kubernetes.io/instance-type", "karpenter.sh/capacity-type", "karpenter.sh/nodepool"):
            assert node.metadata.labels[key] == claim.metadata.labels[key]
        assert node.metadata.labels["topology.kubernetes.io/zone"].startswith("test-zone-")
        assert float(node.metadata.labels["eks-node-viewer/instance-price"]) > 0
    # batching: the 12 replicas pending at 10s close one batch after 1s idle
    burst = sorted(t for (kind, _), t in first.items() if kind == "NodeClaim" and t > 5)
    assert all(11 <= t < 12 for t in burst)
    # weight 50 first: spot until its limit of 8 CPUs (subtractMax), then on-demand
    spot = [c for c in claims.values() if c.metadata.labels["karpenter.sh/nodepool"] == "spot"]
    assert sum(c.status.capacity["cpu"].milli for c in spot) <= 8000
    assert {c.metadata.labels["karpenter.sh/capacity-type"] for c in spot} == {"spot"}
    m = result.extra["metrics"]
    assert m["autoscaler"] == {
        "scaleUps": 5, "scaleDowns": 2, "nodesCreated": 5, "nodesRemoved": 2, "podsDisrupted": 0,
        "nodesDisrupted": {"empty": 2},
    }  # fmt: skip
    # back at 3 replicas: empty NodeClaims are consolidatable 30s after their last pod event and go
    # within their budgets (spot: 10% of 4 nodes rounded up = 1 at a time; on-demand: 1)
    removed = [name for (kind, name), obj in last.items() if kind == "NodeClaim" and obj.metadata.deletion_timestamp]
    assert len(removed) == 2
    for name in removed:
        claim = claims[name]
        consolidatable = next(c for c in claim.status.conditions if c.type == "Consolidatable")
        assert claim.status.last_pod_event_time is not None
        assert (
            parse_timestamp(consolidatable.last_transition_time)
            >= parse_timestamp(claim.status.last_pod_event_time) + 30
        )
    pool = last[("NodePool", "spot")]
    assert pool.status.nodes == len(spot) - sum(1 for n in removed if n.startswith("spot-"))
    prices = sum(float(last[("Node", n)].metadata.labels["eks-node-viewer/instance-price"]) for n in claims)
    assert abs(m["cost"]["perHour"]["max"] - prices) < 1e-5


def test_same_seed_same_trace(tmp_path: Path) -> None:
    first = run_scenario(load_scenario(SHIPPED))
    second = run_scenario(load_scenario(SHIPPED))
    assert first.trace_hash == second.trace_hash


def _types(tmp_path: Path) -> list[Any]:
    shutil.copy(ROOT / "scenarios" / "karpenter" / "instance_types.json", tmp_path / "t.json")
    text = (
        "name: t\nautoscaling:\n  karpenter:\n    instanceTypes: {file: t.json}\n    nodePools:\n"
        "      - {apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: p}, spec: {template: {spec: "
        "{nodeClassRef: {group: g, kind: K, name: n}, requirements: []}}}}\n"
    )
    s = load_scenario_text(text, source="s.yaml", base_dir=tmp_path)
    assert s.autoscaling.karpenter is not None
    return [_Type(it) for it in s.autoscaling.karpenter.instance_types.items]


def _pool(name: str, weight: int | None = None, taints: str = "[]", reqs: str = "[]") -> Any:
    import yaml

    doc = yaml.safe_load(
        f"""apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: {name}}}
spec:
  {"weight: " + str(weight) if weight else "limits: {}"}
  template:
    spec:
      nodeClassRef: {{group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}}
      taints: {taints}
      requirements: {reqs}
"""
    )
    return object_from_dict(doc, source="t")


def _pod(name: str, cpu: str, **spec: Any) -> Pod:
    requests = {"cpu": parse_quantity(cpu), "memory": parse_quantity("1Gi")}
    container = Container(name="c", image="i", resources=ResourceRequirements(requests=requests))
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", uid=name), spec=PodSpec(containers=[container], **spec)
    )


def _solve(tmp_path: Path, pools: list[Any], pods: list[Pod]) -> list[Any]:
    sim = SchedulingSimulator()
    sim.reset([], [])
    rng = random.Random(0)
    names = iter(range(100))
    scheduler = Scheduler(sim, pools, _types(tmp_path), {}, lambda pool: f"{pool}-{next(names)}{rng.random():.0f}")
    return scheduler.solve(pods)


def test_cheapest_instance_type_that_fits(tmp_path: Path) -> None:
    (claim,) = _solve(tmp_path, [_pool("p")], [_pod("a", "3")])  # 3 CPUs: c-4x (3900m allocatable)
    option = claim.options[0]
    assert option.instance_type.name == "c-4x-amd64-linux"
    assert option.labels["karpenter.sh/capacity-type"] == "spot"  # the cheaper offering


def test_pods_pack_onto_one_nodeclaim(tmp_path: Path) -> None:
    claims = _solve(tmp_path, [_pool("p")], [_pod(f"p{i}", "900m") for i in range(4)])
    assert len(claims) == 1
    assert claims[0].options[0].instance_type.name == "c-4x-amd64-linux"


def test_weight_order_and_taints(tmp_path: Path) -> None:
    tainted = _pool("heavy", weight=100, taints="[{key: dedicated, value: gpu, effect: NoSchedule}]")
    plain = _pool("light", weight=1)
    (claim,) = _solve(tmp_path, [plain, tainted], [_pod("a", "1")])
    assert claim.pool.metadata.name == "light"  # does not tolerate the heavier pool's taint
    tol = [Toleration(key="dedicated", operator="Equal", value="gpu", effect="NoSchedule")]
    (claim,) = _solve(tmp_path, [plain, tainted], [_pod("b", "1", tolerations=tol)])
    assert claim.pool.metadata.name == "heavy"


def test_requirements_meet_pod_node_selector(tmp_path: Path) -> None:
    pool = _pool("p", reqs="[{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]")
    (claim,) = _solve(tmp_path, [pool], [_pod("a", "1", node_selector={"topology.kubernetes.io/zone": "test-zone-b"})])
    labels = claim.options[0].labels
    assert (labels["karpenter.sh/capacity-type"], labels["topology.kubernetes.io/zone"]) == ("on-demand", "test-zone-b")
    assert _solve(tmp_path, [pool], [_pod("x", "1", node_selector={"karpenter.sh/capacity-type": "spot"})]) == []


@pytest.mark.parametrize(
    ("budgets", "nodes", "deleting", "expected"),
    [
        pytest.param(None, 4, 0, 1, id="default-10%-rounds-up"),
        pytest.param([{"nodes": "50%"}], 5, 1, 2, id="percent-minus-deleting"),
        pytest.param([{"nodes": "3"}, {"nodes": "20%"}], 10, 0, 2, id="most-restrictive"),
        pytest.param([{"nodes": "0", "reasons": ["Drifted"]}], 10, 0, 2**31 - 1, id="other-reason-maxint32"),
        pytest.param([{"nodes": "0", "reasons": ["Empty"]}], 10, 0, 0, id="blocked"),
    ],
)
def test_allowed_disruptions(budgets: list[dict[str, Any]] | None, nodes: int, deleting: int, expected: int) -> None:
    """pkg/apis/v1/nodepool.go GetAllowedDisruptionsByReason (nodepool_budgets_test.go)."""
    from emulator.base.api.karpenter import default_karpenter

    pool = _pool("p")
    if budgets is not None:
        doc = {"consolidateAfter": "0s", "budgets": budgets}
        spec = pool.spec
        pool = replace(pool, spec=replace(spec, disruption=None))
        pool = object_from_dict(
            {**to_builtins(pool), "spec": {**to_builtins(pool)["spec"], "disruption": doc}}, source="t"
        )
    # BuildDisruptionBudgetMapping: the NodePool's allowed disruptions minus those already disrupting
    assert max(0, allowed_disruptions(default_karpenter(pool), nodes, "Empty", 0.0) - deleting) == expected


EXPIRING = """name: expiring
kubelet: {heartbeatInterval: 10s}
autoscaling:
  karpenter:
    instanceTypes: {file: types.json}
    provisionDelay: {mean: 10s}
    nodePools:
      - apiVersion: karpenter.sh/v1
        kind: NodePool
        metadata: {name: p}
        spec:
          disruption: {consolidateAfter: Never}
          template:
            spec:
              expireAfter: 2m
              nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
              requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: default}
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: nginx, resources: {requests: {cpu: 900m, memory: 1Gi}}}]}
steps:
  - sleep: 5m
"""


def test_expiration_replaces_the_nodeclaim(tmp_path: Path) -> None:
    """pkg/controllers/nodeclaim/expiration: expireAfter since creation deletes the NodeClaim; the
    termination controller drains its node (pods evicted, replaced by a new NodeClaim)."""
    shutil.copy(ROOT / "scenarios" / "karpenter" / "instance_types.json", tmp_path / "types.json")
    (tmp_path / "s.yaml").write_text(EXPIRING)
    result, last, first = _run(tmp_path / "s.yaml")
    claims = sorted((first[k], k[1]) for k in first if k[0] == "NodeClaim")
    assert len(claims) >= 2
    gone = [name for (kind, name), obj in last.items() if kind == "NodeClaim" and obj.metadata.deletion_timestamp]
    assert claims[0][1] in gone
    m = result.extra["metrics"]["autoscaler"]
    assert m["podsDisrupted"] == 2 * len(gone)  # each expired NodeClaim had both pods (2m apart in 5m: 2)
    assert m["nodesRemoved"] == len(gone) == 2
