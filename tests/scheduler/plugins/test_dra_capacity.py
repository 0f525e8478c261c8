"""Consumable capacity (DRAConsumableCapacity, alpha in v1.34) in the allocator: shared devices,
request policies, what earlier shares consume, distinctAttribute — after upstream's
``consumable_capacity_test.go`` and the consumable-capacity cases of ``allocator_testing.go``."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.plugins.dynamicresources import AllocationError, Allocator, DeviceID, Features
from tests.scheduler.plugins.dra_helpers import (
    CLAIM0,
    CLAIM1,
    CLASS_A,
    DRIVER_A,
    NODE1,
    POOL1,
    REGION1,
    REQ0,
    REQ1,
    SLICE1,
    FakeCel,
    claim,
    device,
    device_class,
    distinct_attribute,
    node,
    range_policy,
    request,
    request_with_capacity,
    shared_device,
    slice_with_devices,
)

ON = Features(consumable_capacity=True)
GI = 1024**3 * 1000  # milli


def run(
    claims: list[Any],
    devices: list[Any],
    consumed: dict[DeviceID, dict[str, int]] | None = None,
    features: Features = ON,
) -> Any:
    slices = [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, *devices)]
    classes = {CLASS_A: device_class(CLASS_A, DRIVER_A)}
    alloc = Allocator(features, frozenset(), classes.get, slices, FakeCel(), consumed=consumed)
    got = alloc.allocate(node(NODE1, REGION1), claims)
    if got is None:
        return None
    return [
        [(d.request, d.id.device, bool(d.share_id), dict(d.consumed_capacity or {})) for d in r.devices] for r in got
    ]


@pytest.mark.parametrize(
    ("claims", "devices", "consumed", "want"),
    [
        pytest.param(
            [
                claim(CLAIM0, request_with_capacity(REQ0, CLASS_A, "40Gi")),
                claim(CLAIM1, request_with_capacity(REQ0, CLASS_A, "40Gi")),
            ],
            [shared_device("gpu", "80Gi")],
            None,
            [[(REQ0, "gpu", True, {"memory": 40 * GI})], [(REQ0, "gpu", True, {"memory": 40 * GI})]],
            id="two shares of one device",
        ),
        pytest.param(
            [claim(CLAIM0, request_with_capacity(REQ0, CLASS_A, "40Gi"))],
            [shared_device("gpu", "80Gi")],
            {DeviceID(DRIVER_A, POOL1, "gpu"): {"memory": 60 * GI}},
            None,
            id="earlier shares leave too little",
        ),
        pytest.param(
            [claim(CLAIM0, request_with_capacity(REQ0, CLASS_A, "3Gi"))],
            [shared_device("gpu", "8Gi", range_policy("2Gi", "2Gi", "2Gi", "4Gi"))],
            None,
            [[(REQ0, "gpu", True, {"memory": 4 * GI})]],
            id="rounded up to the next step",
        ),
        pytest.param(
            [claim(CLAIM0, request_with_capacity(REQ0, CLASS_A, "5Gi"))],
            [shared_device("gpu", "8Gi", range_policy("2Gi", "2Gi", "2Gi", "4Gi"))],
            None,
            None,
            id="beyond the policy's max",
        ),
        pytest.param(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1))],
            [shared_device("gpu", "8Gi", range_policy("2Gi", "2Gi", "2Gi", "4Gi"))],
            None,
            [[(REQ0, "gpu", True, {"memory": 2 * GI})]],
            id="no request takes the default",
        ),
        pytest.param(
            [claim(CLAIM0, request(REQ0, CLASS_A, 1)), claim(CLAIM1, request(REQ0, CLASS_A, 1))],
            [shared_device("gpu", "8Gi")],
            None,
            None,
            id="no request and no default takes it all",
        ),
        pytest.param(
            [claim(CLAIM0, request(REQ0, CLASS_A, 2))],
            [shared_device("gpu", "8Gi", range_policy("2Gi", "2Gi", "2Gi", "4Gi"))],
            None,
            None,
            id="one request takes a shared device once",
        ),
        pytest.param(
            [claim(CLAIM0, request_with_capacity(REQ0, CLASS_A, "16Gi"))],
            [device("exclusive", {"memory": "8Gi"}), device("big", {"memory": "32Gi"})],
            None,
            [[(REQ0, "big", False, {})]],
            id="exclusive device too small for the request",
        ),
        pytest.param(
            [
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 1),
                    request(REQ1, CLASS_A, 1),
                    constraints=[distinct_attribute(f"{DRIVER_A}/numa")],
                )
            ],
            [
                shared_device("a", "8Gi", range_policy("2Gi", "2Gi", "2Gi", "4Gi"), {"numa": 0}),
                shared_device("b", "8Gi", range_policy("2Gi", "2Gi", "2Gi", "4Gi"), {"numa": 0}),
                shared_device("c", "8Gi", range_policy("2Gi", "2Gi", "2Gi", "4Gi"), {"numa": 1}),
            ],
            None,
            [[(REQ0, "a", True, {"memory": 2 * GI}), (REQ1, "c", True, {"memory": 2 * GI})]],
            id="distinctAttribute",
        ),
    ],
)
def test_consumable_capacity(claims: list[Any], devices: list[Any], consumed: Any, want: Any) -> None:
    assert run(claims, devices, consumed) == want


def test_shared_device_is_exclusive_with_the_gate_off() -> None:
    claims = [claim(CLAIM0, request(REQ0, CLASS_A, 1)), claim(CLAIM1, request(REQ0, CLASS_A, 1))]
    assert run(claims, [shared_device("gpu", "80Gi")], features=Features()) is None
    assert run(claims[:1], [shared_device("gpu", "80Gi")], features=Features()) == [[(REQ0, "gpu", False, {})]]


def test_capacity_request_needs_the_gate() -> None:
    with pytest.raises(AllocationError, match="DRAConsumableCapacity feature is disabled"):
        run(
            [claim(CLAIM0, request_with_capacity(REQ0, CLASS_A, "1Gi"))],
            [shared_device("gpu", "8Gi")],
            features=Features(),
        )


def test_share_ids_are_stable_and_distinct() -> None:
    claims = [
        claim(CLAIM0, request_with_capacity(REQ0, CLASS_A, "1Gi")),
        claim(CLAIM1, request_with_capacity(REQ0, CLASS_A, "1Gi")),
    ]
    for c, uid in zip(claims, ("uid-0", "uid-1"), strict=True):
        c.metadata = type(c.metadata)(name=c.metadata.name, uid=uid)
    slices = [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, shared_device("gpu", "8Gi"))]
    classes = {CLASS_A: device_class(CLASS_A, DRIVER_A)}
    ids = []
    for _ in range(2):
        got = Allocator(ON, frozenset(), classes.get, slices, FakeCel()).allocate(node(NODE1, REGION1), claims)
        assert got is not None
        ids.append([r.devices[0].share_id for r in got])
    assert ids[0] == ids[1]
    assert ids[0][0] != ids[0][1]
