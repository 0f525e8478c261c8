"""The API server's verbs on the workload kinds: namespaced storage, defaulting on create,
``metadata.generation`` (1 on create, +1 on a spec change, unchanged by status writes), the
status subresource, optimistic concurrency, the Job's generated selector, watch and delete."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from emulator.base.api.codec import load_manifests
from emulator.base.api.core import Namespace
from emulator.base.api.errors import AlreadyExists, Conflict, Invalid, NotFound
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver import ApiServer
from emulator.base.runtime.clock import format_timestamp
from tests.api.test_workload_kinds import MANIFESTS


class _Clock:
    virtual = True

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    def timestamp(self, t: float | None = None) -> str:
        return format_timestamp(self.t if t is None else t)


def _server() -> ApiServer:
    server = ApiServer(_Clock(), random.Random(1))
    server.create(Namespace(metadata=ObjectMeta(name="default")))
    server.create(Namespace(metadata=ObjectMeta(name="team")))
    return server


def _obj(kind: str) -> Any:
    (obj,) = load_manifests(msgspec.json.encode(MANIFESTS[kind]).decode(), source="m.json")
    return obj


KINDS = [pytest.param(k, id=k) for k in MANIFESTS]
WITH_GENERATION = [pytest.param(k, id=k) for k in MANIFESTS if k != "Service"]


@pytest.mark.parametrize("kind", KINDS)
def test_create_stores_a_namespaced_defaulted_object_with_an_empty_status(kind: str) -> None:
    server = _server()
    created = server.create(_obj(kind))
    assert created.metadata.namespace == "default"
    assert created.metadata.uid
    assert created.status == type(created.status)()
    assert server.get(kind, created.metadata.name, "default") == created
    assert server.list(kind, namespace="team")[0] == []
    with pytest.raises(AlreadyExists, match=rf'^\S+ "{created.metadata.name}" already exists$'):
        server.create(_obj(kind))


@pytest.mark.parametrize("kind", KINDS)
def test_restore_keeps_the_given_status(kind: str) -> None:
    server = _server()
    obj = _obj(kind)
    assert server.create(obj, restore=True).status == obj.status


@pytest.mark.parametrize("kind", WITH_GENERATION)
def test_generation_follows_the_spec_not_the_status(kind: str) -> None:
    server = _server()
    created = server.create(_obj(kind))
    assert created.metadata.generation == 1
    relabeled = server.update(
        replace(created, metadata=replace(created.metadata, labels={**created.metadata.labels, "x": "y"}))
    )
    assert relabeled.metadata.generation == 1
    status_written = server.update_status(replace(relabeled, status=_obj(kind).status))
    assert status_written.status == _obj(kind).status
    assert status_written.metadata.generation == 1
    updated = server.update(replace(status_written, spec=_bump(kind, status_written.spec)))
    assert updated.metadata.generation == 2
    assert updated.status == status_written.status, "update ignores status"


def _bump(kind: str, spec: Any) -> Any:
    """``spec`` with one field changed."""
    if kind in ("Deployment", "ReplicaSet", "StatefulSet"):
        return replace(spec, replicas=(spec.replicas or 0) + 1)
    if kind == "DaemonSet":
        return replace(spec, min_ready_seconds=spec.min_ready_seconds + 1)
    if kind == "Job":
        return replace(spec, suspend=not spec.suspend)
    if kind == "CronJob":
        return replace(spec, schedule="*/7 * * * *")
    return replace(spec, min_available=2)


@pytest.mark.parametrize("kind", KINDS)
def test_update_ignores_status_and_update_status_ignores_spec(kind: str) -> None:
    server = _server()
    created = server.create(_obj(kind))
    given = _obj(kind)
    after_update = server.update(replace(created, status=given.status))
    assert after_update.status == created.status
    after_status = server.update_status(
        replace(after_update, metadata=replace(after_update.metadata, labels={"z": "z"}))
    )
    assert after_status.metadata.labels == after_update.metadata.labels


@pytest.mark.parametrize("kind", KINDS)
def test_stale_resource_version_conflicts_and_changes_nothing(kind: str) -> None:
    server = _server()
    created = server.create(_obj(kind))
    server.update(replace(created, metadata=replace(created.metadata, labels={"a": "b"})))
    revision = server.revision
    with pytest.raises(Conflict, match="the object has been modified"):
        server.update(replace(created, metadata=replace(created.metadata, labels={"a": "c"})))
    with pytest.raises(Conflict):
        server.update_status(created)
    assert server.revision == revision


@pytest.mark.parametrize("kind", KINDS)
def test_watch_and_delete(kind: str) -> None:
    server = _server()
    watcher = server.watch(kind)
    created = server.create(_obj(kind))
    # Background: the ReplicaSet manifest carries foregroundDeletion, which would keep it (deletion.py)
    server.delete(kind, created.metadata.name, "default", propagation_policy="Background")
    with pytest.raises(NotFound):
        server.get(kind, created.metadata.name, "default")
    assert [ev.type for ev in watcher.channel.get_nowait_batch()] == ["ADDED", "DELETED"]


def test_an_update_that_breaks_validation_is_refused() -> None:
    server = _server()
    created = server.create(_obj("Deployment"))
    revision = server.revision
    with pytest.raises(Invalid, match=r'^Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: '):
        server.update(replace(created, spec=replace(created.spec, replicas=-1)))
    assert server.revision == revision


def test_a_job_gets_its_generated_selector_with_its_uid() -> None:
    server = _server()
    job = server.create(_obj("Job"))
    uid = job.metadata.uid
    assert job.spec.selector.match_labels == {"batch.kubernetes.io/controller-uid": uid}
    labels = job.spec.template.metadata.labels
    assert labels["batch.kubernetes.io/controller-uid"] == labels["controller-uid"] == uid
    assert labels["batch.kubernetes.io/job-name"] == labels["job-name"] == "pi"
    assert job.spec.manual_selector is False
    assert job.metadata.labels == {"app": "batch"}
    assert server.update(replace(job, metadata=replace(job.metadata, labels={"v": "2"}))).spec == job.spec


def test_a_manifest_with_a_pasted_status_is_stored_with_an_empty_one() -> None:
    server = _server()
    deployment = server.create(_obj("Deployment"))
    assert deployment.status.replicas == 0
    assert deployment.spec.strategy.rolling_update is not None
    assert deployment.metadata.owner_references[0].name == "o"


def test_a_job_without_labels_gets_its_templates_generated_ones() -> None:
    """Upstream defaults what it reads back from storage: the Job's labels are its template's."""
    server = _server()
    doc = _obj("Job")
    template = replace(doc.spec.template, metadata=replace(doc.spec.template.metadata, labels={}))
    job = server.create(replace(doc, spec=replace(doc.spec, template=template)))
    uid = job.metadata.uid
    assert job.metadata.labels == {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid,
        "job-name": "pi",
    }


def test_a_spec_change_keeps_a_jobs_defaulted_labels() -> None:
    server = _server()
    doc = _obj("Job")
    template = replace(doc.spec.template, metadata=replace(doc.spec.template.metadata, labels={}))
    job = server.create(replace(doc, spec=replace(doc.spec, template=template)))
    unlabeled = replace(job, metadata=replace(job.metadata, labels={}), spec=replace(job.spec, suspend=True))
    updated = server.update(unlabeled)
    assert updated.metadata.generation == 2
    assert updated.metadata.labels == job.metadata.labels
