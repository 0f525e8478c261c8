"""The timed faults played on a live cluster: watch cuts, node partitions, scheduler instances.

What this module owns: starting the faults armed from the start (``start_faults``, the
scenario's ``faults:``), arming a ``fault`` step's fault when the step plays (``arm_fault``),
and the one task per timed fault (``runner:fault:<where>``) that acts on the cluster at its
instants: a ``watchCut`` closes the matching watchers' channels (with ``Overflow`` when it
asks for a relist), a ``nodePartition`` ends the partitioned kubelet's watches when it starts,
a ``scheduler`` fault starts more scheduler instances (``start_more_schedulers``). It does not
decide which calls, events or instants a fault hits (``faults.FaultPlan``, pure decisions, and
its client interceptors), nor own the task group or the agents it adds to (``cluster.Cluster``).
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from emulator.app.scenario.faults import ArmedFault, FaultPlan
from emulator.app.scenario.schema import NodePartition, SchedulerInstances, WatchCut
from emulator.base.runtime.channel import Overflow

if TYPE_CHECKING:
    from emulator.app.scenario.cluster import Cluster

__all__ = ["arm_fault", "start_faults", "start_more_schedulers"]


def start_faults(cluster: Cluster) -> None:
    """Play the timed faults armed from the start (``faults:``)."""
    if cluster.faults is None:
        return
    cluster.agents.append(cluster.faults)
    for fault in cluster.faults.faults:
        if fault.armed_at is not None:
            _play_fault(cluster, fault)


def arm_fault(cluster: Cluster, where: str) -> None:
    """A ``fault`` step plays: arm its fault now."""
    assert cluster.faults is not None
    _play_fault(cluster, cluster.faults.arm(where, cluster.clock.now()))


def _play_fault(cluster: Cluster, fault: ArmedFault) -> None:
    assert cluster._tg is not None
    if isinstance(fault.spec, WatchCut | SchedulerInstances | NodePartition):
        cluster._tg.create_task(_timed_fault(cluster, fault), name=f"runner:fault:{fault.where}")


async def _timed_fault(cluster: Cluster, fault: ArmedFault) -> None:
    spec, armed = fault.spec, fault.armed_at
    assert armed is not None
    clock, server = cluster.clock, cluster.server
    if isinstance(spec, SchedulerInstances):
        await clock.sleep_until(max(armed, spec.at or 0.0))
        fault.injected += spec.instances
        start_more_schedulers(cluster, spec)
        return
    if isinstance(spec, NodePartition):
        # the kubelet's watches end with the network; its relists fail until the heal
        start = FaultPlan.partition_start(spec, armed)
        if spec.stop is not None and start >= spec.stop:
            return  # armed after its window: it never partitions
        await clock.sleep_until(start)
        for w in server.watchers():
            if w.name == f"kubelet:{spec.node}" and not w.channel.closed:
                w.channel.close(Overflow(f"watch ended: node {spec.node} is partitioned"))
        return
    assert isinstance(spec, WatchCut)
    for t in FaultPlan.cut_times(spec, armed):
        await clock.sleep_until(t)
        for w in server.watchers():
            if FaultPlan.cuts_watcher(spec, w.name, w.kind) and not w.channel.closed:
                fault.injected += 1
                w.channel.close(Overflow("watch cut by a fault: relist") if spec.relist else None)


def start_more_schedulers(cluster: Cluster, spec: SchedulerInstances) -> None:
    """A ``scheduler`` fault: more instances, numbered after the existing ones
    (``default-scheduler-<i>``), with the scenario's configuration or the fault's."""
    assert cluster._tg is not None
    if importlib.util.find_spec("agents.scheduler") is None:
        return
    from agents.scheduler import SchedulerGroup, start_schedulers
    from emulator.app.scenario.schedulers import scheduler_settings

    group = next((a for a in cluster.agents if isinstance(a, SchedulerGroup)), None)
    added = start_schedulers(
        scheduler_settings(cluster.scenario, config=spec.config),
        cluster._tg,
        new_client=cluster.new_client,
        clock=cluster.clock,
        seeds=cluster.seeds,
        explain=cluster.explain,
        group=group,
        instances=spec.instances,
    )
    if group is None:
        cluster.agents.append(added)
