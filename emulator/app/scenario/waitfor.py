"""The ``waitFor`` step: wait, up to its timeout, until enough pods or workloads meet a condition.

What this module owns: the wait itself (``wait_for``). A pod condition (``expectations.
CONDITIONS``: ``podsRunning`` and the like) is counted by a ``monitor.ConditionCounter``, a
workload condition (``jobsComplete``, ``workloadsReady``) by a ``monitor.WorkloadCounter``;
the counter is registered with the run's ``PodActivity`` (which keeps it current from the
watch) for the length of the wait, and the wait wakes on each change it signals. A write at
the deadline still counts. It does not own the counting (``monitor``), the conditions
(``expectations``, ``workload_status``), nor the run's verdict on a timeout (``runner``:
``Cluster.play`` records the timeout message).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from emulator.app.scenario.expectations import CONDITIONS, count_reached
from emulator.app.scenario.monitor import ConditionCounter, PodActivity, WorkloadCounter
from emulator.app.scenario.schema import WaitFor
from emulator.app.scenario.workload_status import READY_KINDS, WorkloadFilter, job_complete, workload_ready

if TYPE_CHECKING:
    from emulator.app.scenario.cluster import Cluster

__all__ = ["wait_for"]


async def wait_for(cluster: Cluster, step: WaitFor, activity: PodActivity) -> bool:
    """Whether ``step``'s count was reached within its timeout."""
    if step.condition not in CONDITIONS:
        return await _wait_for_workloads(cluster, step, activity)
    counter = ConditionCounter(CONDITIONS[step.condition], step.selector, cluster.server.list("Pod")[0])
    activity.counters.append(counter)
    try:
        with anyio.move_on_after(step.timeout):
            while not count_reached(counter.met, counter.total, step.count):
                activity.changed.clear()
                await activity.changed.wait()
        return count_reached(counter.met, counter.total, step.count)  # a write at the deadline counts
    finally:
        activity.counters.remove(counter)


async def _wait_for_workloads(cluster: Cluster, step: WaitFor, activity: PodActivity) -> bool:
    server = cluster.server
    if step.condition == "jobsComplete":
        kinds: tuple[str, ...] = ("Job",)
        select = WorkloadFilter(kinds, selector=step.selector)
        counter = WorkloadCounter(select, job_complete, server.list("Job")[0])
    else:
        kinds = (step.kind,) if step.kind else READY_KINDS
        select = WorkloadFilter(kinds, name=step.name, namespace=step.namespace, selector=step.selector)
        counter = WorkloadCounter(select, workload_ready, (o for k in kinds for o in server.list(k)[0]))
    activity.workload_counters.append(counter)
    try:
        with anyio.move_on_after(step.timeout):
            while not count_reached(counter.met, counter.total, step.count):
                activity.changed.clear()
                await activity.changed.wait()
        return count_reached(counter.met, counter.total, step.count)
    finally:
        activity.workload_counters.remove(counter)
