"""Karpenter's provisioner with PersistentVolumeClaims (kubernetes-sigs/karpenter v1.9.1
pkg/controllers/provisioning/suite_test.go, Context "Volume Topology Requirements"; the code:
provisioning/scheduling/volumetopology.go ``ValidatePersistentVolumeClaims`` and
``GetRequirements``): invalid claims leave the pod ignored with upstream's error, a
WaitForFirstConsumer claim's StorageClass zones and a bound volume's node affinity restrict the
NodeClaim's options; end to end, a StatefulSet with volumeClaimTemplates gets NodeClaims."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from agents.autoscaler.karpenter.scheduling import Scheduler
from agents.autoscaler.karpenter.volumetopology import validate
from agents.scheduler import SchedulingSimulator
from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.api.codec import object_from_dict
from emulator.base.api.core import Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod
from emulator.base.api.volumes import EphemeralVolumeSource, PersistentVolumeClaimVolumeSource, Volume
from emulator.base.apiserver.server import WriteRecord
from tests.autoscaler.test_karpenter_runs import ROOT, _pod, _pool, _types

ZONE = "topology.kubernetes.io/zone"


def _sc(name: str = "sc", mode: str = "WaitForFirstConsumer", zones: tuple[str, ...] = ()) -> Any:
    doc: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
        "provisioner": "ebs.csi.aws.com", "volumeBindingMode": mode,
    }  # fmt: skip
    if zones:
        doc["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": list(zones)}]}]
    return object_from_dict(doc, source="t")


def _pvc(name: str, sc: str | None = "sc", volume: str = "", bound: bool = True, owner: str = "") -> Any:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if sc is not None:
        spec["storageClassName"] = sc
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if owner:  # an ephemeral volume's claim, made for its pod
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner, "uid": owner, "controller": True}]
    if volume:
        spec["volumeName"] = volume
        if bound:
            meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    return object_from_dict(
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}, source="t"
    )


def _pv(name: str, sc: str = "sc", zones: tuple[str, ...] = ()) -> Any:
    spec: dict[str, Any] = {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": sc,
        "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": name},
    }  # fmt: skip
    if zones:
        term = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": list(zones)}]}
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    return object_from_dict(
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec}, source="t"
    )


def _claiming(name: str, claim: str = "", ephemeral: bool = False, zones: tuple[str, ...] = ()) -> Pod:
    if ephemeral:
        volume = Volume(name="data", ephemeral=EphemeralVolumeSource())
    else:
        volume = Volume(name="data", persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=claim))
    affinity = None
    if zones:
        req = NodeSelectorRequirement(key=ZONE, operator="In", values=list(zones))
        terms = NodeSelector(node_selector_terms=[NodeSelectorTerm(match_expressions=[req])])
        affinity = Affinity(node_affinity=NodeAffinity(required_during_scheduling_ignored_during_execution=terms))
    return _pod(name, "1", volumes=[volume], affinity=affinity)


def _sim(objects: list[Any]) -> SchedulingSimulator:
    sim = SchedulingSimulator(workloads=objects)
    sim.reset([], [])
    return sim


@pytest.mark.parametrize(
    ("objects", "claim", "expected"),
    [
        pytest.param([], "invalid", 'getting persistent volume claim, persistentvolumeclaims "invalid" not found',
                     id="invalid-pvc"),
        pytest.param([_pvc("c", sc="", volume="v"), _pv("v", sc="")], "c", None, id="empty-class-bound"),
        pytest.param([_pvc("c", sc="")], "c", "unbound pvc must define a storage class", id="empty-class-unbound"),
        pytest.param([_pvc("c", sc="missing", volume="v"), _pv("v", sc="missing")], "c", None,
                     id="missing-class-bound"),
        pytest.param([_pvc("c", sc="missing")], "c", "failed to validate pvc, failed to get storage class, "
                     'storageclasses.storage.k8s.io "missing" not found', id="missing-class-unbound"),
        pytest.param([_sc(), _pvc("c", volume="invalid-volume-name")], "c",
                     'failed to validate pvc, persistentvolumes "invalid-volume-name" not found',
                     id="invalid-volume-name"),
        pytest.param([_sc(), _pvc("c", volume="v", bound=False), _pv("v")], "c",
                     "pvc is considered unbound because it does not contain annotation", id="no-bind-completed"),
        pytest.param([_sc(mode="Immediate"), _pvc("c")], "c",
                     "failed to validate pvc, pvc with immediate volume binding mode must be bound",
                     id="immediate-unbound"),
        pytest.param([_sc(), _pvc("c")], "c", None, id="wait-for-first-consumer"),
    ],
)  # fmt: skip
def test_validate_persistent_volume_claims(objects: list[Any], claim: str, expected: str | None) -> None:
    """suite_test.go "should (not) schedule ... pvc ..." (ValidatePersistentVolumeClaims)."""
    assert validate(_claiming("p", claim), _sim(objects).volumes) == expected


def _solve(tmp_path: Path, objects: list[Any], pods: list[Pod]) -> tuple[list[Any], dict[str, str]]:
    rng = random.Random(0)
    names = iter(range(100))
    scheduler = Scheduler(
        _sim(objects), [_pool("p")], _types(tmp_path), {}, lambda p: f"{p}-{next(names)}{rng.random():.0f}"
    )
    return scheduler.solve(pods), scheduler.errors


STORAGE = _sc(zones=("test-zone-b", "test-zone-c"))


@pytest.mark.parametrize(
    ("objects", "pod", "zone"),
    [
        pytest.param([STORAGE, _pvc("c")], _claiming("p", "c", zones=("test-zone-a", "test-zone-c")), "test-zone-c",
                     id="storage-class-zones"),
        pytest.param([STORAGE, _pvc("p-data", owner="p")],
                     _claiming("p", ephemeral=True, zones=("test-zone-a", "test-zone-c")), "test-zone-c",
                     id="storage-class-zones-ephemeral"),
        pytest.param([STORAGE, _pvc("c")], _claiming("p", "c", zones=("test-zone-a",)), None,
                     id="storage-class-zones-incompatible"),
        pytest.param([STORAGE, _pvc("p-data", owner="p")], _claiming("p", ephemeral=True, zones=("test-zone-a",)), None,
                     id="storage-class-zones-incompatible-ephemeral"),
        pytest.param([STORAGE, _pvc("c", volume="v"), _pv("v", zones=("test-zone-c",))], _claiming("p", "c"),
                     "test-zone-c", id="volume-zones"),
        pytest.param([STORAGE, _pvc("p-data", volume="v", owner="p"), _pv("v", zones=("test-zone-c",))],
                     _claiming("p", ephemeral=True), "test-zone-c", id="volume-zones-ephemeral"),
        pytest.param([STORAGE, _pvc("c", volume="v"), _pv("v", zones=("test-zone-c",))],
                     _claiming("p", "c", zones=("test-zone-a",)), None, id="volume-zones-incompatible"),
    ],
)  # fmt: skip
def test_volume_topology_requirements(tmp_path: Path, objects: list[Any], pod: Pod, zone: str | None) -> None:
    """suite_test.go "should schedule to storage class zones / volume zones ...", "should not
    schedule if ... zones are incompatible" (GetRequirements added to the NodeClaim's)."""
    claims, errors = _solve(tmp_path, objects, [pod])
    if zone is None:
        assert claims == []
        assert pod.metadata.uid in errors
        return
    (claim,) = claims
    assert {o.labels[ZONE] for o in claim.options} == {zone}


