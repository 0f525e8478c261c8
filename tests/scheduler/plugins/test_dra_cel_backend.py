"""The allocator over dracel (``cel_backend.DraCel``) with API structs: attributes of every
type, capacities, a qualified and an unqualified name, and a bad selector's error."""

from __future__ import annotations

import pytest

from agents.scheduler.plugins.dynamicresources import AllocationError, Allocator, Features
from agents.scheduler.plugins.dynamicresources.cel_backend import DraCel
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.resource import (
    CELDeviceSelector,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceRequest,
    DeviceSelector,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from tests.scheduler.plugins.dra_api import DRIVER, api_class, api_node


def _slice() -> ResourceSlice:
    def dev(name: str, model: str, mem: str, version: str, ok: bool) -> Device:
        return Device(
            name=name,
            attributes={
                "model": DeviceAttribute(string_value=model),
                f"{DRIVER}/cores": DeviceAttribute(int_value=8),
                "healthy": DeviceAttribute(bool_value=ok),
                "driverVersion": DeviceAttribute(version_value=version),
            },
            capacity={"memory": DeviceCapacity(value=parse_quantity(mem))},
        )

    return ResourceSlice(
        metadata=ObjectMeta(name="s"),
        spec=ResourceSliceSpec(
            driver=DRIVER,
            pool=ResourcePool(name="worker", generation=1, resource_slice_count=1),
            node_name="worker",
            devices=[dev("small", "A100", "40Gi", "1.2.0", True), dev("big", "A100", "80Gi", "2.0.0", True)],
        ),
    )


def _claim(expr: str) -> ResourceClaim:
    sel = DeviceSelector(cel=CELDeviceSelector(expression=expr))
    request = ExactDeviceRequest(
        device_class_name="my-resource-class", allocation_mode="ExactCount", count=1, selectors=[sel]
    )
    return ResourceClaim(
        metadata=ObjectMeta(name="c", namespace="default", uid="uid-c"),
        spec=ResourceClaimSpec(devices=DeviceClaim(requests=[DeviceRequest(name="gpu", exactly=request)])),
    )


@pytest.mark.parametrize(
    ("expr", "device"),
    [
        pytest.param(f'device.capacity["{DRIVER}"].memory.compareTo(quantity("64Gi")) >= 0', "big", id="capacity"),
        pytest.param(f'device.attributes["{DRIVER}"].model == "A100"', "small", id="string"),
        pytest.param(f'device.attributes["{DRIVER}"].cores == 8', "small", id="qualified int"),
        pytest.param(f'device.attributes["{DRIVER}"].healthy', "small", id="bool"),
        pytest.param(
            f'device.attributes["{DRIVER}"].driverVersion.isGreaterThan(semver("1.5.0"))', "big", id="version"
        ),
        pytest.param('"model" in device.attributes["other.example.com"]', None, id="other domain: empty"),
    ],
)
def test_selectors_through_dracel(expr: str, device: str | None) -> None:
    klass = api_class()
    alloc = Allocator(Features(), {}, {klass.metadata.name: klass}.get, [_slice()], DraCel())
    got = alloc.allocate(api_node("worker"), [_claim(expr)])
    assert (got[0].devices[0].id.device if got else None) == device


def test_compile_error_is_an_allocation_error() -> None:
    klass = api_class()
    alloc = Allocator(Features(), {}, {klass.metadata.name: klass}.get, [_slice()], DraCel())
    with pytest.raises(AllocationError, match=r"claim default/c: selector #0: CEL compile error"):
        alloc.allocate(api_node("worker"), [_claim("device.nosuchfield ==")])


def test_runtime_error_names_the_device() -> None:
    """A missing attribute is a CEL runtime error (upstream: "no such key"), not a mismatch."""
    klass = api_class()
    alloc = Allocator(Features(), {}, {klass.metadata.name: klass}.get, [_slice()], DraCel())
    with pytest.raises(
        AllocationError, match=r"selector #0 on device some-driver/worker/small: CEL runtime error: no such key: model"
    ):
        alloc.allocate(api_node("worker"), [_claim('device.attributes["other.example.com"].model == "A100"')])
