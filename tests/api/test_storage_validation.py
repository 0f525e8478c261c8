"""The volume kinds' validation (upstream ``pkg/apis/core/validation`` ``ValidatePersistentVolume*``/
``ValidatePersistentVolumeClaim*`` and ``pkg/apis/storage/validation``), table-driven after
upstream's ``validation_test.go`` cases, through the manifest loader (``validate``/``run`` see the
same checks as an HTTP create): each bad object is one ``ManifestError`` with its path and
upstream's message; the good ones load."""

from __future__ import annotations

import pytest

from emulator.base.api.codec import ManifestError, load_manifests

PV = """apiVersion: v1
kind: PersistentVolume
metadata: {name: pv}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}
"""
PVC = """apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: c, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"""
SC = """apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: ebs.csi.aws.com
"""
CSINODE = """apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec:
  drivers: [{name: ebs.csi.aws.com, nodeID: i-1, topologyKeys: [topology.kubernetes.io/zone]}]
"""
CAP = """apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap, namespace: default}
storageClassName: fast
capacity: 10Ti
"""
VA = """apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va}
spec: {attacher: ebs.csi.aws.com, nodeName: n1, source: {persistentVolumeName: pv}}
"""
DRIVER = """apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: ebs.csi.aws.com}
spec: {}
"""

RWOP_MIX = "may not use ReadWriteOncePod with other access modes"
MODES = 'supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'
QUANTITY_RE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def _bad(text: str, path: str, detail: str) -> None:
    with pytest.raises(ManifestError) as err:
        load_manifests(text, source="m.yaml")
    assert (err.value.path, err.value.detail) == (path, detail)


INLINE_VA = VA.replace(
    "source: {persistentVolumeName: pv}",
    "source: {inlineVolumeSpec: {accessModes: [ReadWriteOnce], csi: {driver: ebs.csi.aws.com, volumeHandle: v}}}",
)


def test_good_objects_load() -> None:
    assert load_manifests(INLINE_VA, source="m.yaml")[0].spec.source.inline_volume_spec is not None
    objs = load_manifests("---\n".join((PV, PVC, SC, CSINODE, CAP, VA, DRIVER)), source="m.yaml")
    assert [o.kind for o in objs] == [
        "PersistentVolume",
        "PersistentVolumeClaim",
        "StorageClass",
        "CSINode",
        "CSIStorageCapacity",
        "VolumeAttachment",
        "CSIDriver",
    ]


@pytest.mark.parametrize(
    ("text", "path", "detail"),
    [
        pytest.param(
            PV.replace("  accessModes: [ReadWriteOnce]\n", ""), "spec.accessModes", "Required value", id="no-modes"
        ),
        pytest.param(
            PV.replace("[ReadWriteOnce]", "[ReadWriteOnce, Everything]"),
            "spec.accessModes",
            f'Unsupported value: "Everything": {MODES}',
            id="bad-mode",
        ),
        pytest.param(
            PV.replace("[ReadWriteOnce]", "[ReadWriteOncePod, ReadOnlyMany]"),
            "spec.accessModes",
            f"Forbidden: {RWOP_MIX}",
            id="rwop-mixed",
        ),
        pytest.param(PV.replace("  capacity: {storage: 10Gi}\n", ""), "spec.capacity", "Required value", id="no-cap"),
        pytest.param(
            PV.replace("storage: 10Gi", "storage: 10Gi, cpu: '1'"),
            "spec.capacity",
            'Unsupported value: {"cpu": "1", "storage": "10Gi"}: supported values: "storage"',
            id="cap-other-resource",
        ),
        pytest.param(
            PV.replace("10Gi", "-1Gi"),
            "spec.capacity[storage]",
            "Invalid value: -1073741824: must be a valid resource quantity",
            id="cap-negative",
        ),
        pytest.param(
            PV.replace("10Gi", "'0'"),
            "spec.capacity[storage]",
            'Invalid value: "0": must be greater than zero',
            id="cap-zero",
        ),
        pytest.param(
            PV.replace("10Gi", "1e400"),
            "spec.capacity.storage",
            f'Invalid value: "1e400": {QUANTITY_RE}',
            id="cap-1e400",
        ),
        pytest.param(
            PV + "  persistentVolumeReclaimPolicy: Keep\n",
            "spec.persistentVolumeReclaimPolicy",
            'Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"',
            id="reclaim",
        ),
        pytest.param(
            PV + "  nodeAffinity: {}\n",
            "spec.nodeAffinity.required",
            "Required value: must specify required node constraints",
            id="affinity-no-required",
        ),
        pytest.param(
            PV + "  nodeAffinity: {required: {nodeSelectorTerms: []}}\n",
            "spec.nodeAffinity.required.nodeSelectorTerms",
            "Required value: must have at least one node selector term",
            id="affinity-no-terms",
        ),
        pytest.param(
            PV + "  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n"
            "      - matchExpressions: [{key: zone, operator: Near, values: [a]}]\n",
            "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator",
            'Invalid value: "Near": not a valid selector operator',
            id="affinity-bad-operator",
        ),
        pytest.param(
            PV + "  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n"
            "      - matchExpressions: [{key: zone, operator: In}]\n",
            "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values",
            "Required value: must be specified when `operator` is 'In' or 'NotIn'",
            id="affinity-in-without-values",
        ),
        pytest.param(
            PV.replace("  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}\n", ""),
            "spec",
            "Required value: must specify a volume type",
            id="no-source",
        ),
        pytest.param(
            PV + "  hostPath: {path: /tmp}\n",
            "spec.csi",
            "Forbidden: may not specify more than 1 volume type",
            id="two-sources",
        ),
        pytest.param(
            PV.replace("  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}\n", "  local: {path: /mnt/disks/a}\n"),
            "spec.nodeAffinity",
            "Required value: Local volume requires node affinity",
            id="local-without-affinity",
        ),
        pytest.param(
            PV.replace("volumeHandle: vol-1", "volumeHandle: ''"),
            "spec.csi.volumeHandle",
            "Required value",
            id="csi-no-handle",
        ),
        pytest.param(
            PV.replace("driver: ebs.csi.aws.com", "driver: Bad_Driver"),
            "spec.csi.driver",
            f'Invalid value: "Bad_Driver": {SUBDOMAIN}',
            id="csi-bad-driver",
        ),
        pytest.param(
            PV + "  storageClassName: Fast_Class\n",
            "spec.storageClassName",
            f'Invalid value: "Fast_Class": {SUBDOMAIN}',
            id="pv-class-name",
        ),
        pytest.param(
            PV + "  volumeMode: Raw\n",
            "spec.volumeMode",
            'Unsupported value: "Raw": supported values: "Block", "Filesystem"',
            id="pv-volume-mode",
        ),
    ],
)
def test_persistent_volume(text: str, path: str, detail: str) -> None:
    _bad(text, path, detail)


