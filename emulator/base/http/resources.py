"""The resources the HTTP API serves, in one table (upstream's ``kubectl api-resources``).

Every other part of the HTTP door reads this table: discovery (aggregated and legacy), the
router (URL → resource), Tables, OpenAPI. The names, short names, categories, scopes and verbs
are upstream's for v1.32 (``kubectl api-resources -o wide`` against a real cluster); only the
resources whose kind the emulator stores are listed, with the subresources it implements.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from emulator.base.api.codec import KINDS

__all__ = [
    "ALL_VERBS",
    "RESOURCES",
    "Resource",
    "Subresource",
    "by_group_version",
    "find",
    "for_kind",
    "group_versions",
]

ALL_VERBS: Final = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
_STATUS_VERBS: Final = ("get", "patch", "update")
_ALL: Final = ("all",)
_KARPENTER: Final = ("karpenter",)


@dataclass(frozen=True, slots=True)
class Subresource:
    name: str
    """``status``, ``binding``, ``eviction``, ``scale``, ``log``."""
    kind: str
    """The kind it accepts and answers (``Binding``, ``Eviction``, ``Scale``, or the parent's)."""
    group: str
    version: str
    verbs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Resource:
    group: str
    """API group; ``""`` is the core (legacy) group served under ``/api``."""
    version: str
    name: str
    """Plural resource name: the URL segment (``pods``)."""
    singular: str
    kind: str
    namespaced: bool
    verbs: tuple[str, ...] = ALL_VERBS
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[Subresource, ...] = ()
    stored: bool = True
    """False for ``bindings``: create-only, nothing is stored under it."""

    @property
    def group_version(self) -> str:
        """``v1`` for the core group, else ``<group>/<version>``: an object's apiVersion."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def struct(self) -> type[Any]:
        """The msgspec struct of this resource's kind."""
        return KINDS[(self.group_version, self.kind)]

    def subresource(self, name: str) -> Subresource | None:
        for sub in self.subresources:
            if sub.name == name:
                return sub
        return None

    @property
    def qualified(self) -> str:
        """``pods``, ``deployments.apps``: the name upstream's messages use."""
        return f"{self.name}.{self.group}" if self.group else self.name


def _status(group: str, version: str, kind: str) -> Subresource:
    return Subresource("status", kind, group, version, _STATUS_VERBS)


def _scale() -> Subresource:
    return Subresource("scale", "Scale", "autoscaling", "v1", _STATUS_VERBS)


def _res(
    group: str,
    name: str,
    singular: str,
    kind: str,
    *,
    namespaced: bool = True,
    verbs: tuple[str, ...] = ALL_VERBS,
    short: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    status: bool = False,
    scale: bool = False,
    extra: tuple[Subresource, ...] = (),
    stored: bool = True,
    version: str = "v1",
) -> Resource:
    subs: list[Subresource] = list(extra)
    if scale:
        subs.append(_scale())
    if status:
        subs.append(_status(group, version, kind))
    return Resource(
        group=group,
        version=version,
        name=name,
        singular=singular,
        kind=kind,
        namespaced=namespaced,
        verbs=verbs,
        short_names=short,
        categories=categories,
        subresources=tuple(sorted(subs, key=lambda s: s.name)),
        stored=stored,
    )


RESOURCES: Final[tuple[Resource, ...]] = (
    # core/v1, in upstream's discovery order (alphabetical)
    _res("", "bindings", "binding", "Binding", verbs=("create",), stored=False),
    _res("", "configmaps", "configmap", "ConfigMap", short=("cm",)),
    _res("", "events", "event", "Event", short=("ev",)),
    _res(
        "",
        "namespaces",
        "namespace",
        "Namespace",
        namespaced=False,
        verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
        short=("ns",),
        status=True,
    ),
    _res("", "nodes", "node", "Node", namespaced=False, short=("no",), status=True),
    _res("", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", short=("pvc",), status=True),
    _res(
        "",
        "persistentvolumes",
        "persistentvolume",
        "PersistentVolume",
        namespaced=False,
        short=("pv",),
        status=True,
    ),
    _res(
        "",
        "pods",
        "pod",
        "Pod",
        short=("po",),
        categories=("all",),
        status=True,
        extra=(
            Subresource("binding", "Binding", "", "v1", ("create",)),
            Subresource("eviction", "Eviction", "policy", "v1", ("create",)),
            Subresource("attach", "PodAttachOptions", "", "v1", ("create", "get")),
            Subresource("exec", "PodExecOptions", "", "v1", ("create", "get")),
            Subresource("log", "Pod", "", "v1", ("get",)),
            Subresource("portforward", "PodPortForwardOptions", "", "v1", ("create", "get")),
            Subresource("resize", "Pod", "", "v1", _STATUS_VERBS),
        ),
    ),
    _res("", "secrets", "secret", "Secret"),
    _res("", "services", "service", "Service", short=("svc",), categories=("all",), status=True),
    # apps/v1
    _res("apps", "controllerrevisions", "controllerrevision", "ControllerRevision"),
    _res("apps", "daemonsets", "daemonset", "DaemonSet", short=("ds",), categories=("all",), status=True),
    _res(
        "apps", "deployments", "deployment", "Deployment", short=("deploy",), categories=_ALL, status=True, scale=True
    ),
    _res("apps", "replicasets", "replicaset", "ReplicaSet", short=("rs",), categories=_ALL, status=True, scale=True),
    _res(
        "apps", "statefulsets", "statefulset", "StatefulSet", short=("sts",), categories=_ALL, status=True, scale=True
    ),
    # autoscaling/v2
    _res(
        "autoscaling",
        "horizontalpodautoscalers",
        "horizontalpodautoscaler",
        "HorizontalPodAutoscaler",
        short=("hpa",),
        categories=_ALL,
        status=True,
        version="v2",
    ),
    # batch/v1
    _res("batch", "cronjobs", "cronjob", "CronJob", short=("cj",), categories=("all",), status=True),
    _res("batch", "jobs", "job", "Job", categories=("all",), status=True),
    # policy/v1
    _res("policy", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", short=("pdb",), status=True),
    # storage.k8s.io/v1
    _res("storage.k8s.io", "csidrivers", "csidriver", "CSIDriver", namespaced=False),
    _res("storage.k8s.io", "csinodes", "csinode", "CSINode", namespaced=False),
    _res("storage.k8s.io", "csistoragecapacities", "csistoragecapacity", "CSIStorageCapacity"),
    _res("storage.k8s.io", "storageclasses", "storageclass", "StorageClass", namespaced=False, short=("sc",)),
    _res("storage.k8s.io", "volumeattachments", "volumeattachment", "VolumeAttachment", namespaced=False, status=True),
    # scheduling.k8s.io/v1
    _res(
        "scheduling.k8s.io",
        "priorityclasses",
        "priorityclass",
        "PriorityClass",
        namespaced=False,
        short=("pc",),
    ),
    # coordination.k8s.io/v1
    _res("coordination.k8s.io", "leases", "lease", "Lease"),
    # resource.k8s.io/v1
    _res("resource.k8s.io", "deviceclasses", "deviceclass", "DeviceClass", namespaced=False),
    _res("resource.k8s.io", "resourceclaims", "resourceclaim", "ResourceClaim", status=True),
    _res("resource.k8s.io", "resourceclaimtemplates", "resourceclaimtemplate", "ResourceClaimTemplate"),
    _res("resource.k8s.io", "resourceslices", "resourceslice", "ResourceSlice", namespaced=False),
    # karpenter.sh/v1: custom resources (kubernetes-sigs/karpenter v1.9.1 CRDs; a CRD group has no
    # aggregator priority, so it comes after the built-in groups). NodePool's scale subresource
    # (spec.replicas, alpha static NodePools) is not served.
    _res("karpenter.sh", "nodeclaims", "nodeclaim", "NodeClaim", namespaced=False, categories=_KARPENTER, status=True),
    _res("karpenter.sh", "nodepools", "nodepool", "NodePool", namespaced=False, categories=_KARPENTER, status=True),
)

_BY_PATH: Final = {(r.group, r.version, r.name): r for r in RESOURCES}
_BY_KIND: Final = {(r.group_version, r.kind): r for r in RESOURCES if r.stored}


def find(group: str, version: str, name: str) -> Resource | None:
    """The resource at ``/api[s]/<group>/<version>/.../<name>``, or None."""
    return _BY_PATH.get((group, version, name))


def for_kind(api_version: str, kind: str) -> Resource | None:
    """The stored resource of ``apiVersion``/``kind`` (``("apps/v1", "Deployment")``)."""
    return _BY_KIND.get((api_version, kind))


def group_versions() -> list[tuple[str, str]]:
    """(group, version) pairs served, core first, then the named groups in upstream's
    discovery order (the aggregator's priorities: apps, batch, policy, storage.k8s.io,
    scheduling.k8s.io, coordination.k8s.io)."""
    seen: list[tuple[str, str]] = []
    for r in RESOURCES:
        if (r.group, r.version) not in seen:
            seen.append((r.group, r.version))
    return seen


def by_group_version(group: str, version: str) -> list[Resource]:
    return [r for r in RESOURCES if r.group == group and r.version == version]
