"""The scenario file's schema: what a user may write, as frozen msgspec Structs.

This module owns the *shape* of a loaded scenario and the pure helpers that expand it
(generated node and pod names). It does not read files or report errors: ``loader.py``
walks the YAML against these Structs (field names, required-ness, defaults and
constraints all come from here) and raises ``ScenarioError`` with the exact path.
Build a ``Scenario`` with the loader, not ``msgspec.convert``: API objects are an
untagged union, and the YAML form of steps and expectations is not the Structs' form.

Units once loaded: every duration is a float of seconds, every quantity an int of bytes
(``imagePullBandwidth``: bytes per second), label selectors are parsed ``LabelSelector``
values (the empty selector, the default, matches every pod), manifests are API Structs.

At ~600 lines it is over the house's ~500 on purpose: it is the scenario format's one
reference, read top to bottom (cluster, steps, faults, expectations, the scenario) like the
README's section, and the loader walks it by reflection; it holds declarations only.

Steps and expectations are tagged unions (``tag_field`` ``verb`` / ``expect``), dispatched
with ``match``. In YAML a step is ``{at?: <duration>, <verb>: <body>}``; loaded, the body's
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
``fault``        one fault (a one-key mapping, see below)        ``Fault(fault)``
``replay``       ``{file, format, timeScale?, limit?,             ``Replay``
                 namespace?}``
===============  =============================================  =========================

``replay`` creates the pods of a trace file (``emulator/scenario/traces.py`` has the formats),
each at its arrival times ``timeScale`` after the step starts, running for its duration
times ``timeScale`` (the run-duration annotation); ``limit`` keeps the first rows. The loader
reads the file into ``Replay.pods`` (rows never go backwards in time), so a bad row fails
before anything runs. A ``nodes`` entry ``{fromFile, format}`` (``NodeFile``) is a trace's
node list, read into ``NodeFile.items`` the same way.

Generated names (``NodeGroup`` and ``CreatePods``): object ``i`` (0-based) is named
``f"{namePrefix}-{i}"``, or ``f"{namePrefix}{i}"`` when the prefix already ends with
``-``. A group has at most ``MAX_GROUP_NODES`` nodes, a ``createPods`` step at most
``MAX_CREATE_PODS`` pods. ``labelValues`` are kept as written and resolved by
``NodeGroup.node(i)``: node ``i`` gets ``values[i % len(values)]`` for each key
(round-robin), on top of the template's labels.

Faults (top-level ``faults:`` and the step verb ``fault``) are tagged unions too
(``tag_field`` ``type``); in YAML each is a one-key mapping ``{<kind>: <body>}``. They are
interpreted by ``emulator/faults.py`` (decisions) and the runner (timed actions). Times
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
``imagePullSlow``          pulls take ``factor`` times longer, or run at ``bandwidth``
``containerStartFailure``  matching pods fail to start (phase Failed, container ``reason``)
``scheduler``              ``instances`` more scheduler instances (optionally another config)
=========================  ===================================================================

Run length: the timeline runs every step in order (a step with ``at`` first waits until
that simulated time; ``at`` never goes backwards). After the last step the run ends once
no Pod has been written for ``settle`` seconds (default 30s), or at ``until`` if given,
whichever comes first.

Limits: every number is bounded so that every accepted scenario finishes (durations at most
a day, periods at least a second, totals of nodes, pods and scheduler instances): the values
are in ``limits.py``, with why; the types below carry the per-field ones, ``totals.py``
checks those that span several fields, and the loader refuses NaN and infinities.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

import msgspec
from msgspec.structs import replace

from emulator.api.codec import ApiObject
from emulator.api.core import LabelSelector, Node, Pod
from emulator.scenario.limits import MAX_CREATE_PODS, MAX_GROUP_NODES, MAX_SECONDS

__all__ = [
    "AGENT_PATTERN",
    "API_VERBS",
    "DRAIN_TIMEOUT",
    "MAX_CREATE_PODS",
    "MAX_GROUP_NODES",
    "PRECREATED_NAMESPACES",
    "SCALABLE_KINDS",
    "ApiError",
    "ApiLatency",
    "ByteRate",
    "Bytes",
    "ContainerStartFailure",
    "Cordon",
    "Count",
    "Create",
    "CreateNodes",
    "CreatePods",
    "CycleCost",
    "Delay",
    "Delete",
    "Drain",
    "Duration",
    "Expectation",
    "Fault",
    "FaultSpec",
    "ImagePullSlow",
    "JobsComplete",
    "KubeletConfig",
    "Latency",
    "MaxPodsPerNode",
    "NoOvercommit",
    "NodeFile",
    "NodeGroup",
    "NodeHeartbeatStop",
    "PodCount",
    "PodOnNode",
    "PodsOnNodes",
    "Replay",
    "Scale",
    "Scenario",
    "SchedulerConfig",
    "SchedulerInstances",
    "SchedulerOptions",
    "Sleep",
    "Spec",
    "Step",
    "StepBase",
    "TimedPod",
    "TopologySpread",
    "TraceFormat",
    "Uncordon",
    "Update",
    "WaitFor",
    "WatchCut",
    "WatchDelay",
    "WatchReorder",
    "WorkloadsReady",
    "auto_namespaces",
    "creation_order",
    "generated_name",
]

Duration = Annotated[float, msgspec.Meta(ge=0, le=MAX_SECONDS, extra={"format": "duration"})]
"""Seconds; written as a Go duration ("5ms", "1.5s", "1h30m") or a number of seconds; at most
a day (``limits.MAX_SECONDS``, like every other limit: see ``limits.py`` and ``totals.py``)."""
Bytes = Annotated[int, msgspec.Meta(ge=0, extra={"format": "quantity"})]
"""Bytes; written as a Kubernetes quantity ("100Mi", "1G", 5e6)."""
ByteRate = Annotated[int, msgspec.Meta(ge=0, extra={"format": "rate"})]
"""Bytes per second; written as a quantity ("50Mi"), optionally with "/s" ("50Mi/s")."""
PositiveDuration = Annotated[float, msgspec.Meta(gt=0, le=MAX_SECONDS, extra={"format": "duration"})]
"""A duration greater than zero."""
PositiveInt = Annotated[int, msgspec.Meta(ge=1)]
Probability = Annotated[float, msgspec.Meta(ge=0, le=1)]
"""A probability in [0, 1]."""
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0)]
Count = NonNegativeInt | Literal["all"]
"""A number of pods, or every pod the selector matches."""
ImportPath = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$",
        extra={"expected": 'an import path like "package.module:Class"'},
    ),
]

RUN_DURATION_ANNOTATION: Final = "emulator.k8s.io/run-duration"
PRECREATED_NAMESPACES: Final = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
"""Namespaces a new cluster has (the runner also creates every namespace objects refer to)."""


class Spec(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True, frozen=True):
    """Base of every scenario Struct."""


def generated_name(prefix: str, i: int) -> str:
    """The name of generated object ``i``: ``prefix-i``, or ``prefix + i`` if it ends with ``-``."""
    return f"{prefix}{i}" if prefix.endswith("-") else f"{prefix}-{i}"


# --- cluster -----------------------------------------------------------------------------


class Delay(Spec, frozen=True, kw_only=True):
    """A random delay: ``mean`` plus uniform noise in ``[-jitter, +jitter]`` (never below 0)."""

    mean: Duration = 0.0
    jitter: Duration = 0.0


class Latency(Spec, frozen=True, kw_only=True):
    api: Delay = Delay()
    """Each API request: the delay before it reaches the server (the Client sleeps once,
    before the call; the answer comes back at once)."""
    watch: Delay = Delay()
    """Each watch event's delivery."""


