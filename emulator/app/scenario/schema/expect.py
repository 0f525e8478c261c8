"""What a scenario expects at its end (``expect:``), a tagged union (``tag_field``
``expect``) dispatched with ``match``; in YAML each is a one-key mapping
``{<condition>: <body>}`` (the pod counts share ``PodCount``, its ``condition`` the key).

Declarations only: ``emulator/app/scenario/expectations.py`` checks them against the run.
"""

from __future__ import annotations

from typing import Literal

from emulator.app.scenario.schema.base import Count, NonNegativeInt, Spec
from emulator.base.api.core import LabelSelector

__all__ = [
    "Expectation",
    "JobsComplete",
    "MaxPodsPerNode",
    "NoOvercommit",
    "ObjectCount",
    "PodCount",
    "PodOnNode",
    "PodsOnNodes",
    "TopologySpread",
    "WorkloadsReady",
]


class ExpectBase(Spec, tag_field="expect", frozen=True, kw_only=True):
    pass


class PodCount(ExpectBase, tag="podCount", frozen=True, kw_only=True):
    """``podsRunning: {count, selector?}`` and its siblings; ``condition`` is the YAML key."""

    condition: Literal["podsRunning", "podsScheduled", "podsPending", "podsSucceeded", "podsFailed"]
    count: Count
    selector: LabelSelector = LabelSelector()


class PodOnNode(ExpectBase, tag="podOnNode", frozen=True, kw_only=True):
    name: str
    node: str
    namespace: str = "default"


class MaxPodsPerNode(ExpectBase, tag="maxPodsPerNode", frozen=True, kw_only=True):
    count: NonNegativeInt
    selector: LabelSelector = LabelSelector()


class TopologySpread(ExpectBase, tag="topologySpread", frozen=True, kw_only=True):
    """Scheduled, non-terminal pods matching ``selector`` are spread over the values of
    ``topologyKey`` (among the nodes that have it) with a skew of at most ``maxSkew``."""

    topology_key: str
    max_skew: NonNegativeInt
    selector: LabelSelector = LabelSelector()


class PodsOnNodes(ExpectBase, tag="podsOnNodes", frozen=True, kw_only=True):
    """``count`` of the pods matching ``selector`` (``all``: every one) run on nodes whose
    labels match ``nodeSelector``."""

    node_selector: LabelSelector
    count: Count = "all"
    selector: LabelSelector = LabelSelector()


class NoOvercommit(ExpectBase, tag="noOvercommit", frozen=True, kw_only=True):
    """No node's pods request more than its allocatable, at any time of the run."""


class WorkloadsReady(ExpectBase, tag="workloadsReady", frozen=True, kw_only=True):
    """Every selected Deployment, ReplicaSet, StatefulSet and DaemonSet is ready (see
    ``workloads.py``); ``{}`` selects all of them, at least one must exist."""

    kind: str = ""
    name: str = ""
    namespace: str = ""
    selector: LabelSelector = LabelSelector()


class JobsComplete(ExpectBase, tag="jobsComplete", frozen=True, kw_only=True):
    """``count`` of the Jobs ``selector`` picks have the condition Complete (``all``: every one)."""

    count: Count = "all"
    selector: LabelSelector = LabelSelector()


class ObjectCount(ExpectBase, tag="objectCount", frozen=True, kw_only=True):
    """Exactly ``count`` objects of ``kind`` (in ``namespace``; empty: all) exist at the end
    (what agents made: the claims of pods, a driver's ResourceSlices)."""

    kind: str
    count: NonNegativeInt
    namespace: str = ""


Expectation = (
    PodCount
    | PodOnNode
    | MaxPodsPerNode
    | TopologySpread
    | PodsOnNodes
    | NoOvercommit
    | WorkloadsReady
    | JobsComplete
    | ObjectCount
)
