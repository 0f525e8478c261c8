"""The API server's deletion with finalizers and ``propagationPolicy`` (``deletion``): which
finalizers a delete leaves, marking instead of removing, the preconditions, an idempotent
second delete, removal when an update empties the finalizers, and rejected writes."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from emulator.base.api.codec import load_manifests
from emulator.base.api.core import Namespace
from emulator.base.api.errors import Conflict, Invalid, NotFound
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.apiserver import ApiServer
from emulator.base.runtime.clock import format_timestamp
from tests.builders import pod


class _Clock:
    virtual = True

    def __init__(self) -> None:
        self.t = 100.0

    def now(self) -> float:
        return self.t

    def timestamp(self, t: float | None = None) -> str:
        return format_timestamp(self.t if t is None else t)


def _server() -> ApiServer:
    server = ApiServer(_Clock(), random.Random(1))  # type: ignore[arg-type]
    server.create(Namespace(metadata=ObjectMeta(name="default")))
    return server


_TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def _obj(kind: str, name: str = "web", finalizers: list[str] | None = None) -> Any:
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": "web"}}, "template": _TEMPLATE}
    api = "apps/v1"
    if kind == "Job":
        api = "batch/v1"
        spec = {"template": {**_TEMPLATE, "spec": {**_TEMPLATE["spec"], "restartPolicy": "Never"}}}
    manifest = {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": name, "finalizers": finalizers or []},
        "spec": spec,
    }
    (obj,) = load_manifests(msgspec.json.encode(manifest).decode(), source="m.json")
    return obj


@pytest.mark.parametrize(
    ("kind", "finalizers", "policy", "left"),
    [
        pytest.param("ReplicaSet", [], None, None, id="default-background-removes"),
        pytest.param("ReplicaSet", [], "Background", None, id="background-removes"),
        pytest.param("ReplicaSet", [], "Orphan", ["orphan"], id="orphan-marks"),
        pytest.param("ReplicaSet", [], "Foreground", ["foregroundDeletion"], id="foreground-marks"),
        pytest.param("Deployment", ["example.com/x"], None, ["example.com/x"], id="custom-finalizer-marks"),
        pytest.param(
            "Deployment", ["example.com/x"], "Foreground", ["example.com/x", "foregroundDeletion"], id="custom-and-fg"
        ),
        pytest.param("ReplicaSet", ["orphan"], "Background", None, id="background-drops-orphan"),
        pytest.param("ReplicaSet", ["orphan"], "Foreground", ["foregroundDeletion"], id="policy-overrides-finalizer"),
        pytest.param("ReplicaSet", ["foregroundDeletion"], None, ["foregroundDeletion"], id="finalizer-is-the-policy"),
        pytest.param("Job", [], None, ["orphan"], id="batch-v1-job-orphans-by-default"),
        pytest.param("Job", [], "Background", None, id="job-background-removes"),
    ],
)
def test_delete_applies_the_propagation_policy(
    kind: str, finalizers: list[str], policy: str | None, left: list[str] | None
) -> None:
    server = _server()
    created = server.create(_obj(kind, finalizers=finalizers))
    watcher = server.watch(kind)
    server.delete(kind, "web", "default", propagation_policy=policy)
    events = watcher.channel.get_nowait_batch()
    if left is None:
        with pytest.raises(NotFound):
            server.get(kind, "web", "default")
        assert [e.type for e in events] == ["DELETED"]
        return
    marked = server.get(kind, "web", "default")
    assert [e.type for e in events] == ["MODIFIED"]
    assert marked.metadata.finalizers == left
    assert marked.metadata.deletion_timestamp == format_timestamp(100.0)
    assert marked.metadata.deletion_grace_period_seconds == 0
    assert marked.metadata.generation == created.metadata.generation + 1


def test_an_update_that_empties_the_finalizers_removes_a_terminating_object() -> None:
    server = _server()
    server.create(_obj("ReplicaSet", finalizers=["example.com/a", "example.com/b"]))
    server.delete("ReplicaSet", "web", "default")
    watcher = server.watch("ReplicaSet")
    marked = server.get("ReplicaSet", "web", "default")
    one_left = server.update(replace(marked, metadata=replace(marked.metadata, finalizers=["example.com/b"])))
    assert one_left.metadata.deletion_timestamp is not None
    server.update(replace(one_left, metadata=replace(one_left.metadata, finalizers=[])))
    with pytest.raises(NotFound):
        server.get("ReplicaSet", "web", "default")
    events = watcher.channel.get_nowait_batch()
    assert [e.type for e in events] == ["MODIFIED", "DELETED"]
    assert events[-1].object.metadata.finalizers == ["example.com/b"]  # the last stored state


def test_emptying_the_finalizers_of_a_live_object_is_only_an_update() -> None:
    server = _server()
    created = server.create(_obj("ReplicaSet", finalizers=["example.com/a"]))
    updated = server.update(replace(created, metadata=replace(created.metadata, finalizers=[])))
    assert updated.metadata.finalizers == []
    assert server.get("ReplicaSet", "web", "default") == updated


@pytest.mark.parametrize(
    ("first", "second", "writes", "left"),
    [
        pytest.param("Orphan", "Orphan", 0, ["orphan"], id="same-policy-writes-nothing"),
        pytest.param("Orphan", None, 0, ["orphan"], id="no-policy-keeps-the-finalizer"),
        pytest.param("Foreground", None, 0, ["foregroundDeletion"], id="no-policy-keeps-foreground"),
        pytest.param("Orphan", "Foreground", 1, ["foregroundDeletion"], id="a-new-policy-swaps-the-finalizer"),
    ],
)
def test_a_second_delete_of_a_terminating_object(first: str, second: str | None, writes: int, left: list[str]) -> None:
    server = _server()
    server.create(_obj("ReplicaSet"))
    server.delete("ReplicaSet", "web", "default", propagation_policy=first)
    marked = server.get("ReplicaSet", "web", "default")
    server.clock.t = 200.0  # type: ignore[attr-defined]
    revision = server.revision
    server.delete("ReplicaSet", "web", "default", propagation_policy=second)
    again = server.get("ReplicaSet", "web", "default")
    assert server.revision == revision + writes
    assert again.metadata.finalizers == left
    assert again.metadata.deletion_timestamp == marked.metadata.deletion_timestamp
    assert again.metadata.generation == marked.metadata.generation


def _rv_conflict(server: ApiServer, created: Any) -> None:
    server.delete("ReplicaSet", "web", "default", resource_version="1")


def _uid_conflict(server: ApiServer, created: Any) -> None:
    server.delete("ReplicaSet", "web", "default", uid="other")


def _bad_policy(server: ApiServer, created: Any) -> None:
    server.delete("ReplicaSet", "web", "default", propagation_policy="Sideways")


def _bad_policy_missing(server: ApiServer, created: Any) -> None:
    server.delete("ReplicaSet", "gone", "default", propagation_policy="background")


def _both_gc_finalizers_update(server: ApiServer, created: Any) -> None:
    server.update(replace(created, metadata=replace(created.metadata, finalizers=["orphan", "foregroundDeletion"])))


def _both_gc_finalizers_create(server: ApiServer, created: Any) -> None:
    server.create(_obj("ReplicaSet", "other", finalizers=["foregroundDeletion", "orphan"]))


@pytest.mark.parametrize(
    ("write", "error", "match"),
    [
        pytest.param(
            _rv_conflict,
            Conflict,
            r'^Operation cannot be fulfilled on ReplicaSet\.apps "web": the ResourceVersion in the precondition '
            r"\(1\) does not match the ResourceVersion in record \(\d+\)\. The object might have been modified$",
            id="resource-version-precondition",
        ),
        pytest.param(
            _uid_conflict,
            Conflict,
            r"^Precondition failed: UID in precondition: other, UID in object meta: ",
            id="uid-precondition",
        ),
        pytest.param(
            _bad_policy,
            Invalid,
            r'^DeleteOptions\.meta\.k8s\.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": '
            r'supported values: "Foreground", "Background", "Orphan", "nil"$',
            id="unsupported-policy",
        ),
        pytest.param(_bad_policy_missing, Invalid, r"propagationPolicy", id="policy-checked-before-the-read"),
        pytest.param(
            _both_gc_finalizers_update,
            Invalid,
            r"metadata\.finalizers: Invalid value: .*finalizer orphan and foregroundDeletion cannot be both set$",
            id="orphan-and-foreground-on-update",
        ),
        pytest.param(
            _both_gc_finalizers_create,
            Invalid,
            r"cannot be both set$",
            id="orphan-and-foreground-on-create",
        ),
    ],
)
def test_a_rejected_write_changes_nothing(write: Any, error: type[Exception], match: str) -> None:
    server = _server()
    created = server.create(_obj("ReplicaSet"))
    revision = server.revision
    with pytest.raises(error, match=match):
        write(server, created)
    assert server.revision == revision
    assert server.list("ReplicaSet")[0] == [created]


def test_a_refused_finalizer_on_a_terminating_object_leaves_it_as_it_was() -> None:
    server = _server()
    server.create(_obj("ReplicaSet"))
    server.delete("ReplicaSet", "web", "default", propagation_policy="Orphan")
    marked = server.get("ReplicaSet", "web", "default")
    revision = server.revision
    with pytest.raises(
        Invalid,
        match=r'^ReplicaSet "web" is invalid: metadata\.finalizers: Forbidden: no new finalizers can be added if '
        r'the object is being deleted, found new finalizers \[\]string\{"example\.com/x"\}$',
    ):
        server.update(replace(marked, metadata=replace(marked.metadata, finalizers=["orphan", "example.com/x"])))
    assert server.revision == revision
    assert server.get("ReplicaSet", "web", "default") == marked


def test_the_matching_preconditions_delete() -> None:
    server = _server()
    created = server.create(_obj("ReplicaSet"))
    server.delete(
        "ReplicaSet", "web", "default", uid=created.metadata.uid, resource_version=created.metadata.resource_version
    )
    with pytest.raises(NotFound):
        server.get("ReplicaSet", "web", "default")


# --- pods: graceful deletion and finalizers ------------------------------------------------


def _pod_with(server: ApiServer, *, node: str = "", finalizers: list[str] | None = None) -> Any:
    p = pod("p", node=node)
    p = replace(p, metadata=replace(p.metadata, finalizers=finalizers or []))
    return server.create(p)


def test_a_bound_pod_with_a_finalizer_outlives_the_kubelets_confirmation() -> None:
    server = _server()
    _pod_with(server, node="n1", finalizers=["example.com/x"])
    server.delete("Pod", "p", "default")
    graceful = server.get("Pod", "p", "default")
    assert graceful.metadata.deletion_grace_period_seconds == 30
    server.delete("Pod", "p", "default", grace_period_seconds=0)  # the kubelet: containers are gone
    kept = server.get("Pod", "p", "default")
    assert kept.metadata.deletion_grace_period_seconds == 0
    assert kept.metadata.deletion_timestamp == graceful.metadata.deletion_timestamp
    server.update(replace(kept, metadata=replace(kept.metadata, finalizers=[])))
    with pytest.raises(NotFound):
        server.get("Pod", "p", "default")


def test_a_gracefully_terminating_pod_stays_for_its_kubelet_after_its_finalizers_go() -> None:
    server = _server()
    _pod_with(server, node="n1", finalizers=["example.com/x"])
    server.delete("Pod", "p", "default")
    graceful = server.get("Pod", "p", "default")
    server.update(replace(graceful, metadata=replace(graceful.metadata, finalizers=[])))
    assert server.get("Pod", "p", "default").metadata.finalizers == []
    server.delete("Pod", "p", "default", grace_period_seconds=0)
    with pytest.raises(NotFound):
        server.get("Pod", "p", "default")


@pytest.mark.parametrize(
    ("finalizers", "policy", "kept"),
    [
        pytest.param([], None, False, id="no-finalizer-removed-at-once"),
        pytest.param(["example.com/x"], None, True, id="finalizer-keeps-it"),
        pytest.param([], "Orphan", True, id="orphan-keeps-it"),
    ],
)
def test_an_unbound_pod(finalizers: list[str], policy: str | None, kept: bool) -> None:
    server = _server()
    _pod_with(server, finalizers=finalizers)
    server.delete("Pod", "p", "default", propagation_policy=policy)
    if not kept:
        with pytest.raises(NotFound):
            server.get("Pod", "p", "default")
        return
    marked = server.get("Pod", "p", "default")
    assert marked.metadata.deletion_grace_period_seconds == 0
    assert marked.metadata.deletion_timestamp == format_timestamp(100.0)


def test_a_pending_graceful_deletion_does_not_change_the_finalizers() -> None:
    server = _server()
    _pod_with(server, node="n1")
    server.delete("Pod", "p", "default")
    revision = server.revision
    server.delete("Pod", "p", "default", propagation_policy="Orphan")
    assert server.revision == revision
    assert server.get("Pod", "p", "default").metadata.finalizers == []


# --- ownerReferences ----------------------------------------------------------------------


def _ref(**fields: Any) -> OwnerReference:
    base: dict[str, Any] = {"api_version": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u-1"}
    return OwnerReference(**{**base, **fields})


@pytest.mark.parametrize(
    ("refs", "match"),
    [
        pytest.param(
            [_ref(api_version="apps/")],
            r'^ReplicaSet "web" is invalid: metadata\.ownerReferences\.apiVersion: Invalid value: "apps/": '
            r"version must not be empty$",
            id="no-version",
        ),
        pytest.param(
            [_ref(kind="")],
            r'metadata\.ownerReferences\.kind: Invalid value: "": kind must not be empty$',
            id="no-kind",
        ),
        pytest.param(
            [_ref(name="")],
            r'metadata\.ownerReferences\.name: Invalid value: "": name must not be empty$',
            id="no-name",
        ),
        pytest.param(
            [_ref(uid="")], r'metadata\.ownerReferences\.uid: Invalid value: "": uid must not be empty$', id="no-uid"
        ),
        pytest.param(
            [_ref(controller=True), _ref(name="b", uid="u-2", controller=True)],
            r"metadata\.ownerReferences: Invalid value: .*Only one reference can have Controller set to true\. "
            r'Found "true" in references for ReplicaSet/rs and ReplicaSet/b$',
            id="two-controllers",
        ),
    ],
)
def test_owner_references_are_validated_on_create_and_update(refs: list[OwnerReference], match: str) -> None:
    server = _server()
    obj = _obj("ReplicaSet")
    with pytest.raises(Invalid, match=match):
        server.create(replace(obj, metadata=replace(obj.metadata, owner_references=refs)))
    created = server.create(obj)
    revision = server.revision
    with pytest.raises(Invalid, match=match):
        server.update(replace(created, metadata=replace(created.metadata, owner_references=refs)))
    assert server.revision == revision
    assert server.get("ReplicaSet", "web", "default") == created


def test_valid_owner_references_are_stored() -> None:
    server = _server()
    obj = _obj("ReplicaSet")
    refs = [_ref(controller=True, block_owner_deletion=True), _ref(api_version="v1", kind="Node", name="n", uid="u-2")]
    created = server.create(replace(obj, metadata=replace(obj.metadata, owner_references=refs)))
    assert created.metadata.owner_references == refs