@pytest.mark.parametrize(
    ("text", "path", "detail"),
    [
        pytest.param(
            PVC.replace("  accessModes: [ReadWriteOnce]\n", ""),
            "spec.accessModes",
            "Required value: at least 1 access mode is required",
            id="no-modes",
        ),
        pytest.param(
            PVC.replace("[ReadWriteOnce]", "[ReadWriteMany, ReadWriteOncePod]"),
            "spec.accessModes",
            f"Forbidden: {RWOP_MIX}",
            id="rwop-mixed",
        ),
        pytest.param(
            PVC.replace("[ReadWriteOnce]", "[Sometimes]"),
            "spec.accessModes",
            f'Unsupported value: "Sometimes": {MODES}',
            id="bad-mode",
        ),
        pytest.param(
            PVC.replace("1Gi", "1e400"),
            "spec.resources.requests.storage",
            f'Invalid value: "1e400": {QUANTITY_RE}',
            id="storage-1e400",
        ),
        pytest.param(
            PVC.replace("1Gi", "-5Gi"),
            "spec.resources[storage]",
            'Invalid value: "-5Gi": must be greater than zero',
            id="storage-negative",
        ),
        pytest.param(
            PVC.replace("1Gi", "'0'"),
            "spec.resources[storage]",
            'Invalid value: "0": must be greater than zero',
            id="storage-zero",
        ),
        pytest.param(
            PVC.replace("{requests: {storage: 1Gi}}", "{}"), "spec.resources[storage]", "Required value", id="no-size"
        ),
        pytest.param(
            PVC + "  selector: {matchExpressions: [{key: k, operator: Equals, values: [a]}]}\n",
            "spec.selector.matchExpressions[0].operator",
            'Invalid value: "Equals": not a valid selector operator',
            id="bad-selector",
        ),
        pytest.param(
            PVC + "  volumeMode: Raw\n",
            "spec.volumeMode",
            'Unsupported value: "Raw": supported values: "Block", "Filesystem"',
            id="volume-mode",
        ),
        pytest.param(
            PVC + "  dataSource: {kind: Snapshot, name: s}\n",
            "spec.dataSource",
            "Invalid value: \"Snapshot\": must be 'PersistentVolumeClaim' when referencing the default apiGroup",
            id="data-source-kind",
        ),
        pytest.param(
            PVC.replace("name: c,", "name: Bad_Claim,"),
            "metadata.name",
            'Invalid value: "Bad_Claim": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric '
            "characters, '-' or '.', and must start and end with an alphanumeric character",
            id="name",
        ),
    ],
)
def test_persistent_volume_claim(text: str, path: str, detail: str) -> None:
    _bad(text, path, detail)


