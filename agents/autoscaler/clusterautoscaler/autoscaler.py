"""``ClusterAutoscaler``: Cluster Autoscaler's core loop (``core/static_autoscaler.go`` ``RunOnce``,
1.34) as the agent ``controller:cluster-autoscaler``.

Every ``scanInterval`` (the first loop after the informers synced), on the informers' view:

1. cluster state (``clusterstate/clusterstate.go``): per node group its target size, registered
   and Ready nodes; a scale-up whose nodes have not all registered within
   ``maxNodeProvisionTime`` times out: Event ``ScaleUpTimedOut`` ("Nodes added to group <g>
   failed to register within <d>"), the target shrinks back, and the group backs off (5 min,
   doubling to 30 min) — scale-ups skip it meanwhile;
2. the snapshot (``SchedulingSimulator``: the scheduler's own plugins): Ready nodes and their
   non-terminal pods, plus a template node per upcoming node (target minus Ready);
3. pods to help: unbound, not terminal nor deleted, ``PodScheduled=False`` reason
   ``Unschedulable``, older than ``newPodScaleUpDelay``, priority at least the expendable
   cutoff (-10), not DaemonSet pods; ``filter_out_schedulable`` drops those that fit; with
   ``maxNodesTotal`` reached by the Ready nodes: Warning ``MaxNodesTotalReached`` ("Max total
   nodes in cluster reached: <n>") on the ConfigMap and ``NotTriggerScaleUp`` ("... max total
   nodes in cluster reached") on the pods, no scale-up; when they are all new
   (``allPodsAreNew``: younger than 2 s, or a GPU pod younger than 30 s) neither scale-up nor
   scale-down this loop;
4. scale-up (``scaleup``; the cluster's size for ``maxNodesTotal``: Ready plus upcoming
   nodes): Events ``TriggeredScaleUp`` ("pod triggered scale-up: [{g 1->3 (max: 10)}]") on the
   pods it helps, ``NotTriggerScaleUp`` ("pod didn't trigger scale-up: <reasons>") on the
   others when no option was chosen, ``ScaledUpGroup`` on the status ConfigMap; a successful
   scale-up ends the loop (no scale-down in it);
5. scale-down (``scaledown``, ``actuation``): the planner updates the unneeded nodes; outside
   cooldown (``scaleDownDelayAfterAdd`` since the last scale-up, ``...AfterDelete`` since the
   last deletion started — the scan interval when 0 —, ``...AfterFailure`` since the last failed
   one) the nodes to delete are tainted, drained and deleted, each in its own task;
6. the status ConfigMap (``autoscalerStatus: Running``; written ``Initializing`` as the agent
   starts, before its informers: ``NewStatusMapRecorder``, ``clusterstate/utils/status.go``).

Determinism: every list is in node / pod name order or the cloud's group order; the random
expander draws from the agent's seeded stream; the loop runs on the injected clock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final

from msgspec.structs import replace

from agents.autoscaler.clusterautoscaler.actuation import TO_BE_DELETED_TAINT, Actuator
from agents.autoscaler.clusterautoscaler.daemonsets import add_template_node
from agents.autoscaler.clusterautoscaler.estimator import sanitized_node
from agents.autoscaler.clusterautoscaler.options import COUNTERS, AutoscalingOptions, CloudProvider, NodeGroup
from agents.autoscaler.clusterautoscaler.scaledown import Planner
from agents.autoscaler.clusterautoscaler.scaleup import filter_out_schedulable, reasons_message, scale_up
from agents.autoscaler.clusterautoscaler.status import (
    LAST_UPDATED_ANNOTATION,
    GroupState,
    StatusBuilder,
    counts_of,
    initializing_yaml,
    last_update_format,
)
from agents.autoscaler.clusterautoscaler.view import NodeFact, NodeFacts, SortedObjects
from agents.autoscaler.snapshot import ReusingReset
from emulator.base.api.config import ConfigMap
from emulator.base.api.core import Node, Pod
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.api.meta import ObjectMeta, reference_to
from emulator.base.client.client import Client
from emulator.base.client.events import EventRecorder
from emulator.base.client.informer import Informer
from emulator.base.runtime.clock import Clock, format_duration, parse_timestamp

__all__ = ["COMPONENT", "ClusterAutoscaler"]

COMPONENT = "cluster-autoscaler"
UNSCHEDULABLE_POD_TIME_BUFFER: Final = 2.0
UNSCHEDULABLE_POD_WITH_GPU_TIME_BUFFER: Final = 30.0
GPU: Final = "nvidia.com/gpu"


def _unschedulable(pod: Pod) -> bool:
    if pod.spec.node_name or pod.metadata.deletion_timestamp is not None:
        return False
    if pod.status.phase in ("Succeeded", "Failed"):
        return False
    return any(
        c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable" for c in pod.status.conditions
    )


def _daemonset_pod(pod: Pod) -> bool:
    return any(r.controller and r.kind == "DaemonSet" for r in pod.metadata.owner_references)


class ClusterAutoscaler:
    """The agent (module docstring); ``simulator`` makes its ``SchedulingSimulator``."""

    def __init__(
        self,
        client: Client,
        clock: Clock,
        rng: Any,
        provider: CloudProvider,
        options: AutoscalingOptions,
        simulator: Callable[..., Any],
        *,
        counters: dict[str, int] | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.rng = rng
        self.provider = provider
        self.options = options
        self.nodes = Informer(client, "Node")
        self.pods = Informer(client, "Pod")
        self.pdbs = Informer(client, "PodDisruptionBudget")
        self.namespaces = Informer(client, "Namespace")
        self.daemonsets = Informer(client.side_client("daemonsets"), "DaemonSet")  # latency-free: traces hold
        self.sim = simulator(namespaces=self.namespaces.objects, volumes_client=client)  # the volume plugins' reads
        self.sorted_nodes = SortedObjects(self.nodes)
        self.sorted_pods = SortedObjects(self.pods)
        self.node_facts = NodeFacts(provider)
        self.snapshot = ReusingReset()
        self.events = EventRecorder(client, clock, COMPONENT, aggregate=True)
        self.counters: dict[str, int] = {} if counters is None else counters
        """``COUNTERS``, shared with the caller (its cloud counts the nodes it creates and removes)."""
        for name in COUNTERS:
            self.counters.setdefault(name, 0)
        self.planner = Planner(options)
        self.actuator = Actuator(client, clock, options, self.events, self.log_event, self._pod_present, self.counters)
        self.requests: dict[str, tuple[int, float]] = {}
        """Group -> (target it asked for, when): scale-ups waiting for their nodes."""
        self.backoff: dict[str, tuple[float, float]] = {}
        """Group -> (backed off until, the backoff's duration)."""
        self.last_scale_up = self.last_delete = self.last_fail = -1e18
        self.backoff_errors: dict[str, str] = {}
        """Group -> its backoff's error message (``ScaleUpTimedOut``)."""
        self.status: ConfigMap | None = None
        self.status_builder = StatusBuilder()
        self.scale_down_probed: float | None = None
        """When the planner last updated the unneeded nodes (``lastScaleDownUpdateTime``)."""
        self.loops = 0
        self._tg: asyncio.TaskGroup | None = None

    def report(self) -> dict[str, Any]:
        return {"agent": self.client.name, "loops": self.loops, **self.counters, "simulatorChecks": self.sim.checks}

    async def run(self) -> None:
        prefix = self.client.name
        # NewStatusMapRecorder, as the autoscaling context is built, before the informers start
        await self._put_status(self.clock.now(), initializing_yaml(self.clock.now()))
        async with asyncio.TaskGroup() as tg:
            self._tg = tg
            for inf in (self.nodes, self.pods, self.pdbs, self.namespaces, self.daemonsets):
                tg.create_task(inf.run(), name=f"{prefix}:informer:{inf.kind.lower()}s")
            self.sim.volumes.start(tg, prefix)
            for inf in (self.nodes, self.pods, self.pdbs, self.namespaces, self.daemonsets):
                await inf.synced.wait()
            await self.sim.volumes.synced()
            while True:
                await self.run_once()
                await self.clock.sleep(self.options.scan_interval)

    # --- events -------------------------------------------------------------------------------

    async def log_event(self, reason: str, message: str, type_: str = "Normal") -> None:
        """An Event on the status ConfigMap (upstream's ``LogRecorder``). The ConfigMap is
        written (``autoscalerStatus: Initializing``) as the agent starts; when that write
        failed, it is written again here before the Event."""
        if self.status is None:
            await self._put_status(self.clock.now(), initializing_yaml(self.clock.now()))
        if self.status is not None:
            await self.events.event(reference_to(self.status), type_, reason, message)

    def _pod_present(self, pod: Pod) -> bool:
        current = self.pods.get(pod.metadata.name, pod.metadata.namespace)
        return (
            current is not None
            and current.metadata.uid == pod.metadata.uid
            and current.status.phase not in ("Succeeded", "Failed")
        )

    # --- one loop -----------------------------------------------------------------------------

    def _in_backoff(self, group: str) -> bool:
        entry = self.backoff.get(group)
        return entry is not None and entry[0] > self.clock.now()

    async def _cluster_state(self, groups: list[NodeGroup], registered: dict[str, int]) -> None:
        now = self.clock.now()
        for g in groups:
            asked = self.requests.get(g.id)
            if asked is None:
                continue
            _, since = asked
            if registered.get(g.id, 0) >= g.target_size():
                del self.requests[g.id]
                continue
            if since + self.options.max_node_provision_time < now:
                del self.requests[g.id]
                await self.log_event(
                    "ScaleUpTimedOut",
                    f"Nodes added to group {g.id} failed to register within {format_duration(now - since)}",
                    "Warning",
                )
                g.decrease_target_size(g.target_size() - registered.get(g.id, 0))
                previous = self.backoff.get(g.id)
                duration = self.options.initial_node_group_backoff if previous is None else previous[1] * 2
                duration = min(duration, self.options.max_node_group_backoff)
                self.backoff[g.id] = (now + duration, duration)
                self.backoff_errors[g.id] = (
                    f"Scale-up timed out for node group {g.id} after {format_duration(now - since)}"
                )

    def _pods_to_help(self, pods: list[Pod]) -> list[Pod]:
        now, o = self.clock.now(), self.options
        out = []
        for p in pods:
            if not _unschedulable(p) or _daemonset_pod(p):
                continue
            if (p.spec.priority or 0) < o.expendable_pods_priority_cutoff:
                continue
            created = p.metadata.creation_timestamp
            if o.new_pod_scale_up_delay and created and parse_timestamp(created) + o.new_pod_scale_up_delay > now:
                continue
            out.append(p)
        return out

    async def run_once(self) -> None:
        self.loops += 1
        groups = self.provider.node_groups()
        by_id = {g.id: g for g in groups}
        nodes = self.node_facts.of(self.sorted_nodes.objects())  # by name
        pods: list[Pod] = self.sorted_pods.objects()  # by namespace and name
        group_of: dict[str, str] = {}
        registered: dict[str, int] = {}
        ready: dict[str, int] = {}
        for f in nodes:
            gid = f.group
            if gid is not None:
                group_of[f.node.metadata.name] = gid
                registered[gid] = registered.get(gid, 0) + 1
                ready[gid] = ready.get(gid, 0) + f.ready
        await self._cluster_state(groups, registered)
        ready_nodes = [f.node for f in nodes if f.ready]
        live: list[Pod] = []
        unbound: list[Pod] = []
        for p in pods:
            if not p.spec.node_name:
                unbound.append(p)
            elif p.status.phase not in ("Succeeded", "Failed"):
                live.append(p)
        self.snapshot.reset(self.sim, ready_nodes, live)
        upcoming = 0
        for g in groups:
            count = max(0, g.target_size() - ready.get(g.id, 0))
            upcoming += count
            for i in range(count):
                node = sanitized_node(g.template_node(), f"template-node-for-{g.id}-upcoming-{i}")
                add_template_node(self.sim, node, self.daemonsets.objects())
        to_help = filter_out_schedulable(self.sim, self._pods_to_help(unbound))
        limit = self.options.max_nodes_total
        new_pods = False
        if not to_help:
            pass
        elif limit and len(ready_nodes) >= limit:
            await self._max_nodes_total_reached(to_help)
        elif self._all_pods_new(to_help):
            new_pods = True
        elif await self._scale_up(to_help, groups, len(ready_nodes) + upcoming):
            await self._write_status(groups, registered, ready, nodes, group_of)
            return
        if self.options.scale_down_enabled:
            await self._scale_down(ready_nodes, group_of, by_id, disabled_for_loop=new_pods)
        await self._write_status(groups, registered, ready, nodes, group_of)

    async def _max_nodes_total_reached(self, pods: list[Pod]) -> None:
        """``ScaleUpLimitedByMaxNodesTotal``: the Ready nodes reached ``maxNodesTotal``."""
        await self.log_event(
            "MaxNodesTotalReached", f"Max total nodes in cluster reached: {self.options.max_nodes_total}", "Warning"
        )
        for pod in pods:
            await self.events.event(
                reference_to(pod),
                "Normal",
                "NotTriggerScaleUp",
                "pod didn't trigger scale-up: max total nodes in cluster reached",
            )

    def _all_pods_new(self, pods: list[Pod]) -> bool:
        """``allPodsAreNew``: the oldest pod to help was created less than 2 s ago, or the oldest
        one requesting ``nvidia.com/gpu`` less than 30 s ago: no scale-up this loop ("waiting one
        iteration for more", ``ScaleUpInCooldown``), and no scale-down either."""
        now = self.clock.now()
        created = [(parse_timestamp(p.metadata.creation_timestamp), p) for p in pods if p.metadata.creation_timestamp]
        if not created:
            return False
        if min(t for t, _ in created) + UNSCHEDULABLE_POD_TIME_BUFFER > now:
            return True
        gpu = [t for t, p in created if any(GPU in c.resources.requests for c in p.spec.containers)]
        return bool(gpu) and min(gpu) + UNSCHEDULABLE_POD_WITH_GPU_TIME_BUFFER > now

    async def _scale_up(self, to_help: list[Pod], groups: list[NodeGroup], node_count: int) -> bool:
        status = scale_up(
            self.sim,
            to_help,
            groups,
            self.options,
            self.rng,
            node_count=node_count,
            in_backoff=self._in_backoff,
            daemonsets=self.daemonsets.objects(),
        )
        if status.result != "Successful":
            for pod, reasons in status.remaining:
                message = (
                    "max total nodes in cluster reached"
                    if status.result == "LimitedByMaxNodesTotal"
                    else reasons_message(reasons)
                )
                await self.events.event(
                    reference_to(pod), "Normal", "NotTriggerScaleUp", f"pod didn't trigger scale-up: {message}"
                )
            return False
        by_id = {g.id: g for g in groups}
        for info in status.infos:
            group = by_id[info.group]
            await self.log_event(
                "ScaledUpGroup",
                f"Scale-up: setting group {info.group} size to {info.new} instead of {info.current} (max: {info.max})",
            )
            group.increase_size(info.new - info.current)
            self.requests[info.group] = (info.new, self.clock.now())
            self.counters["scaleUps"] += 1
            await self.log_event(
                "ScaledUpGroup",
                f"Scale-up: group {info.group} size set to {info.new} instead of {info.current} (max: {info.max})",
            )
        for pod in status.triggered:
            await self.events.event(
                reference_to(pod), "Normal", "TriggeredScaleUp", f"pod triggered scale-up: {status.infos_text()}"
            )
        self.last_scale_up = self.clock.now()
        return True

    def _in_cooldown(self) -> bool:
        o, now = self.options, self.clock.now()
        after_delete = o.scale_down_delay_after_delete or o.scan_interval
        return (
            self.last_scale_up + o.scale_down_delay_after_add > now
            or self.last_fail + o.scale_down_delay_after_failure > now
            or self.last_delete + after_delete > now
        )

    def _failed(self) -> None:
        self.last_fail = self.clock.now()

    async def _scale_down(
        self,
        ready_nodes: list[Node],
        group_of: dict[str, str],
        by_id: dict[str, NodeGroup],
        *,
        disabled_for_loop: bool = False,
    ) -> None:
        deleting = self.actuator.deleting
        candidates = [
            (n, group_of[n.metadata.name])
            for n in ready_nodes
            if n.metadata.name in group_of
            and n.metadata.name not in deleting
            and not (n.spec.taints and any(t.key == TO_BE_DELETED_TAINT for t in n.spec.taints))
        ]
        real = {n.metadata.name for n in ready_nodes}
        self.planner.update(self.sim, candidates, real.__contains__, self.pdbs.objects(), self.clock.now())
        self.scale_down_probed = self.clock.now()
        if disabled_for_loop or self._in_cooldown() or self._tg is None:
            return
        sizes = {gid: g.target_size() - sum(1 for n in deleting if group_of.get(n) == gid) for gid, g in by_id.items()}
        empty, drain = self.planner.nodes_to_delete(
            self.clock.now(), sizes, {gid: g.min_size for gid, g in by_id.items()}, deleting
        )
        for removal, drained in [*((r, False) for r in empty), *((r, True) for r in drain)]:
            self.last_delete = self.clock.now()
            self.planner.unneeded.pop(removal.name, None)
            self.actuator.start(self._tg, removal, by_id[removal.group], drained, self._failed)

    async def _write_status(
        self,
        groups: list[NodeGroup],
        registered: dict[str, int],
        ready: dict[str, int],
        nodes: list[NodeFact],
        group_of: dict[str, str],
    ) -> None:
        now = self.clock.now()
        candidates: dict[str, int] = {}
        for name in self.planner.unneeded:
            gid = group_of.get(name, "")
            candidates[gid] = candidates.get(gid, 0) + 1
        states: dict[str, list[tuple[bool, float]]] = {}
        for f in nodes:
            states.setdefault(f.group or "", []).append((f.ready, now if f.created is None else f.created))
        groups_state = [
            GroupState(
                g.id,
                counts_of(states.get(g.id, []), now, g.target_size()),
                g.target_size(),
                g.min_size,
                g.max_size,
                candidates.get(g.id, 0),
                g.id in self.requests and g.target_size() > registered.get(g.id, 0),
                self.backoff_errors.get(g.id, "") if self._in_backoff(g.id) else "",
            )
            for g in groups
        ]
        text = self.status_builder.build(now, groups_state, counts_of(states.get("", []), now), self.scale_down_probed)
        await self._put_status(now, text)

    async def _put_status(self, now: float, text: str) -> None:
        """``WriteStatusConfigMap``: get (once), create or update the status ConfigMap."""
        o = self.options
        stamp = {LAST_UPDATED_ANNOTATION: last_update_format(now)}
        try:
            if self.status is None:
                try:
                    self.status = await self.client.get("ConfigMap", o.status_config_map_name, o.config_namespace)
                except NotFound:
                    meta = ObjectMeta(name=o.status_config_map_name, namespace=o.config_namespace, annotations=stamp)
                    self.status = await self.client.create(ConfigMap(metadata=meta, data={"status": text}))
                    return
            current = self.status
            assert current is not None
            meta = replace(current.metadata, annotations={**current.metadata.annotations, **stamp})
            self.status = await self.client.update(
                replace(current, metadata=meta, data={**current.data, "status": text})
            )
        except ApiError:
            self.status = None  # re-read next loop (upstream: "a free retry each loop")
