"""The ``autoscaling`` section: the Cluster Autoscaler's flags and its node groups.

.. code-block:: yaml

    autoscaling:
      clusterAutoscaler:
        scanInterval: 10s                  # upstream --scan-interval
        expander: least-waste              # random | most-pods | least-waste | price | priority,
                                           # or a comma-separated chain (upstream --expander)
        priorities: {10: [small-.*]}       # the priority expander's table (regexes of group names)
        scaleDownUtilizationThreshold: 0.5
        scaleDownUnneededTime: 10m
        scaleDownDelayAfterAdd: 10m
        scaleDownDelayAfterDelete: 0s      # 0: the scan interval (upstream's default)
        scaleDownDelayAfterFailure: 3m
        maxNodeProvisionTime: 15m
        removalSimulation: taintedGhostNode  # not a flag: the release whose scale-down simulation
                                           # to emulate: taintedGhostNode (1.34.4 on) | removeNode
                                           # (1.32.3 to 1.34.3) | keepNode (up to 1.32.2)
        balanceSimilarNodeGroups: false    # upstream --balance-similar-node-groups
        balancingIgnoreLabels: []          # --balancing-ignore-label (besides zone, hostname, ...);
                                           # the groups' nodes carry kwok-nodegroup: <group>, as
                                           # upstream's kwok provider's do: list it to balance
        balancingLabels: []                # --balancing-label (compare only these)
        nodeGroups:
          - name: small
            minSize: 0
            maxSize: 20
            pricePerHour: 0.096            # dollars per node-hour (the cost metric)
            provisionDelay: {mean: 45s, jitter: 15s}   # decision -> node registered and Ready
            template: {metadata: {labels: {...}}, spec: {taints: [...]}, status: {capacity: {...}}}

Every default is upstream's (``cluster-autoscaler/config/autoscaling_options.go`` and the
flags of ``main.go``, 1.34). ``autoscaling_problems`` holds the checks across fields (``minSize``
above ``maxSize``, group names twice, expander names, priority regexes, balancing label keys,
``balancingLabels`` with ``balancingIgnoreLabels``); the loader reports
the first. Pure declarations: the runner's cloud provider is ``emulator/app/scenario/autoscaling.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated, Any, Final, Literal

import msgspec

from emulator.app.scenario.limits import MAX_GROUP_NODES
from emulator.app.scenario.schema.base import Delay, Duration, NonNegativeInt, PositiveDuration, Probability, Spec
from emulator.app.scenario.schema.cluster import NodeGroup
from emulator.app.scenario.schema.steps import Create, CreateNodes
from emulator.base.api.codec import ApiObject
from emulator.base.api.core import Node
from emulator.base.api.cron import CronError, parse_schedule
from emulator.base.api.karpenterignored import karpenter_ignored
from emulator.base.api.labels import qualified_name_errors

__all__ = [
    "EXPANDERS",
    "AutoscalingConfig",
    "CANodeGroup",
    "ClusterAutoscalerConfig",
    "InstanceTypesFile",
    "KarpenterConfig",
    "Priorities",
    "autoscaling_problems",
    "autoscaling_warnings",
]

EXPANDERS: Final = ("random", "most-pods", "least-waste", "price", "priority")
"""Upstream's expander names (``expander/expander.go``) this emulator models."""

Price = Annotated[float, msgspec.Meta(ge=0)]
Size = Annotated[int, msgspec.Meta(ge=0, le=MAX_GROUP_NODES)]
Priorities = dict[str, list[str]]
"""The priority expander's table (its own reader: YAML keys are integers)."""


