"""The simulated drivers of a run, started beside the other agents: one CSI driver per
``storage.drivers`` entry (``agents.csi``), and one DRA driver per driver name of the node
groups' ``devices`` sections (``nodes`` and ``createNodes`` steps) and of the GPUs of
``gpuSharing: dra`` trace node lists, gathered into
``agents.dra`` settings (node name → what the driver publishes there).

It owns the translation from the scenario's shapes to the agents' settings (for DRA the API's
``DeviceAttribute`` and ``DeviceCapacity`` with a parsed quantity) only; the agents do the
rest, and the kubelets reach the DRA drivers' plugins through the run's ``KubeletPlugins``.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

from emulator.app.scenario.monitor import CSIDriversReport
from emulator.app.scenario.schema import AttributeValue, CreateNodes, GroupDevices, NodeFile, NodeGroup, Scenario
from emulator.app.scenario.trace_gpus import GPU_DRIVER, gpu_attributes, gpu_capacity
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.resource import DeviceAttribute, DeviceCapacity
from emulator.base.client.client import Latency

if TYPE_CHECKING:
    from emulator.app.scenario.cluster import Cluster

__all__ = [
    "DRADriversReport",
    "device_groups",
    "dra_settings",
    "has_devices",
    "start_dra_drivers",
    "start_storage_drivers",
    "trace_gpus",
]


def device_groups(scenario: Scenario) -> list[NodeGroup]:
    """The node groups with ``devices``, in file order (``nodes`` first, then the steps')."""
    groups = [g for g in scenario.nodes if isinstance(g, NodeGroup)]
    groups += [s.nodes for s in scenario.steps if isinstance(s, CreateNodes)]
    return [g for g in groups if g.devices]


def trace_gpus(scenario: Scenario) -> dict[str, tuple[int, str]]:
    """Node name → (GPUs, model) of the ``gpuSharing: dra`` node lists, in file order."""
    out: dict[str, tuple[int, str]] = {}
    for entry in scenario.nodes:
        if isinstance(entry, NodeFile):
            out.update(entry.gpus)
    return out


def has_devices(scenario: Scenario) -> bool:
    return bool(device_groups(scenario)) or bool(trace_gpus(scenario))


def _attribute(value: AttributeValue) -> DeviceAttribute:
    return DeviceAttribute(
        int_value=value.int_value, bool_value=value.bool_value, string_value=value.string, version_value=value.version
    )


def dra_settings(scenario: Scenario) -> list[Any]:
    """One ``agents.dra.DRADriverSettings`` per driver name, in first-seen order; the GPUs of
    ``gpuSharing: dra`` node lists are driver ``gpu.nvidia.com``'s (``trace_gpus``)."""
    from agents.dra import DRADriverSettings, NodeDevices

    per_driver: dict[str, dict[str, NodeDevices]] = {}
    for group in device_groups(scenario):
        for d in group.devices:
            devices = _node_devices(NodeDevices, d)
            nodes = per_driver.setdefault(d.driver, {})
            for i in range(group.count):
                nodes[group.name(i)] = devices
    for name, (count, model) in trace_gpus(scenario).items():
        per_driver.setdefault(GPU_DRIVER, {})[name] = NodeDevices(
            count=count,
            attributes=gpu_attributes(model),
            capacity=gpu_capacity(),
            allow_multiple_allocations=True,
        )
    return [DRADriverSettings(name=name, nodes=nodes) for name, nodes in per_driver.items()]


def _node_devices(cls: Any, d: GroupDevices) -> Any:
    return cls(
        count=d.count,
        name_prefix=d.name_prefix,
        attributes={k: _attribute(v) for k, v in d.attributes.items()},
        capacity={k: DeviceCapacity(value=parse_quantity(str(v.value))) for k, v in d.capacity.items()},
        prepare_delay=Latency(d.prepare_delay.mean, d.prepare_delay.jitter),
    )


class DRADriversReport:
    """The simulated DRA drivers of a run, for the report (``draDrivers``: each one's counts)."""

    def __init__(self, drivers: list[Any]) -> None:
        self.drivers = drivers

    def report(self) -> dict[str, Any]:
        return {"draDrivers": {d.name: d.statistics() for d in self.drivers}}


def start_dra_drivers(cluster: Cluster) -> None:
    """One simulated DRA driver agent per driver named in a ``devices`` section (none: nothing)."""
    if cluster.dra_plugins is None or importlib.util.find_spec("agents.dra") is None:
        return
    from agents.dra import start_dra_drivers as start

    assert cluster._tg is not None
    settings = dra_settings(cluster.scenario)
    started = start(cluster._tg, cluster.clock, cluster.new_client, cluster.seeds, settings, cluster.dra_plugins)
    cluster.agents.append(DRADriversReport(started))


def start_storage_drivers(cluster: Cluster) -> None:
    """Start one simulated CSI driver agent per ``storage.drivers`` entry (none: nothing)."""
    assert cluster._tg is not None
    drivers = cluster.scenario.storage.drivers
    if not drivers or importlib.util.find_spec("agents.csi") is None:
        return
    from agents.csi import DriverSettings, start_csi_drivers

    settings = [
        DriverSettings(
            name=d.name,
            topology_keys=tuple(d.topology_keys),
            attach_limit=d.attach_limit,
            provision_delay=Latency(d.provision_delay.mean, d.provision_delay.jitter),
            attach_delay=Latency(d.attach_delay.mean, d.attach_delay.jitter),
            capacity_per_topology=None if d.capacity is None else d.capacity.per_topology,
        )
        for d in drivers
    ]
    started = start_csi_drivers(cluster._tg, cluster.clock, cluster.new_client, cluster.seeds, settings)
    cluster.agents.append(CSIDriversReport(started))
