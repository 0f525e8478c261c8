"""The structured allocator's cost per claim, at 5,000 nodes x 8 devices (issue 26).

``python bench/dra_allocator.py [--nodes N] [--devices D] [--pods P] [--cel dracel|none]``
builds N ResourceSlices (one per node, D devices each, attributes and a memory capacity as
the simulated driver publishes them), one DeviceClass selecting the driver, and P pods' worth
of one-claim-one-device requests with a request selector on the model. For each pod it does
what DynamicResources does: build an ``Allocator`` (PreFilter) over the devices in use, then
``allocate`` on every node (Filter on a full pass), then counts the first node's devices as
in use (Reserve). Printed: the median µs per ``allocate`` call (one claim, one node), the
median ms per pod for the whole pass, and the slice index build. ``--cel none`` replaces
CEL by a Python predicate, to separate the search from selector evaluation. Nothing here is
imported by the emulator.
"""

from __future__ import annotations

import argparse
import statistics
import time
from types import SimpleNamespace as NS
from typing import Any

from agents.scheduler.plugins.dynamicresources import Allocator, DeviceID, Features, SliceIndex
from emulator.base.api.core import Node
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.resource import (
    CELDeviceSelector,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClass,
    DeviceClassSpec,
    DeviceRequest,
    DeviceSelector,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)

DRIVER = "gpu.example.com"


def build(nodes: int, devices: int) -> tuple[list[Node], list[ResourceSlice], DeviceClass]:
    node_objs = [Node(metadata=ObjectMeta(name=f"node-{i}")) for i in range(nodes)]
    slices = [
        ResourceSlice(
            metadata=ObjectMeta(name=f"node-{i}-{DRIVER}"),
            spec=ResourceSliceSpec(
                driver=DRIVER,
                pool=ResourcePool(name=f"node-{i}", generation=1, resource_slice_count=1),
                node_name=f"node-{i}",
                devices=[
                    Device(
                        name=f"gpu-{d}",
                        attributes={
                            "model": DeviceAttribute(string_value="A100"),
                            "memoryGiB": DeviceAttribute(int_value=80),
                        },
                        capacity={"memory": DeviceCapacity(value=parse_quantity("80Gi"))},
                    )
                    for d in range(devices)
                ],
            ),
        )
        for i in range(nodes)
    ]
    klass = DeviceClass(
        metadata=ObjectMeta(name="gpu"),
        spec=DeviceClassSpec(
            selectors=[DeviceSelector(cel=CELDeviceSelector(expression=f'device.driver == "{DRIVER}"'))]
        ),
    )
    return node_objs, slices, klass


def claim(i: int) -> ResourceClaim:
    sel = DeviceSelector(cel=CELDeviceSelector(expression=f'device.attributes["{DRIVER}"].model == "A100"'))
    return ResourceClaim(
        metadata=ObjectMeta(name=f"claim-{i}", namespace="default", uid=f"uid-{i}"),
        spec=ResourceClaimSpec(
            devices=DeviceClaim(
                requests=[
                    DeviceRequest(
                        name="gpu",
                        exactly=ExactDeviceRequest(
                            device_class_name="gpu", allocation_mode="ExactCount", count=1, selectors=[sel]
                        ),
                    )
                ]
            )
        ),
    )


class PyCel:
    """Python predicates for the two expressions used here (``--cel none``)."""

    def compile(self, expression: str) -> Any:
        if expression.startswith("device.driver"):
            return NS(matches=lambda v: v.driver == DRIVER)
        return NS(matches=lambda v: v.model == "A100")

    def view(self, driver: str, device: Any) -> Any:
        return NS(driver=driver, model=device.attributes["model"].string_value)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--pods", type=int, default=20)
    ap.add_argument("--cel", choices=("dracel", "none"), default="dracel")
    args = ap.parse_args()
    if args.cel == "dracel":
        from agents.scheduler.plugins.dynamicresources.cel_backend import DraCel

        cel: Any = DraCel()
    else:
        cel = PyCel()
    nodes, slices, klass = build(args.nodes, args.devices)
    t0 = time.perf_counter()
    index = SliceIndex(slices)
    index_ms = (time.perf_counter() - t0) * 1e3
    in_use: dict[DeviceID, int] = {}
    views: dict[int, Any] = {}  # as the scheduler's DraManager: kept while the slices stay
    per_call: list[float] = []
    per_pod: list[float] = []
    for p in range(args.pods):
        c = claim(p)
        t_pod = time.perf_counter()
        alloc = Allocator(Features(), in_use, {"gpu": klass}.get, index, cel, views)
        first = None
        for node in nodes:
            t = time.perf_counter()
            got = alloc.allocate(node, [c])
            per_call.append(time.perf_counter() - t)
            if got is not None and first is None:
                first = got
        per_pod.append(time.perf_counter() - t_pod)
        assert first is not None
        for d in first[0].devices:
            in_use[d.id] = 1
    print(
        f"nodes={args.nodes} devices/node={args.devices} pods={args.pods} cel={args.cel}: "
        f"allocate (1 claim, 1 node) median {statistics.median(per_call) * 1e6:.1f} µs, "
        f"p90 {statistics.quantiles(per_call, n=10)[-1] * 1e6:.1f} µs; "
        f"full pass over every node median {statistics.median(per_pod) * 1e3:.0f} ms per pod; "
        f"slice index {index_ms:.0f} ms"
    )


if __name__ == "__main__":
    main()
