"""The structured allocator: cases ported from upstream
``dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go`` (v1.34;
same names, same objects, same expected devices and errors)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from agents.scheduler.plugins.dynamicresources import (
    AllocationError,
    Allocator,
    DeviceID,
    Features,
    NodeAllocationError,
    SliceIndex,
    gather_pools,
)
from agents.scheduler.plugins.dynamicresources.allocator_result import local_node_selector
from tests.scheduler.plugins.dra_helpers import (
    CLAIM0,
    CLAIM1,
    CLASS_A,
    CLASS_B,
    DEV1,
    DEV2,
    DEV3,
    DRIVER_A,
    DRIVER_B,
    NODE1,
    NODE2,
    POOL1,
    POOL2,
    REGION1,
    REGION2,
    REQ0,
    REQ1,
    SLICE1,
    SLICE2,
    SUB0,
    SUB1,
    FakeCel,
    all_request,
    all_sub_request,
    claim,
    claim_with_request,
    consumes,
    counter_set,
    device,
    device_class,
    match_attribute,
    node,
    node_label_selector,
    prioritized,
    request,
    request_with_capacity,
    selector,
    slice_with_devices,
    slice_with_one_device,
    sub_request,
    taint,
    toleration,
)

MEM_1GI = selector(f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("1Gi")) >= 0')
MEM_2GI = selector(f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("2Gi")) >= 0')
LOCAL1 = ("local", NODE1)
LOCAL2 = ("local", NODE2)


@dataclass
class Case:
    claims: list[Any]
    classes: list[Any]
    slices: list[Any]
    node: Any = field(default_factory=lambda: node(NODE1, REGION1))
    allocated: tuple[DeviceID, ...] = ()
    features: Features = field(default_factory=Features)
    expect: list[tuple[Any, list[tuple[Any, ...]]]] | None = None
    error: str = ""
    node_error: bool = False


def res(selector: Any, *devices: tuple[Any, ...]) -> tuple[Any, list[tuple[Any, ...]]]:
    return selector, list(devices)


def dev(req: str, driver: str, pool: str, name: str, admin: bool | None = None) -> tuple[Any, ...]:
    return (req, driver, pool, name, admin)


CASES = {
    "empty": Case([], [], [], expect=[]),
    "simple": Case(
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1))],
    ),
    "other-node": Case(
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B), slice_with_one_device(SLICE2, NODE2, POOL2, DRIVER_A)],
        node=node(NODE2, REGION2),
        expect=[res(LOCAL2, dev(REQ0, DRIVER_A, POOL2, DEV1))],
    ),
    "small-and-large": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 1, MEM_1GI), request(REQ1, CLASS_A, 1, MEM_2GI))],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1, {"memory": "1Gi"}), device(DEV2, {"memory": "2Gi"})
            )
        ],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1), dev(REQ1, DRIVER_A, POOL1, DEV2))],
    ),
    "small-and-large-backtrack-requests": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 1, MEM_1GI), request(REQ1, CLASS_A, 1, MEM_2GI))],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, device(DEV2, {"memory": "2Gi"}), device(DEV1, {"memory": "1Gi"})
            )
        ],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1), dev(REQ1, DRIVER_A, POOL1, DEV2))],
    ),
    "small-and-large-backtrack-claims": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 1, MEM_1GI)), claim(CLAIM1, request(REQ1, CLASS_A, 1, MEM_2GI))],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, device(DEV2, {"memory": "2Gi"}), device(DEV1, {"memory": "1Gi"})
            )
        ],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1)), res(LOCAL1, dev(REQ1, DRIVER_A, POOL1, DEV2))],
    ),
    "devices-split-across-different-slices": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A), slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_A)],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1), dev(REQ0, DRIVER_A, POOL2, DEV1))],
    ),
    "obsolete-slice": Case(  # the newer generation has one of its two slices: incomplete
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices("slice-1-obsolete", NODE1, (POOL1, 1), DRIVER_A, device(DEV1), count=2),
            slice_with_devices("slice-1-obsolete", NODE1, (POOL1, 2), DRIVER_A, device(DEV2), count=2),
        ],
    ),
    "newest-generation-wins": Case(  # not upstream's: the older generation's device is ignored
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices("slice-new", NODE1, (POOL1, 3), DRIVER_A, device(DEV2)),
            slice_with_devices("slice-old", NODE1, (POOL1, 2), DRIVER_A, device(DEV1)),
        ],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV2))],
    ),
    "duplicate-slice": Case(
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1), count=2),
            slice_with_devices(SLICE1 + "-2", NODE1, POOL1, DRIVER_A, device(DEV1), count=2),
        ],
        error="invalid resource pools were encountered",
        node_error=True,
    ),
    "no-slices": Case([claim_with_request(CLAIM0, REQ0, CLASS_A)], [device_class(CLASS_A, DRIVER_A)], []),
    "not-enough-suitable-devices": Case(
        [claim_with_request(CLAIM0, REQ0, CLASS_A), claim_with_request(CLAIM0, REQ1, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "no-classes": Case(
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="could not retrieve device class class-a",
    ),
    "unknown-class": Case(
        [claim_with_request(CLAIM0, REQ0, "unknown-class")],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="could not retrieve device class unknown-class",
    ),
    "empty-class": Case(
        [claim_with_request(CLAIM0, REQ0, "")],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="claim claim-0, request req-0: missing device class name (unsupported request type?)",
    ),
    "all-devices-single": Case(
        [claim(CLAIM0, all_request(REQ0, CLASS_A))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1))],
    ),
    "all-devices-many": Case(
        [claim(CLAIM0, all_request(REQ0, CLASS_A))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A), slice_with_one_device(SLICE1, NODE1, POOL2, DRIVER_A)],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1), dev(REQ0, DRIVER_A, POOL2, DEV1))],
    ),
    "all-devices-of-the-incomplete-pool": Case(
        [claim(CLAIM0, all_request(REQ0, CLASS_A))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1), count=2)],
        error="claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 "
        "is currently being updated",
    ),
    "all-devices-plus-another": Case(
        [claim(CLAIM0, all_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_B, 1))],
        [device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A), slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1)), res(LOCAL1, dev(REQ0, DRIVER_B, POOL1, DEV1))],
    ),
    "all-devices-many-plus-another": Case(
        [claim(CLAIM0, all_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_B, 1))],
        [device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2)),
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        expect=[
            res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1), dev(REQ0, DRIVER_A, POOL1, DEV2)),
            res(LOCAL1, dev(REQ0, DRIVER_B, POOL1, DEV1)),
        ],
    ),
    "all-devices-no-solution": Case(
        [claim(CLAIM0, all_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A, 1))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "all-devices-some-allocated": Case(
        [claim(CLAIM0, all_request(REQ0, CLASS_A))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))],
        allocated=(DeviceID(DRIVER_A, POOL1, DEV1),),
    ),
    "all-devices-no-devices-available": Case(
        [claim(CLAIM0, all_request(REQ0, CLASS_A))],
        [device_class(CLASS_A, DRIVER_A)],
        [],
    ),
    "network-attached-device": Case(
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, node_label_selector("region", REGION1), POOL1, DRIVER_A)],
        expect=[res(("labels", "region", REGION1), dev(REQ0, DRIVER_A, POOL1, DEV1))],
    ),
    "unsuccessful-allocation-network-attached-device": Case(
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, node_label_selector("region", REGION2), POOL1, DRIVER_A)],
    ),
    "many-network-attached-devices": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 4))],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_one_device(SLICE1, node_label_selector("region", REGION1), POOL1, DRIVER_A),
            slice_with_one_device(SLICE1, "all", POOL2, DRIVER_A),
            slice_with_one_device(SLICE1, node_label_selector("planet", "earth"), "pool-3", DRIVER_A),
            slice_with_one_device(SLICE1, node_label_selector("region", REGION1), "pool-4", DRIVER_A),
        ],
        expect=[
            res(
                ("labels2", ("planet", "earth"), ("region", REGION1)),
                dev(REQ0, DRIVER_A, POOL1, DEV1),
                dev(REQ0, DRIVER_A, POOL2, DEV1),
                dev(REQ0, DRIVER_A, "pool-3", DEV1),
                dev(REQ0, DRIVER_A, "pool-4", DEV1),
            )
        ],
    ),
    "local-and-network-attached-devices": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_one_device(SLICE1, node_label_selector("region", REGION1), POOL1, DRIVER_A),
            slice_with_one_device(SLICE1, NODE1, POOL2, DRIVER_A),
        ],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1), dev(REQ0, DRIVER_A, POOL2, DEV1))],
    ),
    "already-allocated-devices": Case(
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        allocated=(DeviceID(DRIVER_A, POOL1, DEV1),),
    ),
    "admin-access-enabled": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        allocated=(DeviceID(DRIVER_A, POOL1, DEV1),),
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1, True))],
    ),
    "admin-access-disabled": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 1, admin=True))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        features=Features(admin_access=False),
        error="claim claim-0, request req-0: admin access is requested, but the feature is disabled",
    ),
    "with-constraint": Case(
        [
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
                constraints=[match_attribute(f"{DRIVER_A}/driverVersion")],
            )
        ],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEV1, None, {"driverVersion": ("version", "1.0.0")}),
                device(DEV2, None, {"driverVersion": ("version", "2.0.0")}),
                device(DEV3, None, {"driverVersion": ("version", "1.0.0")}),
            )
        ],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1), dev(REQ1, DRIVER_A, POOL1, DEV3))],
    ),
    "with-constraint-not-satisfied": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[match_attribute(f"{DRIVER_A}/driverVersion")])],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEV1, None, {"driverVersion": ("version", "1.0.0")}),
                device(DEV2, None, {"driverVersion": ("version", "2.0.0")}),
            )
        ],
    ),
    "with-constraint-non-existent-attribute": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 1), constraints=[match_attribute("missing/attribute")])],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "all-with-constraint-not-satisfied": Case(
        [claim(CLAIM0, all_request(REQ0, CLASS_A), constraints=[match_attribute(f"{DRIVER_A}/driverVersion")])],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEV1, None, {"driverVersion": ("version", "1.0.0")}),
                device(DEV2, None, {"driverVersion": ("version", "2.0.0")}),
            )
        ],
        error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 "
        "because a claim constraint would not be satisfied",
    ),
    "invalid-CEL-one-device": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 1, selector("error")))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="claim claim-0: selector #0: CEL compile error",
    ),
    "invalid-CEL-one-device-class": Case(
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [
            type(device_class(CLASS_A, DRIVER_A))(
                metadata=device_class(CLASS_A, DRIVER_A).metadata,
                spec=type(device_class(CLASS_A, DRIVER_A).spec)(selectors=[selector("error")], config=[]),
            )
        ],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="class class-a: selector #0: CEL compile error",
    ),
    "CEL-runtime-error": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 1, selector(f'device.attributes["{DRIVER_A}"].missing == 1')))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="claim claim-0: selector #0 on device driver-a/pool-1/device-1: CEL runtime error",
    ),
    "too-many-devices-single-request": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 33))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="claim claim-0: number of requested devices 33 exceeds the claim limit of 32",
    ),
    "prioritized-list-first-unavailable": Case(
        [claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_B, 1), sub_request(SUB1, CLASS_A, 1)))],
        [device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        expect=[res(LOCAL1, dev(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, DEV1))],
    ),
    "prioritized-list-multiple-requests": Case(
        [
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                prioritized(REQ1, sub_request(SUB0, CLASS_A, 2), sub_request(SUB1, CLASS_A, 1)),
            )
        ],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1), dev(f"{REQ1}/{SUB1}", DRIVER_A, POOL1, DEV2))],
    ),
    "prioritized-list-disabled": Case(
        [claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_A, 1)))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        features=Features(prioritized_list=False),
        error="claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled",
    ),
    "prioritized-list-with-constraint": Case(
        [
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, selector(f'device.attributes["{DRIVER_A}"].model == "b"')),
                prioritized(
                    REQ1,
                    sub_request(SUB0, CLASS_A, 1, selector(f'device.attributes["{DRIVER_A}"].model == "a"')),
                    sub_request(SUB1, CLASS_A, 1, selector(f'device.attributes["{DRIVER_A}"].model == "c"')),
                ),
                constraints=[match_attribute(f"{DRIVER_A}/zone")],
            )
        ],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEV1, None, {"model": "a", "zone": "x"}),
                device(DEV2, None, {"model": "b", "zone": "y"}),
                device(DEV3, None, {"model": "c", "zone": "y"}),
            )
        ],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV2), dev(f"{REQ1}/{SUB1}", DRIVER_A, POOL1, DEV3))],
    ),
    "partitionable-devices-disabled": Case(
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_devices(SLICE1, None, POOL1, DRIVER_A, device(DEV1, node_name=NODE1), per_device=True)],
    ),
    "partitionable-devices-per-device-node": Case(
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices(
                SLICE1,
                None,
                POOL1,
                DRIVER_A,
                device(DEV1, node_name=NODE2),
                device(DEV2, node_name=NODE1),
                per_device=True,
            )
        ],
        features=Features(partitionable_devices=True),
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV2))],
    ),
    "partitionable-devices-counters": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device("full", consumes_counters=[consumes("gpu-0", "8Gi")]),
                device("part-a", consumes_counters=[consumes("gpu-0", "4Gi")]),
                device("part-b", consumes_counters=[consumes("gpu-0", "4Gi")]),
                shared_counters=[counter_set("gpu-0", "8Gi")],
            )
        ],
        features=Features(partitionable_devices=True),
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, "part-a"), dev(REQ0, DRIVER_A, POOL1, "part-b"))],
    ),
    "partitionable-devices-counters-used-by-allocated": Case(
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device("full", consumes_counters=[consumes("gpu-0", "8Gi")]),
                device("part-a", consumes_counters=[consumes("gpu-0", "4Gi")]),
                shared_counters=[counter_set("gpu-0", "8Gi")],
            )
        ],
        allocated=(DeviceID(DRIVER_A, POOL1, "full"),),
        features=Features(partitionable_devices=True),
    ),
    "partitionable-devices-gate-off": Case(
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device("part-a", consumes_counters=[consumes("gpu-0", "4Gi")]),
                device(DEV1),
                shared_counters=[counter_set("gpu-0", "8Gi")],
            )
        ],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1))],
    ),
    "consumable-capacity-gate-off": Case(
        [claim(CLAIM0, request_with_capacity(REQ0, CLASS_A, "1Gi"))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        error="claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled",
    ),
    "admin-access-same-claim-twice": Case(  # admin access may share a device, but not within one claim
        [claim(CLAIM0, request(REQ0, CLASS_A, 2, admin=True))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    "prioritized-list-all-devices": Case(
        [claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_B, 1), all_sub_request(SUB1, CLASS_A)))],
        [device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))],
        expect=[
            res(LOCAL1, dev(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, DEV1), dev(f"{REQ0}/{SUB1}", DRIVER_A, POOL1, DEV2))
        ],
    ),
    "device-taints-gate-off": Case(  # DRADeviceTaints off: taints are not looked at
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1, taints=[taint("NoSchedule")]))],
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1))],
    ),
    "device-taints-no-schedule": Case(
        [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        [device_class(CLASS_A, DRIVER_A)],
        [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEV1, taints=[taint("NoSchedule")]),
                device(DEV2, taints=[taint("None")]),
            )
        ],
        features=Features(device_taints=True),
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV2))],
    ),
    "device-taints-tolerated": Case(
        [claim(CLAIM0, request(REQ0, CLASS_A, 1, tolerations=[toleration("Exists")]))],
        [device_class(CLASS_A, DRIVER_A)],
        [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEV1, taints=[taint("NoExecute")]))],
        features=Features(device_taints=True),
        expect=[res(LOCAL1, dev(REQ0, DRIVER_A, POOL1, DEV1))],
    ),
}


def _shape(sel: Any) -> Any:
    if sel is None:
        return None
    (term,) = sel.node_selector_terms
    if term.match_fields:
        assert sel == local_node_selector(term.match_fields[0].values[0])
        return ("local", term.match_fields[0].values[0])
    reqs = sorted((r.key, r.values[0]) for r in term.match_expressions)
    return ("labels", *reqs[0]) if len(reqs) == 1 else ("labels2", *reqs)


@pytest.mark.parametrize("case", [pytest.param(c, id=n) for n, c in CASES.items()])
def test_allocate(case: Case) -> None:
    classes = {c.metadata.name: c for c in case.classes}
    alloc = Allocator(case.features, frozenset(case.allocated), classes.get, case.slices, FakeCel())
    if case.error:
        with pytest.raises(NodeAllocationError if case.node_error else AllocationError, match=_re(case.error)):
            alloc.allocate(case.node, case.claims)
        return
    got = alloc.allocate(case.node, case.claims)
    if case.expect is None:
        assert got is None
        return
    assert got is not None
    shaped = [(_shape(r.node_selector), [(d.request, *d.id, d.admin_access) for d in r.devices]) for r in got]
    assert shaped == case.expect


def _re(text: str) -> str:
    return re.escape(text)


@pytest.mark.parametrize("case", [pytest.param(c, id=n) for n, c in CASES.items()])
def test_slice_index_gives_the_pools_of_gather_pools(case: Case) -> None:
    """The per-node grouping (and its per-node cache) is upstream's ``GatherPools`` result."""

    def shape(pools: list[Any]) -> list[Any]:
        return [(p.pool_id, p.is_incomplete, p.is_invalid, [s.metadata.name for s in p.slices]) for p in pools]

    part = case.features.partitionable_devices
    index = SliceIndex(case.slices, part)
    for n in (case.node, node(NODE2, REGION2)):
        want = shape(gather_pools(case.slices, n, part))
        assert shape(index.pools(n)) == want
        assert shape(index.pools(n)) == want  # cached
