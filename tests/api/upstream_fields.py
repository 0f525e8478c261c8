"""Builds ``emulator/base/api/data/upstream_fields.json`` from the official Python client's
models (generated from upstream's OpenAPI): every field name of every type our kinds reach.

Run ``python -m tests.api.upstream_fields`` to regenerate; ``test_upstream_fields`` checks the
file is what this writes (skipped when the client is absent)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

TARGET = Path(__file__).parents[2] / "emulator" / "base" / "api" / "data" / "upstream_fields.json"
MODELS = {
    "Pod": "V1Pod",
    "Node": "V1Node",
    "Binding": "V1Binding",
    "Event": "CoreV1Event",
    "Namespace": "V1Namespace",
    "PriorityClass": "V1PriorityClass",
    "Lease": "V1Lease",
    "Deployment": "V1Deployment",
    "ReplicaSet": "V1ReplicaSet",
    "StatefulSet": "V1StatefulSet",
    "DaemonSet": "V1DaemonSet",
    "Job": "V1Job",
    "CronJob": "V1CronJob",
    "Service": "V1Service",
    "PodDisruptionBudget": "V1PodDisruptionBudget",
    "ControllerRevision": "V1ControllerRevision",
    "ConfigMap": "V1ConfigMap",
    "Secret": "V1Secret",
    "PersistentVolume": "V1PersistentVolume",
    "PersistentVolumeClaim": "V1PersistentVolumeClaim",
    "StorageClass": "V1StorageClass",
    "CSIDriver": "V1CSIDriver",
    "CSINode": "V1CSINode",
    "CSIStorageCapacity": "V1CSIStorageCapacity",
    "VolumeAttachment": "V1VolumeAttachment",
    "DeviceClass": "V1DeviceClass",
    "ResourceClaim": "ResourceV1ResourceClaim",
    "ResourceClaimTemplate": "V1ResourceClaimTemplate",
    "ResourceSlice": "V1ResourceSlice",
    "HorizontalPodAutoscaler": "V2HorizontalPodAutoscaler",
}
_LIST = re.compile(r"^List\[(.+)\]$")
_DICT = re.compile(r"^Dict\(str, ?(.+)\)$|^Dict\[str, ?(.+)\]$")


def _ref(tp: str, todo: list[str]) -> str:
    for prefix, pattern in (("[", _LIST), ("{", _DICT)):
        m = pattern.match(tp)
        if m:
            inner = _ref(next(g for g in m.groups() if g), todo)
            return prefix + inner if inner else prefix
    if tp[:1].isupper() and not tp.startswith(("List", "Dict")):
        todo.append(tp)
        return tp
    return ""


def build() -> dict[str, Any]:
    from kubernetes import client

    types: dict[str, dict[str, str]] = {}
    todo = list(MODELS.values())
    while todo:
        name = todo.pop()
        if name in types:
            continue
        model = getattr(client, name)
        types[name] = {model.attribute_map[attr]: _ref(tp, todo) for attr, tp in model.openapi_types.items()}
    return {"kinds": MODELS, "types": dict(sorted(types.items()))}


def render() -> str:
    return json.dumps(build(), indent=0, sort_keys=True, separators=(",", ":")) + "\n"


if __name__ == "__main__":
    TARGET.write_text(render())
