"""The API server's narrowed validation equals full validation of the written object:
``update_status`` (status-only) and ``update`` (metadata from the stored object).

``validate_status_update`` skips Pods (their validation reads no status field); the
reference is ``validate`` on the whole candidate. Random stored objects (created through the
server, so valid), random statuses (malformed and negative quantities included), and the
write's outcome compared with a server whose ``update_status`` validates in full.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from emulator.base.api.codec import convert
from emulator.base.api.core import Namespace, Node, NodeStatus, Pod, PodStatus
from emulator.base.api.errors import ApiError, Invalid
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.scheduling import Lease
from emulator.base.api.validation import validate, validate_status_update, validate_update
from emulator.base.apiserver import ApiServer
from emulator.base.apiserver.registry import strategy as strategy_module
from emulator.base.runtime.clock import StoppedClock

QUANTITIES = st.sampled_from(["1", "100m", "2Gi", "0", "-1", "-100m", "abc", "1.5", "3e2", "110", ""])
WORDS = st.sampled_from(["", "Running", "Pending", "Succeeded", "Failed", "Bogus", "node-1", "10.0.0.1"])
RESOURCES = st.sampled_from(["cpu", "memory", "pods", "ephemeral-storage", "example.com/gpu"])


@st.composite
def pods(draw: st.DrawFn) -> dict[str, Any]:
    containers = []
    for i in range(draw(st.integers(1, 3))):
        requests = draw(st.dictionaries(RESOURCES, QUANTITIES, max_size=2))
        limits = draw(st.dictionaries(RESOURCES, QUANTITIES, max_size=2))
        containers.append(
            {"name": f"c{i}", "image": draw(st.sampled_from(["nginx", "busybox"])),
             "resources": {"requests": requests, "limits": limits}}
        )  # fmt: skip
    spec: dict[str, Any] = {"containers": containers}
    if draw(st.booleans()):
        spec["nodeName"] = "node-1"
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": spec}


@st.composite
def pod_statuses(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "phase": draw(WORDS),
        "reason": draw(WORDS),
        "hostIP": draw(WORDS),
        "podIP": draw(WORDS),
        "nominatedNodeName": draw(WORDS),
        "qosClass": draw(WORDS),
        "conditions": [{"type": draw(WORDS), "status": draw(WORDS)} for _ in range(draw(st.integers(0, 2)))],
        "containerStatuses": [
            {
                "name": draw(WORDS),
                "image": draw(WORDS),
                "ready": draw(st.booleans()),
                "restartCount": draw(st.integers(-1, 3)),
            }
            for _ in range(draw(st.integers(0, 2)))
        ],
    }


@st.composite
def node_statuses(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "capacity": draw(st.dictionaries(RESOURCES, QUANTITIES, max_size=3)),
        "allocatable": draw(st.dictionaries(RESOURCES, QUANTITIES, max_size=3)),
        "conditions": [{"type": draw(WORDS), "status": draw(WORDS)} for _ in range(draw(st.integers(0, 2)))],
    }


def outcome(fn: Any, *args: Any) -> str | None:
    try:
        fn(*args)
    except ApiError as err:
        return f"{type(err).__name__}: {err}"
    return None


def new_server() -> ApiServer:
    srv = ApiServer(StoppedClock(), random.Random(0))
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    return srv


def stored(srv: ApiServer, obj: Any) -> Any | None:
    try:
        return srv.create(obj)
    except Invalid:
        return None


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pod=pods(), status=pod_statuses())
def test_pod_status_validation_equals_full_validation(pod: dict[str, Any], status: dict[str, Any]) -> None:
    srv = new_server()
    current = stored(srv, convert(pod, Pod))
    if current is None:
        return  # not a valid pod: nothing stored, no status write possible
    candidate = replace(current, status=convert(status, PodStatus))
    assert outcome(validate_status_update, candidate) == outcome(validate, candidate)
    _same_write(srv, current, candidate)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(status=node_statuses(), initial=node_statuses())
def test_node_status_validation_equals_full_validation(status: dict[str, Any], initial: dict[str, Any]) -> None:
    srv = new_server()
    current = stored(srv, convert({"metadata": {"name": "node-1"}, "status": initial}, Node))
    if current is None:
        return
    candidate = replace(current, status=convert(status, NodeStatus))
    assert outcome(validate_status_update, candidate) == outcome(validate, candidate)
    _same_write(srv, current, candidate)


def _same_write(srv: ApiServer, current: Any, candidate: Any) -> None:
    """The server's write equals the reference write (full ``validate``, whole-object no-op test)."""
    ref_error = outcome(validate, candidate)
    rev = srv.revision
    got = outcome(srv.update_status, candidate)
    assert got == ref_error
    if ref_error is not None:
        assert srv.revision == rev
    elif candidate == current:
        assert srv.revision == rev  # a no-op: no new revision
    else:
        assert srv.revision == rev + 1
        written = srv.get(current.kind, current.metadata.name, current.metadata.namespace)
        assert replace(written, metadata=current.metadata) == candidate


def test_the_skip_covers_pods_only() -> None:
    node = Node(metadata=ObjectMeta(name="n"), status=NodeStatus(capacity={}))
    bad = convert({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "-1"}}}, Node)
    assert outcome(validate_status_update, node) is None
    assert outcome(validate_status_update, bad) == outcome(validate, bad) is not None
    assert strategy_module.validate_status_update is validate_status_update


@st.composite
def leases(draw: st.DrawFn) -> dict[str, Any]:
    spec = {
        "holderIdentity": draw(WORDS),
        "leaseDurationSeconds": draw(st.integers(-5, 60)),
        "renewTime": draw(st.sampled_from([None, "2026-01-01T00:00:10Z", "garbage"])),
    }
    return {"metadata": {"name": "node-1", "namespace": "kube-node-lease"}, "spec": spec}


@st.composite
def metadata_changes(draw: st.DrawFn) -> dict[str, Any]:
    keys = st.sampled_from(["app", "a/b", "Bad Key!", ""])
    return {
        "labels": draw(st.dictionaries(keys, WORDS, max_size=2)),
        "annotations": draw(st.dictionaries(keys, WORDS, max_size=2)),
        "finalizers": draw(st.lists(WORDS, max_size=2)),
    }


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(initial=leases(), new=leases(), meta=metadata_changes())
def test_lease_update_validation_equals_full_validation(
    initial: dict[str, Any], new: dict[str, Any], meta: dict[str, Any]
) -> None:
    srv = new_server()
    srv.create(Namespace(metadata=ObjectMeta(name="kube-node-lease")))
    current = stored(srv, convert(initial, Lease))
    if current is None:
        return
    obj = convert(new, Lease)
    obj = replace(obj, metadata=replace(current.metadata, **meta))
    candidate = replace(obj, metadata=replace(current.metadata, **meta))
    assert outcome(validate_update, candidate) == outcome(validate, candidate)
    rev = srv.revision
    assert outcome(srv.update, obj) == outcome(validate, candidate)
    assert srv.revision in (rev, rev + 1)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pod=pods(), meta=metadata_changes(), image=st.sampled_from(["nginx", "busybox", ""]))
def test_pod_update_validation_is_full_validation(pod: dict[str, Any], meta: dict[str, Any], image: str) -> None:
    srv = new_server()
    current = stored(srv, convert(pod, Pod))
    if current is None:
        return
    containers = [replace(c, image=image) for c in current.spec.containers]
    candidate = replace(
        current, metadata=replace(current.metadata, **meta), spec=replace(current.spec, containers=containers)
    )
    assert outcome(validate_update, candidate) == outcome(validate, candidate)