class CANodeGroup(Spec, frozen=True, kw_only=True):
    """One node group of the simulated cloud provider (upstream ``cloudprovider.NodeGroup``)."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=50)]
    min_size: Size = 0
    max_size: Size
    price_per_hour: Price = 0.0
    provision_delay: Delay = Delay()
    template: Node
    """The template node (``TemplateNodeInfo``): its name is ignored; nodes are ``<name>-<i>``."""


class ClusterAutoscalerConfig(Spec, frozen=True, kw_only=True):
    scan_interval: PositiveDuration = 10.0
    expander: str = "random"
    priorities: Priorities = {}
    """The priority expander's ``priorities``: priority (an integer, as a key) -> regexes."""
    scale_down_enabled: bool = True
    scale_down_utilization_threshold: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.5
    scale_down_unneeded_time: Duration = 600.0
    scale_down_delay_after_add: Duration = 600.0
    scale_down_delay_after_delete: Duration = 0.0
    scale_down_delay_after_failure: Duration = 180.0
    max_node_provision_time: Duration = 900.0
    max_graceful_termination_sec: NonNegativeInt = 600
    new_pod_scale_up_delay: Duration = 0.0
    max_nodes_total: NonNegativeInt = 0
    """0: no limit."""
    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_local_storage: bool = True
    removal_simulation: Literal["taintedGhostNode", "removeNode", "keepNode"] = "taintedGhostNode"
    """Not an upstream flag: which releases' scale-down simulation to emulate (the node being
    removed as a tainted pod-less copy, 1.34.4 on; gone, 1.32.3 to 1.34.3; kept, before)."""
    balance_similar_node_groups: bool = False
    """Upstream ``--balance-similar-node-groups``: split scale-ups between similar groups."""
    balancing_ignore_labels: list[str] = []
    """``--balancing-ignore-label`` (repeatable): labels not compared, besides the basic ones."""
    balancing_labels: list[str] = []
    """``--balancing-label`` (repeatable): compare only these labels."""
    memory_difference_ratio: Probability = 0.015
    max_allocatable_difference_ratio: Probability = 0.05
    max_free_difference_ratio: Probability = 0.05
    node_groups: Annotated[list[CANodeGroup], msgspec.Meta(min_length=1)]


class InstanceTypesFile(Spec, frozen=True, kw_only=True):
    """``instanceTypes: {file: instance_types.json}`` (Karpenter's kwok provider format)."""

    file: str
    items: list[Any] = []
    """Filled in by the loader (``emulator/app/scenario/instancetypes.py``), not written in YAML."""


class KarpenterFeatureGates(Spec, frozen=True, kw_only=True):
    spot_to_spot_consolidation: bool = msgspec.field(default=False, name="SpotToSpotConsolidation")


class KarpenterConfig(Spec, frozen=True, kw_only=True):
    """Karpenter (kubernetes-sigs/karpenter v1.9.1) over a simulated kwok cloud."""

    instance_types: InstanceTypesFile
    node_pools: Annotated[list[ApiObject], msgspec.Meta(min_length=1)]
    """``karpenter.sh/v1`` NodePool manifests, created before the first step."""
    provision_delay: Delay = Delay()
    """NodeClaim launched -> its node registered and Ready."""
    feature_gates: KarpenterFeatureGates = msgspec.field(default_factory=lambda: KarpenterFeatureGates())
    """``--feature-gates``: only ``SpotToSpotConsolidation`` (default false) bears on the emulation."""


class AutoscalingConfig(Spec, frozen=True, kw_only=True):
    cluster_autoscaler: ClusterAutoscalerConfig | None = None
    karpenter: KarpenterConfig | None = None


_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _static_nodes(scenario: Any) -> Iterator[tuple[str, str]]:
    """``(where, name)`` of every node the scenario creates itself (``nodes``, ``createNodes``
    steps, Node manifests), for the name clash check."""
    for i, entry in enumerate(scenario.nodes):
        for k in range(entry.count):
            yield f"nodes[{i}]", entry.name(k) if isinstance(entry, NodeGroup) else entry.items[k].metadata.name
    for i, step in enumerate(scenario.steps):
        if isinstance(step, CreateNodes):
            for k in range(step.nodes.count):
                yield f"steps[{i}].createNodes", step.nodes.name(k)
        elif isinstance(step, Create):
            for obj in step.objects:
                if obj.kind == "Node":
                    yield f"steps[{i}].create", obj.metadata.name
    for obj in scenario.objects:
        if obj.kind == "Node":
            yield "objects", obj.metadata.name


