"""The API server's verbs, errors, defaulting and revision, without an event loop.

Every rejected write is checked by ``rejected()``: the error and its message, and then that
nothing changed (revision, write count, every kind's list, no watch event, no listener call).
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from msgspec.structs import replace

from emulator.base.api.codec import KINDS, convert
from emulator.base.api.core import (
    Binding,
    Namespace,
    NamespaceStatus,
    Node,
    NodeSpec,
    Pod,
    PodCondition,
    PodSchedulingGate,
    Toleration,
)
from emulator.base.api.errors import AlreadyExists, ApiError, Conflict, Invalid, NotFound
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.scheduling import PriorityClass
from emulator.base.apiserver import CLUSTER_SCOPED, ApiServer, ServerSettings, WriteRecord
from emulator.base.apiserver.defaults import DEFAULT_SCHEDULER, qos_class
from emulator.base.runtime.clock import format_timestamp
from tests.clocks import ManualClock
from tests.references import new_uid

ALL_KINDS = sorted(k for _, k in KINDS)
NOT_READY = Toleration(
    key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute", toleration_seconds=300
)
UNREACHABLE = Toleration(
    key="node.kubernetes.io/unreachable", operator="Exists", effect="NoExecute", toleration_seconds=300
)
STALE = (
    "the object has been modified; please apply your changes to the latest version and try again"  # upstream wording
)


def ts(seconds: float) -> str:
    return format_timestamp(seconds)


def make_pod(name: str, *, namespace: str = "", containers: list[dict[str, Any]] | None = None, **spec: Any) -> Pod:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    body = {"containers": [{"name": "c", "image": "nginx"}] if containers is None else containers, **spec}
    return convert({"metadata": meta, "spec": body}, Pod)


def make_node(name: str = "node-1", **status: Any) -> Node:
    return convert({"metadata": {"name": name}, "status": status or {"capacity": {"cpu": "4"}}}, Node)


def binding(name: str, node: str, *, namespace: str = "default", uid: str = "") -> Binding:
    return Binding(
        metadata=ObjectMeta(name=name, namespace=namespace, uid=uid), target=ObjectReference(kind="Node", name=node)
    )


def new_server(seed: int = 0, clock: ManualClock | None = None, **settings: Any) -> ApiServer:
    srv = ApiServer(clock or ManualClock(), random.Random(seed), ServerSettings(**settings))
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    return srv


def with_rv(obj: Any, rv: str) -> Any:
    return replace(obj, metadata=replace(obj.metadata, resource_version=rv))


def snapshot(srv: ApiServer) -> tuple[int, int, dict[str, tuple[list[Any], int]]]:
    return srv.revision, srv.writes, {k: srv.list(k) for k in ALL_KINDS}


@contextmanager
def nothing_changes(srv: ApiServer) -> Iterator[None]:
    before = snapshot(srv)
    records: list[WriteRecord] = []
    srv.add_write_listener(records.append)
    watchers = [srv.watch(k, name=f"probe-{k}") for k in ALL_KINDS]
    try:
        yield
    finally:
        for w in watchers:
            srv.stop_watch(w)
    assert snapshot(srv) == before
    assert records == []
    assert [len(w.channel) for w in watchers] == [0] * len(watchers)


def rejected(srv: ApiServer, exc: type[ApiError], match: str, fn: Callable[[], Any]) -> ApiError:
    with nothing_changes(srv), pytest.raises(exc, match=match) as err:
        fn()
    return err.value


# --- the world most tests start from ----------------------------------------------------------


@dataclass
class World:
    srv: ApiServer
    clock: ManualClock
    node: Node
    free: Pod
    bound: Pod
    dying: Pod


@pytest.fixture
def world() -> World:
    clock = ManualClock()
    srv = new_server(clock=clock)
    srv.create(convert({"metadata": {"name": "base"}, "value": 10, "globalDefault": True}, PriorityClass))
    srv.create(convert({"metadata": {"name": "high"}, "value": 1000}, PriorityClass))
    node = srv.create(make_node())
    free = srv.create(make_pod("free"))
    srv.create(make_pod("bound"))
    bound = srv.bind(binding("bound", "node-1"))
    srv.create(make_pod("dying"))
    srv.bind(binding("dying", "node-1"))
    dying = srv.delete("Pod", "dying")
    assert dying.metadata.deletion_timestamp is not None
    return World(srv, clock, node, free, bound, dying)


# --- every rejected write, with its message, changes nothing ------------------------------------

Op = Callable[[World], Any]
REJECTED: list[Any] = [
    pytest.param(
        lambda w: w.srv.create(make_pod("free")), AlreadyExists, r'^pods "free" already exists$', id="create-exists"
    ),
    pytest.param(
        lambda w: w.srv.create(make_node()), AlreadyExists, r'^nodes "node-1" already exists$', id="create-node-exists"
    ),
    pytest.param(
        lambda w: w.srv.create(Namespace(metadata=ObjectMeta(name="default"))),
        AlreadyExists,
        r'^namespaces "default" already exists$',
        id="create-namespace-exists",
    ),
    pytest.param(
        lambda w: w.srv.create(make_pod("x", namespace="nope")),
        NotFound,
        r'^namespaces "nope" not found$',
        id="create-missing-namespace",
    ),
    pytest.param(
        lambda w: w.srv.create(make_pod("x", containers=[])),
        Invalid,
        r'^Pod "x" is invalid: spec\.containers: Required value$',
        id="create-invalid",
    ),
    pytest.param(
        lambda w: w.srv.create(binding("free", "node-1")),
        Invalid,
        r"^Binding is invalid: kind: Invalid value: use bind\(\) for bindings$",
        id="create-binding",
    ),
    pytest.param(
        lambda w: w.srv.create(make_pod("x", priorityClassName="missing")),
        Invalid,
        r'^Pod "x" is invalid: spec\.priorityClassName: Invalid value: "missing": '
        r"no PriorityClass with name missing was found$",
        id="create-unknown-priority-class",
    ),
    pytest.param(
        lambda w: w.srv.create(make_pod("x", priority=5)),
        Invalid,
        r'^Pod "x" is invalid: spec\.priority: Invalid value: 5: the integer value of priority \(5\) must not be '
        r"provided in pod spec; priority admission controller computed 10 from the given PriorityClass name$",
        id="create-priority-mismatch",
    ),
    pytest.param(
        lambda w: w.srv.create(convert({"metadata": {"name": "d2"}, "value": 1, "globalDefault": True}, PriorityClass)),
        Invalid,
        r'^PriorityClass "d2" is invalid: globalDefault: Forbidden: PriorityClass base is already marked as default$',
        id="create-second-global-default",
    ),
    pytest.param(
        lambda w: w.srv.create(
            make_pod("x", containers=[{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1.2.3"}}}])
        ),
        Invalid,
        r'^Pod "x" is invalid: spec\.containers\[0\]\.resources\.requests\.cpu: Invalid value: "1\.2\.3": ',
        id="create-malformed-quantity",
    ),
    pytest.param(
        lambda w: w.srv.update(with_rv(w.free, "1")),
        Conflict,
        rf'^Operation cannot be fulfilled on pods "free": {STALE}$',
        id="update-stale",
    ),
    pytest.param(
        lambda w: w.srv.update(with_rv(w.node, "1")),
        Conflict,
        rf'^Operation cannot be fulfilled on nodes "node-1": {STALE}$',
        id="update-node-stale",
    ),
    pytest.param(lambda w: w.srv.update(make_pod("ghost")), NotFound, r'^pods "ghost" not found$', id="update-missing"),
    pytest.param(
        lambda w: w.srv.update(replace(w.free, metadata=replace(w.free.metadata, uid="other"))),
        Conflict,
        r"^Precondition failed: UID in precondition: other, UID in object meta: ",
        id="update-uid-mismatch",
    ),
    pytest.param(
        lambda w: w.srv.update(replace(w.free, spec=replace(w.free.spec, node_name="node-1"))),
        Invalid,
        r'^Pod "free" is invalid: spec: Forbidden: pod updates may not change fields other than ',
        id="update-pod-node-name",
    ),
    pytest.param(
        lambda w: w.srv.update(replace(w.free, spec=replace(w.free.spec, node_selector={"a": "b"}))),
        Invalid,
        r'^Pod "free" is invalid: spec: Forbidden: pod updates may not change fields other than ',
        id="update-pod-node-selector",
    ),
    pytest.param(
        lambda w: w.srv.update(
            replace(w.free, spec=replace(w.free.spec, containers=[*w.free.spec.containers, w.free.spec.containers[0]]))
        ),
        Invalid,
        r'^Pod "free" is invalid: spec: Forbidden',
        id="update-pod-add-container",
    ),
    pytest.param(
        lambda w: w.srv.update(
            replace(w.free, spec=replace(w.free.spec, scheduling_gates=[PodSchedulingGate(name="g")]))
        ),
        Invalid,
        r'^Pod "free" is invalid: spec\.schedulingGates: Forbidden: only deletion is allowed, but found new '
        r"scheduling gate$",
        id="update-pod-add-gate",
    ),
    pytest.param(
        lambda w: w.srv.update(replace(w.free, spec=replace(w.free.spec, tolerations=[]))),
        Invalid,
        r'^Pod "free" is invalid: spec\.tolerations: Forbidden: existing toleration can not be modified',
        id="update-pod-remove-toleration",
    ),
    pytest.param(
        lambda w: w.srv.update(replace(w.node, spec=convert({"taints": [{"key": "k", "effect": "Bad"}]}, NodeSpec))),
        Invalid,
        r'^Node "node-1" is invalid: spec\.taints\[0\]\.effect: Unsupported value: "Bad"$',
        id="update-node-invalid",
    ),
    pytest.param(
        lambda w: w.srv.update_status(with_rv(w.free, "1")),
        Conflict,
        rf'^Operation cannot be fulfilled on pods "free": {STALE}$',
        id="update-status-stale",
    ),
    pytest.param(
        lambda w: w.srv.update_status(make_pod("ghost")),
        NotFound,
        r'^pods "ghost" not found$',
        id="update-status-missing",
    ),
    pytest.param(
        lambda w: w.srv.update_status(
            replace(w.node, status=replace(w.node.status, allocatable={"cpu": parse_quantity("-1")}))
        ),
        Invalid,
        r'^Node "node-1" is invalid: status\.allocatable\.cpu: Invalid value: "-1": '
        r"must be greater than or equal to 0$",
        id="update-status-invalid",
    ),
    pytest.param(
        lambda w: w.srv.update_status(w.srv.get("PriorityClass", "high")),
        NotFound,
        r"^the server could not find the requested resource",
        id="update-status-no-status",
    ),
    pytest.param(lambda w: w.srv.delete("Pod", "ghost"), NotFound, r'^pods "ghost" not found$', id="delete-missing"),
    pytest.param(
        lambda w: w.srv.delete("Pod", "free", "other"), NotFound, r'^pods "free" not found$', id="delete-wrong-ns"
    ),
    pytest.param(
        lambda w: w.srv.delete("Pod", "free", uid="other"),
        Conflict,
        r"^Precondition failed: UID in precondition: other, UID in object meta: ",
        id="delete-uid-mismatch",
    ),
    pytest.param(
        lambda w: w.srv.delete("Node", "node-9"), NotFound, r'^nodes "node-9" not found$', id="delete-node-missing"
    ),
    pytest.param(
        lambda w: w.srv.bind(binding("bound", "node-2")),
        Conflict,
        r'^Operation cannot be fulfilled on pods/binding "bound": pod bound is already assigned to node "node-1"$',
        id="bind-already-bound",
    ),
    pytest.param(
        lambda w: w.srv.bind(binding("bound", "node-1")),
        Conflict,
        r"already assigned to node",
        id="bind-already-bound-same-node",
    ),
    pytest.param(
        lambda w: w.srv.bind(binding("ghost", "node-1")), NotFound, r'^pods "ghost" not found$', id="bind-gone"
    ),
    pytest.param(
        lambda w: w.srv.bind(binding("free", "node-1", namespace="other")),
        NotFound,
        r'^pods "free" not found$',
        id="bind-wrong-namespace",
    ),
    pytest.param(
        lambda w: w.srv.bind(binding("dying", "node-2")),
        Conflict,
        r'^Operation cannot be fulfilled on pods/binding "dying": pod dying is being deleted, cannot be assigned '
        r"to a host$",
        id="bind-terminating",
    ),
    pytest.param(
        lambda w: w.srv.bind(binding("free", "")),
        Invalid,
        r'^Binding "free" is invalid: target\.name: Required value$',
        id="bind-no-target",
    ),
    pytest.param(
        lambda w: w.srv.bind(binding("free", "node-1", uid="other")),
        Conflict,
        r"^Precondition failed: UID in precondition: other, UID in object meta: ",
        id="bind-uid-mismatch",
    ),
]


@pytest.mark.parametrize(("op", "exc", "match"), REJECTED)
def test_rejected_write_changes_nothing(world: World, op: Op, exc: type[ApiError], match: str) -> None:
    err = rejected(world.srv, exc, match, lambda: op(world))
    assert type(err) is exc


@pytest.mark.parametrize(
    ("exc", "code", "reason"),
    [
        pytest.param(NotFound, 404, "NotFound", id="not-found"),
        pytest.param(AlreadyExists, 409, "AlreadyExists", id="already-exists"),
        pytest.param(Conflict, 409, "Conflict", id="conflict"),
        pytest.param(Invalid, 422, "Invalid", id="invalid"),
    ],
)
def test_error_codes(exc: type[ApiError], code: int, reason: str) -> None:
    assert (exc.code, exc.reason) == (code, reason)
    assert issubclass(exc, ApiError)


def test_get_missing(world: World) -> None:
    with pytest.raises(NotFound, match=r'^pods "ghost" not found$'):
        world.srv.get("Pod", "ghost")
    with pytest.raises(NotFound, match=r'^pods "free" not found$'):
        world.srv.get("Pod", "free", "other")
    with pytest.raises(NotFound, match=r'^the server could not find the requested resource \(kind "Widget"\)$'):
        world.srv.get("Widget", "x")
    with pytest.raises(NotFound, match=r"could not find the requested resource"):
        world.srv.list("Widget")


# --- revision -----------------------------------------------------------------------------------


def cordon(node: Node) -> Node:
    return replace(node, spec=replace(node.spec, unschedulable=True))


def running(pod: Pod) -> Pod:
    return replace(pod, status=replace(pod.status, phase="Running"))


def test_each_successful_write_increments_the_one_revision(world: World) -> None:
    srv = world.srv
    records: list[WriteRecord] = []
    srv.add_write_listener(records.append)
    start = srv.revision
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("create", lambda: srv.create(make_pod("a"))),
        ("create", lambda: srv.create(make_node("node-2"))),
        ("update", lambda: srv.update(cordon(srv.get("Node", "node-2")))),
        ("updateStatus", lambda: srv.update_status(running(srv.get("Pod", "a")))),
        ("bind", lambda: srv.bind(binding("a", "node-2"))),
        ("delete", lambda: srv.delete("Pod", "a")),  # graceful: marked
        ("delete", lambda: srv.delete("Pod", "a", grace_period_seconds=0)),  # removed
        ("delete", lambda: srv.delete("Node", "node-2")),
    ]
    for i, (verb, step) in enumerate(steps, start=1):
        out = step()
        assert srv.revision == start + i
        assert records[-1].revision == start + i
        assert records[-1].verb == verb
        if records[-1].new is not None:
            assert out.metadata.resource_version == str(start + i)
    assert srv.writes == start + len(steps)
    assert [r.kind for r in records] == ["Pod", "Node", "Node", "Pod", "Pod", "Pod", "Pod", "Node"]
    assert records[-2].new is None
    assert records[-2].obj is records[-2].old


def test_list_returns_the_revision_it_reflects(world: World) -> None:
    srv = world.srv
    items, rev = srv.list("Pod")
    assert rev == srv.revision
    assert max(int(p.metadata.resource_version) for p in items) <= rev
    srv.create(make_node("node-2"))
    assert srv.list("Pod") == (items, rev + 1)


def test_resource_version_is_stamped_per_object(world: World) -> None:
    srv = world.srv
    a = srv.create(make_pod("a"))
    b = srv.create(make_pod("b"))
    assert int(b.metadata.resource_version) == int(a.metadata.resource_version) + 1
    assert srv.get("Pod", "a") == a
    a2 = srv.update(replace(a, metadata=replace(a.metadata, labels={"x": "y"})))
    assert a2.metadata.resource_version == str(srv.revision)
    assert srv.get("Pod", "b").metadata.resource_version == b.metadata.resource_version


def test_write_record_carries_time_and_objects(world: World) -> None:
    srv = world.srv
    records: list[WriteRecord] = []
    srv.add_write_listener(records.append)
    world.clock.t = 12.5
    created = srv.create(make_pod("a"))
    (rec,) = records
    assert (rec.verb, rec.kind, rec.time, rec.old, rec.new) == ("create", "Pod", 12.5, None, created)
    assert rec.obj is created


# --- create and defaulting ----------------------------------------------------------------------


def test_uid_and_names_are_seeded() -> None:
    def run(seed: int) -> list[tuple[str, str]]:
        srv = new_server(seed)
        a = srv.create(make_pod("a"))
        g = srv.create(
            convert({"metadata": {"generateName": "web-"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}, Pod)
        )
        return [(a.metadata.name, a.metadata.uid), (g.metadata.name, g.metadata.uid)]

    first = run(0)
    assert run(0) == first
    assert run(1) != first
    assert all(uuid.UUID(u).version == 4 for _, u in first)
    assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{5}", first[1][0])


def test_uid_comes_from_the_server_rng() -> None:
    rng = random.Random(7)
    expected_ns, expected_pod = new_uid(rng), new_uid(rng)
    srv = new_server(7)
    assert srv.get("Namespace", "default").metadata.uid == expected_ns
    assert srv.create(make_pod("a")).metadata.uid == expected_pod


def test_create_stamps_metadata_from_the_clock() -> None:
    clock = ManualClock(3600 + 7.9)
    srv = new_server(clock=clock)
    given = make_pod("a")
    given = replace(
        given,
        metadata=replace(given.metadata, uid="mine", deletion_timestamp=ts(5), generation=7),
    )
    pod = srv.create(given)
    meta = pod.metadata
    assert meta.creation_timestamp == "2026-01-01T01:00:07Z"
    assert meta.uid != "mine"
    assert meta.resource_version == str(srv.revision)
    assert meta.deletion_timestamp is None
    assert meta.generation == 1
    with pytest.raises(Invalid, match=r"metadata\.resourceVersion: Forbidden: resourceVersion should not be set"):
        srv.create(replace(make_pod("b"), metadata=replace(make_pod("b").metadata, resource_version="99")))
    assert meta.namespace == "default"


def test_cluster_scoped_objects_drop_the_namespace() -> None:
    srv = new_server()
    node = srv.create(replace(make_node(), metadata=ObjectMeta(name="n", namespace="team")))
    assert node.metadata.namespace == ""
    assert srv.get("Node", "n", "anything") == node
    assert sorted(CLUSTER_SCOPED) == [
        "CSIDriver",
        "CSINode",
        "DeviceClass",
        "Namespace",
        "Node",
        "NodeClaim",
        "NodePool",
        "PersistentVolume",
        "PriorityClass",
        "ResourceSlice",
        "StorageClass",
        "VolumeAttachment",
    ]


def test_a_created_namespace_is_active() -> None:
    """Upstream's namespace PrepareForCreate: ``status.phase: Active``, whatever was sent
    (kubectl get ns printed an empty STATUS)."""
    srv = new_server()
    sent = Namespace(metadata=ObjectMeta(name="team"), status=NamespaceStatus(phase="Terminating"))
    assert srv.create(sent).status.phase == "Active"


def test_pod_defaults() -> None:
    pod = new_server().create(make_pod("a"))
    spec = pod.spec
    assert spec.scheduler_name == DEFAULT_SCHEDULER == "default-scheduler"
    assert (spec.priority, spec.priority_class_name, spec.preemption_policy) == (0, "", "PreemptLowerPriority")
    assert (spec.restart_policy, spec.termination_grace_period_seconds) == ("Always", 30)
    assert spec.tolerations == [NOT_READY, UNREACHABLE]
    assert (pod.status.phase, pod.status.qos_class) == ("Pending", "BestEffort")


def test_explicit_values_are_kept() -> None:
    pod = new_server().create(
        make_pod(
            "a",
            schedulerName="my-scheduler",
            restartPolicy="Never",
            terminationGracePeriodSeconds=5,
            preemptionPolicy="Never",
            tolerations=[{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}],
        )
    )
    spec = pod.spec
    assert (spec.scheduler_name, spec.restart_policy, spec.termination_grace_period_seconds) == (
        "my-scheduler",
        "Never",
        5,
    )
    assert spec.preemption_policy == "Never"
    # The pod's own not-ready toleration (forever) is kept; only unreachable is added.
    assert spec.tolerations == [
        Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute"),
        UNREACHABLE,
    ]


@pytest.mark.parametrize(
    ("classes", "spec", "expected"),
    [
        pytest.param([], {}, (0, "", "PreemptLowerPriority"), id="no-classes"),
        pytest.param(
            [{"name": "high", "value": 1000, "preemptionPolicy": "Never"}],
            {"priorityClassName": "high"},
            (1000, "high", "Never"),
            id="named-class",
        ),
        pytest.param(
            [{"name": "base", "value": 10, "globalDefault": True}, {"name": "high", "value": 1000}],
            {},
            (10, "base", "PreemptLowerPriority"),
            id="global-default",
        ),
        pytest.param(
            [{"name": "base", "value": 10, "globalDefault": True}, {"name": "high", "value": 1000}],
            {"priorityClassName": "high"},
            (1000, "high", "PreemptLowerPriority"),
            id="named-beats-global-default",
        ),
        pytest.param(
            [{"name": "high", "value": 1000}],
            {"priorityClassName": "high", "priority": 1000},
            (1000, "high", "PreemptLowerPriority"),
            id="matching-priority-accepted",
        ),
        pytest.param(
            [{"name": "neg", "value": -5}],
            {"priorityClassName": "neg"},
            (-5, "neg", "PreemptLowerPriority"),
            id="negative-value",
        ),
    ],
)
def test_priority_admission(
    classes: list[dict[str, Any]], spec: dict[str, Any], expected: tuple[int, str, str]
) -> None:
    srv = new_server()
    for c in classes:
        body = {k: v for k, v in c.items() if k != "name"}
        srv.create(convert({"metadata": {"name": c["name"]}, **body}, PriorityClass))
    pod = srv.create(make_pod("a", **spec))
    assert (pod.spec.priority, pod.spec.priority_class_name, pod.spec.preemption_policy) == expected


def test_priority_mismatch_without_classes_is_rejected() -> None:
    srv = new_server()
    err = rejected(
        srv, Invalid, r"computed 0 from the given PriorityClass name$", lambda: srv.create(make_pod("a", priority=7))
    )
    assert isinstance(err, Invalid)
    assert err.field == "spec.priority"


def test_unknown_priority_class_names_the_field() -> None:
    srv = new_server()
    err = rejected(srv, Invalid, r"no PriorityClass", lambda: srv.create(make_pod("a", priorityClassName="nope")))
    assert isinstance(err, Invalid)
    assert (err.field, err.kind, err.name) == ("spec.priorityClassName", "Pod", "a")


def test_requests_defaulted_from_limits() -> None:
    containers = [
        {"name": "a", "image": "i", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
        {
            "name": "b",
            "image": "i",
            "resources": {"limits": {"cpu": "2", "memory": "2Gi"}, "requests": {"cpu": "500m"}},
        },
        {"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}},
    ]
    init = [{"name": "i", "image": "i", "resources": {"limits": {"memory": "64Mi"}}}]
    pod = new_server().create(make_pod("a", containers=containers, initContainers=init))
    req = [{k: q.text for k, q in c.resources.requests.items()} for c in pod.spec.containers]
    assert req == [{"cpu": "1", "memory": "1Gi"}, {"cpu": "500m", "memory": "2Gi"}, {"cpu": "100m"}]
    assert {k: q.text for k, q in pod.spec.init_containers[0].resources.requests.items()} == {"memory": "64Mi"}
    assert pod.spec.containers[2].resources.limits == {}


def _res(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> dict[str, Any]:
    return {"name": "c", "image": "i", "resources": {"requests": requests or {}, "limits": limits or {}}}


@pytest.mark.parametrize(
    ("containers", "qos"),
    [
        pytest.param([_res()], "BestEffort", id="nothing"),
        pytest.param([_res({"example.com/gpu": "1"}, {"example.com/gpu": "1"})], "BestEffort", id="only-extended"),
        pytest.param([_res({"cpu": "0"})], "BestEffort", id="zero-request"),
        pytest.param([_res({"cpu": "100m"})], "Burstable", id="request-only"),
        pytest.param([_res(None, {"cpu": "1", "memory": "1Gi"})], "Guaranteed", id="limits-only-defaults-requests"),
        pytest.param([_res({"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})], "Guaranteed", id="equal"),
        pytest.param(
            [_res({"cpu": "1000m", "memory": "1Gi"}, {"cpu": "1", "memory": "1024Mi"})], "Guaranteed", id="equal-values"
        ),
        pytest.param(
            [_res({"cpu": "500m", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})], "Burstable", id="lower-request"
        ),
        pytest.param([_res(None, {"cpu": "1"})], "Burstable", id="cpu-limit-only"),
        pytest.param(
            [_res(None, {"cpu": "1", "memory": "1Gi"}), {**_res({"cpu": "1"}), "name": "d"}],
            "Burstable",
            id="one-container-not-guaranteed",
        ),
        pytest.param(
            [
                _res(None, {"cpu": "0", "memory": "1Gi"}),
            ],
            "Burstable",
            # regression (fixed bug): defaults.qos_class counts a zero limit as present (upstream GetPodQOS only
            # counts limits > 0 in qosLimitsFound), so cpu: 0 + memory limit gives Guaranteed instead of Burstable
            id="zero-cpu-limit",
        ),
    ],
)
def test_qos_class(containers: list[dict[str, Any]], qos: str) -> None:
    pod = new_server().create(make_pod("a", containers=containers))
    assert pod.status.qos_class == qos
    assert qos_class(pod) == qos


def test_qos_counts_init_containers() -> None:
    pod = new_server().create(
        make_pod(
            "a",
            containers=[_res(None, {"cpu": "1", "memory": "1Gi"})],
            initContainers=[{**_res({"cpu": "1"}), "name": "i"}],
        )
    )
    assert pod.status.qos_class == "Burstable"


def test_status_is_reset_on_create_unless_restoring() -> None:
    p = make_pod("a")
    p = replace(p, status=replace(p.status, phase="Running", qos_class="Guaranteed", nominated_node_name="n1"))
    pod = new_server().create(p)  # upstream PrepareForCreate
    assert (pod.status.phase, pod.status.qos_class, pod.status.nominated_node_name) == ("Pending", "BestEffort", "")
    restored = new_server().create(p, restore=True)  # seeding existing state (explain, tests)
    assert (restored.status.phase, restored.status.nominated_node_name) == ("Running", "n1")


# Regression (fixed bug): defaults.default_pod adds the not-ready/unreachable tolerations even when the pod
# already tolerates every NoExecute taint with an empty key (upstream DefaultTolerationSeconds counts key == ''
# too), which turns 'tolerate forever' into eviction after 300 s
def test_tolerate_everything_gets_no_default_tolerations() -> None:
    pod = new_server().create(make_pod("a", tolerations=[{"operator": "Exists"}]))
    assert pod.spec.tolerations == [Toleration(operator="Exists")]


def test_node_allocatable_defaults_to_capacity() -> None:
    srv = new_server()
    n = srv.create(make_node("a", capacity={"cpu": "4", "memory": "8Gi"}))
    assert n.status.allocatable == n.status.capacity
    m = srv.create(make_node("b", allocatable={"cpu": "2"}))
    assert m.status.capacity == m.status.allocatable
    assert n.metadata.generation == 1


def test_generate_name_pod() -> None:
    srv = new_server()
    p = srv.create(
        convert({"metadata": {"generateName": "job-"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}, Pod)
    )
    assert p.metadata.name.startswith("job-")
    assert len(p.metadata.name) == len("job-") + 5
    assert srv.get("Pod", p.metadata.name) == p


# --- get, list ------------------------------------------------------------------------------------


def test_get_defaults_to_the_default_namespace(world: World) -> None:
    assert world.srv.get("Pod", "free") == world.srv.get("Pod", "free", "default") == world.free
    assert world.srv.get("Node", "node-1", "ignored") == world.node


def test_list_order_and_filters(world: World) -> None:
    srv = world.srv
    srv.create(Namespace(metadata=ObjectMeta(name="aaa")))
    srv.create(make_pod("zeta", namespace="aaa"))
    srv.create(replace(make_pod("web"), metadata=ObjectMeta(name="web", labels={"app": "web"})))
    keys = [(p.metadata.namespace, p.metadata.name) for p in srv.list("Pod")[0]]
    assert keys == sorted(keys)
    assert keys[0] == ("aaa", "zeta")
    assert [p.metadata.name for p in srv.list("Pod", namespace="aaa")[0]] == ["zeta"]
    assert [p.metadata.name for p in srv.list("Pod", label_match=lambda lb: lb.get("app") == "web")[0]] == ["web"]
    unassigned = srv.list("Pod", fields={"spec.nodeName": ""})[0]
    assert [p.metadata.name for p in unassigned] == ["zeta", "free", "web"]
    assert [p.metadata.name for p in srv.list("Pod", fields={"spec.nodeName": "node-1"})[0]] == ["bound", "dying"]
    assert [p.metadata.name for p in srv.list("Pod", fields={"metadata.name": "free"})[0]] == ["free"]
    assert srv.list("Pod", namespace="nope") == ([], srv.revision)


# --- update and update_status ----------------------------------------------------------------------


def test_update_replaces_metadata_keeps_status_and_identity(world: World) -> None:
    srv = world.srv
    current = srv.get("Pod", "bound")
    meta = replace(current.metadata, labels={"a": "b"}, annotations={"x": "y"}, uid="", creation_timestamp="junk")
    changed_status = replace(current.status, phase="Failed")
    out = srv.update(replace(current, metadata=meta, status=changed_status))
    assert out.metadata.labels == {"a": "b"}
    assert out.metadata.annotations == {"x": "y"}
    assert out.metadata.uid == current.metadata.uid
    assert out.metadata.creation_timestamp == current.metadata.creation_timestamp
    assert out.status == current.status
    assert out.metadata.generation == current.metadata.generation  # spec unchanged
    assert srv.get("Pod", "bound") == out


def test_update_without_resource_version_is_unconditional(world: World) -> None:
    out = world.srv.update(with_rv(replace(world.free, metadata=replace(world.free.metadata, labels={"a": "1"})), ""))
    assert out.metadata.labels == {"a": "1"}


def test_update_spec_bumps_generation(world: World) -> None:
    srv = world.srv
    node = srv.update(replace(world.node, spec=replace(world.node.spec, unschedulable=True)))
    assert node.spec.unschedulable
    assert node.metadata.generation == world.node.metadata.generation + 1


def test_second_writer_with_the_same_version_conflicts(world: World) -> None:
    srv = world.srv
    mine = replace(world.free, metadata=replace(world.free.metadata, labels={"who": "me"}))
    theirs = replace(world.free, metadata=replace(world.free.metadata, labels={"who": "them"}))
    srv.update(mine)
    rejected(srv, Conflict, r'^Operation cannot be fulfilled on pods "free"', lambda: srv.update(theirs))
    assert srv.get("Pod", "free").metadata.labels == {"who": "me"}


def _gated(world: World) -> Pod:
    return world.srv.create(make_pod("gated", schedulingGates=[{"name": "a"}, {"name": "b"}]))


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(
            lambda p: replace(p, spec=replace(p.spec, containers=[replace(p.spec.containers[0], image="nginx:2")])),
            id="image",
        ),
        pytest.param(
            lambda p: replace(
                p, spec=replace(p.spec, tolerations=[*p.spec.tolerations, Toleration(key="k", operator="Exists")])
            ),
            id="add-toleration",
        ),
        pytest.param(
            lambda p: replace(p, spec=replace(p.spec, scheduling_gates=p.spec.scheduling_gates[1:])), id="remove-gate"
        ),
        pytest.param(lambda p: replace(p, spec=replace(p.spec, scheduling_gates=[])), id="remove-all-gates"),
        pytest.param(
            lambda p: replace(
                p, spec=replace(p.spec, tolerations=[replace(t, toleration_seconds=60) for t in p.spec.tolerations])
            ),
            # regression (fixed bug): the pod update rule (podvalidation) compared tolerations exactly, so changing an
            # existing toleration's tolerationSeconds is Forbidden (upstream validateOnlyAddedTolerations allows
            # it, and our own message says 'except its tolerationSeconds')
            id="toleration-seconds",
        ),
    ],
)
def test_allowed_pod_updates(world: World, mutate: Callable[[Pod], Pod]) -> None:
    pod = _gated(world)
    out = world.srv.update(mutate(pod))
    assert out.spec == mutate(pod).spec
    assert out.metadata.generation == 2


# Regression (fixed bug): the pod update rule (podvalidation) only let spec.containers[*].image change; upstream
# ValidatePodUpdate also allows spec.initContainers[*].image
def test_init_container_image_is_mutable(world: World) -> None:
    srv = world.srv
    p = srv.create(make_pod("init", initContainers=[{"name": "i", "image": "busybox"}]))
    out = srv.update(
        replace(p, spec=replace(p.spec, init_containers=[replace(p.spec.init_containers[0], image="b:2")]))
    )
    assert out.spec.init_containers[0].image == "b:2"


def test_update_status_changes_only_status(world: World) -> None:
    srv = world.srv
    current = srv.get("Pod", "bound")
    cond = PodCondition(type="Ready", status="True")
    sent = replace(
        current,
        metadata=replace(current.metadata, labels={"ignored": "yes"}),
        spec=replace(current.spec, node_name="elsewhere"),
        status=replace(current.status, phase="Running", conditions=[*current.status.conditions, cond]),
    )
    out = srv.update_status(sent)
    assert out.status == sent.status
    assert out.spec == current.spec
    assert out.metadata.labels == current.metadata.labels
    assert out.metadata.resource_version == str(srv.revision)
    assert out.metadata.generation == current.metadata.generation


# Regression (fixed bug): ApiServer.update/update_status always commit; upstream's store skips a write whose
# object is unchanged (no new resourceVersion, no MODIFIED event)
@pytest.mark.parametrize(
    "verb", [pytest.param("update", id="update"), pytest.param("update_status", id="update-status")]
)
def test_no_op_update_does_not_write(world: World, verb: str) -> None:
    srv = world.srv
    current = srv.get("Pod", "bound")
    with nothing_changes(srv):
        out = getattr(srv, verb)(current)
    assert out == current


# Regression (fixed bug): server.create checks the single globalDefault PriorityClass, update does not: a second
# class can be made the global default by update (upstream Priority admission checks both)
def test_second_global_default_by_update_rejected(world: World) -> None:
    srv = world.srv
    high = srv.get("PriorityClass", "high")
    rejected(srv, Invalid, r"already marked as default", lambda: srv.update(replace(high, global_default=True)))


# Regression (fixed bug): ApiServer.update lets PriorityClass.value change; upstream
# ValidatePriorityClassUpdate: 'value: Forbidden: may not be changed in an update.'
def test_priority_class_value_is_immutable(world: World) -> None:
    srv = world.srv
    high = srv.get("PriorityClass", "high")
    rejected(srv, Invalid, r"value: Forbidden", lambda: srv.update(replace(high, value=5)))


# --- delete ---------------------------------------------------------------------------------------


def test_graceful_delete_of_a_bound_pod_marks_it(world: World) -> None:
    srv = world.srv
    world.clock.t = 100
    rev = srv.revision
    w = srv.watch("Pod", fields={"metadata.name": "bound"})
    out = srv.delete("Pod", "bound")
    assert out.metadata.deletion_timestamp == ts(130)
    assert out.metadata.deletion_grace_period_seconds == 30
    assert srv.get("Pod", "bound") == out
    assert srv.revision == rev + 1
    assert [(e.type, e.revision) for e in w.channel.get_nowait_batch()] == [("MODIFIED", rev + 1)]


def test_graceful_delete_with_explicit_grace(world: World) -> None:
    out = world.srv.delete("Pod", "bound", grace_period_seconds=5)
    assert (out.metadata.deletion_timestamp, out.metadata.deletion_grace_period_seconds) == (ts(5), 5)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        pytest.param("free", {}, id="unbound-default-grace"),
        pytest.param("free", {"grace_period_seconds": 30}, id="unbound-explicit-grace"),
        pytest.param("bound", {"grace_period_seconds": 0}, id="bound-grace-0"),
        pytest.param("dying", {"grace_period_seconds": 0}, id="terminating-grace-0"),
    ],
)
def test_immediate_delete(world: World, name: str, kwargs: dict[str, Any]) -> None:
    srv = world.srv
    before = srv.get("Pod", name)
    rev = srv.revision
    w = srv.watch("Pod", fields={"metadata.name": name})
    out = srv.delete("Pod", name, **kwargs)
    # the last state at the deletion's revision (upstream's etcd3 store), as the DELETED event's
    assert out == replace(before, metadata=replace(before.metadata, resource_version=str(rev + 1)))
    with pytest.raises(NotFound):
        srv.get("Pod", name)
    assert srv.revision == rev + 1
    events = w.channel.get_nowait_batch()
    assert [(e.type, e.revision) for e in events] == [("DELETED", rev + 1)]
    assert events[0].object == out


@pytest.mark.parametrize("phase", [pytest.param("Succeeded", id="succeeded"), pytest.param("Failed", id="failed")])
def test_terminal_bound_pod_is_deleted_at_once(world: World, phase: str) -> None:
    srv = world.srv
    srv.update_status(replace(world.bound, status=replace(world.bound.status, phase=phase)))
    srv.delete("Pod", "bound")
    assert [p.metadata.name for p in srv.list("Pod")[0]] == ["dying", "free"]


def test_bound_pod_with_zero_termination_grace_is_deleted_at_once(world: World) -> None:
    srv = world.srv
    srv.create(make_pod("quick", terminationGracePeriodSeconds=0, nodeName="node-1"))
    srv.delete("Pod", "quick")
    with pytest.raises(NotFound):
        srv.get("Pod", "quick")


@pytest.mark.parametrize(
    "grace",
    [pytest.param(None, id="default"), pytest.param(30, id="same"), pytest.param(60, id="longer")],
)
def test_delete_of_terminating_pod_without_shorter_grace_writes_nothing(world: World, grace: int | None) -> None:
    srv = world.srv
    with nothing_changes(srv):
        out = srv.delete("Pod", "dying", grace_period_seconds=grace)
    assert out == world.dying


def test_delete_other_kinds_at_once(world: World) -> None:
    srv = world.srv
    rev = srv.revision
    out = srv.delete("Node", "node-1")
    assert out == replace(world.node, metadata=replace(world.node.metadata, resource_version=str(rev + 1)))
    assert srv.list("Node")[0] == []
    srv.delete("PriorityClass", "high")
    assert [p.metadata.name for p in srv.list("PriorityClass")[0]] == ["base"]


def test_delete_with_matching_uid(world: World) -> None:
    world.srv.delete("Pod", "free", uid=world.free.metadata.uid)
    assert [p.metadata.name for p in world.srv.list("Pod")[0]] == ["bound", "dying"]


# Regression (fixed bug): server.delete re-marks a terminating pod at now + new grace; upstream BeforeDelete
# moves the deletionTimestamp to old - oldGrace + newGrace, so shortening the grace never pushes the deletion
# later
def test_shorter_grace_moves_deletion_earlier(world: World) -> None:
    srv = world.srv
    first = srv.delete("Pod", "bound")
    assert first.metadata.deletion_timestamp == ts(30)
    world.clock.t = 5
    second = srv.delete("Pod", "bound", grace_period_seconds=10)
    assert second.metadata.deletion_grace_period_seconds == 10
    assert second.metadata.deletion_timestamp == ts(10)


def test_shorter_grace_never_moves_deletion_into_the_past(world: World) -> None:
    srv = world.srv
    srv.delete("Pod", "bound")  # t=0: deadline 30
    world.clock.t = 25
    out = srv.delete("Pod", "bound", grace_period_seconds=10)  # 30 - 30 + 10 = 10 < now
    assert out.metadata.deletion_timestamp == ts(25)
    assert out.metadata.deletion_grace_period_seconds == 1


# --- bind -----------------------------------------------------------------------------------------


def test_bind_assigns_and_marks_scheduled(world: World) -> None:
    srv = world.srv
    world.clock.t = 42
    rev = srv.revision
    b = replace(binding("free", "node-1", uid=world.free.metadata.uid))
    b = replace(b, metadata=replace(b.metadata, annotations={"sched": "yes"}))
    out = srv.bind(b)
    assert out.spec.node_name == "node-1"
    assert out.status.conditions == [PodCondition(type="PodScheduled", status="True", last_transition_time=ts(42))]
    assert out.metadata.annotations == {"sched": "yes"}
    assert out.metadata.resource_version == str(rev + 1)
    assert srv.get("Pod", "free") == out
    assert srv.revision == rev + 1


def test_bind_replaces_an_unschedulable_condition(world: World) -> None:
    srv = world.srv
    unsched = PodCondition(type="PodScheduled", status="False", reason="Unschedulable")
    ready = PodCondition(type="Ready", status="False")
    srv.update_status(replace(world.free, status=replace(world.free.status, conditions=[unsched, ready])))
    out = srv.bind(binding("free", "node-2"))
    assert [(c.type, c.status) for c in out.status.conditions] == [("Ready", "False"), ("PodScheduled", "True")]


def test_repr(world: World) -> None:
    r = repr(world.srv)
    assert r.startswith(f"<ApiServer rev={world.srv.revision} ")
    assert "pods=3" in r
    assert "nodes=1" in r


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(lambda srv: srv.create(make_pod("x")), id="create"),
        pytest.param(lambda srv: srv.bind(binding("free", "node-1")), id="bind"),
        pytest.param(lambda srv: srv.delete("Pod", "free"), id="delete"),
    ],
)
def test_the_unchanged_check_itself_detects_writes(world: World, write: Callable[[ApiServer], Any]) -> None:
    with pytest.raises(AssertionError), nothing_changes(world.srv):
        write(world.srv)
