"""The steps of a scenario's timeline, a tagged union (``tag_field`` ``verb``) dispatched
with ``match``.

In YAML a step is ``{at?: <duration>, <verb>: <body>}``; loaded, the body's
fields sit on the step's Struct beside ``at``:

===============  =============================================  =========================
YAML verb        body                                            Struct
===============  =============================================  =========================
``create``       list of manifests / ``{file}`` entries          ``Create(objects)``
``createPods``   ``{count, namePrefix, template, ...}``          ``CreatePods``
``createNodes``  a ``nodes`` entry                               ``CreateNodes(nodes)``
``delete``       ``{kind, name | selector, namespace?,            ``Delete``
                 propagationPolicy?}``
``scale``        ``{kind, name, namespace?, replicas}``          ``Scale``
``update``       ``{kind, name, namespace?, patch}``             ``Update``
``cordon``       ``{node}``                                      ``Cordon``
``uncordon``     ``{node}``                                      ``Uncordon``
``drain``        ``{node, timeout?, gracePeriod?}``              ``Drain``
``sleep``        a duration                                      ``Sleep(duration)``
``waitFor``      ``{condition, selector?, count?, timeout,      ``WaitFor``
                 kind?, name?, namespace?}``
``fault``        one fault (one-key mapping, ``faults``)         ``Fault(fault)``
``replay``       ``{file, format, timeScale?, limit?,             ``Replay``
                 namespace?, gpuSharing?}``
===============  =============================================  =========================

``replay`` creates the pods of a trace file (``emulator/app/scenario/workload_traces.py`` has the formats),
each at its arrival times ``timeScale`` after the step starts, running for its duration
times ``timeScale`` (the run-duration annotation); ``limit`` keeps the first rows. The loader
reads the file into ``Replay.pods`` (rows never go backwards in time), so a bad row fails
before anything runs. A ``nodes`` entry ``{fromFile, format}`` (``NodeFile``) is a trace's
node list, read into ``NodeFile.items`` the same way. ``gpuSharing`` (``alibaba-gpu-2023``:
``device-plugin``, the default, or ``dra``) says how the trace's GPUs are requested; a
scenario's node lists and replays of that format must agree on it.

Generated names (``NodeGroup`` and ``CreatePods``): object ``i`` (0-based) is named
``f"{namePrefix}-{i}"``, or ``f"{namePrefix}{i}"`` when the prefix already ends with
``-``. A group has at most ``MAX_GROUP_NODES`` nodes, a ``createPods`` step at most
``MAX_CREATE_PODS`` pods. ``labelValues`` are kept as written and resolved by
``NodeGroup.node(i)``: node ``i`` gets ``values[i % len(values)]`` for each key
(round-robin), on top of the template's labels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Final, Literal

import msgspec
from msgspec.structs import replace

from emulator.app.scenario.limits import MAX_CREATE_PODS
from emulator.app.scenario.schema.base import (
    RUN_DURATION_ANNOTATION,
    Count,
    Duration,
    GpuSharing,
    PositiveDuration,
    Spec,
    generated_name,
)
from emulator.app.scenario.schema.cluster import NodeGroup
from emulator.app.scenario.schema.faults import FaultSpec
from emulator.base.api.codec import ApiObject
from emulator.base.api.core import LabelSelector, Pod

__all__ = [
    "DRAIN_TIMEOUT",
    "SCALABLE_KINDS",
    "Cordon",
    "Create",
    "CreateNodes",
    "CreatePods",
    "Delete",
    "Drain",
    "Fault",
    "Replay",
    "Scale",
    "Sleep",
    "Step",
    "StepBase",
    "TimedPod",
    "TraceFormat",
    "Uncordon",
    "Update",
    "WaitFor",
]


class StepBase(Spec, tag_field="verb", frozen=True, kw_only=True):
    at: Duration | None = None
    """Absolute simulated time to wait for before the step; None: right after the previous."""


class Create(StepBase, tag="create", frozen=True, kw_only=True):
    objects: list[ApiObject]


class CreatePods(StepBase, tag="createPods", frozen=True, kw_only=True):
    count: Annotated[int, msgspec.Meta(ge=1, le=MAX_CREATE_PODS)]
    name_prefix: str
    template: Pod
    """The template with an empty ``metadata.name``."""
    rate_per_second: Annotated[float, msgspec.Meta(gt=0)] | None = None
    """Create at this rate (the first at once); None: all at once."""
    namespace: str = ""
    """Resolved at load: given, else the template's namespace, else ``default``."""
    run_duration: Duration | None = None
    """Each pod completes (``Succeeded``) after running this long: the runner sets the
    ``emulator.k8s.io/run-duration`` annotation the kubelet reads."""

    def name(self, i: int) -> str:
        return generated_name(self.name_prefix, i)

    def pod(self, i: int) -> Pod:
        meta = replace(self.template.metadata, name=self.name(i), namespace=self.namespace)
        if self.run_duration is not None:
            meta = replace(meta, annotations={**meta.annotations, RUN_DURATION_ANNOTATION: f"{self.run_duration:g}s"})
        return replace(self.template, metadata=meta)

    def pods(self) -> Callable[[int], Pod]:
        """``pod`` for a run of the step: the metadata its pods share (the namespace, the
        run-duration annotation) made once, each pod's name put in
        (``tests/scenario/test_create_pods_maker.py`` compares it with ``pod``)."""
        template, prefix = self.template, self.name_prefix
        meta = replace(template.metadata, namespace=self.namespace)
        if self.run_duration is not None:
            meta = replace(meta, annotations={**meta.annotations, RUN_DURATION_ANNOTATION: f"{self.run_duration:g}s"})

        def pod(i: int) -> Pod:
            return replace(template, metadata=replace(meta, name=generated_name(prefix, i)))

        return pod


