"""The volume kinds through ``serve`` as kubectl uses them: ``apply -f`` of a PersistentVolume,
claim and StorageClass (defaulted as upstream), ``get`` with upstream's columns
(``pkg/printers/internalversion/printers.go``: pv, pvc, storageclass with ``(default)``, csinode,
csidriver, volumeattachment), short names, the status subresource, a 422 for a bad claim and a
StorageClass whose provisioner cannot change. The PV controller runs: the volume turns
Available, the claim of a WaitForFirstConsumer class waits (the class is applied first: a claim
whose class does not exist yet binds at once, as upstream's ``IsDelayBindingMode`` says)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.http.conftest import KUBECTL, NO_KUBECTL, Server, failed, ok

pytestmark = [
    pytest.mark.skipif(not KUBECTL.exists(), reason=NO_KUBECTL),
    pytest.mark.real_time,
    pytest.mark.slow,
]

MANIFEST = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-a}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  storageClassName: fast
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [a]}]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
  storageClassName: fast
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: ebs.csi.aws.com}
spec: {}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-a}
spec:
  drivers: [{name: ebs.csi.aws.com, nodeID: i-1, topologyKeys: [topology.kubernetes.io/zone]}]
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va-a}
spec: {attacher: ebs.csi.aws.com, nodeName: node-a, source: {persistentVolumeName: pv-a}}
"""


def _rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line.strip()]


def test_apply_and_get_the_volume_kinds(kubectl_server: Server, tmp_path: Path) -> None:
    k = kubectl_server.kubectl
    path = tmp_path / "storage.yaml"
    path.write_text(MANIFEST)
    applied = ok(k("apply", "-f", str(path)))
    assert "persistentvolume/pv-a created" in applied
    assert "storageclass.storage.k8s.io/fast created" in applied
    assert "unchanged" in ok(k("apply", "-f", str(path)))
    # the PV controller makes the volume Available; the claim (WaitForFirstConsumer) waits
    ok(k("wait", "--for=jsonpath={.status.phase}=Available", "pv/pv-a", "--timeout=30s"))
    rows = _rows(ok(k("get", "pv,pvc,sc,csinode,csidriver,volumeattachments")))
    assert ["NAME", "CAPACITY", "ACCESS", "MODES", "RECLAIM", "POLICY", "STATUS", "CLAIM", "STORAGECLASS",
            "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"] in rows  # fmt: skip
    pv_row = ["persistentvolume/pv-a", "10Gi", "RWO,ROX", "Retain", "Available", "fast", "<unset>"]
    assert pv_row in [r[:7] for r in rows]
    assert ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS",
            "AGE"] in rows  # fmt: skip
    assert ["persistentvolumeclaim/data", "Pending", "fast", "<unset>"] in [r[:4] for r in rows]
    assert ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"] in rows
    assert ["storageclass.storage.k8s.io/fast", "(default)", "ebs.csi.aws.com", "Delete", "WaitForFirstConsumer",
            "false"] in [r[:6] for r in rows]  # fmt: skip
    assert ["NAME", "DRIVERS", "AGE"] in rows
    assert ["csinode.storage.k8s.io/node-a", "1"] in [r[:2] for r in rows]
    assert ["NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS", "REQUIRESREPUBLISH",
            "MODES", "AGE"] in rows  # fmt: skip
    assert ["csidriver.storage.k8s.io/ebs.csi.aws.com", "true", "false", "false", "<unset>", "false",
            "Persistent"] in [r[:7] for r in rows]  # fmt: skip
    assert ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"] in rows
    assert ["volumeattachment.storage.k8s.io/va-a", "ebs.csi.aws.com", "pv-a", "node-a", "false"] in [
        r[:5] for r in rows
    ]
    wide = _rows(ok(k("get", "pvc", "data", "-o", "wide")))
    assert wide[0][-1] == "VOLUMEMODE"
    assert wide[1][-1] == "Filesystem"
    for kind, name in (
        ("pv", "pv-a"),
        ("pvc", "data"),
        ("sc", "fast"),
        ("csinode", "node-a"),
        ("csidriver", "ebs.csi.aws.com"),
    ):
        assert "Name:" in ok(k("describe", kind, name))
    explained = ok(k("explain", "pv.spec.csi"))
    assert "volumeHandle" in explained
    pv = json.loads(ok(k("get", "pv", "pv-a", "-o", "json")))
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert pv["spec"]["volumeMode"] == "Filesystem"
    assert pv["status"]["phase"] == "Available"


def test_status_subresource_and_update_rules(kubectl_server: Server, tmp_path: Path) -> None:
    k = kubectl_server.kubectl
    path = tmp_path / "storage.yaml"
    path.write_text(MANIFEST)
    ok(k("apply", "-f", str(path)))
    ok(k("patch", "pv", "pv-a", "--subresource=status", "--type=merge", "-p", '{"status":{"phase":"Available"}}'))
    assert ok(k("get", "pv", "pv-a", "-o", "jsonpath={.status.phase}")) == "Available"
    refused = failed(k("patch", "sc", "fast", "--type=merge", "-p", '{"provisioner":"other.csi"}'))
    assert refused == (
        'The StorageClass "fast" is invalid: provisioner: Forbidden: updates to provisioner are forbidden.\n'
    )
    grown = failed(
        k("patch", "pvc", "data", "--type=merge", "-p", '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}')
    )
    assert "spec: Forbidden: spec is immutable after creation except resources.requests" in grown


def test_bad_claim_is_422(kubectl_server: Server, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "bad", "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "-1Gi"}}},
    }
    path.write_text(json.dumps(body))
    result = kubectl_server.kubectl("create", "-f", str(path))
    assert failed(result) == (
        'The PersistentVolumeClaim "bad" is invalid: spec.resources[storage]: Invalid value: "-1Gi": '
        "must be greater than zero\n"
    )
