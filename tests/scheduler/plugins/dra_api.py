"""DRA objects as the API stores them (``emulator.base.api.resource``), for the plugin's tests:
what the resourceclaim controller and a driver would have written."""

from __future__ import annotations

from typing import Any

import msgspec

from emulator.base.api.core import Node, Pod, PodResourceClaim, PodResourceClaimStatus
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.resource import (
    AllocationResult,
    CELDeviceSelector,
    Device,
    DeviceAllocationResult,
    DeviceClaim,
    DeviceClass,
    DeviceClassSpec,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSelector,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from tests import builders

from .dra_helpers import local_selector

__all__ = [
    "CLASS",
    "DRIVER",
    "allocated",
    "api_claim",
    "api_class",
    "api_node",
    "api_slice",
    "claim_pod",
    "reserved_for",
    "template_pod",
]

DRIVER = "some-driver"
CLASS = "my-resource-class"


def api_node(name: str) -> Node:
    return builders.node(name, labels={"kubernetes.io/hostname": name})


def api_class(name: str = CLASS, selector: str | None = None) -> DeviceClass:
    expr = selector or f'device.driver == "{DRIVER}"'
    return DeviceClass(
        metadata=ObjectMeta(name=name, uid=f"uid-{name}", resource_version="1"),
        spec=DeviceClassSpec(selectors=[DeviceSelector(cel=CELDeviceSelector(expression=expr))]),
    )


def api_slice(node: str, devices: int, driver: str = DRIVER) -> ResourceSlice:
    return ResourceSlice(
        metadata=ObjectMeta(name=f"{node}-{driver}", uid=f"uid-slice-{node}", resource_version="1"),
        spec=ResourceSliceSpec(
            driver=driver,
            pool=ResourcePool(name=node, generation=1, resource_slice_count=1),
            node_name=node,
            devices=[Device(name=f"device-{i}") for i in range(devices)],
        ),
    )


def reserved_for(n: int) -> list[ResourceClaimConsumerReference]:
    return [ResourceClaimConsumerReference(resource="pods", name=f"other-{i}", uid=f"uid-other-{i}") for i in range(n)]


def allocated(node: str, device: str, driver: str = DRIVER) -> AllocationResult:
    return AllocationResult(
        devices=DeviceAllocationResult(
            results=[DeviceRequestAllocationResult(request="req-0", driver=driver, pool=node, device=device)]
        ),
        node_selector=local_selector(node),
    )


def api_claim(
    name: str,
    *,
    namespace: str = "default",
    owner: str | None = None,
    deleted: bool = False,
    allocation: tuple[str, str] | None = None,
    reserved: int = 0,
    finalizers: list[str] | None = None,
    count: int = 1,
) -> ResourceClaim:
    owners = (
        [OwnerReference(api_version="v1", kind="Pod", name=owner, uid=f"uid-{owner}", controller=True)] if owner else []
    )
    return ResourceClaim(
        metadata=ObjectMeta(
            name=name,
            namespace=namespace,
            uid=f"uid-{name}",
            resource_version="1",
            owner_references=owners,
            deletion_timestamp="2026-01-01T00:00:00Z" if deleted else None,
            finalizers=finalizers or [],
        ),
        spec=ResourceClaimSpec(
            devices=DeviceClaim(
                requests=[
                    DeviceRequest(
                        name="req-0",
                        exactly=ExactDeviceRequest(device_class_name=CLASS, allocation_mode="ExactCount", count=count),
                    )
                ]
            )
        ),
        status=ResourceClaimStatus(
            allocation=allocated(*allocation) if allocation else None, reserved_for=reserved_for(reserved)
        ),
    )


def claim_pod(name: str, *claims: str) -> Pod:
    pod = builders.pod(name, uid=f"uid-{name}")
    refs = [PodResourceClaim(name=c, resource_claim_name=c) for c in claims]
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, resource_claims=refs))


def template_pod(name: str, claim: str, claim_name: str | None) -> Pod:
    pod = builders.pod(name, uid=f"uid-{name}")
    spec = msgspec.structs.replace(
        pod.spec, resource_claims=[PodResourceClaim(name=claim, resource_claim_template_name="template")]
    )
    statuses = [PodResourceClaimStatus(name=claim, resource_claim_name=claim_name)] if claim_name else []
    status = msgspec.structs.replace(pod.status, resource_claim_statuses=statuses)
    return msgspec.structs.replace(pod, spec=spec, status=status)


_: Any = None
