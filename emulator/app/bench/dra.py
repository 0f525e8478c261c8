"""The DRA side of a benchmark run: upstream scheduler_perf's DRA ops (``dra.go``) and what a
workload with DRA objects needs around the scheduler.

==========================  ======================================================================
``createResourceDriver``    ``create_driver``: upstream's ``createResourceDriverOp`` — for every
                            node whose name matches the glob ``nodes`` (Go ``filepath.Match``),
                            one ResourceSlice named after the node, pool = node name, one slice
                            in the pool, ``maxClaimsPerNode`` devices ``instance-<i>`` with
                            upstream's attributes (model A100, family GPU, driverVersion 1.2.3,
                            ``dra.example.com/numa`` = i) and capacity (memory 1Gi). Upstream's
                            slice also sets ``bindsToNode`` and binding (failure) conditions,
                            fields of the DRADeviceBindingConditions gate (alpha, off in 1.34):
                            the API server drops them, as upstream's does with the gate off
``allocResourceClaims``     ``allocate_claims``: upstream's ``allocResourceClaimsOp`` — the
                            unallocated claims of the namespace (every namespace if empty), in
                            list order, each allocated by the scheduler's structured allocator
                            (``agents.scheduler.ClaimAllocator``, the workload's DRA gates) on
                            the first node that fits of the nodes shuffled anew per claim (a
                            seeded stream where upstream uses ``math/rand``), written with
                            ``status.allocation`` and counted in use for the next claim; a claim
                            that fits nowhere fails the workload (upstream ``tCtx.Fatalf``)
``createResourceClaims``    played as ``createAny`` of a ResourceClaim (``upstream_ops.py``)
==========================  ======================================================================

A workload with DRA (``uses_dra``: a DRA op, a ``resource.k8s.io`` object created, a pod
template with ``resourceClaims``) runs the resourceclaim controller beside the scheduler (claims
from templates, ``reservedFor`` cleanup), as upstream's scheduler_perf starts it for DRA
workloads; with kubelets, every driver has a kubelet plugin on every node that prepares claims at
once (``BenchPlugins``). ``dra_features``: the DRA gates of the workload's ``featureGates`` for
the scheduler's DynamicResources and the allocator, ``server_settings`` for the API server (which
keeps the ``resource.k8s.io`` fields of a gate turned on); v1.34's defaults for the others.
"""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Sequence
from typing import Any

from msgspec.structs import replace

from agents.scheduler import DRA_FEATURE_FIELDS, ClaimAllocator, DraAllocationError, DraFeatures, dra_features_for
from emulator.app.bench.steps import AllocClaimsStep, AnyStep, DriverStep, PodsStep, Workload
from emulator.base.api.codec import object_from_dict
from emulator.base.api.errors import ApiError
from emulator.base.api.resourcedefaults import DRA_GATES
from emulator.base.apiserver.records import ServerSettings
from emulator.base.apiserver.server import ApiServer
from emulator.base.client.kubeletplugins import ClaimRef, DRAPlugin, KubeletPlugins

__all__ = [
    "BenchDriverPlugin",
    "BenchPlugins",
    "allocate_claims",
    "create_driver",
    "dra_features",
    "honoured",
    "resource_slice",
    "server_settings",
    "uses_dra",
]


def honoured(gate: str, on: bool) -> bool:
    """Whether the emulator runs a workload with ``gate`` as it sets it: a DRA gate the allocator
    and the API server read, or DynamicResourceAllocation on (GA in 1.34)."""
    return gate in DRA_FEATURE_FIELDS or (gate == "DynamicResourceAllocation" and on)


def dra_features(gates: Sequence[tuple[str, bool]]) -> DraFeatures | None:
    """The DRA features of a workload's ``featureGates`` (None: it sets none, v1.34's defaults)."""
    return dra_features_for(dict(gates))


def server_settings(gates: Sequence[tuple[str, bool]]) -> ServerSettings | None:
    """The API server's settings for a workload's ``featureGates``: its DRA gates, so that the
    fields of a gate turned on are kept (None: no DRA gate set, the defaults)."""
    dra = tuple((g, on) for g, on in gates if g in DRA_GATES)
    return ServerSettings(feature_gates=dra) if dra else None