def test_missing_volume_leaves_pod_out(tmp_path: Path) -> None:
    """getVolumeTopologyRequirements: a pod whose lookup fails is excluded from the simulation."""
    claims, errors = _solve(tmp_path, [STORAGE, _pvc("c", volume="gone")], [_claiming("p", "c"), _pod("q", "1")])
    assert len(claims) == 1
    assert [p.metadata.name for p in claims[0].pods] == ["q"]
    assert errors["p"] == (
        "getting volume topology requirements, getting existing requirements, getting persistent volume, "
        'persistentvolumes "gone" not found'
    )


SCENARIO = """name: karpenter-volumes
seed: 7
storage:
  drivers:
    - name: ebs.csi.aws.com
      topologyKeys: [topology.kubernetes.io/zone]
      provisionDelay: {mean: 2s}
      attachDelay: {mean: 1s}
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
              requirements: []
objects:
  - apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata: {name: gp3}
    provisioner: ebs.csi.aws.com
    volumeBindingMode: WaitForFirstConsumer
    allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [test-zone-b]}]}]
  - apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata: {name: now}
    provisioner: ebs.csi.aws.com
    volumeBindingMode: Immediate
  - {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: lonely, namespace: default},
     spec: {storageClassName: missing, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}
  - apiVersion: v1
    kind: Pod
    metadata: {name: orphan, namespace: default}
    spec:
      containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]
      volumes: [{name: d, persistentVolumeClaim: {claimName: lonely}}]
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: db, namespace: default}
    spec:
      replicas: 2
      serviceName: db
      podManagementPolicy: Parallel
      selector: {matchLabels: {app: db}}
      template:
        metadata: {labels: {app: db}}
        spec:
          containers:
            - {name: db, image: postgres:16, resources: {requests: {cpu: 900m, memory: 1Gi}},
               volumeMounts: [{name: data, mountPath: /data}]}
      volumeClaimTemplates:
        - metadata: {name: data}
          spec: {accessModes: [ReadWriteOnce], storageClassName: gp3, resources: {requests: {storage: 10Gi}}}
steps:
  - waitFor: {condition: workloadsReady, kind: StatefulSet, name: db, namespace: default, timeout: 5m}
  - sleep: 10s
expect:
  - podsRunning: {count: 2, selector: app=db}
"""


def test_statefulset_with_wait_for_first_consumer_claims_gets_nodeclaims(tmp_path: Path) -> None:
    """The reported gap: a pod with a WaitForFirstConsumer claim was never placed by the
    simulation, so no NodeClaim was made. Now its StorageClass zone (test-zone-b) is the
    NodeClaims'; the pod with an unbound claim of a missing StorageClass is ignored with
    upstream's FailedScheduling Event and gets none."""
    (tmp_path / "t.json").write_text((ROOT / "scenarios" / "karpenter" / "instance_types.json").read_text())
    claims: dict[str, Any] = {}
    events: list[Any] = []

    def on_write(rec: WriteRecord) -> None:
        if rec.kind == "NodeClaim" and rec.new is not None:
            claims[rec.new.metadata.name] = rec.new
        if rec.kind == "Event" and rec.new is not None and rec.new.source.component == "karpenter":
            events.append(rec.new)

    scenario = load_scenario_text(SCENARIO, source="s.yaml", base_dir=tmp_path)
    result = run_scenario(scenario, RunOptions(on_write=on_write))
    assert result.passed, result
    assert claims
    assert {c.metadata.labels[ZONE] for c in claims.values()} == {"test-zone-b"}
    failed = [e for e in events if e.reason == "FailedScheduling"]
    assert [(e.involved_object.name, e.message) for e in failed] == [
        (
            "orphan",
            "Failed to schedule pod, failed to validate pvc, failed to get storage class, "
            'storageclasses.storage.k8s.io "missing" not found',
        )
    ]