class KubeletConfig(Spec, frozen=True, kw_only=True):
    image_pull_bandwidth: ByteRate = 0
    """Bytes per second per node; 0 pulls instantly."""
    container_start: Delay = Delay()
    termination: Delay = Delay()
    heartbeat_interval: Duration = 10.0
    """Node status / Lease renewal period (upstream ``nodeStatusUpdateFrequency`` and the
    Lease's renew interval); 0 turns heartbeats off."""
    node_status_report_frequency: Duration | None = None
    """Upstream ``nodeStatusReportFrequency``: on a heartbeat the node status is posted only
    if it changed (heartbeat times aside) or this long passed since the last post; 0 = every
    heartbeat. Unset: upstream's defaulting, 5m, or ``heartbeatInterval`` when that is set
    (``nodeStatusUpdateFrequency`` given explicitly); the loader fills it in."""
    default_image_size: Bytes = 100 * 2**20
    """Size of an image not listed in ``Scenario.images``."""


class ApiServerConfig(Spec, frozen=True, kw_only=True):
    """kube-apiserver flags the run honours."""

    event_ttl: Duration = msgspec.field(default=3600.0, name="eventTTL")
    """Upstream ``--event-ttl``: an Event is deleted this long after its last write (0: kept)."""


class PodGCConfig(Spec, frozen=True, kw_only=True):
    terminated_pod_gc_threshold: Annotated[int, msgspec.Meta(ge=0)] = msgspec.field(
        default=12_500, name="terminatedPodGCThreshold"
    )
    """Upstream ``--terminated-pod-gc-threshold``: terminated pods kept before PodGC deletes
    the oldest; 0 keeps them all."""


