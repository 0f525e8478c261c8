"""The workload half of kube-controller-manager: which controllers run, and starting them.

``WORKLOAD_CONTROLLERS`` maps a controller's name (its client is ``controller:<name>``) to
a factory taking the ``ControllerContext``. ``start_workload_controllers`` builds the
context (one ``SharedInformers`` through ``controller:shared-informers``) and runs each
controller's ``run()`` as a task named after its client, in the caller's task group.

A controller is any object with ``client`` (its ``Client``), ``async run()`` (runs until
cancelled) and ``statistics() -> dict`` (for the run report's ``controllers`` section).
The node controllers (node lifecycle, taint eviction, pod GC) are started by the scenario
runner itself, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from agents.controllers.context import SHARED_INFORMERS, ControllerContext, SharedInformers
from emulator.base.client.client import Client
from emulator.base.runtime.clock import Clock

__all__ = ["WORKLOAD_CONTROLLERS", "WorkloadController", "start_workload_controllers"]


class WorkloadController(Protocol):
    client: Client

    async def run(self) -> None: ...

    def statistics(self) -> dict[str, Any]: ...


WORKLOAD_CONTROLLERS: dict[str, Callable[[ControllerContext], WorkloadController]] = {}
"""Name → factory, in the order they start (each controller module's entry is added here)."""


def start_workload_controllers(
    tg: asyncio.TaskGroup,
    clock: Clock,
    new_client: Callable[[str], Client],
    names: Sequence[str] | None = None,
) -> list[WorkloadController]:
    """Start the named controllers (default: all) in ``tg``; returns them in start order."""
    informers = SharedInformers(new_client(SHARED_INFORMERS))
    informers.start(tg)
    ctx = ControllerContext(clock=clock, new_client=new_client, informers=informers)
    started: list[WorkloadController] = []
    for name, factory in WORKLOAD_CONTROLLERS.items():
        if names is not None and name not in names:
            continue
        controller = factory(ctx)
        tg.create_task(controller.run(), name=controller.client.name)
        started.append(controller)
    return started


# The registry, in start order (imports at the end: each controller module imports the
# context and utilities above this module, never this module).
from agents.controllers.attachdetach import AttachDetachController  # noqa: E402
from agents.controllers.cronjob import CronJobController  # noqa: E402
from agents.controllers.daemonset import DaemonSetController  # noqa: E402
from agents.controllers.deployment import DeploymentController  # noqa: E402
from agents.controllers.disruption import DisruptionController  # noqa: E402
from agents.controllers.ephemeral import EphemeralVolumeController  # noqa: E402
from agents.controllers.garbagecollector import GarbageCollector  # noqa: E402
from agents.controllers.job import JobController  # noqa: E402
from agents.controllers.namespace import NamespaceController  # noqa: E402
from agents.controllers.podautoscaler import HorizontalController  # noqa: E402
from agents.controllers.replicaset import ReplicaSetController  # noqa: E402
from agents.controllers.resourceclaim import ResourceClaimController  # noqa: E402
from agents.controllers.statefulset import StatefulSetController  # noqa: E402
from agents.controllers.ttlafterfinished import TTLAfterFinishedController  # noqa: E402
from agents.controllers.volume import (  # noqa: E402
    PersistentVolumeController,
    PVCProtectionController,
    PVProtectionController,
)

WORKLOAD_CONTROLLERS.update(
    {
        "replicaset": ReplicaSetController,
        "deployment": DeploymentController,
        "statefulset": StatefulSetController,
        "daemonset": DaemonSetController,
        "job": JobController,
        "cronjob": CronJobController,
        "ttlafterfinished": TTLAfterFinishedController,
        "disruption": DisruptionController,
        "garbagecollector": GarbageCollector,
        "namespace": NamespaceController,
        "persistentvolume-binder": PersistentVolumeController,
        "pvc-protection": PVCProtectionController,
        "pv-protection": PVProtectionController,
        "ephemeral-volume-controller": EphemeralVolumeController,
        "attachdetach-controller": AttachDetachController,
        "resource-claim-controller": ResourceClaimController,
        "horizontal-pod-autoscaler": HorizontalController,
    }
)