@pytest.mark.parametrize(
    ("text", "path", "detail"),
    [
        pytest.param(
            SC + "volumeBindingMode: Eventually\n",
            "volumeBindingMode",
            'Unsupported value: "Eventually": supported values: "Immediate", "WaitForFirstConsumer"',
            id="binding-mode",
        ),
        pytest.param(
            SC + "reclaimPolicy: Recycle\n",
            "reclaimPolicy",
            'Unsupported value: "Recycle": supported values: "Delete", "Retain"',
            id="reclaim",
        ),
        pytest.param(
            SC.replace("provisioner: ebs.csi.aws.com\n", ""), "provisioner", "Required value", id="no-provisioner"
        ),
        pytest.param(
            SC + "allowedTopologies:\n- matchLabelExpressions: [{key: zone, values: []}]\n",
            "allowedTopologies[0].matchLabelExpressions[0].values",
            "Required value",
            id="topology-no-values",
        ),
        pytest.param(
            SC + "allowedTopologies:\n- matchLabelExpressions: [{key: zone, values: [a, a]}]\n",
            "allowedTopologies[0].matchLabelExpressions[0].values[1]",
            'Duplicate value: "a"',
            id="topology-duplicate-value",
        ),
        pytest.param(
            SC + "allowedTopologies:\n- matchLabelExpressions: [{key: zone, values: [a]}]\n"
            "- matchLabelExpressions: [{key: zone, values: [a]}]\n",
            "allowedTopologies[1].matchLabelExpressions",
            'Duplicate value: ""',
            id="topology-duplicate-term",
        ),
        pytest.param(
            CSINODE.replace("nodeID: i-1", "nodeID: ''"), "spec.drivers[0].nodeID", "Required value", id="no-node-id"
        ),
        pytest.param(
            CSINODE.replace("name: ebs.csi.aws.com", "name: Not_A_Driver"),
            "spec.drivers[0].name",
            f'Invalid value: "Not_A_Driver": {SUBDOMAIN}',
            id="driver-name",
        ),
        pytest.param(
            CSINODE.replace(
                "[{name: ebs.csi.aws.com, nodeID: i-1, topologyKeys: [topology.kubernetes.io/zone]}]",
                "[{name: ebs.csi.aws.com, nodeID: i-1}, {name: ebs.csi.aws.com, nodeID: i-2}]",
            ),
            "spec.drivers[1].name",
            'Duplicate value: "ebs.csi.aws.com"',
            id="driver-twice",
        ),
        pytest.param(
            CSINODE.replace("nodeID: i-1,", "nodeID: i-1, allocatable: {count: -1},"),
            "spec.drivers[0].allocatable.count",
            "Invalid value: -1: must be greater than or equal to 0",
            id="negative-count",
        ),
        pytest.param(
            CAP.replace("10Ti", "-1"),
            "capacity",
            'Invalid value: "-1": must be greater than or equal to 0',
            id="capacity-negative",
        ),
        pytest.param(
            CAP.replace("storageClassName: fast\n", ""),
            "storageClassName",
            f'Invalid value: "": {SUBDOMAIN}',
            id="capacity-no-class",
        ),
        pytest.param(
            VA.replace("source: {persistentVolumeName: pv}", "source: {}"),
            "spec.source",
            "Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName",
            id="va-no-source",
        ),
        pytest.param(
            VA.replace("attacher: ebs.csi.aws.com, ", ""), "spec.attacher", "Required value", id="va-attacher"
        ),
        pytest.param(
            VA.replace(
                "source: {persistentVolumeName: pv}",
                "source: {inlineVolumeSpec: {accessModes: [ReadWriteOnce], claimRef: {name: c},"
                " csi: {driver: ebs.csi.aws.com, volumeHandle: v}}}",
            ),
            "spec.source.inlineVolumeSpec.claimRef",
            "Forbidden: may not be specified in the context of inline volumes",
            id="va-inline-claim",
        ),
        pytest.param(
            VA.replace(
                "source: {persistentVolumeName: pv}",
                "source: {inlineVolumeSpec: {accessModes: [ReadWriteOnce], csi: {driver: ebs.csi.aws.com}}}",
            ),
            "spec.source.inlineVolumeSpec.csi.volumeHandle",
            "Required value",
            id="va-inline-handle",
        ),
        pytest.param(
            DRIVER.replace("spec: {}", "spec: {fsGroupPolicy: Sometimes}"),
            "spec.fsGroupPolicy",
            'Unsupported value: "Sometimes": supported values: "File", "None", "ReadWriteOnceWithFSType"',
            id="driver-fsgroup",
        ),
    ],
)
def test_storage_group(text: str, path: str, detail: str) -> None:
    _bad(text, path, detail)
