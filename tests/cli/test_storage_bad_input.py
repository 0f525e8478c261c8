"""Bad volume objects in a scenario: ``validate`` and ``run`` refuse them as an HTTP create would,
with one ``error:`` line naming the file, the object's path and upstream's message, exit 2,
nothing run (issue 25, "Bad input"); a good set of them validates."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.cli import main

NODES = """nodes:
  - count: 1
    namePrefix: n
    template:
      status: {capacity: {cpu: "4", memory: 16Gi, pods: "110"}}
"""
GOOD = """  - apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata: {name: fast}
    provisioner: ebs.csi.aws.com
    volumeBindingMode: WaitForFirstConsumer
  - apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: data, namespace: default}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
      storageClassName: fast
  - apiVersion: v1
    kind: PersistentVolume
    metadata: {name: pv-a}
    spec:
      capacity: {storage: 10Gi}
      accessModes: [ReadWriteOnce]
      csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}
"""

CASES = [
    pytest.param(
        GOOD.replace("storage: 1Gi", "storage: 1e400"),
        'objects[1].spec.resources.requests.storage: Invalid value: "1e400": quantities must match',
        id="claim-1e400",
    ),
    pytest.param(
        GOOD.replace("storage: 1Gi", "storage: -1Gi"),
        'objects[1].spec.resources[storage]: Invalid value: "-1Gi": must be greater than zero',
        id="claim-negative",
    ),
    pytest.param(
        GOOD.replace("WaitForFirstConsumer", "Eventually"),
        'objects[0].volumeBindingMode: Unsupported value: "Eventually": supported values: "Immediate", '
        '"WaitForFirstConsumer"',
        id="binding-mode",
    ),
    pytest.param(
        GOOD.replace(
            "    provisioner: ebs.csi.aws.com\n", "    provisioner: ebs.csi.aws.com\n    reclaimPolicy: Keep\n"
        ),
        'objects[0].reclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Retain"',
        id="reclaim-policy",
    ),
    pytest.param(
        GOOD + "      nodeAffinity:\n        required:\n          nodeSelectorTerms:\n"
        "          - matchExpressions: [{key: zone, operator: Near, values: [a]}]\n",
        "objects[2].spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator: "
        'Invalid value: "Near": not a valid selector operator',
        id="pv-malformed-affinity",
    ),
    pytest.param(
        GOOD.replace(
            "      accessModes: [ReadWriteOnce]\n      csi",
            "      accessModes: [ReadWriteOncePod, ReadWriteMany]\n      csi",
        ),
        "objects[2].spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
        id="pv-rwop-mixed",
    ),
]


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize(("objects", "expected"), CASES)
def test_bad_volume_objects_are_refused(
    command: str, objects: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(f"name: storage\nobjects:\n{objects}{NODES}")
    assert main([command, str(path)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {path}:")
    assert expected in lines[0]


def test_good_volume_objects_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(f"name: storage\nobjects:\n{GOOD}{NODES}")
    assert main(["validate", str(path)]) == 0, capsys.readouterr().err
