"""The scenario syntax's tables (``syntax``): the step verbs and the Structs they build, the verbs
whose body is one field, the expectation keys, the fault kinds, and the kinds ``delete`` and
``update`` take."""

from __future__ import annotations

from typing import Any, get_args

import msgspec

from emulator.app.scenario.schema import (
    ApiError,
    ApiLatency,
    ContainerStartFailure,
    Cordon,
    Create,
    CreateNodes,
    CreatePods,
    Delete,
    Drain,
    Fault,
    ImagePullSlow,
    NodeHeartbeatStop,
    NodePartition,
    PodCount,
    Replay,
    Scale,
    SchedulerInstances,
    Sleep,
    Uncordon,
    Update,
    WaitFor,
    WatchCut,
    WatchDelay,
    WatchReorder,
)
from emulator.base.api.codec import KINDS

__all__ = [
    "API_KINDS",
    "BODY_FIELD",
    "DELETABLE",
    "EXPECTATIONS",
    "FAULTS",
    "FAULT_EXAMPLE",
    "IMMUTABLE_PATCH",
    "POD_COUNTS",
    "UPDATABLE",
    "VERBS",
    "WORKLOAD_FIELDS",
]

VERBS: dict[str, type[Any]] = {
    "create": Create,
    "createPods": CreatePods,
    "createNodes": CreateNodes,
    "delete": Delete,
    "scale": Scale,
    "update": Update,
    "cordon": Cordon,
    "uncordon": Uncordon,
    "drain": Drain,
    "sleep": Sleep,
    "waitFor": WaitFor,
    "fault": Fault,
    "replay": Replay,
}
BODY_FIELD = {"create": "objects", "createNodes": "nodes", "sleep": "duration", "fault": "fault"}
"""Verbs whose YAML body is one field of the Struct rather than a mapping of its fields."""
POD_COUNTS: tuple[str, ...] = get_args(next(f.type for f in msgspec.structs.fields(PodCount) if f.name == "condition"))
EXPECTATIONS = (
    *POD_COUNTS,
    "podOnNode",
    "maxPodsPerNode",
    "topologySpread",
    "podsOnNodes",
    "noOvercommit",
    "workloadsReady",
    "jobsComplete",
    "objectCount",
)
WORKLOAD_FIELDS = ("kind", "name", "namespace")
"""``waitFor`` fields only ``workloadsReady`` takes."""
IMMUTABLE_PATCH = (("apiVersion",), ("kind",), ("metadata", "name"), ("metadata", "namespace"))
DELETABLE = tuple(dict.fromkeys(k for _, k in KINDS if k != "Binding"))
UPDATABLE = tuple(k for k in DELETABLE if k != "Event")
API_KINDS = tuple(dict.fromkeys(k for _, k in KINDS))
FAULTS: dict[str, type[Any]] = {
    str(cls.__struct_config__.tag): cls
    for cls in (
        ApiError,
        ApiLatency,
        WatchDelay,
        WatchCut,
        WatchReorder,
        NodeHeartbeatStop,
        NodePartition,
        ImagePullSlow,
        ContainerStartFailure,
        SchedulerInstances,
    )
}
FAULT_EXAMPLE = "{apiError: {verb: bind, probability: 0.1}}"
