"""What the DRA tests share: builders of claims, templates and pods that reference them, the
allocation the scheduler's DynamicResources plugin would write (``allocate``: the finalizer,
then ``status.allocation`` and ``reservedFor``, as its PreBind does), and ``served``: until the
resource.k8s.io strategies are in the API server, the four kinds served with the default rules
(a no-op once they are)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from msgspec.structs import replace

from emulator.base.api.core import Container, ContainerResourceClaim, Pod, PodResourceClaim, ResourceRequirements
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.resource import (
    FINALIZER,
    AllocationResult,
    DeviceAllocationResult,
    DeviceClaim,
    DeviceRequest,
    DeviceRequestAllocationResult,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimTemplate,
    ResourceClaimTemplateSpec,
)
from emulator.base.apiserver.registry import STRATEGIES, Strategy
from emulator.base.apiserver.server import ApiServer
from tests.builders import pod

__all__ = ["DRIVER", "SPEC", "allocate", "claim", "claim_pod", "served", "template"]

DRIVER = "gpu.example.com"
SPEC = ResourceClaimSpec(
    devices=DeviceClaim(
        requests=[DeviceRequest(name="gpu", exactly=ExactDeviceRequest(device_class_name="gpu.example.com"))]
    )
)
_KINDS = (
    ("ResourceClaim", True),
    ("ResourceClaimTemplate", True),
    ("ResourceSlice", False),
    ("DeviceClass", False),
)


@contextmanager
def served() -> Iterator[None]:
    """The resource.k8s.io kinds served (with the default rules when they have no strategy)."""
    with pytest.MonkeyPatch.context() as mp:
        for kind, namespaced in _KINDS:
            if kind not in STRATEGIES:
                cls = type(f"_{kind}Strategy", (Strategy,), {"kind": kind, "namespaced": namespaced})
                mp.setitem(STRATEGIES, kind, cls)
        yield


def template(name: str = "gpu-template", **meta: Any) -> ResourceClaimTemplate:
    return ResourceClaimTemplate(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=ResourceClaimTemplateSpec(metadata=ObjectMeta(**meta), spec=SPEC),
    )


def claim(name: str, namespace: str = "default") -> ResourceClaim:
    return ResourceClaim(metadata=ObjectMeta(name=name, namespace=namespace), spec=SPEC)


def claim_pod(
    name: str = "app",
    *,
    template_name: str | None = "gpu-template",
    claim_name: str | None = None,
    entry: str = "gpu",
    node: str = "",
) -> Pod:
    """A pod with one ``spec.resourceClaims`` entry, used by its one container."""
    p = pod(name, node=node)
    uses = ResourceRequirements(claims=[ContainerResourceClaim(name=entry)])
    containers: Sequence[Container] = [replace(c, resources=uses) for c in p.spec.containers]
    source = {"resource_claim_name": claim_name} if claim_name else {"resource_claim_template_name": template_name}
    entries = [PodResourceClaim(name=entry, **source)]
    return replace(p, spec=replace(p.spec, containers=list(containers), resource_claims=entries))


def allocate(server: ApiServer, name: str, *pods: Pod, node: str = "n1", device: str = "gpu-0") -> ResourceClaim:
    """What the scheduler writes for claim ``name``: its finalizer, then the allocation of
    ``device`` on ``node``'s pool, reserved for ``pods``."""
    current: ResourceClaim = server.get("ResourceClaim", name, "default")
    if FINALIZER not in current.metadata.finalizers:
        meta = replace(current.metadata, finalizers=[*current.metadata.finalizers, FINALIZER])
        current = server.update(replace(current, metadata=meta))
    result = DeviceRequestAllocationResult(request="gpu", driver=DRIVER, pool=node, device=device)
    status = replace(
        current.status,
        allocation=AllocationResult(devices=DeviceAllocationResult(results=[result])),
        reserved_for=[
            *current.status.reserved_for,
            *(ResourceClaimConsumerReference(resource="pods", name=p.metadata.name, uid=p.metadata.uid) for p in pods),
        ],
    )
    written: ResourceClaim = server.update_status(replace(current, status=status))
    return written
