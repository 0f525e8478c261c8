"""What the StatefulSet and DaemonSet tests share: the workload controllers started on a
test cluster (``Controllers``, an agent running ``start_workload_controllers``), the kubelet
simulated by hand (``make_ready``, ``set_phase``: upstream's kubelet writes these), and
manifest builders for the two kinds."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from msgspec.structs import replace

from agents.controllers.manager import WorkloadController, start_workload_controllers
from emulator.base.api.apps import (
    DaemonSet,
    DaemonSetSpec,
    DaemonSetUpdateStrategy,
    RollingUpdateDaemonSet,
    RollingUpdateStatefulSetStrategy,
    StatefulSet,
    StatefulSetSpec,
    StatefulSetUpdateStrategy,
)
from emulator.base.api.core import Container, LabelSelector, PodCondition, PodSpec, Toleration
from emulator.base.api.intstr import IntOrString
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.podtemplate import PodTemplateSpec
from tests.cluster import Cluster

__all__ = ["Controllers", "daemonset", "make_ready", "set_phase", "statefulset", "update_spec"]


class Controllers:
    """The named workload controllers, as the scenario runner starts them."""

    def __init__(self, cluster: Cluster, names: Sequence[str]) -> None:
        self.cluster = cluster
        self.names = list(names)
        self.ready = asyncio.Event()
        self.started: list[WorkloadController] = []

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            self.started = start_workload_controllers(
                tg, self.cluster.clock, lambda name: self.cluster.client(name), self.names
            )
            self.ready.set()


def _template(labels: Mapping[str, str], image: str, **spec: Any) -> PodTemplateSpec:
    return PodTemplateSpec(
        metadata=ObjectMeta(labels=dict(labels)),
        spec=PodSpec(containers=[Container(name="c", image=image)], **spec),
    )


def statefulset(
    name: str = "web",
    replicas: int = 3,
    *,
    policy: str = "",
    partition: int | None = None,
    on_delete: bool = False,
    image: str = "nginx:1",
    service: str = "nginx",
    min_ready: int = 0,
    namespace: str = "default",
) -> StatefulSet:
    labels = {"app": name}
    strategy = StatefulSetUpdateStrategy(
        type="OnDelete" if on_delete else "",
        rolling_update=None if partition is None else RollingUpdateStatefulSetStrategy(partition=partition),
    )
    return StatefulSet(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=StatefulSetSpec(
            replicas=replicas,
            selector=LabelSelector(match_labels=labels),
            template=_template(labels, image),
            service_name=service,
            pod_management_policy=policy,
            update_strategy=strategy,
            min_ready_seconds=min_ready,
        ),
    )


def daemonset(
    name: str = "agent",
    *,
    image: str = "agent:1",
    node_selector: Mapping[str, str] | None = None,
    tolerations: Sequence[Toleration] = (),
    host_network: bool = False,
    max_unavailable: IntOrString | None = None,
    max_surge: IntOrString | None = None,
    on_delete: bool = False,
    min_ready: int = 0,
    namespace: str = "default",
) -> DaemonSet:
    labels = {"app": name}
    rolling = (
        None
        if max_unavailable is None and max_surge is None
        else RollingUpdateDaemonSet(max_unavailable=max_unavailable, max_surge=max_surge)
    )
    return DaemonSet(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=DaemonSetSpec(
            selector=LabelSelector(match_labels=labels),
            template=_template(
                labels,
                image,
                node_selector=dict(node_selector or {}),
                tolerations=list(tolerations),
                host_network=host_network,
            ),
            update_strategy=DaemonSetUpdateStrategy(type="OnDelete" if on_delete else "", rolling_update=rolling),
            min_ready_seconds=min_ready,
        ),
    )


def make_ready(cluster: Cluster, name: str, namespace: str = "default") -> None:
    """What the kubelet writes once every container runs and is ready."""
    pod = cluster.pod(name, namespace)
    ready = PodCondition(type="Ready", status="True", last_transition_time=cluster.clock.timestamp())
    others = [c for c in pod.status.conditions if c.type != "Ready"]
    cluster.server.update_status(replace(pod, status=replace(pod.status, phase="Running", conditions=[*others, ready])))


def set_phase(cluster: Cluster, name: str, phase: str, namespace: str = "default") -> None:
    pod = cluster.pod(name, namespace)
    cluster.server.update_status(replace(pod, status=replace(pod.status, phase=phase, conditions=[])))


def update_spec(cluster: Cluster, kind: str, name: str, namespace: str = "default", **changes: Any) -> Any:
    """Replace fields of the stored object's spec (a ``kubectl apply`` of a changed manifest)."""
    obj = cluster.server.get(kind, name, namespace)
    return cluster.server.update(replace(obj, spec=replace(obj.spec, **changes)))
