"""The Cluster Autoscaler's simulation reads the cluster's storage objects, as upstream's
(cluster-autoscaler 1.34 builds kube-scheduler's framework over the shared informers, so
VolumeBinding, VolumeZone, VolumeRestrictions and NodeVolumeLimits see the claims): a
StatefulSet with WaitForFirstConsumer volumeClaimTemplates triggers a scale-up and runs
(before, every pod with a claim failed VolumeBinding's PreFilter on every template node)."""

from __future__ import annotations

from emulator.app.scenario.loader import load_scenario_text
from tests.autoscaler.test_ca_runs import ROOT, _run

SCENARIO = """name: ca-volumes
kubelet: {heartbeatInterval: 10s}
storage:
  drivers:
    - name: ebs.csi.aws.com
      topologyKeys: [topology.kubernetes.io/zone]
      provisionDelay: {mean: 2s}
      attachDelay: {mean: 1s}
autoscaling:
  clusterAutoscaler:
    nodeGroups:
      - name: g
        minSize: 0
        maxSize: 3
        pricePerHour: 1
        provisionDelay: {mean: 30s}
        template:
          metadata: {labels: {topology.kubernetes.io/zone: zone-a}}
          status: {capacity: {cpu: "2", memory: 4Gi, pods: "110"}}
objects:
  - apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata: {name: gp3}
    provisioner: ebs.csi.aws.com
    volumeBindingMode: WaitForFirstConsumer
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
            - {name: db, image: i, resources: {requests: {cpu: 1500m}}, volumeMounts: [{name: data, mountPath: /d}]}
      volumeClaimTemplates:
        - metadata: {name: data}
          spec: {accessModes: [ReadWriteOnce], storageClassName: gp3, resources: {requests: {storage: 1Gi}}}
steps:
  - waitFor: {condition: workloadsReady, kind: StatefulSet, name: db, namespace: default, timeout: 5m}
expect:
  - podsRunning: {count: 2}
"""


def test_pods_with_wait_for_first_consumer_claims_trigger_scale_up() -> None:
    result, events, nodes = _run(load_scenario_text(SCENARIO, source="s.yaml", base_dir=ROOT))
    assert result.passed
    assert len([n for n in nodes if n[1] == "create"]) == 2  # 1.5 CPU each on 2-CPU nodes
    assert [e for e in events if e[1] == "TriggeredScaleUp"]
