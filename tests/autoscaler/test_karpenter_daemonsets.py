"""The DaemonSet overhead of Karpenter's new NodeClaims (kubernetes-sigs/karpenter v1.9.1
pkg/controllers/provisioning/suite_test.go, Context "Daemonsets", and "should create a nodeclaim
with resource requests with daemon overhead"; the code: provisioner.go ``getDaemonSetPods``,
scheduling/scheduler.go ``getDaemonOverhead``/``isDaemonPodCompatible``, utils/daemonset
``PodForDaemonSet``). Upstream's instance types there are 2 and 4 CPUs; here the kwok file's
c-2x (2 CPUs) and c-4x (4 CPUs): a 1-CPU pod alone takes c-2x, with a 2-CPU daemon c-4x."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from agents.autoscaler.karpenter.daemonoverhead import daemon_pods, reservations
from agents.autoscaler.karpenter.scheduling import Scheduler, pod_matches, tolerates
from agents.scheduler import SchedulingSimulator
from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.api.codec import object_from_dict
from emulator.base.api.core import Pod, Taint, Toleration
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.resources import pod_requests
from emulator.base.apiserver.server import WriteRecord
from tests.autoscaler.test_karpenter_runs import ROOT, _pod, _pool, _types


def _ds(cpu: str = "2", memory: str = "2Gi", limits_only: bool = False, **spec: Any) -> Any:
    resources = {"limits" if limits_only else "requests": {"cpu": cpu, "memory": memory}}
    doc = {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds", "namespace": "default", "uid": "ds"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
            "containers": [{"name": "c", "image": "i", "resources": resources}], **spec}}},
    }  # fmt: skip
    return object_from_dict(doc, source="t")


def _solve(tmp_path: Path, pools: list[Any], daemonsets: list[Any], pod: Pod) -> list[Any]:
    sim = SchedulingSimulator()
    sim.reset([], [])
    rng = random.Random(0)
    names = iter(range(100))
    daemons = daemon_pods(daemonsets, [])
    scheduler = Scheduler(
        sim, pools, _types(tmp_path), {}, lambda p: f"{p}-{next(names)}{rng.random():.0f}", daemons=daemons
    )
    return scheduler.solve([pod])


TAINTED = "[{key: foo, value: bar, effect: NoSchedule}]"


def _starting(pool: Any) -> Any:
    """The NodePool with the startup taint ``foo.com/taint:NoSchedule``."""
    spec = pool.spec.template.spec
    template = replace(
        pool.spec.template, spec=replace(spec, startup_taints=[Taint(key="foo.com/taint", effect="NoSchedule")])
    )
    return replace(pool, spec=replace(pool.spec, template=template))


EVERYTHING = [Toleration(operator="Exists")]
NOT_IN = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "foo", "operator": "NotIn", "values": ["bar"]}]}]}}}  # fmt: skip
TWO_TERMS = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]},
    {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["test-zone-a"]}]},
]}}}  # fmt: skip


@pytest.mark.parametrize(
    ("pool", "daemonset", "pod", "instance_type"),
    [
        pytest.param(_pool("p"), None, _pod("a", "1"), "c-2x-amd64-linux", id="no-daemonset"),
        pytest.param(_pool("p"), _ds(), _pod("a", "1"), "c-4x-amd64-linux", id="should-account-for-daemonsets"),
        pytest.param(_pool("p"), _ds(limits_only=True), _pod("a", "1"), "c-4x-amd64-linux",
                     id="limits-merged-into-requests"),
        pytest.param(_starting(_pool("p")), _ds(), _pod("a", "1"), "c-4x-amd64-linux",
                     id="should-account-for-daemonsets-with-startup-taint"),
        pytest.param(_pool("p"), _ds(cpu="10000", memory="10000Gi"), _pod("a", "1"), None,
                     id="should-not-schedule-if-daemonset-overhead-is-too-large"),
        pytest.param(_pool("p", taints=TAINTED), _ds(), _pod("a", "1", tolerations=EVERYTHING), "c-2x-amd64-linux",
                     id="should-ignore-daemonsets-without-matching-tolerations"),
        pytest.param(_pool("p"), _ds(nodeSelector={"node": "invalid"}), _pod("a", "1"), "c-2x-amd64-linux",
                     id="should-ignore-daemonsets-with-an-invalid-selector"),
        pytest.param(_pool("p"), _ds(affinity=NOT_IN), _pod("a", "1", node_selector={
                     "topology.kubernetes.io/zone": "test-zone-b"}), "c-4x-amd64-linux",
                     id="should-account-daemonsets-with-notin-operator-and-unspecified-key"),
        pytest.param(_pool("p"), _ds(affinity=TWO_TERMS), _pod("a", "1"), "c-4x-amd64-linux",
                     id="should-consider-a-daemonset-schedulable-with-multiple-node-affinity-terms"),
        pytest.param(_pool("p", taints="[{key: foo, value: bar, effect: PreferNoSchedule}]"), _ds(), _pod("a", "1"),
                     "c-4x-amd64-linux", id="should-consider-a-daemonset-schedulable-with-a-prefernoschedule-taint"),
    ],
)  # fmt: skip
def test_daemonset_overhead(tmp_path: Path, pool: Any, daemonset: Any, pod: Pod, instance_type: str | None) -> None:
    claims = _solve(tmp_path, [pool], [daemonset] if daemonset is not None else [], pod)
    if instance_type is None:
        assert claims == []
        return
    (claim,) = claims
    assert claim.options[0].instance_type.name == instance_type


def test_nodeclaim_requests_include_daemon_overhead(tmp_path: Path) -> None:
    """ "should create a nodeclaim with resource requests with daemon overhead": cpu 2, memory
    2Mi, pods 2 (the NodeClaim's ``spec.resources.requests`` are written from these)."""
    (claim,) = _solve(tmp_path, [_pool("p")], [_ds(cpu="1", memory="1Mi")], _pod("a", "1"))
    assert claim.requests == {"cpu": 2000, "memory": 1024**3 + 1024**2, "pods": 2}


def test_daemon_pods_prefer_the_live_pod_with_the_template_affinity() -> None:
    """ "should account for overhead using daemonset pod spec instead of daemonset spec", "should
    remove daemonset node hostname affinity when considering daemonset schedulability"."""
    ds = _ds(cpu="1")
    live = object_from_dict(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ds-x", "namespace": "default"}, "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "3"}}}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}}}}},
        source="t",
    )  # fmt: skip
    owner = OwnerReference(api_version="apps/v1", kind="DaemonSet", name="ds", uid="ds", controller=True)
    assert isinstance(live, Pod)
    live = Pod(metadata=ObjectMeta(name="ds-x", namespace="default", owner_references=[owner]), spec=live.spec)
    (pod,) = daemon_pods([ds], [live])
    assert pod_requests(pod)["cpu"] == 3000
    affinity = pod.spec.affinity
    assert affinity is not None
    assert affinity.node_affinity is not None
    assert affinity.node_affinity.required_during_scheduling_ignored_during_execution is None


