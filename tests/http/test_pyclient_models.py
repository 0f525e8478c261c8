"""Every kind the emulator stores, as the HTTP door encodes it, deserializes in the official
Python client's strict (pydantic) models — one malformed object would fail a whole list.

The objects come from short scenario runs with workloads (their last state per object), plus
the kinds those runs do not produce (StatefulSet, CronJob), built from manifests.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.api.codec import load_manifests
from emulator.base.api.core import Namespace
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver.server import ApiServer
from emulator.base.http.codec import encode_list, encode_object
from emulator.base.http.resources import RESOURCES, for_kind
from emulator.base.runtime.clock import StoppedClock
from tests.api.upstream_fields import MODELS

kubernetes = pytest.importorskip("kubernetes", reason="the official kubernetes client is a test dependency")
pytestmark = pytest.mark.slow  # four scenario runs: ~15 s

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = [
    ROOT / "scenarios" / "workloads" / "rollout-drain-pdb.yaml",
    ROOT / "scenarios" / "workloads" / "daemonset-late-nodes.yaml",
    ROOT / "scenarios" / "workloads" / "job-backoff.yaml",
    ROOT / "scenarios" / "kubelet-basics.yaml",
    ROOT / "scenarios" / "workloads" / "preemption-pdb.yaml",
]
EXTRA = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 5
  behavior: {scaleDown: {stabilizationWindowSeconds: 60}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  serviceName: db
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: postgres}]}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: default}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: default}
data: {mode: fast}
binaryData: {blob: AAEC}
---
apiVersion: v1
kind: Secret
metadata: {name: web-tls, namespace: default}
type: kubernetes.io/tls
data: {tls.crt: Y2VydA==}
stringData: {tls.key: key}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-a}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  claimRef: {namespace: default, name: data}
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1, fsType: ext4, volumeAttributes: {type: gp3}}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [a]}]}]
  mountOptions: [noatime]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
  storageClassName: fast
  selector: {matchLabels: {tier: db}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: ebs.csi.aws.com
parameters: {type: gp3}
volumeBindingMode: WaitForFirstConsumer
allowVolumeExpansion: true
allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [a, b]}]}]
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: ebs.csi.aws.com}
spec: {tokenRequests: [{audience: aws}]}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-a}
spec:
  drivers: [{name: ebs.csi.aws.com, nodeID: i-1, topologyKeys: [topology.kubernetes.io/zone], allocatable: {count: 25}}]
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-a, namespace: default}
storageClassName: fast
nodeTopology: {matchLabels: {topology.kubernetes.io/zone: a}}
capacity: 10Ti
maximumVolumeSize: 1Ti
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va-a}
spec: {attacher: ebs.csi.aws.com, nodeName: node-a, source: {persistentVolumeName: pv-a}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-a-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-a
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes: {model: {string: A100}, memoryGiB: {int: 80}, driverVersion: {version: 1.2.3}, mig: {bool: false}}
    capacity: {memory: {value: 80Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu-claim, namespace: default}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, selectors: [{cel: {expression: 'true'}}]}}]
    constraints: [{requests: [gpu], matchAttribute: gpu.example.com/model}]
    config: [{requests: [gpu], opaque: {driver: gpu.example.com, parameters: {sharing: none}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu-template, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        firstAvailable:
        - {name: big, deviceClassName: gpu.example.com}
        - {name: all, deviceClassName: gpu.example.com, allocationMode: All}
"""
MODEL = {kind: model for kind, model in MODELS.items() if kind != "Binding"}
"""Every stored kind's client model (one table with the unknown-field schema's, ``tests/api/upstream_fields.py``)."""


def _stored_objects() -> dict[str, list[Any]]:
    last: dict[tuple[str, str, str], Any] = {}

    def on_write(rec: Any) -> None:
        if rec.new is not None:
            last[(rec.kind, rec.new.metadata.namespace, rec.new.metadata.name)] = rec.new

    for path in SCENARIOS:
        run_scenario(load_scenario(path), RunOptions(on_write=on_write))
    by_kind: dict[str, list[Any]] = {}
    for (kind, _, _), obj in sorted(last.items(), key=lambda kv: kv[0]):
        by_kind.setdefault(kind, []).append(obj)
    api = ApiServer(StoppedClock(), random.Random(0))
    api.create(Namespace(metadata=ObjectMeta(name="default")))
    for obj in load_manifests(EXTRA, source="extra"):
        by_kind.setdefault(obj.kind, []).append(api.create(obj))  # as the store keeps them
    return by_kind


@pytest.fixture(scope="module")
def stored() -> dict[str, list[Any]]:
    return _stored_objects()


def test_every_served_kind_is_covered(stored: dict[str, list[Any]]) -> None:
    from emulator.base.api.unknownfields import CRD_KINDS

    served = {r.kind for r in RESOURCES if r.stored} - set(CRD_KINDS)  # custom resources: no client model
    assert served <= set(stored), f"no objects of {sorted(served - set(stored))}"


@pytest.mark.parametrize("kind", sorted(MODEL))
def test_objects_deserialize_in_the_client_models(stored: dict[str, list[Any]], kind: str) -> None:
    client = kubernetes.client.ApiClient()
    objects = stored[kind]
    for obj in objects:
        text = encode_object(obj).decode()
        model = client.deserialize(text, MODEL[kind], "application/json")
        assert model.metadata.name == obj.metadata.name
        assert json.loads(text)["kind"] == kind
    resource = for_kind(objects[0].api_version, kind)
    assert resource is not None
    listed = encode_list(resource, objects, resource_version=7).decode()
    items = client.deserialize(listed, MODEL[kind].replace("ResourceV1", "V1") + "List", "application/json")
    assert len(items.items) == len(objects)
    assert items.metadata.resource_version == "7"
