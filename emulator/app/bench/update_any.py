"""Upstream scheduler_perf's ``createAny`` (``create_objects``) and ``updateAny`` ops
(``test/integration/scheduler_perf/update.go``), played against the API server: for each index
k < count, the template rendered with ``{{.Index}}`` = k replaces the stored object of that
name (kind, namespace) — an update without a resourceVersion, as upstream's client sends it, so pods and nodes take it
unconditionally — and then its status, as upstream calls ``Update`` then ``UpdateStatus`` with
the same object; with ``subresources: [status]`` the first call also goes to the status, with
``[resize]`` to the pod's ``resize`` subresource (in-place resize: only the containers'
resources change, then the kubelet allocates them).

The object is defaulted as upstream's API server defaults and admits a decoded request body
(a Node's allocatable from its capacity; a Pod's spec defaults, default tolerations and kept
priority: ``defaults.default_pod_update``). ``updatePerSecond`` paces the updates as upstream's ticker
does: the first one after one period; 0 updates them all at once. A failed update is the
workload's error, as upstream fails the test. It does not choose what to update (``resolve.py``)
or run the workload (``harness.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from emulator.app.bench.resolve import render_any
from emulator.app.bench.steps import AnyStep, UpdateStep
from emulator.base.api.codec import ManifestError
from emulator.base.api.core import Node, Pod
from emulator.base.api.dracel import cel_features
from emulator.base.api.errors import ApiError
from emulator.base.apiserver.defaults import default_node, default_pod_update
from emulator.base.apiserver.server import ApiServer
from emulator.base.runtime.clock import LoopClock

__all__ = ["create_objects", "update_objects"]


def create_objects(
    server: ApiServer, step: AnyStep, name_of: Callable[[str, Any], str], ensure_namespace: Callable[[str], None]
) -> str:
    """Upstream's ``createAny``: ``count`` objects rendered from the template (a name from
    ``name_of(namespace, obj)`` unless the object has one); "" or the first create's error
    (upstream's createAny fails the workload: ``tCtx.Fatalf``)."""
    consumable = server.feature_gates().get("DRAConsumableCapacity", False)  # the server's CEL
    for k in range(step.count):
        try:
            with cel_features(consumable_capacity=consumable):
                obj = render_any(step.text, k, count=step.count, params=step.params)
        except ManifestError as err:  # invalid: the API server's refusal (upstream files)
            return f"{err.path}: {err.detail}" if err.path else err.detail
        if step.namespace:
            ensure_namespace(step.namespace)
        meta = obj.metadata
        name = meta.name or name_of(step.namespace, obj)
        try:
            server.create(replace(obj, metadata=replace(meta, name=name, namespace=step.namespace)))
        except ApiError as err:
            return str(err)
    return ""


def update_one(server: ApiServer, obj: Any, namespace: str, *, status_only: bool, resize: bool = False) -> None:
    """Upstream's ``updateAny.update`` for one rendered object."""
    obj = replace(obj, metadata=replace(obj.metadata, namespace=namespace))
    if isinstance(obj, Node):
        obj = default_node(obj)
    elif isinstance(obj, Pod):
        obj = default_pod_update(obj, server.get("Pod", obj.metadata.name, namespace))
    if resize and isinstance(obj, Pod):
        server.update_resize(obj)
    elif status_only:
        server.update_status(obj)
    else:
        server.update(obj)
    if hasattr(obj, "status"):
        server.update_status(obj)


async def update_objects(server: ApiServer, clock: LoopClock, step: UpdateStep, out_of_time: Any) -> str:
    """Play ``step``; "" or why the workload fails (upstream's ``Failed to update object``)."""
    period = 1 / step.per_second if step.per_second else 0.0
    for k in range(step.count):
        if period:
            await clock.sleep(period)
        elif k and k % 100 == 0:
            await asyncio.sleep(0)
        if out_of_time():
            return ""
        obj = render_any(step.text, k, count=step.count, validated=not step.resize)
        try:
            update_one(server, obj, step.namespace, status_only=step.status_only, resize=step.resize)
        except ApiError as err:
            name = f"{step.namespace}/{obj.metadata.name}" if step.namespace else obj.metadata.name
            return f"failed to update {obj.kind} {name}: {err}"
    return ""