def autoscaling_problems(scenario: Any, path: str) -> Iterator[tuple[str, str]]:
    """``(path, detail)`` for each problem across fields of ``autoscaling`` (and of its node
    names against the scenario's own nodes), in file order."""
    yield from _karpenter_problems(scenario.autoscaling.karpenter, f"{path}.karpenter")
    if scenario.autoscaling.karpenter is not None and scenario.autoscaling.cluster_autoscaler is not None:
        yield f"{path}.karpenter", "one autoscaler per run: remove clusterAutoscaler or karpenter"
    ca = scenario.autoscaling.cluster_autoscaler
    if ca is None:
        return
    p = f"{path}.clusterAutoscaler"
    names = [n.strip() for n in ca.expander.split(",")]
    for name in names:
        if name not in EXPANDERS:
            yield f"{p}.expander", f"unknown expander {name!r}; expected one of: {', '.join(EXPANDERS)}"
    for key, regexes in ca.priorities.items():
        try:
            int(key)
        except ValueError:
            yield f"{p}.priorities.{key}", f"expected an integer priority, got {key!r}"
        for j, rx in enumerate(regexes):
            try:
                re.compile(rx)
            except re.error as err:
                yield f"{p}.priorities.{key}[{j}]", f"expected a regular expression: {err}"
    if "priority" in names and not ca.priorities:
        yield f"{p}.priorities", "the priority expander needs priorities, e.g. {10: [groupA]}"
    balancing = (("balancingIgnoreLabels", ca.balancing_ignore_labels), ("balancingLabels", ca.balancing_labels))
    for key, labels in balancing:
        for j, label in enumerate(labels):
            for problem in qualified_name_errors(label):
                yield f"{p}.{key}[{j}]", f"expected a label key: {problem}"
    if ca.balancing_labels and ca.balancing_ignore_labels:
        yield f"{p}.balancingLabels", "balancingLabels cannot be combined with balancingIgnoreLabels (upstream's flag)"
    seen: dict[str, int] = {}
    for i, g in enumerate(ca.node_groups):
        gp = f"{p}.nodeGroups[{i}]"
        if not _NAME.match(g.name):
            yield f"{gp}.name", f"expected a DNS-1123 label (node names are <name>-<i>), got {g.name!r}"
        if g.name in seen:
            yield f"{gp}.name", f"node group {g.name!r} is named twice (first at {p}.nodeGroups[{seen[g.name]}])"
        seen.setdefault(g.name, i)
        if g.min_size > g.max_size:
            yield f"{gp}.minSize", f"minSize ({g.min_size}) must not be greater than maxSize ({g.max_size})"
    groups = {g.name: i for i, g in enumerate(ca.node_groups)}
    for where, name in _static_nodes(scenario):
        group, dash, index = name.rpartition("-")
        if dash and index.isdigit() and group in groups:
            yield (
                f"{p}.nodeGroups[{groups[group]}].name",
                f'the group\'s node names {group}-<i> would clash with node "{name}" of {where}',
            )
            return


def autoscaling_warnings(scenario: Any) -> Iterator[tuple[str, str]]:
    """``(path, text)`` for what the emulator's Karpenter ignores in the scenario's NodePools
    (``emulator.base.api.karpenterignored``)."""
    config = scenario.autoscaling.karpenter
    for i, pool in enumerate(config.node_pools if config is not None else []):
        for at, text in karpenter_ignored(pool):
            yield f"autoscaling.karpenter.nodePools[{i}].{at}", text


def _karpenter_problems(config: KarpenterConfig | None, path: str) -> Iterator[tuple[str, str]]:
    """Every ``nodePools`` entry is a NodePool (the CRD's checks ran as it was decoded), named once."""
    if config is None:
        return
    seen: dict[str, int] = {}
    for i, obj in enumerate(config.node_pools):
        p = f"{path}.nodePools[{i}]"
        if obj.kind != "NodePool":
            yield f"{p}.kind", f"expected a karpenter.sh/v1 NodePool, got {obj.kind}"
            continue
        name = obj.metadata.name
        if name in seen:
            yield f"{p}.metadata.name", f"NodePool {name!r} is named twice (first at {path}.nodePools[{seen[name]}])"
        seen.setdefault(name, i)
        yield from _budget_schedules(obj, p)


def _budget_schedules(pool: Any, path: str) -> Iterator[tuple[str, str]]:
    """A budget ``schedule`` the CRD's pattern lets through but robfig/cron's standard parser
    refuses (``0 0 * * tue-mon``, a ``TZ=`` of its own): upstream's API server stores it and its
    disruption controller then allows no disruption of the NodePool at all ("invariant
    violated, invalid cron": ``MustGetAllowedDisruptions`` fails closed). A scenario says so
    up front instead."""
    d = pool.spec.disruption if pool.spec is not None else None
    for j, b in enumerate((d.budgets or []) if d is not None else []):
        if b.schedule is None:
            continue
        try:
            parse_schedule(b.schedule.strip())
        except CronError as e:
            yield (
                f"{path}.spec.disruption.budgets[{j}].schedule",
                f"expected a cron schedule (robfig/cron's standard parser, UTC): {e}",
            )
