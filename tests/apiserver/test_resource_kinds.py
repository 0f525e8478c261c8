"""The ``resource.k8s.io/v1`` kinds in the API server (upstream ``pkg/registry/resource/*/strategy.go``
and ``ValidateResourceClaimUpdate``/``ValidateResourceClaimStatusUpdate``/``ValidateResourceSliceUpdate``,
v1.34): defaulting, the status reset and subresource, generations, immutability, the rules of a
claim's allocation and reservations, admin access, the fields of v1.34's off alpha gates."""

from __future__ import annotations

import random
from typing import Any

import pytest
from msgspec.structs import replace

from emulator.base.api.codec import load_manifests
from emulator.base.api.core import Namespace
from emulator.base.api.errors import Invalid
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.resource import (
    AllocationResult,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
)
from emulator.base.apiserver.server import ApiServer
from emulator.base.runtime.clock import StoppedClock

CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu, namespace: default}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}
"""
SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0, attributes: {model: {string: A100}}}]
"""
CLASS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
"""


def _api() -> ApiServer:
    api = ApiServer(StoppedClock(), random.Random(0))
    api.create(Namespace(metadata=ObjectMeta(name="default")))
    return api


def _one(text: str) -> Any:
    (obj,) = load_manifests(text, source="m.yaml")
    return obj


def _allocation(device: str = "gpu-0") -> AllocationResult:
    result = DeviceRequestAllocationResult(request="gpu", driver="gpu.example.com", pool="node-1", device=device)
    return AllocationResult(devices=DeviceAllocationResult(results=[result]))


def _consumer(i: int) -> ResourceClaimConsumerReference:
    return ResourceClaimConsumerReference(resource="pods", name=f"p{i}", uid=f"uid-{i}")


def test_a_claim_is_defaulted_and_starts_with_an_empty_status() -> None:
    api = _api()
    claim = api.create(replace(_one(CLAIM), status=ResourceClaimStatus(allocation=_allocation())))
    exactly = claim.spec.devices.requests[0].exactly
    assert (exactly.allocation_mode, exactly.count) == ("ExactCount", 1)
    assert claim.status == ResourceClaimStatus()
    assert claim.metadata.generation == 0


def test_classes_and_slices_are_cluster_scoped_and_start_at_generation_1() -> None:
    api = _api()
    dc = api.create(replace(_one(CLASS), metadata=ObjectMeta(name="gpu.example.com", namespace="team")))
    rs = api.create(_one(SLICE))
    assert (dc.metadata.namespace, dc.metadata.generation) == ("", 1)
    assert (rs.metadata.namespace, rs.metadata.generation) == ("", 1)


def test_a_claims_spec_is_immutable() -> None:
    api = _api()
    claim = api.create(_one(CLAIM))
    request = claim.spec.devices.requests[0]
    changed = replace(request, exactly=replace(request.exactly, count=2))
    spec = replace(claim.spec, devices=replace(claim.spec.devices, requests=[changed]))
    with pytest.raises(Invalid) as err:
        api.update(replace(claim, spec=spec))
    assert err.value.field == "spec"
    assert err.value.detail.endswith("field is immutable")
    assert str(err.value).startswith('ResourceClaim.resource.k8s.io "gpu" is invalid: spec: Invalid value: {')


def test_a_slices_driver_pool_and_node_are_immutable() -> None:
    api = _api()
    rs = api.create(_one(SLICE))
    with pytest.raises(Invalid) as err:
        api.update(replace(rs, spec=replace(rs.spec, node_name="node-2")))
    assert (err.value.field, err.value.detail) == ("spec.nodeName", 'Invalid value: "node-2": field is immutable')
    grown = api.update(replace(rs, spec=replace(rs.spec, pool=replace(rs.spec.pool, generation=2))))
    assert grown.metadata.generation == 2  # a spec change bumps the generation


def test_allocation_then_reservation_then_deallocation() -> None:
    api = _api()
    claim = api.create(_one(CLAIM))
    allocated = api.update_status(replace(claim, status=ResourceClaimStatus(allocation=_allocation())))
    reserved = api.update_status(replace(allocated, status=replace(allocated.status, reserved_for=[_consumer(1)])))
    assert reserved.status.reserved_for == [_consumer(1)]
    with pytest.raises(Invalid) as err:  # an allocation, once set, does not change
        api.update_status(replace(reserved, status=replace(reserved.status, allocation=_allocation("gpu-1"))))
    assert err.value.field == "status.allocation"
    released = api.update_status(replace(reserved, status=replace(reserved.status, reserved_for=[])))
    freed = api.update_status(replace(released, status=ResourceClaimStatus()))
    assert freed.status.allocation is None


@pytest.mark.parametrize(
    ("status", "field", "detail"),
    [
        pytest.param(
            ResourceClaimStatus(reserved_for=[_consumer(1)]),
            "status.reservedFor",
            "Forbidden: may not be specified when `allocated` is not set",
            id="reserved-without-allocation",
        ),
        pytest.param(
            ResourceClaimStatus(allocation=_allocation(), reserved_for=[_consumer(i) for i in range(257)]),
            "status.reservedFor",
            "Too many: 257: must have at most 256 items",
            id="more-than-256-consumers",
        ),
        pytest.param(
            ResourceClaimStatus(allocation=_allocation(), reserved_for=[_consumer(1), _consumer(1)]),
            "status.reservedFor[1]",
            'Duplicate value: "uid-1"',
            id="duplicate-consumer",
        ),
        pytest.param(
            ResourceClaimStatus(
                allocation=replace(
                    _allocation(),
                    devices=DeviceAllocationResult(
                        results=[
                            DeviceRequestAllocationResult(request="other", driver="d.example.com", pool="p", device="x")
                        ]
                    ),
                )
            ),
            "status.allocation.devices.results[0].request",
            'Invalid value: "other": must be the name of a request in the claim or the name of a request and a '
            "subrequest separated by '/'",
            id="result-of-unknown-request",
        ),
    ],
)
def test_bad_status_writes_are_refused(status: ResourceClaimStatus, field: str, detail: str) -> None:
    api = _api()
    claim = api.create(_one(CLAIM))
    with pytest.raises(Invalid) as err:
        api.update_status(replace(claim, status=status))
    assert (err.value.field, err.value.detail) == (field, detail)


def test_a_deleted_claim_gains_no_consumers() -> None:
    api = _api()
    claim = api.create(replace(_one(CLAIM), metadata=replace(_one(CLAIM).metadata, finalizers=["x.example.com/f"])))
    claim = api.update_status(replace(claim, status=ResourceClaimStatus(allocation=_allocation())))
    api.delete("ResourceClaim", "gpu", "default")
    deleting = api.get("ResourceClaim", "gpu", "default")
    with pytest.raises(Invalid) as err:
        api.update_status(replace(deleting, status=replace(deleting.status, reserved_for=[_consumer(1)])))
    assert err.value.detail.startswith("Forbidden: new entries may not be added")


def test_admin_access_needs_the_namespace_label() -> None:
    api = _api()
    claim = _one(
        CLAIM.replace("deviceClassName: gpu.example.com}", "deviceClassName: gpu.example.com, adminAccess: true}")
    )
    with pytest.raises(Invalid) as err:
        api.create(claim)
    assert err.value.field == "spec.devices.requests[0].exactly.adminAccess"
    ns = api.get("Namespace", "default", "")
    api.update(replace(ns, metadata=replace(ns.metadata, labels={"resource.kubernetes.io/admin-access": "true"})))
    assert api.create(claim).spec.devices.requests[0].exactly.admin_access is True


def test_fields_of_disabled_gates_are_dropped_on_create() -> None:
    api = _api()
    text = SLICE.replace("attributes: {model: {string: A100}}", "taints: [{key: k, effect: NoSchedule}]")
    rs = api.create(_one(text))
    assert rs.spec.devices[0].taints == []


def test_consumable_capacity_gate_on_keeps_its_fields_and_drops_the_others() -> None:
    from emulator.base.apiserver.server import ServerSettings

    settings = ServerSettings(feature_gates=(("DRAConsumableCapacity", True),))
    api = ApiServer(StoppedClock(), random.Random(0), settings)
    text = SLICE.replace(
        "attributes: {model: {string: A100}}",
        "allowMultipleAllocations: true, taints: [{key: k, effect: NoSchedule}],"
        " capacity: {share: {value: '1', requestPolicy: {default: '1', validRange: {min: 1m}}}}",
    )
    device = api.create(_one(text)).spec.devices[0]
    assert device.allow_multiple_allocations is True
    assert device.capacity["share"].request_policy is not None
    assert device.taints == []  # DRADeviceTaints stays off
    claim = CLAIM.replace(
        "exactly: {deviceClassName: gpu.example.com}",
        "exactly: {deviceClassName: gpu.example.com, capacity: {requests: {share: 250m}}}",
    )
    api.create(Namespace(metadata=ObjectMeta(name="default")))
    kept = api.create(_one(claim))
    assert kept.spec.devices.requests[0].exactly.capacity.requests["share"].milli == 250
    dropped = ApiServer(StoppedClock(), random.Random(0))
    dropped.create(Namespace(metadata=ObjectMeta(name="default")))
    assert dropped.create(_one(claim)).spec.devices.requests[0].exactly.capacity is None


def test_a_selector_on_allow_multiple_allocations_needs_the_consumable_capacity_gate() -> None:
    """Upstream compiles selectors with ``EnableConsumableCapacity`` from the API server's
    DRAConsumableCapacity gate: ``device.allowMultipleAllocations`` is an undefined field while
    the gate is off (1.34's default), a field with it on."""
    from emulator.base.api.dracel import cel_features
    from emulator.base.apiserver.server import ServerSettings

    text = CLASS.replace('device.driver == "gpu.example.com"', "device.allowMultipleAllocations")
    with cel_features(consumable_capacity=True):
        cls = _one(text)
    with pytest.raises(Invalid) as err:
        _api().create(cls)
    assert "undefined field 'allowMultipleAllocations'" in err.value.detail
    on = ApiServer(StoppedClock(), random.Random(0), ServerSettings(feature_gates=(("DRAConsumableCapacity", True),)))
    assert on.create(cls).spec.selectors[0].cel.expression == "device.allowMultipleAllocations"
