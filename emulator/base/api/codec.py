"""Decoding real Kubernetes manifests into API structs, and encoding them back.

``load_manifests`` accepts what ``kubectl apply -f`` accepts for our kinds: multi-document
YAML (or JSON), ``kind: List`` with ``items``, camelCase fields, unknown fields dropped (and
reported to a ``warn`` callback),
types checked. Every problem is a ``ManifestError`` naming the source, the path inside it
(``documents[1].spec.containers[0].resources.requests.cpu``) and what was expected.
Decoders are built once; YAML is parsed with libyaml when available (YAML is ~100x slower
than JSON: only at the edges, never on a hot path). A key repeated in one mapping is an
error, as kubectl's (``mapping key "name" already defined at line 3``), not a silent
overwrite; aliases, recursion and nesting are bounded, and a ``List`` that would expand past
``emulator.base.inputs.MAX_ITEMS`` objects is refused before it is expanded (``emulator.base.inputs``:
the reader, YAML loader and List flattener every input path shares).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec

from emulator.base.api.apps import ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet
from emulator.base.api.autoscaling import HorizontalPodAutoscaler, hpa_v1_to_v2
from emulator.base.api.autoscalingvalidation import UNSERVED_METRIC, dropped_tolerance, unserved_metrics
from emulator.base.api.batch import CronJob, Job
from emulator.base.api.config import ConfigMap, Secret
from emulator.base.api.core import Binding, Event, Namespace, Node, Pod
from emulator.base.api.errors import Invalid
from emulator.base.api.karpenter import NodeClaim, NodePool
from emulator.base.api.policy import PodDisruptionBudget
from emulator.base.api.quantity import Quantity, decode_quantity
from emulator.base.api.resource import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from emulator.base.api.resourceconvert import BETA_VERSIONS, CONVERTED_KINDS, not_served, to_v1
from emulator.base.api.resourcedefaults import dropped_fields
from emulator.base.api.scheduling import Lease, PriorityClass
from emulator.base.api.services import Service
from emulator.base.api.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from emulator.base.api.unknownfields import prune_unknown, warning_texts
from emulator.base.api.unmodelled import capture
from emulator.base.api.validation import validate
from emulator.base.inputs import (
    InputError,
    ReadError,
    YamlError,
    YamlLoader,
    flatten_list,
    join_paths,
    load_documents,
    msgspec_error,
    read_text,
)

__all__ = [
    "KINDS",
    "ApiObject",
    "ManifestError",
    "YamlLoader",
    "convert",
    "dec_hook",
    "enc_hook",
    "load_manifest_file",
    "load_manifests",
    "object_from_dict",
    "to_builtins",
    "yaml_documents",
]

ApiObject = (
    Pod
    | Node
    | Binding
    | Event
    | Namespace
    | PriorityClass
    | Lease
    | Deployment
    | ReplicaSet
    | StatefulSet
    | DaemonSet
    | Job
    | CronJob
    | Service
    | PodDisruptionBudget
    | ControllerRevision
    | ConfigMap
    | Secret
    | PersistentVolume
    | PersistentVolumeClaim
    | StorageClass
    | CSIDriver
    | CSINode
    | CSIStorageCapacity
    | VolumeAttachment
    | DeviceClass
    | ResourceClaim
    | ResourceClaimTemplate
    | ResourceSlice
    | HorizontalPodAutoscaler
    | NodePool
    | NodeClaim
)
T = TypeVar("T")

KINDS: Final[dict[tuple[str, str], type[Any]]] = {
    ("v1", "Pod"): Pod,
    ("v1", "Node"): Node,
    ("v1", "Binding"): Binding,
    ("v1", "Event"): Event,
    ("v1", "Namespace"): Namespace,
    ("scheduling.k8s.io/v1", "PriorityClass"): PriorityClass,
    ("coordination.k8s.io/v1", "Lease"): Lease,
    ("apps/v1", "Deployment"): Deployment,
    ("apps/v1", "ReplicaSet"): ReplicaSet,
    ("apps/v1", "StatefulSet"): StatefulSet,
    ("apps/v1", "DaemonSet"): DaemonSet,
    ("batch/v1", "Job"): Job,
    ("batch/v1", "CronJob"): CronJob,
    ("v1", "Service"): Service,
    ("policy/v1", "PodDisruptionBudget"): PodDisruptionBudget,
    ("apps/v1", "ControllerRevision"): ControllerRevision,
    ("v1", "ConfigMap"): ConfigMap,
    ("v1", "Secret"): Secret,
    ("v1", "PersistentVolume"): PersistentVolume,
    ("v1", "PersistentVolumeClaim"): PersistentVolumeClaim,
    ("storage.k8s.io/v1", "StorageClass"): StorageClass,
    ("storage.k8s.io/v1", "CSIDriver"): CSIDriver,
    ("storage.k8s.io/v1", "CSINode"): CSINode,
    ("storage.k8s.io/v1", "CSIStorageCapacity"): CSIStorageCapacity,
    ("storage.k8s.io/v1", "VolumeAttachment"): VolumeAttachment,
    ("resource.k8s.io/v1", "DeviceClass"): DeviceClass,
    ("resource.k8s.io/v1", "ResourceClaim"): ResourceClaim,
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): ResourceClaimTemplate,
    ("resource.k8s.io/v1", "ResourceSlice"): ResourceSlice,
    ("autoscaling/v2", "HorizontalPodAutoscaler"): HorizontalPodAutoscaler,
    ("karpenter.sh/v1", "NodePool"): NodePool,
    ("karpenter.sh/v1", "NodeClaim"): NodeClaim,
}


class ManifestError(InputError):
    """Bad input in a manifest: ``<source>: <path>: <detail>`` (``source`` is ``file``)."""

    def __init__(self, source: str, path: str, detail: str) -> None:
        super().__init__(source, path, detail)

    @property
    def source(self) -> str:
        return self.file


def dec_hook(tp: type[Any], obj: Any) -> Any:
    if tp is Quantity:
        return decode_quantity(obj)
    raise NotImplementedError(f"cannot decode {tp!r}")


def enc_hook(obj: Any) -> Any:
    if isinstance(obj, Quantity):
        return obj.text
    raise NotImplementedError(f"cannot encode {type(obj)!r}")


def convert(data: Any, tp: type[T]) -> T:
    """``msgspec.convert`` with the Quantity hook (raises ``msgspec.ValidationError``)."""
    return msgspec.convert(data, tp, dec_hook=dec_hook)


def to_builtins(obj: Any) -> Any:
    """The object as plain JSON-able builtins with its wire (camelCase) names. A top-level
    API object always carries ``apiVersion`` and ``kind`` (``omit_defaults`` would drop them
    for objects built in code, whose defaults are the very same strings)."""
    out = msgspec.to_builtins(obj, enc_hook=enc_hook)
    if isinstance(out, dict) and hasattr(obj, "api_version") and hasattr(obj, "kind"):
        return {"apiVersion": obj.api_version, "kind": obj.kind, **out}
    return out


def object_from_dict(
    doc: Any, *, source: str, path: str = "", warn: Callable[[str], None] | None = None, validated: bool = True
) -> ApiObject:
    """Decode and validate one manifest document (a mapping with apiVersion and kind). Fields
    upstream's schema does not have are dropped, as upstream drops them, and each reported to
    ``warn`` as ``<source>: <path>: unknown field "<field>"`` (``unknownfields``). A
    ``resource.k8s.io`` v1beta1/v1beta2 document is converted to v1 first (``resourceconvert``),
    and the fields of v1.34's disabled DRA gates the API server will drop are reported to ``warn``
    (``resourcedefaults.dropped_fields``). ``validated=False``: decoded only (a partial object a
    subresource write takes a part of, as ``pods/resize`` takes the containers' resources; the API
    server validates the result)."""
    if not isinstance(doc, dict):
        raise ManifestError(source, path, f"expected a Kubernetes object (a mapping), got {type(doc).__name__}")
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if not isinstance(api_version, str) or not api_version:
        raise ManifestError(source, join_paths(path, "apiVersion"), "required field missing (e.g. apiVersion: v1)")
    if not isinstance(kind, str) or not kind:
        raise ManifestError(source, join_paths(path, "kind"), "required field missing (e.g. kind: Pod)")
    if api_version in BETA_VERSIONS and kind in CONVERTED_KINDS:
        doc = to_v1(doc)
        api_version = doc["apiVersion"]
    if api_version == "autoscaling/v1" and kind == "HorizontalPodAutoscaler":
        doc = hpa_v1_to_v2(doc)
        api_version = "autoscaling/v2"
    tp = KINDS.get((api_version, kind))
    if tp is None and (why := not_served(api_version, kind)) is not None:
        raise ManifestError(source, path, why)
    if tp is None:
        known = ", ".join(f"{k} ({v})" for v, k in KINDS)
        raise ManifestError(
            source, path, f'unsupported apiVersion/kind "{api_version}/{kind}"; expected one of: {known}'
        )
    doc, unknown = prune_unknown(doc)
    if unknown and warn is not None:
        for text in warning_texts(unknown):
            at = text.split('"')[1] if text.startswith("unknown field") else ""
            warn(f"{source}: {join_paths(path, at) or '.'}: {text}")
    try:
        obj: ApiObject = capture(convert(doc, tp), doc)
    except msgspec.ValidationError as err:
        msg, at = msgspec_error(err)
        raise ManifestError(source, join_paths(path, at), msg) from None
    if not validated:
        return obj
    try:
        validate(obj)
    except Invalid as err:
        # upstream's "[]" is the path of the whole object (``field.NewPath("")``)
        field = "" if err.field == "[]" else err.field
        raise ManifestError(source, join_paths(path, field), err.detail) from None
    if warn is not None:
        for at, gate in dropped_fields(obj):
            warn(f"{source}: {join_paths(path, at)}: dropped: the feature gate {gate} is off in v1.34 (alpha)")
        if isinstance(obj, HorizontalPodAutoscaler):
            for at in dropped_tolerance(obj):
                gate = "HPAConfigurableTolerance"
                warn(f"{source}: {join_paths(path, at)}: dropped: the feature gate {gate} is off in v1.34 (alpha)")
            for at in unserved_metrics(obj):
                warn(f"{source}: {join_paths(path, at)}: {UNSERVED_METRIC}")
    return obj


def yaml_documents(text: str, *, source: str) -> list[Any]:
    """Every non-empty document of a (multi-document) YAML or JSON text."""
    try:
        return load_documents(text, source=source).docs
    except YamlError as err:
        raise ManifestError(source, "", f"not valid YAML: {err.text}") from None


def load_manifests(text: str, *, source: str) -> list[ApiObject]:
    """All objects in a manifest text; paths are ``documents[i]...`` when there are several."""
    docs = yaml_documents(text, source=source)
    out: list[ApiObject] = []
    for i, doc in enumerate(docs):
        prefix = f"documents[{i}]" if len(docs) > 1 else ""
        for at, item in flatten_list(doc, source=source, path=prefix, error=ManifestError):
            out.append(object_from_dict(item, source=source, path=at))
    return out


def load_manifest_file(path: str | Path) -> list[ApiObject]:
    try:
        text = read_text(path)
    except ReadError as err:
        raise ManifestError(str(path), "", err.detail) from None
    return load_manifests(text, source=str(path))
