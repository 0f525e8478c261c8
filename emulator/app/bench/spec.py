"""The schema of a benchmark workload file, in upstream scheduler_perf's shape: ``templates``
(name → a Node or Pod manifest) and ``testCases``, each a ``workloadTemplate`` (ops tagged by
``opcode``) instantiated by its ``workloads``. msgspec Structs with unknown fields refused, and
``WorkloadError``, the one error every reader of such a file raises. Only the shape: checking
names, counts and templates across ops is ``resolve.py``'s; reading files is ``workloads.py``'s
(ours) and ``upstream.py``'s (upstream's own files, translated into this shape).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Final, Literal

import msgspec

from emulator.base.inputs import InputError

__all__ = [
    "MAX_SCALED_PARAM",
    "AllocResourceClaimsOp",
    "BarrierOp",
    "ChurnOp",
    "CreateAnyOp",
    "CreateNamespacesOp",
    "CreateNodesOp",
    "CreatePodSetsOp",
    "CreatePodsOp",
    "CreateResourceDriverOp",
    "DeletePodsOp",
    "LabelStrategy",
    "Op",
    "SleepOp",
    "StartCollectingMetricsOp",
    "StopCollectingMetricsOp",
    "TestCase",
    "UniqueLabelStrategy",
    "UpdateAnyOp",
    "WorkloadError",
    "WorkloadFile",
    "WorkloadSpec",
]

NonNegative = Annotated[int, msgspec.Meta(ge=0)]


MAX_SCALED_PARAM: Final = 10_000_000
"""A workload parameter times ``--scale`` may not pass this (the scenario limit on pods in
all): ``--scale 1e9`` made counts of 10^12 that no run finishes."""


class WorkloadError(InputError):
    """Bad workload input: ``<file>[:<line>:<column>]: <path>: <detail>``."""


# --- the file's schema ------------------------------------------------------------------------


class _Spec(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True, frozen=True):
    pass


class LabelStrategy(_Spec, frozen=True):
    label_key: str
    label_values: Annotated[list[str], msgspec.Meta(min_length=1)]


class UniqueLabelStrategy(_Spec, frozen=True):
    label_key: str


class _Op(_Spec, tag_field="opcode", frozen=True):
    pass


class VolumeNodeResources(_Spec, frozen=True):
    count: NonNegative | None = None


class NodeAllocatableStrategy(_Spec, frozen=True):
    """Upstream's ``NodeAllocatableStrategy`` (``test/utils/runners.go``): each node's status
    gets ``nodeAllocatable``, and a CSINode of the node's name lists ``csiNodeAllocatable``'s
    drivers with their allocatable and ``migratedPlugins`` in its migrated-plugins annotation."""

    node_allocatable: dict[str, str] = {}
    csi_node_allocatable: dict[str, VolumeNodeResources] = {}
    migrated_plugins: list[str] = []


class CreateNodesOp(_Op, tag="createNodes", frozen=True):
    count: NonNegative | None = None
    count_param: str | None = None
    node_template: str = "node-default"
    template_params: dict[str, Any] = {}
    """Fields of a Go-template template (``gotemplate.py``); a value ``$x`` is the parameter x."""
    label_node_prepare_strategy: LabelStrategy | None = None
    unique_node_label_strategy: UniqueLabelStrategy | None = None
    node_allocatable_strategy: NodeAllocatableStrategy | None = None


class CreateNamespacesOp(_Op, tag="createNamespaces", frozen=True):
    prefix: str
    count: NonNegative | None = None
    count_param: str | None = None
    labels: dict[str, str] = {}
    """The labels of every namespace (upstream: its ``namespaceTemplatePath``'s)."""


class CreatePodsOp(_Op, tag="createPods", frozen=True):
    count: NonNegative | None = None
    count_param: str | None = None
    pod_template: str | None = None
    namespace: str | None = None
    collect_metrics: bool = False
    skip_wait_to_completion: bool = False
    template_params: dict[str, Any] = {}
    count_multiplier_param: str | None = None
    """``$x``: the count is multiplied by the parameter x (upstream: pods per group × groups)."""
    signature_batch_size: NonNegative = 0
    """Every ``signatureBatchSize`` consecutive pods share the label ``signature:
    signature-label-<index / size>`` (upstream's opportunistic-batching workloads); 0: none."""
    signature_batch_size_param: str | None = None
    steady_state: bool = False
    """Upstream's steady state: keep ``count`` pods coming for ``duration`` (each batch, once
    scheduled, deleted and replaced: ``steady.py``)."""
    steady_state_param: str | None = None
    duration: str = "0s"
    duration_param: str | None = None
    persistent_volume_template: str | None = None
    persistent_volume_claim_template: str | None = None
    """Both or neither, each an ``anyTemplates`` name (a PersistentVolume, a
    PersistentVolumeClaim): every pod gets its own claim bound to its own volume (upstream's
    ``CreatePodWithPersistentVolume``, ``harness_volumes.py``)."""


class ChurnOp(_Op, tag="churn", frozen=True):
    mode: Literal["create", "recreate"]
    templates: Annotated[list[str], msgspec.Meta(min_length=1)]
    interval_milliseconds: Annotated[int, msgspec.Meta(gt=0)] = 500
    number: NonNegative = 0
    namespace: str | None = None


class BarrierOp(_Op, tag="barrier", frozen=True):
    namespaces: list[str] = []
    stage_requirement: Literal["Scheduled", "Attempted"] = "Scheduled"
    """``Attempted``: every pod bound or tried at least once (``stages.py``)."""
    label_selector: dict[str, str] = {}
    """Only the pods carrying every one of these labels."""


class SleepOp(_Op, tag="sleep", frozen=True):
    duration: str = "0s"
    duration_param: str | None = None
    """``$x``: the duration is the (string) parameter x."""


class StartCollectingMetricsOp(_Op, tag="startCollectingMetrics", frozen=True):
    """The measured window opens: throughput counts the pods of ``namespaces`` (matching
    ``labelSelector``) bound until ``stopCollectingMetrics``."""

    namespaces: Annotated[list[str], msgspec.Meta(min_length=1)]
    name: str = ""
    label_selector: dict[str, str] = {}


class StopCollectingMetricsOp(_Op, tag="stopCollectingMetrics", frozen=True):
    """The measured window closes."""


class CreatePodSetsOp(_Op, tag="createPodSets", frozen=True):
    """``count`` createPods ops, the k-th in namespace ``<namespacePrefix>-<k>``."""

    namespace_prefix: str
    create_pods_op: CreatePodsOp
    count: NonNegative | None = None
    count_param: str | None = None


class CreateAnyOp(_Op, tag="createAny", frozen=True):
    """``count`` objects of any kind the API server has, from ``anyTemplates[template]``."""

    template: str
    count: NonNegative | None = None
    count_param: str | None = None
    namespace: str | None = None
    template_params: dict[str, Any] = {}


class UpdateAnyOp(_Op, tag="updateAny", frozen=True):
    """Replace ``count`` objects of any kind the API server has with ``anyTemplates[template]``
    rendered per index (then their status, as upstream's ``updateAny`` does),
    ``updatePerSecond`` a second (0: all at once)."""

    template: str
    count: NonNegative | None = None
    count_param: str | None = None
    namespace: str | None = None
    update_per_second: NonNegative = 0
    subresources: list[Literal["status", "resize"]] = []


class DeletePodsOp(_Op, tag="deletePods", frozen=True):
    """Delete the pods of ``namespace``, ``deletePodsPerSecond`` a second (0: all at once)."""

    namespace: str
    delete_pods_per_second: NonNegative = 0
    skip_wait_to_completion: bool = False
    label_selector: dict[str, str] = {}
    """Only the pods carrying every one of these labels (empty: every pod of the namespace)."""


class CreateResourceDriverOp(_Op, tag="createResourceDriver", frozen=True):
    """Upstream's ``createResourceDriverOp``: one ResourceSlice of driver ``driverName`` per node
    whose name matches the glob ``nodes``, with ``maxClaimsPerNode`` devices (``bench/dra.py``)."""

    driver_name: Annotated[str, msgspec.Meta(min_length=1)]
    nodes: Annotated[str, msgspec.Meta(min_length=1)]
    max_claims_per_node: NonNegative | None = None
    max_claims_per_node_param: str | None = None


class AllocResourceClaimsOp(_Op, tag="allocResourceClaims", frozen=True):
    """Upstream's ``allocResourceClaimsOp``: allocate the unallocated claims of ``namespace``
    (every namespace if empty) without a pod, as the structured allocator would (``bench/dra.py``)."""

    namespace: str = ""


Op = (
    CreateNodesOp
    | CreateNamespacesOp
    | CreatePodsOp
    | ChurnOp
    | BarrierOp
    | SleepOp
    | CreatePodSetsOp
    | DeletePodsOp
    | CreateAnyOp
    | UpdateAnyOp
    | StartCollectingMetricsOp
    | StopCollectingMetricsOp
    | CreateResourceDriverOp
    | AllocResourceClaimsOp
)


class WorkloadSpec(_Spec, frozen=True):
    name: str
    params: dict[str, Any] = {}
    """Parameter → a count (checked by the resolver, which can name the key in errors)."""
    labels: list[str] = []
    threshold: float | None = None

    def __post_init__(self) -> None:
        # msgspec's float accepts NaN and infinities, which pass or fail every comparison.
        if self.threshold is not None and not math.isfinite(self.threshold):
            raise ValueError(f"threshold must be a finite number, got {self.threshold!r}")


class TestCase(_Spec, frozen=True):
    name: str
    workload_template: Annotated[list[Op], msgspec.Meta(min_length=1)]
    workloads: Annotated[list[WorkloadSpec], msgspec.Meta(min_length=1)]
    default_pod_template: str = "pod-default"
    scheduler_config_path: str | None = None
    """A KubeSchedulerConfiguration file (relative to this file) for the scheduler of every
    workload of the test case (upstream's ``schedulerConfigPath``); default: upstream's defaults."""


class WorkloadFile(_Spec, frozen=True):
    test_cases: list[TestCase]
    templates: dict[str, dict[str, Any]] = {}
    indexed_templates: dict[str, str] = {}
    """Template name → its YAML text holding Go-template actions (``{{.Index}}``, ``{{.Count}}``,
    ``templateParams`` fields, upstream's functions: ``gotemplate.py``), rendered per object."""
    any_templates: dict[str, str] = {}
    """Template name → the YAML text of ``createAny``'s object (any kind; actions allowed)."""
