"""The descriptions ``kubectl explain`` prints for the served schemas, in our own short words.

``openapi_schemas`` generates the schemas from the Structs, whose docstrings speak about the emulator
(not to a kubectl user), so it drops them and takes the text from here: ``KINDS`` for the
top-level kinds, ``TYPES`` for other schemas and ``FIELDS`` for properties, keyed by upstream's
schema name. A field missing here is printed with ``<no description>``, as an undocumented
field of a CRD is. Upstream's longer texts are in the Kubernetes API reference.

This module owns text only: no names, shapes or markers (``openapi_schemas``).
"""

from __future__ import annotations

from typing import Final

__all__ = ["FIELDS", "KINDS", "TYPES"]

_CORE: Final = "io.k8s.api.core.v1"
_APPS: Final = "io.k8s.api.apps.v1"
_META: Final = "io.k8s.apimachinery.pkg.apis.meta.v1"

KINDS: Final[dict[str, str]] = {
    "Pod": "A group of containers scheduled together onto one node, sharing its network and storage.",
    "Node": "A machine that runs pods. Its status reports capacity, allocatable resources and conditions.",
    "Namespace": "A scope for names: most objects live in exactly one namespace.",
    "ConfigMap": "Non-secret configuration as key-value pairs, for pods to read as env vars or files.",
    "Secret": "Sensitive data (passwords, tokens, keys) as base64 key-value pairs, typed by its type field.",
    "Event": "A report of something that happened to an object, such as scheduling or a failure.",
    "Binding": "Ties a pod to a node: what a scheduler posts once it has chosen the node.",
    "Service": "A stable name and virtual IP in front of the set of pods its selector matches.",
    "Deployment": "Declarative updates for pods through ReplicaSets, rolled out and rolled back by revision.",
    "ReplicaSet": "Keeps the given number of pods matching its selector running.",
    "StatefulSet": "Pods with stable, ordered identities (name-0, name-1, ...) and their own volume claims.",
    "DaemonSet": "Runs one copy of a pod on every node that matches its node selector and tolerations.",
    "Job": "Runs pods until a given number of them succeed.",
    "CronJob": "Creates Jobs on a repeating schedule written in cron syntax.",
    "PodDisruptionBudget": "How many pods of a set voluntary disruptions (evictions, drains) may take down at once.",
    "PriorityClass": "Maps a priority class name to the integer priority pods using it get.",
    "ControllerRevision": "An immutable snapshot of a StatefulSet's or DaemonSet's pod template, by revision number.",
    "Lease": "A lock and heartbeat record, such as a node's heartbeat in kube-node-lease.",
    "PersistentVolume": "A piece of storage in the cluster, provisioned by an administrator or a StorageClass.",
    "PersistentVolumeClaim": "A user's request for storage: size, access modes and class, bound to one volume.",
    "StorageClass": "A class of storage: the provisioner that creates its volumes and how they are bound.",
    "CSIDriver": "A CSI volume driver installed in the cluster and how Kubernetes should talk to it.",
    "CSINode": "The CSI drivers installed on a node, with their node IDs, topology keys and volume limits.",
    "CSIStorageCapacity": "The storage a StorageClass can still provide in a topology segment.",
    "VolumeAttachment": "A request to attach a volume to a node, and whether it is attached.",
    "DeviceClass": "A kind of device a claim can ask for: CEL selectors and configuration for its drivers.",
    "ResourceClaim": "A request for devices (DRA): what to allocate, and the allocation and its consumers.",
    "ResourceClaimTemplate": "A claim spec the resourceclaim controller makes one ResourceClaim of per pod.",
    "HorizontalPodAutoscaler": "Scales a workload's replicas to keep its pods' metrics at a target.",
    "ResourceSlice": "Devices a DRA driver publishes for one pool, with their attributes and capacities.",
    "NodePool": "Karpenter's template of the nodes it may launch: requirements, disruption, limits, weight.",
    "NodeClaim": "Karpenter's request for one node: its requirements and resources, and the node it became.",
}

TYPES: Final[dict[str, str]] = {
    f"{_META}.ObjectMeta": "Metadata every persisted object has: name, namespace, labels, owners and more.",
    f"{_META}.LabelSelector": "Selects objects by labels: matchLabels and matchExpressions, all of which must hold.",
    f"{_CORE}.PodSpec": "The desired state of a pod: its containers and how and where it should be scheduled.",
    f"{_CORE}.PodStatus": "The most recently observed state of a pod.",
    f"{_CORE}.PodTemplateSpec": "The pods a workload creates: their metadata and spec.",
    f"{_CORE}.Container": "One container of a pod: an image with the resources it requests.",
    f"{_CORE}.ResourceRequirements": "Compute resources a container requests (for scheduling) and may not exceed.",
    f"{_CORE}.NodeSpec": "The desired state of a node: taints, unschedulable, pod CIDR.",
    f"{_CORE}.NodeStatus": "The most recently observed state of a node.",
    f"{_APPS}.DeploymentSpec": "The desired state of a Deployment.",
    f"{_APPS}.DeploymentStatus": "The most recently observed state of a Deployment.",
}

