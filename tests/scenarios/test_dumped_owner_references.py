"""A dumped cluster dropped in: manifests that carry their old ``uid`` and ``ownerReferences``
to each other (pods listed before their ReplicaSet, as ``kubectl get all -o yaml`` may) keep
their ownership: the runner creates owners first and points the dependents at the owners' new
UIDs, so the garbage collector does not delete them as orphans and the ReplicaSet adopts no
extra pods and makes none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.app.scenario.schema import creation_order
from emulator.base.apiserver.server import WriteRecord

RS_UID = "0b6c2f4e-1111-4a3c-9d2e-5f7a8b9c0d1e"


def _pod(i: int, owner_uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"web-7d9f8-{i}",
            "namespace": "default",
            "uid": f"9a9a9a9a-0000-4000-8000-00000000000{i}",
            "resourceVersion": "12345",
            "creationTimestamp": "2025-06-01T10:00:00Z",
            "labels": {"app": "web"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-7d9f8",
                    "uid": owner_uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]},
    }


REPLICASET = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "metadata": {"name": "web-7d9f8", "namespace": "default", "uid": RS_UID, "resourceVersion": "12000"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]},
        },
    },
}


def _scenario(tmp_path: Path, pods: list[dict[str, Any]]) -> Path:
    doc = {
        "name": "dumped",
        "seed": 3,
        "nodes": [
            {"count": 2, "namePrefix": "node", "template": {"status": {"capacity": {"cpu": "4", "pods": "110"}}}}
        ],
        "objects": [*pods, REPLICASET],
        "steps": [{"sleep": "2m"}],
        "expect": [{"podsRunning": {"count": 2, "selector": "app=web"}}],
    }
    path = tmp_path / "dumped.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_owners_are_created_before_their_dependents(tmp_path: Path) -> None:
    scenario = load_scenario(_scenario(tmp_path, [_pod(0, RS_UID), _pod(1, RS_UID)]))
    assert [o.kind for o in creation_order(list(scenario.objects))] == ["ReplicaSet", "Pod", "Pod"]


def test_dumped_pods_stay_owned_by_their_replicaset(tmp_path: Path) -> None:
    writes: list[WriteRecord] = []
    result = run_scenario(
        load_scenario(_scenario(tmp_path, [_pod(0, RS_UID), _pod(1, RS_UID)])), RunOptions(on_write=writes.append)
    )
    assert result.passed, [e.detail for e in result.expectations if not e.passed]
    pods = sorted({w.obj.metadata.name for w in writes if w.kind == "Pod"})
    assert pods == ["web-7d9f8-0", "web-7d9f8-1"]  # kept as they are: none deleted, none added
    assert not [w for w in writes if w.kind == "Pod" and w.verb == "delete"]
    (rs,) = [w for w in result.extra["workloads"] if w["kind"] == "ReplicaSet"]
    assert (rs["desired"], rs["ready"]) == (2, 2)


def test_a_pod_whose_owner_is_not_in_the_dump_is_collected_as_upstream(tmp_path: Path) -> None:
    lost = _pod(1, "ffffffff-0000-4000-8000-000000000000")
    result = run_scenario(load_scenario(_scenario(tmp_path, [_pod(0, RS_UID), lost])))
    # the garbage collector deletes the orphan; the ReplicaSet makes up its second replica
    assert result.pods["total"] == 2
    assert result.passed