SCENARIO = """name: karpenter-daemonsets
seed: 7
autoscaling:
  karpenter:
    instanceTypes: {file: t.json}
    provisionDelay: {mean: 30s}
    nodePools:
      - apiVersion: karpenter.sh/v1
        kind: NodePool
        metadata: {name: default}
        spec:
          template:
            spec:
              nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
              requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
objects:
  - apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: agent, namespace: default}
    spec:
      selector: {matchLabels: {app: agent}}
      template:
        metadata: {labels: {app: agent}}
        spec:
          containers: [{name: a, image: i, resources: {requests: {cpu: "2", memory: 1Gi}}}]
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: default}
    spec:
      replicas: 1
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers: [{name: w, image: i, resources: {requests: {cpu: "1", memory: 1Gi}}}]
steps:
  - waitFor: {condition: workloadsReady, kind: Deployment, name: web, namespace: default, timeout: 5m}
  - sleep: 30s
expect:
  - podsRunning: {count: 2}
"""


def test_daemonset_pod_fits_on_the_new_nodeclaim(tmp_path: Path) -> None:
    """End to end: the NodeClaim is sized for the Deployment's pod and the DaemonSet's (c-4x, not
    c-2x, where the daemon pod would not fit), its requests say so, both pods run there."""
    (tmp_path / "t.json").write_text((ROOT / "scenarios" / "karpenter" / "instance_types.json").read_text())
    claims: dict[str, Any] = {}

    def on_write(rec: WriteRecord) -> None:
        if rec.kind == "NodeClaim" and rec.new is not None:
            claims[rec.new.metadata.name] = rec.new

    result = run_scenario(
        load_scenario_text(SCENARIO, source="s.yaml", base_dir=tmp_path), RunOptions(on_write=on_write)
    )
    assert result.passed, result
    (claim,) = claims.values()
    assert claim.metadata.labels["node.kubernetes.io/instance-type"] == "c-4x-amd64-linux"
    requests = {k: q.milli for k, q in claim.spec.resources.requests.items()}
    assert requests == {"cpu": 3000, "memory": 2 * 1024**3 * 1000, "pods": 2000}