FIELDS: Final[dict[tuple[str, str], str]] = {
    (f"{_META}.ObjectMeta", "name"): "Unique within a namespace (or the cluster, for cluster-scoped kinds).",
    (f"{_META}.ObjectMeta", "generateName"): "A prefix the server completes with a random suffix when name is empty.",
    (
        f"{_META}.ObjectMeta",
        "namespace",
    ): "The namespace the object lives in; empty means default for namespaced kinds.",
    (f"{_META}.ObjectMeta", "labels"): "Key/value pairs for selecting and grouping objects.",
    (f"{_META}.ObjectMeta", "annotations"): "Key/value pairs for tools; not used to select objects.",
    (
        f"{_META}.ObjectMeta",
        "ownerReferences",
    ): "Objects this one depends on; the garbage collector deletes it after them.",
    (f"{_META}.ObjectMeta", "finalizers"): "Keys that must be removed before a deleted object is really gone.",
    (f"{_META}.ObjectMeta", "uid"): "Unique in time and space; set by the server.",
    (f"{_META}.ObjectMeta", "resourceVersion"): "Opaque version of the object, for optimistic concurrency and watches.",
    (f"{_CORE}.PodSpec", "containers"): "The containers of the pod. At least one. Cannot be updated.",
    (f"{_CORE}.PodSpec", "initContainers"): "Containers run in order before the others start.",
    (f"{_CORE}.PodSpec", "nodeName"): "The node the pod is bound to; set by the scheduler through a Binding.",
    (f"{_CORE}.PodSpec", "nodeSelector"): "Labels a node must have for the pod to be scheduled there.",
    (f"{_CORE}.PodSpec", "affinity"): "Node affinity and pod (anti-)affinity scheduling constraints.",
    (f"{_CORE}.PodSpec", "tolerations"): "The node taints this pod tolerates.",
    (f"{_CORE}.PodSpec", "topologySpreadConstraints"): "How matching pods should spread across topology domains.",
    (f"{_CORE}.PodSpec", "priority"): "The pod's priority, resolved from priorityClassName at admission.",
    (f"{_CORE}.PodSpec", "priorityClassName"): "The PriorityClass giving this pod its priority.",
    (f"{_CORE}.PodSpec", "schedulerName"): "The scheduler that places this pod; default-scheduler when empty.",
    (f"{_CORE}.PodSpec", "schedulingGates"): "While any gate remains, the pod is not considered for scheduling.",
    (f"{_CORE}.PodSpec", "restartPolicy"): "Always, OnFailure or Never.",
    (f"{_CORE}.PodSpec", "terminationGracePeriodSeconds"): "Seconds the pod is given to stop after deletion.",
    (f"{_CORE}.Container", "name"): "The container's name, unique within the pod (a DNS label).",
    (f"{_CORE}.Container", "image"): "The container image to run.",
    (f"{_CORE}.Container", "resources"): "Compute resources requested and limited for this container.",
    (f"{_CORE}.Container", "ports"): "Ports the container exposes (informational).",
    (f"{_CORE}.ResourceRequirements", "requests"): "The resources the scheduler reserves for the container.",
    (f"{_CORE}.ResourceRequirements", "limits"): "The most of each resource the container may use.",
    (f"{_CORE}.NodeSpec", "unschedulable"): "When true, no new pods are scheduled here (kubectl cordon).",
    (f"{_CORE}.NodeSpec", "taints"): "Taints that repel pods which do not tolerate them.",
    (f"{_APPS}.DeploymentSpec", "replicas"): "Number of desired pods. Defaults to 1.",
    (
        f"{_APPS}.DeploymentSpec",
        "selector",
    ): "Label selector of the pods this Deployment manages; must match the template.",
    (f"{_APPS}.DeploymentSpec", "template"): "The pods to create.",
    (f"{_APPS}.DeploymentSpec", "strategy"): "How old pods are replaced by new ones: RollingUpdate or Recreate.",
    (f"{_APPS}.DeploymentSpec", "minReadySeconds"): "Seconds a new pod must be ready before it counts as available.",
    (f"{_APPS}.DeploymentSpec", "revisionHistoryLimit"): "Old ReplicaSets kept for rollback. Defaults to 10.",
    (f"{_APPS}.DeploymentSpec", "paused"): "While true, template changes are not rolled out.",
    (f"{_APPS}.DeploymentSpec", "progressDeadlineSeconds"): "Seconds without progress before the rollout is failed.",
}
