"""The faults a scenario injects: what may go wrong, and when.

Faults (top-level ``faults:`` and the step verb ``fault``) are a tagged union
(``tag_field`` ``type``); in YAML each is a one-key mapping ``{<kind>: <body>}``. They are
interpreted by ``emulator/app/scenario/faults.py`` (decisions) and the runner (timed actions). Times
(``start``, ``stop``, ``at``) are absolute simulated times, like a step's ``at``; a fault
given by a step is armed when the step plays, so its ``start`` defaults to that moment.
Agents are named as their clients: ``runner``, ``default-scheduler`` (``-<i>`` with
several instances), ``kubelet:<node>``, ``controller:<name>``; ``*`` matches any text.

=========================  ===================================================================
fault                      effect
=========================  ===================================================================
``apiError``               matching calls fail with ``error`` (probability, at most ``count``)
``apiLatency``             matching calls take ``delay`` longer
``watchDelay``             an agent's watch events arrive ``delay`` later (a stale cache)
``watchCut``               an agent's watch streams end ``at`` a time or ``every`` period
``watchReorder``           events of different objects may overtake each other by ``window``
``nodeHeartbeatStop``      the node's kubelet stops renewing its Lease and posting status
``nodePartition``          the node's kubelet cannot reach the API server at all
``imagePullSlow``          pulls take ``factor`` times longer, or run at ``bandwidth``
``containerStartFailure``  matching pods fail to start (phase Failed, container ``reason``)
``scheduler``              ``instances`` more scheduler instances (optionally another config)
=========================  ===================================================================
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec

from emulator.app.scenario.schema.base import ByteRate, Duration, PositiveDuration, PositiveInt, Probability, Spec
from emulator.app.scenario.schema.cluster import Delay, SchedulerConfig
from emulator.base.api.core import LabelSelector

__all__ = [
    "AGENT_PATTERN",
    "API_VERBS",
    "ApiError",
    "ApiLatency",
    "ContainerStartFailure",
    "FaultSpec",
    "ImagePullSlow",
    "NodeHeartbeatStop",
    "NodePartition",
    "SchedulerInstances",
    "WatchCut",
    "WatchDelay",
    "WatchReorder",
]

API_VERBS: Final = ("create", "get", "list", "update", "updateStatus", "delete", "bind", "evict")
"""The client verbs an API fault may select (``bind`` is the pods/binding subresource,
``evict`` pods/eviction)."""
AGENT_PATTERN: Final = r"^(\*|runner|default-scheduler[-0-9*]*|kubelet:\S+|controller:\S+|csi:\S+)$"
Agent = Annotated[
    str,
    msgspec.Meta(
        pattern=AGENT_PATTERN,
        extra={
            "expected": "an agent: runner, default-scheduler[-<i>], kubelet:<node>, controller:<name> "
            "or csi:<driver> (* matches any text)"
        },
    ),
]
ApiVerb = Literal["create", "get", "list", "update", "updateStatus", "delete", "bind", "evict"]


class FaultBase(Spec, tag_field="type", frozen=True, kw_only=True):
    pass


class ApiError(FaultBase, tag="apiError", frozen=True, kw_only=True):
    """Matching API calls fail with ``error`` instead of reaching the server."""

    verb: ApiVerb | None = None
    kind: str | None = None
    """An API kind (``Pod``, ``Node``, ``Lease``...); ``bind`` calls are of kind ``Pod``."""
    agent: Agent | None = None
    error: Literal["Conflict", "InternalError", "NotFound"] = "InternalError"
    probability: Probability = 1.0
    start: Duration | None = None
    stop: Duration | None = None
    count: PositiveInt | None = None
    """At most this many injections in the run."""


class ApiLatency(FaultBase, tag="apiLatency", frozen=True, kw_only=True):
    """Matching API calls take ``delay`` longer (on top of ``latency.api``)."""

    delay: Delay
    verb: ApiVerb | None = None
    kind: str | None = None
    agent: Agent | None = None
    probability: Probability = 1.0
    start: Duration | None = None
    stop: Duration | None = None


class WatchDelay(FaultBase, tag="watchDelay", frozen=True, kw_only=True):
    """Events written in the window reach ``agent``'s watches ``delay`` later (in order)."""

    agent: Agent
    delay: Delay
    kind: str | None = None
    start: Duration | None = None
    stop: Duration | None = None


class WatchCut(FaultBase, tag="watchCut", frozen=True, kw_only=True):
    """End ``agent``'s watch streams once ``at`` a time, or ``every`` period from ``start``
    until ``stop``; its informers resume from their last revision (``relist``: list again)."""

    agent: Agent
    kind: str | None = None
    at: Duration | None = None
    every: PositiveDuration | None = None
    start: Duration | None = None
    stop: Duration | None = None
    relist: bool = False


class WatchReorder(FaultBase, tag="watchReorder", frozen=True, kw_only=True):
    """Each event written in the window may arrive up to ``window`` late, so events of
    *different* objects may overtake each other; one object's events never reorder."""

    agent: Agent
    window: PositiveDuration
    kind: str | None = None
    start: Duration | None = None
    stop: Duration | None = None


class NodeHeartbeatStop(FaultBase, tag="nodeHeartbeatStop", frozen=True, kw_only=True):
    """The node's kubelet neither renews its Lease nor posts its status in the window."""

    node: str
    start: Duration | None = None
    stop: Duration | None = None


class NodePartition(FaultBase, tag="nodePartition", frozen=True, kw_only=True):
    """The node's kubelet cannot reach the API server in the window: every call it makes
    fails (no Lease, no node or pod status, no deletion confirmed, no Event) and its watches
    end, their relists failing too; its containers keep running. At ``stop`` its next retry
    goes through: it relists, renews its Lease and catches up."""

    node: str
    start: Duration | None = None
    stop: Duration | None = None


class ImagePullSlow(FaultBase, tag="imagePullSlow", frozen=True, kw_only=True):
    """Pulls started in the window take ``factor`` times longer, or run at ``bandwidth``."""

    node: str | None = None
    image: str | None = None
    factor: Annotated[float, msgspec.Meta(gt=0)] | None = None
    bandwidth: ByteRate | None = None
    start: Duration | None = None
    stop: Duration | None = None


class ContainerStartFailure(FaultBase, tag="containerStartFailure", frozen=True, kw_only=True):
    """Matching pods fail to start their containers: phase Failed, containers terminated
    with ``reason`` and exit code 128 (no restarts: see the README)."""

    node: str | None = None
    selector: LabelSelector = LabelSelector()
    probability: Probability = 1.0
    reason: str = "StartError"
    message: str = ""
    start: Duration | None = None
    stop: Duration | None = None


class SchedulerInstances(FaultBase, tag="scheduler", frozen=True, kw_only=True):
    """Start ``instances`` more scheduler instances ``at`` a time, with the scenario's
    configuration or ``config``."""

    instances: PositiveInt = 1
    config: SchedulerConfig | None = None
    at: Duration | None = None


FaultSpec = (
    ApiError
    | ApiLatency
    | WatchDelay
    | WatchCut
    | WatchReorder
    | NodeHeartbeatStop
    | NodePartition
    | ImagePullSlow
    | ContainerStartFailure
    | SchedulerInstances
)
