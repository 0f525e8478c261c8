"""The plugin tables of ``kubescheduler.config.k8s.io/v1`` (upstream
``pkg/scheduler/apis/config/v1/default_plugins.go`` and the in-tree plugin list).

What this module owns: ``DEFAULT_PLUGINS`` (the v1.34 default multiPoint set, with score
weights, DynamicResources included as v1.34's ``applyFeatureGates`` puts it (before
DefaultPreemption)),
``UPSTREAM_PLUGINS`` (every in-tree plugin and the extension points it implements),
``INVALID_PLUGINS`` (removed plugins a v1 configuration may not name) and
``extension_points_of`` (which points a registered factory implements, read from its methods).
Plain data and one pure function: merging these with a profile is ``config.py``.
"""

from __future__ import annotations

from typing import Any, Final

from agents.scheduler.framework.interface import ExtensionPoint

__all__ = [
    "DEFAULT_PLUGINS",
    "INVALID_PLUGINS",
    "TYPE_NAMES",
    "UPSTREAM_PLUGINS",
    "extension_points_of",
]

_P = ExtensionPoint
UPSTREAM_PLUGINS: Final[dict[str, frozenset[ExtensionPoint]]] = {
    "SchedulingGates": frozenset({_P.PreEnqueue}),
    "PrioritySort": frozenset({_P.QueueSort}),
    "NodeUnschedulable": frozenset({_P.Filter}),
    "NodeName": frozenset({_P.Filter}),
    "TaintToleration": frozenset({_P.Filter, _P.PreScore, _P.Score}),
    "NodeAffinity": frozenset({_P.PreFilter, _P.Filter, _P.PreScore, _P.Score}),
    "NodePorts": frozenset({_P.PreFilter, _P.Filter}),
    "NodeResourcesFit": frozenset({_P.PreFilter, _P.Filter, _P.PreScore, _P.Score}),
    "VolumeRestrictions": frozenset({_P.PreFilter, _P.Filter}),
    "NodeVolumeLimits": frozenset({_P.PreFilter, _P.Filter}),
    "VolumeBinding": frozenset({_P.PreFilter, _P.Filter, _P.Reserve, _P.PreBind, _P.PreScore, _P.Score}),
    "VolumeZone": frozenset({_P.PreFilter, _P.Filter}),
    "PodTopologySpread": frozenset({_P.PreFilter, _P.Filter, _P.PreScore, _P.Score}),
    "InterPodAffinity": frozenset({_P.PreFilter, _P.Filter, _P.PreScore, _P.Score}),
    "DynamicResources": frozenset({_P.PreEnqueue, _P.PreFilter, _P.Filter, _P.PostFilter, _P.Reserve, _P.PreBind}),
    "DefaultPreemption": frozenset({_P.PreEnqueue, _P.PostFilter}),
    "NodeResourcesBalancedAllocation": frozenset({_P.PreScore, _P.Score}),
    "ImageLocality": frozenset({_P.Score}),
    "DefaultBinder": frozenset({_P.Bind}),
}
"""Every v1.34 in-tree plugin and the extension points it implements."""

INVALID_PLUGINS: Final = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
"""Removed plugins upstream rejects in a v1 configuration."""

DEFAULT_PLUGINS: Final[tuple[tuple[str, int | None], ...]] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", None),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
)
"""v1.34 ``getDefaultPlugins`` (all under multiPoint) after ``applyFeatureGates`` (DRA GA, on by
default: ``DynamicResources`` just before ``DefaultPreemption``). ``VolumeBinding`` carries no
weight (upstream lists it without one; its Score only acts with the StorageCapacityScoring gate,
off by default in v1.34, so its PreScore skips it)."""

_METHODS: Final[dict[ExtensionPoint, tuple[str, ...]]] = {
    _P.PreEnqueue: ("pre_enqueue",),
    _P.QueueSort: ("less",),
    _P.PreFilter: ("pre_filter", "pre_filter_extensions"),
    _P.Filter: ("filter",),
    _P.PostFilter: ("post_filter",),
    _P.PreScore: ("pre_score",),
    _P.Score: ("score", "score_extensions"),
    _P.Reserve: ("reserve", "unreserve"),
    _P.Permit: ("permit",),
    _P.PreBind: ("pre_bind",),
    _P.Bind: ("bind",),
    _P.PostBind: ("post_bind",),
}
TYPE_NAMES: Final = {p: p.name + "Plugin" for p in ExtensionPoint}
"""Upstream's plugin interface name per point (``FilterPlugin``), for messages."""


def extension_points_of(factory: Any) -> frozenset[ExtensionPoint] | None:
    """The points a plugin factory's plugins implement: from the class's methods, or from a
    non-class factory's ``extension_points`` attribute; ``None`` when it cannot be told."""
    if isinstance(factory, type):
        return frozenset(p for p, ms in _METHODS.items() if all(callable(getattr(factory, m, None)) for m in ms))
    declared = getattr(factory, "extension_points", None)
    if declared is None:
        return None
    return frozenset(ExtensionPoint(p) for p in declared)
