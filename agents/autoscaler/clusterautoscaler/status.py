"""The status ConfigMap ``kube-system/cluster-autoscaler-status`` (``clusterstate/utils/status.go``
``WriteStatusConfigMap``, ``clusterstate/api/types.go``, 1.34): written every loop, its ``status``
key a YAML ``ClusterAutoscalerStatus`` and the annotation
``cluster-autoscaler.kubernetes.io/last-updated`` the loop's time
(``ConfigMapLastUpdateFormat``: ``2006-01-02 15:04:05.999999999 -0700 MST``).

Modelled fields: ``time``, ``autoscalerStatus: Running``, ``clusterWide`` and per node group
``health`` (``status`` Healthy; ``nodeCounts.registered`` {total, ready, notStarted},
``unregistered``; per group ``cloudProviderTarget``, ``minSize``, ``maxSize``), ``scaleUp``
(``status`` InProgress while a group has nodes requested and not yet registered, else
NoActivity; per group ``backoffInfo`` while backed off) and ``scaleDown`` (``status``
CandidatesPresent with ``candidates`` while nodes are unneeded, else NoCandidates). The
transition and probe times are the loop's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

import yaml

from emulator.base.runtime.clock import calendar_epoch

__all__ = ["LAST_UPDATED_ANNOTATION", "GroupState", "last_update_format", "status_yaml"]

LAST_UPDATED_ANNOTATION: Final = "cluster-autoscaler.kubernetes.io/last-updated"


@dataclass(frozen=True, slots=True)
class GroupState:
    name: str
    registered: int
    ready: int
    target: int
    min_size: int
    max_size: int
    candidates: int
    backoff: str = ""
    """The backoff's error message while the group is backed off."""


def last_update_format(t: float) -> str:
    when = calendar_epoch() + timedelta(seconds=t)
    return when.strftime("%Y-%m-%d %H:%M:%S.") + f"{when.microsecond * 1000:09d}".rstrip("0").rstrip(".") + " +0000 UTC"


def _health(g: Sequence[GroupState]) -> dict[str, Any]:
    registered = sum(x.registered for x in g)
    ready = sum(x.ready for x in g)
    unregistered = sum(max(0, x.target - x.registered) for x in g)
    return {
        "registered": {"total": registered, "ready": ready, "notStarted": registered - ready},
        "unregistered": unregistered,
    }


def status_yaml(t: float, groups: Sequence[GroupState], unneeded: int, other: Mapping[str, int]) -> str:
    """The ``status`` document at clock time ``t``; ``other``: the nodes outside any group
    (``total``, ``ready``), counted cluster-wide as upstream does."""
    now = last_update_format(t)
    wide = _health(groups)
    wide["registered"]["total"] += other.get("total", 0)
    wide["registered"]["ready"] += other.get("ready", 0)
    in_progress = any(x.target > x.registered for x in groups)

    def scale_up(active: bool) -> dict[str, Any]:
        return {"status": "InProgress" if active else "NoActivity", "lastProbeTime": now, "lastTransitionTime": now}

    def scale_down(n: int) -> dict[str, Any]:
        doc: dict[str, Any] = {"status": "CandidatesPresent" if n else "NoCandidates"}
        if n:
            doc["candidates"] = n
        return {**doc, "lastProbeTime": now, "lastTransitionTime": now}

    doc: dict[str, Any] = {
        "time": now,
        "autoscalerStatus": "Running",
        "clusterWide": {
            "health": {"status": "Healthy", "nodeCounts": wide, "lastProbeTime": now, "lastTransitionTime": now},
            "scaleUp": scale_up(in_progress),
            "scaleDown": scale_down(unneeded),
        },
        "nodeGroups": [],
    }
    for x in groups:
        up = scale_up(x.target > x.registered)
        if x.backoff:
            up["backoffInfo"] = {"errorCode": "timeout", "errorMessage": x.backoff}
        doc["nodeGroups"].append(
            {
                "name": x.name,
                "health": {
                    "status": "Healthy",
                    "nodeCounts": _health([x]),
                    "cloudProviderTarget": x.target,
                    "minSize": x.min_size,
                    "maxSize": x.max_size,
                    "lastProbeTime": now,
                    "lastTransitionTime": now,
                },
                "scaleUp": up,
                "scaleDown": scale_down(x.candidates),
            }
        )
    return str(yaml.safe_dump(doc, sort_keys=False, default_flow_style=False))
