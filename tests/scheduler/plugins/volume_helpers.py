"""Objects and a fake handle for the volume plugins' tables (upstream's ``makePV`` /
``makePVC`` / ``makeStorageClass`` test builders, as dicts converted to the API structs)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from agents.scheduler.framework.types import NodeInfo, PodInfo
from agents.scheduler.volume_listers import VolumeListers
from emulator.base.api.codec import convert
from emulator.base.api.core import Node, Pod
from emulator.base.api.storage import (
    ANN_BIND_COMPLETED,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from emulator.base.api.volumes import Volume
from tests import builders

WFFC = "wait"
IMMEDIATE = "immediate"


def pv(
    name: str,
    *,
    size: str = "1Gi",
    cls: str = WFFC,
    claim: tuple[str, str] | None = None,
    phase: str = "Available",
    labels: Mapping[str, str] | None = None,
    affinity: Mapping[str, Sequence[str]] | None = None,
    modes: Sequence[str] = ("ReadWriteOnce",),
    csi: tuple[str, str] | None = None,
    in_tree: tuple[str, Mapping[str, Any]] | None = None,
    rv: str = "1",
) -> PersistentVolume:
    spec: dict[str, Any] = {"capacity": {"storage": size}, "storageClassName": cls, "accessModes": list(modes)}
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1], "uid": f"uid-{claim[1]}"}
    if affinity is not None:
        exprs = [{"key": k, "operator": "In", "values": list(v)} for k, v in affinity.items()]
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}
    if csi is not None:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    if in_tree is not None:
        spec[in_tree[0]] = dict(in_tree[1])
    meta = {"name": name, "labels": dict(labels or {}), "resourceVersion": rv}
    return convert({"metadata": meta, "spec": spec, "status": {"phase": phase}}, PersistentVolume)


def pvc(
    name: str,
    *,
    ns: str = "default",
    cls: str | None = WFFC,
    size: str = "1Gi",
    volume: str = "",
    bound: bool = False,
    modes: Sequence[str] = ("ReadWriteOnce",),
    annotations: Mapping[str, str] | None = None,
    phase: str = "",
    owner_uid: str = "",
    rv: str = "1",
) -> PersistentVolumeClaim:
    ann = dict(annotations or {})
    if bound:
        ann[ANN_BIND_COMPLETED] = "yes"
    meta: dict[str, Any] = {
        "name": name,
        "namespace": ns,
        "uid": f"uid-{name}",
        "annotations": ann,
        "resourceVersion": rv,
    }
    if owner_uid:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "x", "uid": owner_uid, "controller": True}
        ]
    spec: dict[str, Any] = {
        "accessModes": list(modes),
        "resources": {"requests": {"storage": size}},
        "volumeName": volume,
    }
    if cls is not None:
        spec["storageClassName"] = cls
    return convert({"metadata": meta, "spec": spec, "status": {"phase": phase}}, PersistentVolumeClaim)


def storage_class(
    name: str, *, mode: str = "WaitForFirstConsumer", provisioner: str = "", topologies: Any = None
) -> StorageClass:
    doc: dict[str, Any] = {"metadata": {"name": name}, "provisioner": provisioner, "volumeBindingMode": mode}
    if topologies is not None:
        doc["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": k, "values": list(v)} for k, v in term.items()]} for term in topologies
        ]
    return convert(doc, StorageClass)


def classes() -> list[StorageClass]:
    """Upstream's ``waitSC`` / ``immediateSC`` (no provisioner: static binding only)."""
    return [storage_class(WFFC), storage_class(IMMEDIATE, mode="Immediate")]


def csi_node(node: str, limits: Mapping[str, int | None]) -> CSINode:
    drivers = [
        {"name": d, "nodeID": node, **({"allocatable": {"count": c}} if c is not None else {})}
        for d, c in limits.items()
    ]
    return convert({"metadata": {"name": node}, "spec": {"drivers": drivers}}, CSINode)


def csi_driver(name: str, *, capacity: bool) -> CSIDriver:
    return convert({"metadata": {"name": name}, "spec": {"storageCapacity": capacity}}, CSIDriver)


def capacity(name: str, cls: str, size: str, topology: Mapping[str, str] | None) -> CSIStorageCapacity:
    doc: dict[str, Any] = {"metadata": {"name": name, "namespace": "kube-system"}, "storageClassName": cls}
    doc["capacity"] = size
    if topology is not None:
        doc["nodeTopology"] = {"matchLabels": dict(topology)}
    return convert(doc, CSIStorageCapacity)


def with_claims(p: Pod, *claims: str, ephemeral: Iterable[str] = ()) -> Pod:
    vols = [convert({"name": f"v-{c}", "persistentVolumeClaim": {"claimName": c}}, Volume) for c in claims]
    vols += [convert({"name": e, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}, Volume) for e in ephemeral]
    return msgspec.structs.replace(p, spec=msgspec.structs.replace(p.spec, volumes=vols))


def claim_pod(name: str, *claims: str, node: str = "", ns: str = "default") -> Pod:
    return with_claims(builders.pod(name, namespace=ns, uid=f"uid-{name}", node=node), *claims)


def listers(*objs: Any) -> VolumeListers:
    """A ``VolumeListers`` whose informer stores hold ``objs`` (never run)."""
    ls = VolumeListers(None)  # type: ignore[arg-type]
    for o in objs:
        ls.informers[o.kind].store[(o.metadata.namespace, o.metadata.name)] = o
    return ls


class Snap:
    def __init__(self, infos: list[NodeInfo]) -> None:
        self.node_info_list = infos
        self.node_info_map = {ni.name: ni for ni in infos}

    def get(self, name: str) -> NodeInfo:
        return self.node_info_map[name]


class FakeHandle:
    """What the volume plugins read from their handle."""

    def __init__(self, ls: VolumeListers, infos: list[NodeInfo] | None = None) -> None:
        self.volume_listers = ls
        self._snap = Snap(infos or [])

    def snapshot_shared_lister(self) -> Snap:
        return self._snap


def node(name: str, labels: Mapping[str, str] | None = None) -> Node:
    return builders.node(name, labels=labels)


def node_info(n: Node, *pods: Pod) -> NodeInfo:
    ni = NodeInfo(n)
    for p in pods:
        ni.add_pod(PodInfo(p))
    return ni
