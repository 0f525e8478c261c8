"""Resolved benchmark workloads: a ``Workload`` and its plain steps (counts, templates and
namespaces filled in), as ``workloads.py`` (our file) and ``upstream.py`` (upstream's files)
produce them and ``harness.py`` plays them. Only data: no parsing, no running.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from emulator.app.bench.stages import Selector
from emulator.base.api.codec import ApiObject
from emulator.base.api.core import Node, Pod
from emulator.base.api.storage import PersistentVolume, PersistentVolumeClaim

Params = tuple[tuple[str, Any], ...]
"""An op's ``templateParams`` (sorted by key), parameters filled in."""

__all__ = [
    "AllocClaimsStep",
    "AnyStep",
    "BarrierStep",
    "ChurnStep",
    "DeletePodsStep",
    "DriverStep",
    "MetricsStep",
    "NamespacesStep",
    "NodeAllocatable",
    "NodesStep",
    "Params",
    "PodsStep",
    "SleepStep",
    "Step",
    "UpdateStep",
    "Workload",
]


# --- resolved steps ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeAllocatable:
    """Upstream's ``nodeAllocatableStrategy`` for every node of a step (``harness_volumes.py``)."""

    node_allocatable: tuple[tuple[str, str], ...]
    """Extra ``status.allocatable`` entries (name, quantity), sorted by name."""
    csi_drivers: tuple[tuple[str, int | None], ...]
    """The CSINode's drivers (name, ``allocatable.count`` or None), sorted by name."""
    migrated_plugins: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NodesStep:
    count: int
    template: Node
    label_key: str = ""
    label_values: tuple[str, ...] = ()
    unique_label_key: str = ""
    indexed: str = ""
    """The template's text when it has Go-template actions (see ``resolve.render``)."""
    params: Params = ()
    """The op's ``templateParams``, parameters filled in."""
    allocatable: NodeAllocatable | None = None


@dataclass(frozen=True, slots=True)
class NamespacesStep:
    names: tuple[str, ...]
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class AnyStep:
    count: int
    text: str
    """The template's YAML text, rendered per object by ``render_any``."""
    namespace: str = ""
    params: Params = ()


@dataclass(frozen=True, slots=True)
class DeletePodsStep:
    namespace: str
    per_second: int
    wait: bool = True
    label_selector: Selector = ()
    """Only the pods carrying every one of these labels (upstream's ``labelSelector``)."""


@dataclass(frozen=True, slots=True)
class PodsStep:
    count: int
    template: Pod
    namespace: str
    collect_metrics: bool = False
    wait: bool = True
    indexed: str = ""
    """The template's text when it has Go-template actions (see ``resolve.render``)."""
    params: Params = ()
    signature_batch: int = 0
    """Pods k share the label ``signature: signature-label-<k // signature_batch>`` (0: none)."""
    volume: PersistentVolume | None = None
    claim: PersistentVolumeClaim | None = None
    """Both or neither: pod k mounts its own claim ``pvc-<k>``, pre-bound to its own volume
    (upstream's ``CreatePodWithPersistentVolume``, ``harness_volumes.py``)."""
    steady: float | None = None
    """Upstream's steady state for this many seconds (``steady.py``); None: create and wait."""


@dataclass(frozen=True, slots=True)
class UpdateStep:
    """``updateAny``: object k < ``count`` rendered from ``text`` replaces the stored one, then
    its status (``status_only``: the status subresource twice, as upstream calls it;
    ``resize``: the first write to ``pods/<name>/resize``, in-place pod resize)."""

    count: int
    text: str
    namespace: str = ""
    per_second: int = 0
    status_only: bool = False
    resize: bool = False


@dataclass(frozen=True, slots=True)
class ChurnStep:
    mode: Literal["create", "recreate"]
    templates: tuple[ApiObject, ...]
    """Nodes and Pods, or any other kind the API server has (e.g. a Service)."""
    interval: float
    number: int
    namespace: str


@dataclass(frozen=True, slots=True)
class BarrierStep:
    namespaces: tuple[str, ...]
    """Empty: every namespace the workload has registered (see ``harness.py``)."""
    attempted: bool = False
    """``stageRequirement: Attempted`` (``stages.py``)."""
    label_selector: Selector = ()


@dataclass(frozen=True, slots=True)
class SleepStep:
    seconds: float


@dataclass(frozen=True, slots=True)
class MetricsStep:
    """``startCollectingMetrics`` (``start``) or ``stopCollectingMetrics``."""

    start: bool
    namespaces: tuple[str, ...] = ()
    label_selector: Selector = ()


@dataclass(frozen=True, slots=True)
class DriverStep:
    """``createResourceDriver``: a ResourceSlice per node matching ``nodes`` (``bench/dra.py``)."""

    driver: str
    nodes: str
    """A glob (Go ``filepath.Match``) over node names."""
    max_claims_per_node: int


@dataclass(frozen=True, slots=True)
class AllocClaimsStep:
    """``allocResourceClaims``: the unallocated claims of ``namespace`` ("" every one) allocated."""

    namespace: str = ""


Step = (
    NodesStep
    | NamespacesStep
    | PodsStep
    | ChurnStep
    | BarrierStep
    | SleepStep
    | DeletePodsStep
    | AnyStep
    | UpdateStep
    | MetricsStep
    | DriverStep
    | AllocClaimsStep
)


@dataclass(frozen=True, slots=True)
class Workload:
    name: str
    """``<testCase>/<workload>``, as upstream names its sub-benchmarks."""
    labels: tuple[str, ...]
    threshold: float | None
    steps: tuple[Step, ...]
    scale: float = 1.0
    priority_classes: tuple[tuple[str, int], ...] = ()
    """PriorityClasses (name, value) the templates refer to, created before the first step."""
    skipped: str = ""
    """Why this workload is not run (upstream files only: it needs what the emulator lacks)."""
    feature_gates: tuple[tuple[str, bool], ...] = ()
    """The ``featureGates`` an upstream file sets for it; the emulator has no gate switches."""
    scheduler_config: str = ""
    """The KubeSchedulerConfiguration file of its test case (checked when loaded); "" for
    upstream's default configuration."""
    client: tuple[float, int] | None = None
    """(qps, burst) of the scheduler's API client (upstream files' ``schedulerApiClientQPS`` and
    ``schedulerApiClientBurst``; burst 0: as qps rounded up); None: unlimited."""
    metrics: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None = None
    """Its test case's ``metricsCollectorConfig`` (upstream files): the result fields reported,
    the metrics collected, those the emulator lacks; None: upstream's default metrics."""

    @property
    def nodes(self) -> int:
        return sum(s.count for s in self.steps if isinstance(s, NodesStep))

    @property
    def measured(self) -> PodsStep | None:
        """The first ``createPods`` op with ``collectMetrics``, if any."""
        return next((s for s in self.steps if isinstance(s, PodsStep) and s.collect_metrics), None)

    @property
    def measured_pods(self) -> int:
        """Pods created in the measured phases that they count: each ``collectMetrics`` op's,
        and in each ``startCollectingMetrics`` ... ``stopCollectingMetrics`` window those of the
        window's namespaces (templates matching its selector)."""
        window: MetricsStep | None = None
        total = 0
        for s in self.steps:
            if isinstance(s, MetricsStep):
                window = s if s.start else None
            elif isinstance(s, PodsStep) and s.collect_metrics:
                total += s.count
            elif window is not None and isinstance(s, PodsStep) and s.namespace in window.namespaces:
                labels = s.template.metadata.labels
                total += s.count if all(labels.get(k) == v for k, v in window.label_selector) else 0
        return total