def uses_dra(workload: Workload) -> bool:
    """Whether the workload has DRA ops, creates ``resource.k8s.io`` objects or DRA pods."""
    for step in workload.steps:
        if isinstance(step, DriverStep | AllocClaimsStep):
            return True
        if isinstance(step, AnyStep) and "resource.k8s.io/" in step.text:
            return True
        if isinstance(step, PodsStep) and (step.template.spec.resource_claims or "resourceClaims" in step.indexed):
            return True
    return False


def resource_slice(driver: str, node: str, capacity: int) -> Any:
    """Upstream's ``resourceSlice(driverName, nodeName, capacity)`` in ``resource.k8s.io/v1``."""
    devices = [
        {
            "name": f"instance-{i}",
            "attributes": {
                "model": {"string": "A100"},
                "family": {"string": "GPU"},
                "driverVersion": {"version": "1.2.3"},
                "dra.example.com/numa": {"int": i},
            },
            "capacity": {"memory": {"value": "1Gi"}},
            "bindsToNode": True,
            "bindingConditions": ["DeviceAttached"],
            "bindingFailureConditions": ["AttachmentFailed"],
            "bindingTimeoutSeconds": 60,
        }
        for i in range(capacity)
    ]
    doc = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": node},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "resourceSliceCount": 1},
            "devices": devices,
        },
    }
    return object_from_dict(doc, source="createResourceDriver")


def create_driver(server: ApiServer, step: DriverStep) -> list[str]:
    """Upstream's ``createResourceDriverOp``: the nodes served, in the API server's list order."""
    nodes = [n.metadata.name for n in server.list("Node")[0] if fnmatch.fnmatchcase(n.metadata.name, step.nodes)]
    for name in nodes:
        server.create(resource_slice(step.driver, name, step.max_claims_per_node))
    return nodes


def allocate_claims(server: ApiServer, step: AllocClaimsStep, features: DraFeatures | None, rng: random.Random) -> str:
    """Upstream's ``allocResourceClaimsOp``; "" when done, else why the workload fails."""
    objects = [o for kind in ("ResourceSlice", "DeviceClass", "ResourceClaim") for o in server.list(kind)[0]]
    allocator = ClaimAllocator(objects, features)
    nodes = list(server.list("Node")[0])
    claims = server.list("ResourceClaim", namespace=step.namespace or None)[0]
    for i, claim in enumerate(claims):
        if claim.status.allocation is not None:
            continue
        rng.shuffle(nodes)
        try:
            result = allocator.allocate(claim, nodes)
        except DraAllocationError as err:  # bad input: upstream's "allocate claim" failure
            return f"allocate claim {claim.metadata.namespace}/{claim.metadata.name}: {err}"
        if result is None:
            return f"Could not allocate claim {i} out of {len(claims)}"
        try:
            written = server.update_status(replace(claim, status=replace(claim.status, allocation=result)))
        except ApiError as err:
            return f"update claim status with allocation: {err}"
        allocator.written(written)
    return ""


class BenchPlugins(KubeletPlugins):
    """The kubelet plugins of ``--kubelets on``: every driver has one on every node, asked for
    (upstream's scheduler_perf runs no kubelet; this only lets pods with claims start, whether
    their slices come from ``createResourceDriver`` or ``createAny``)."""

    def get(self, node: str, driver: str) -> DRAPlugin | None:
        got = super().get(node, driver)
        if got is None:
            self.register(node, BenchDriverPlugin(driver))
            got = super().get(node, driver)
        return got


class BenchDriverPlugin:
    """A driver's kubelet plugin in the bench: claims are prepared at once."""

    def __init__(self, driver: str) -> None:
        self._driver = driver

    @property
    def driver(self) -> str:
        return self._driver

    async def node_prepare_resources(self, claims: Sequence[ClaimRef]) -> None:
        return None

    def node_unprepare_resources(self, claims: Sequence[ClaimRef]) -> None:
        return None