class ControllersConfig(Spec, frozen=True, kw_only=True):
    """kube-controller-manager settings the run honours."""

    pod_gc: PodGCConfig = msgspec.field(default_factory=PodGCConfig, name="podGC")


class SchedulerConfig(Spec, frozen=True, kw_only=True):
    """A KubeSchedulerConfiguration document, raw (the scheduler's config module validates it)."""

    document: dict[str, Any]
    file: str
    """The file the document was read from, to name in later errors."""
    path: str = ""
    """Where the document sits in ``file``: ``scheduler`` when inline, empty for its own file."""


class CycleCost(Spec, frozen=True, kw_only=True):
    """Simulated CPU time of one scheduling cycle: ``fixed + perNode * nodes evaluated``."""

    fixed: Duration = 0.0
    per_node: Duration = 0.0


class SchedulerOptions(Spec, frozen=True, kw_only=True):
    assume_cache: bool = True
    queueing_hints: bool = True
    in_flight_events: bool = True
    """False: events arriving during a pod's scheduling attempt are lost (no in-flight events,
    no ``moveRequestCycle``), for race experiments."""
    instances: PositiveInt = 1
    cycle_cost: CycleCost = CycleCost()
    plugins: dict[str, ImportPath] = {}
    """Out-of-tree plugins: plugin name -> ``package.module:Class``."""


class NodeGroup(Spec, frozen=True, kw_only=True):
    """``count`` nodes built from ``template`` (see the module docstring for names and labels)."""

    count: Annotated[int, msgspec.Meta(ge=1, le=MAX_GROUP_NODES)]
    name_prefix: str
    template: Node
    """The template with an empty ``metadata.name``."""
    label_values: dict[str, Annotated[list[str], msgspec.Meta(min_length=1)]] = {}

    def name(self, i: int) -> str:
        return generated_name(self.name_prefix, i)

    def node(self, i: int) -> Node:
        """Node ``i`` of the group: its generated name and round-robin label values."""
        labels = dict(self.template.metadata.labels)
        for key, values in self.label_values.items():
            labels[key] = values[i % len(values)]
        meta = replace(self.template.metadata, name=self.name(i), labels=labels)
        return replace(self.template, metadata=meta)

    def nodes(self) -> list[Node]:
        return [self.node(i) for i in range(self.count)]


# --- steps -------------------------------------------------------------------------------


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


class NodeFile(Spec, frozen=True, kw_only=True):
    """A ``nodes`` entry read from a trace's node list."""

    from_file: str
    format: Literal["alibaba-gpu-2023"]
    items: list[Node] = []
    """Filled in by the loader from ``fromFile`` (not written in YAML)."""

    @property
    def count(self) -> int:
        return len(self.items)

    def nodes(self) -> list[Node]:
        return list(self.items)


class Delete(StepBase, tag="delete", frozen=True, kw_only=True):
    """Delete one object by ``name``, or every object of ``kind`` matching ``selector``."""

    kind: str
    name: str = ""
    selector: LabelSelector | None = None
    namespace: str = ""
    """Resolved at load: ``default`` for a namespaced kind when not given, empty otherwise."""
    propagation_policy: Literal["Background", "Foreground", "Orphan"] | None = None
    """Upstream ``DeleteOptions.propagationPolicy``; unset: the kind's default (Background)."""


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


# --- faults ------------------------------------------------------------------------------