class CreateNodes(StepBase, tag="createNodes", frozen=True, kw_only=True):
    nodes: NodeGroup


TraceFormat = Literal["csv", "alibaba-gpu-2023"]


class TimedPod(msgspec.Struct, frozen=True, kw_only=True):
    """A pod of a replayed trace: created ``at`` seconds after the step starts; ``line`` is its
    row in the trace file."""

    at: float
    line: int
    pod: Pod


class Replay(StepBase, tag="replay", frozen=True, kw_only=True):
    file: str
    """Relative to the scenario file's directory."""
    format: TraceFormat
    time_scale: Annotated[float, msgspec.Meta(gt=0, le=1000)] = 1.0
    """Multiplies every arrival and duration (0.01: a hundred times faster)."""
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_CREATE_PODS)] | None = None
    """Replay only the first ``limit`` rows."""
    namespace: str = ""
    """The namespace of rows that name none; resolved at load (``default`` when not given)."""
    pods: list[TimedPod] = []
    """Filled in by the loader from ``file`` (not written in YAML)."""
    priority_classes: dict[str, int] = {}
    """Classes ``priority-<n>`` for integer priorities: the runner creates each one missing."""
    gpu_sharing: GpuSharing = "device-plugin"
    """``alibaba-gpu-2023`` only; ``dra``: GPU rows become pods with claims (``trace_gpus``)."""
    objects: list[ApiObject] = []
    """With ``gpuSharing: dra``: the DeviceClass and ResourceClaimTemplates the pods use, filled
    in by the loader; the runner creates each one missing before the first pod."""


class Delete(StepBase, tag="delete", frozen=True, kw_only=True):
    """Delete one object by ``name``, or every object of ``kind`` matching ``selector``."""

    kind: str
    name: str = ""
    selector: LabelSelector | None = None
    namespace: str = ""
    """Resolved at load: ``default`` for a namespaced kind when not given, empty otherwise."""
    propagation_policy: Literal["Background", "Foreground", "Orphan"] | None = None
    """Upstream ``DeleteOptions.propagationPolicy``; unset: the kind's default (Background)."""
    grace_period_seconds: Annotated[int, msgspec.Meta(ge=0)] | None = None
    """Upstream ``DeleteOptions.gracePeriodSeconds``; unset: the pod's own. ``0`` is
    ``kubectl delete --force --grace-period=0``: the pod is removed at once, without
    waiting for its kubelet to confirm (a partitioned node's pods)."""


SCALABLE_KINDS: Final = ("Deployment", "ReplicaSet", "StatefulSet")
"""The kinds with a scale subresource that ``kubectl scale`` accepts."""
Replicas = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]


class Scale(StepBase, tag="scale", frozen=True, kw_only=True):
    """Set ``spec.replicas`` of a Deployment, ReplicaSet or StatefulSet (``kubectl scale``)."""

    kind: str
    name: str
    namespace: str = ""
    """Resolved at load: ``default`` when not given."""
    replicas: Replicas


class Update(StepBase, tag="update", frozen=True, kw_only=True):
    """Apply ``patch`` as a JSON merge patch (RFC 7386: ``null`` deletes a key, lists are
    replaced whole) to the object's manifest form, then update it (``kubectl patch --type
    merge``); a changed pod template starts a rollout."""

    kind: str
    name: str
    namespace: str = ""
    """Resolved at load: ``default`` for a namespaced kind when not given, empty otherwise."""
    patch: dict[str, Any]


DRAIN_TIMEOUT: Final = 300.0
"""``drain``'s default timeout. kubectl's is none (wait forever); a scenario must end, so 5m."""


class Drain(StepBase, tag="drain", frozen=True, kw_only=True):
    """``kubectl drain``: cordon ``node``, evict its pods but DaemonSet and mirror pods through
    the Eviction API (a 429 is retried every 5 s), wait until they are gone; not done within
    ``timeout`` fails the run like a timed-out ``waitFor``."""

    node: str
    timeout: PositiveDuration = DRAIN_TIMEOUT
    grace_period: Duration | None = None
    """Each eviction's ``gracePeriodSeconds`` (whole seconds, rounded up); unset: the pod's own."""


class Cordon(StepBase, tag="cordon", frozen=True, kw_only=True):
    node: str


class Uncordon(StepBase, tag="uncordon", frozen=True, kw_only=True):
    node: str


class Sleep(StepBase, tag="sleep", frozen=True, kw_only=True):
    duration: Duration


class WaitFor(StepBase, tag="waitFor", frozen=True, kw_only=True):
    condition: Literal[
        "podsScheduled", "podsRunning", "podsSucceeded", "podsTerminal", "workloadsReady", "jobsComplete"
    ]
    timeout: Duration
    selector: LabelSelector = LabelSelector()
    """Pods' labels; for ``workloadsReady`` and ``jobsComplete`` the objects' labels."""
    count: Count = "all"
    kind: str = ""
    """``workloadsReady`` only: Deployment, ReplicaSet, StatefulSet or DaemonSet (empty: all)."""
    name: str = ""
    """``workloadsReady`` only: the object's name (empty: any)."""
    namespace: str = ""
    """``workloadsReady`` only: the objects' namespace (empty: any)."""


class Fault(StepBase, tag="fault", frozen=True, kw_only=True):
    """A fault armed when the step plays (``fault: {<kind>: <body>}``)."""

    fault: FaultSpec


Step = (
    Create
    | CreatePods
    | CreateNodes
    | Delete
    | Scale
    | Update
    | Cordon
    | Uncordon
    | Drain
    | Sleep
    | WaitFor
    | Fault
    | Replay
)