# --- existing and in-flight nodes (scheduler.go calculateExistingNodeClaims, NewExistingNode) ---


def _existing(taints: list[Taint] | None = None, labels: dict[str, str] | None = None) -> Any:
    """A 4-CPU node already in the cluster (registered and initialized)."""
    doc = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "n", "labels": {"kubernetes.io/hostname": "n", **(labels or {})}},
        "spec": {"taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in taints or []]},
        "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                   "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
    }  # fmt: skip
    return object_from_dict(doc, source="t")


def _daemon_pod_on(node: str) -> Pod:
    (pod,) = daemon_pods([_ds()], [])
    return replace(pod, metadata=replace(pod.metadata, name="ds-x", uid="ds-x"), spec=replace(pod.spec, node_name=node))


@pytest.mark.parametrize(
    ("node", "bound", "daemonset", "reserved", "placed_on_node"),
    [
        pytest.param(_existing(), [], None, 0, True, id="no-daemonset"),
        pytest.param(_existing(), [], _ds(), 1, False, id="daemon-still-to-come-takes-its-requests"),
        pytest.param(_existing(), [_daemon_pod_on("n")], _ds(), 0, False, id="daemon-pod-already-there"),
        pytest.param(_existing(taints=[Taint(key="foo", value="bar", effect="NoSchedule")]), [], _ds(), 0, True,
                     id="daemon-not-tolerating-the-node"),
        pytest.param(_existing(), [], _ds(nodeSelector={"node": "invalid"}), 0, True,
                     id="daemon-not-selecting-the-node"),
        pytest.param(_existing(labels={"node": "ok"}), [], _ds(nodeSelector={"node": "ok"}), 1, False,
                     id="daemon-selecting-the-node"),
    ],
)  # fmt: skip
def test_existing_nodes_keep_room_for_their_daemons(
    tmp_path: Path, node: Any, bound: list[Pod], daemonset: Any, reserved: int, placed_on_node: bool
) -> None:
    """A 3-CPU pod (tolerating everything) fits the 4-CPU node only while no 2-CPU daemon pod
    is, or is still to be, on it."""
    daemons = daemon_pods([daemonset] if daemonset is not None else [], bound)
    stand_ins = reservations([node], bound, daemons, lambda n: n.spec.taints, tolerates, pod_matches)
    assert len(stand_ins) == reserved
    assert all(p.spec.node_name == "n" and pod_requests(p)["cpu"] == 2000 for p in stand_ins)
    sim = SchedulingSimulator()
    sim.reset([node], [*bound, *stand_ins])
    names = iter(range(100))
    scheduler = Scheduler(sim, [_pool("p")], _types(tmp_path), {}, lambda p: f"{p}-{next(names)}", daemons=daemons)
    claims = scheduler.solve([_pod("a", "3", tolerations=EVERYTHING)])
    assert (claims == []) is placed_on_node