API_VERBS: Final = ("create", "get", "list", "update", "updateStatus", "delete", "bind", "evict")
"""The client verbs an API fault may select (``bind`` is the pods/binding subresource,
``evict`` pods/eviction)."""
AGENT_PATTERN: Final = r"^(\*|runner|default-scheduler[-0-9*]*|kubelet:\S+|controller:\S+)$"
Agent = Annotated[
    str,
    msgspec.Meta(
        pattern=AGENT_PATTERN,
        extra={
            "expected": "an agent: runner, default-scheduler[-<i>], kubelet:<node> or controller:<name> "
            "(* matches any text)"
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
    | ImagePullSlow
    | ContainerStartFailure
    | SchedulerInstances
)


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


# --- expectations ------------------------------------------------------------------------


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


Expectation = (
    PodCount | PodOnNode | MaxPodsPerNode | TopologySpread | PodsOnNodes | NoOvercommit | WorkloadsReady | JobsComplete
)


# --- the scenario ------------------------------------------------------------------------


class Scenario(Spec, frozen=True, kw_only=True):
    name: str
    description: str = ""
    seed: int = 0
    clock: Literal["virtual", "real"] = "virtual"
    until: Duration | None = None
    """Stop the run at this simulated time."""
    settle: Duration = 30.0
    """After the last step, end once no Pod has been written for this long."""
    latency: Latency = Latency()
    api_server: ApiServerConfig = ApiServerConfig()
    controllers: ControllersConfig = ControllersConfig()
    kubelet: KubeletConfig = KubeletConfig()
    images: dict[str, Bytes] = {}
    """Image name -> size."""
    scheduler: SchedulerConfig | None = None
    scheduler_options: SchedulerOptions = SchedulerOptions()
    objects: list[ApiObject] = []
    """Created when the run starts, before ``nodes`` and the first step."""
    nodes: list[NodeGroup | NodeFile] = []
    faults: list[FaultSpec] = []
    """Armed from the start of the run (see the Faults table above)."""
    steps: list[Step] = []
    expect: list[Expectation] = []


# --- what the runner creates, and in which order ------------------------------------------


def creation_order(objects: list[ApiObject]) -> list[ApiObject]:
    """``objects`` in the order the runner creates them: Namespaces and PriorityClasses
    first (what the others need), then the rest in file order, except that an object whose
    ``ownerReferences`` name the ``uid`` of another manifest of the list comes after that
    owner (a dumped cluster lists pods before their ReplicaSets; the runner gives the owner
    its new UID first, then rewrites the dependents' references to it)."""
    first = [o for o in objects if o.kind in ("Namespace", "PriorityClass")]
    rest = [o for o in objects if o.kind not in ("Namespace", "PriorityClass")]
    by_uid = {o.metadata.uid: i for i, o in enumerate(rest) if o.metadata.uid}
    placed: list[ApiObject] = []
    done: set[int] = set()
    visiting: set[int] = set()

    def place(i: int) -> None:
        if i in done or i in visiting:  # a cycle of owners: keep file order
            return
        visiting.add(i)
        for ref in rest[i].metadata.owner_references:
            j = by_uid.get(ref.uid)
            if j is not None and j != i:
                place(j)
        visiting.discard(i)
        done.add(i)
        placed.append(rest[i])

    for i in range(len(rest)):
        place(i)
    return first + placed


def auto_namespaces(scenario: Scenario) -> list[str]:
    """The namespaces the runner creates before ``objects``: the pre-created ones and every
    namespace a manifest or ``createPods`` step names, except those the scenario creates
    itself (a Namespace in ``objects`` or in any ``create`` step)."""
    manifests = list(scenario.objects)
    names = set(PRECREATED_NAMESPACES)
    for step in scenario.steps:
        if isinstance(step, Create):
            manifests.extend(step.objects)
        elif isinstance(step, CreatePods):
            names.add(step.namespace or step.template.metadata.namespace or "default")
        elif isinstance(step, Replay):
            names.update(p.pod.metadata.namespace for p in step.pods)
    names.update(o.metadata.namespace for o in manifests if o.kind != "Namespace" and o.metadata.namespace)
    return sorted(names - {o.metadata.name for o in manifests if o.kind == "Namespace"})
