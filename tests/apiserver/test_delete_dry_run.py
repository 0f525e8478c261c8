"""A dry-run delete (``ApiServer.delete(dry_run=True)``, ``dryRun=All``) makes the real delete's
checks and gives its answer, writing nothing (upstream: ``BeforeDelete``'s options and
preconditions, then ``DryRunnableStorage.Delete``); a real delete that removes an object at once
answers its last state at the deletion's revision (upstream's etcd3 ``conditionalDelete``
decodes it at the delete's revision), as the DELETED watch event carries it."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from emulator.base.api.config import ConfigMap
from emulator.base.api.errors import Conflict, Invalid, NotFound
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver import ApiServer
from emulator.base.runtime.clock import parse_timestamp
from tests.apiserver.test_delete_fastpath import _server, deletes
from tests.builders import namespace, pod
from tests.clocks import ManualClock


def _kind_name(target: str) -> tuple[str, str]:
    return {"job": ("Job", "j"), "node": ("Node", "n1"), "namespace": ("Namespace", "other")}.get(
        target, ("Pod", target)
    )


def _options(srv: ApiServer, d: dict[str, Any]) -> tuple[str, str, str, dict[str, Any]]:
    kind, name = _kind_name(d["target"])
    space = "" if kind in ("Node", "Namespace") else d["namespace"]
    try:
        current = srv.get(kind, name, space)
        uid = {"none": "", "kept": current.metadata.uid, "other": "x-other"}[d["uid"]]
        rv = {"none": "", "kept": current.metadata.resource_version, "stale": "1"}[d["rv"]]
    except NotFound:
        uid = rv = ""
    options = {"grace_period_seconds": d["grace"], "uid": uid, "propagation_policy": d["policy"]}
    return kind, name, space, {**options, "resource_version": rv}


def _outcome(call: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return call(*args, **kwargs)
    except Exception as err:
        return (type(err).__name__, str(err))


def _unversioned(obj: Any) -> Any:
    return replace(obj, metadata=replace(obj.metadata, resource_version=""))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(deletes(), min_size=1, max_size=8))
def test_a_dry_run_delete_answers_as_the_delete_and_writes_nothing(ds: list[dict[str, Any]]) -> None:
    srv, records, watchers = _server(True)
    for w in watchers:
        w.channel.get_nowait_batch()  # the setup's events
    for d in ds:
        kind, name, space, options = _options(srv, d)
        srv.clock.t += 1.0  # type: ignore[attr-defined]
        rev, written = srv.revision, len(records)
        stored = {k: srv.list(k)[0] for k in ("Pod", "Job", "Node", "Namespace")}
        dry = _outcome(srv.delete, kind, name, space, dry_run=True, **options)
        assert (srv.revision, len(records)) == (rev, written)
        assert {k: srv.list(k)[0] for k in stored} == stored
        assert all(not w.channel.get_nowait_batch() for w in watchers)
        real = _outcome(srv.delete, kind, name, space, **options)
        if isinstance(real, tuple):  # refused: the same error, message included
            assert dry == real
            continue
        assert not isinstance(dry, tuple)
        if srv.revision == rev + 1 and records[-1].new is None:
            # removed at once: the real answer at the deletion's revision, the dry one as upstream
            # answers it (a pod marked as BeforeDelete marks it, another kind as stored)
            before = stored_object(stored, kind, name)
            assert real == replace(before, metadata=replace(before.metadata, resource_version=str(rev + 1)))
            assert records[-1].old == real
            assert dry == (_marked_at_grace_zero(before, srv.clock) if kind == "Pod" else before)
        else:  # marked (or nothing to write): the same object, the real one at its new revision
            assert _unversioned(dry) == _unversioned(real)
        for w in watchers:
            w.channel.get_nowait_batch()


def _marked_at_grace_zero(pod: Any, clock: Any) -> Any:
    """Upstream ``BeforeDelete`` for a pod deleted at grace 0 (``CheckGracefulDelete`` true):
    deletionTimestamp now (a terminating pod's deadline moved back to its start, never into the
    past), grace 0, a first mark bumping a positive generation; no grace left: unchanged."""
    meta = pod.metadata
    if meta.deletion_timestamp is None:
        generation = meta.generation + 1 if meta.generation > 0 else meta.generation
        when = clock.timestamp()
    elif meta.deletion_grace_period_seconds:
        generation = meta.generation
        start = parse_timestamp(meta.deletion_timestamp) - meta.deletion_grace_period_seconds
        when = clock.timestamp(max(start, clock.now()))
    else:
        return pod
    marked = replace(meta, deletion_timestamp=when, deletion_grace_period_seconds=0, generation=generation)
    return replace(pod, metadata=replace(marked, finalizers=[]))


def stored_object(stored: dict[str, list[Any]], kind: str, name: str) -> Any:
    return next(o for o in stored[kind] if o.metadata.name == name)


@pytest.fixture
def srv() -> ApiServer:
    api = ApiServer(ManualClock(), random.Random(0))
    api.create(namespace("default"))
    api.create(pod("a"))
    return api


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        pytest.param({"uid": "other"}, Conflict, "UID in precondition: other", id="uid-precondition"),
        pytest.param(
            {"resource_version": "1"}, Conflict, "the ResourceVersion in the precondition (1)", id="rv-precondition"
        ),
        pytest.param(
            {"propagation_policy": "Sideways"}, Invalid, 'Unsupported value: "Sideways"', id="propagation-policy"
        ),
    ],
)
def test_a_dry_run_delete_refuses_what_the_delete_refuses(
    srv: ApiServer, options: dict[str, Any], error: type[Exception], message: str
) -> None:
    rev = srv.revision
    w = srv.watch("Pod")
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        srv.delete("Pod", "a", "default", dry_run=True, **options)
    with pytest.raises(NotFound):
        srv.delete("Pod", "gone", "default", dry_run=True)
    assert srv.revision == rev
    assert srv.get("Pod", "a", "default").metadata.resource_version == str(rev)
    assert not w.channel.get_nowait_batch()


def test_a_dry_run_delete_of_a_pod_removed_at_once_answers_it_marked(srv: ApiServer) -> None:
    """Upstream's ``Store.Delete`` answers a dry run the pod ``BeforeDelete`` marked (the pod
    strategy's ``CheckGracefulDelete`` is true even at grace 0), not the stored pod."""
    srv.clock.t += 7.0  # type: ignore[attr-defined]
    stored = srv.get("Pod", "a", "default")
    assert stored.metadata.deletion_timestamp is None
    dry = srv.delete("Pod", "a", "default", dry_run=True, uid=stored.metadata.uid)
    assert dry.metadata.deletion_timestamp == srv.clock.timestamp()
    assert dry.metadata.deletion_grace_period_seconds == 0
    assert dry.metadata.generation == stored.metadata.generation + (1 if stored.metadata.generation > 0 else 0)
    assert replace(dry, metadata=stored.metadata) == stored
    assert srv.get("Pod", "a", "default") is stored


def test_a_dry_run_delete_of_another_kind_removed_at_once_answers_it_as_stored(srv: ApiServer) -> None:
    stored = srv.create(ConfigMap(metadata=ObjectMeta(name="c", namespace="default")))
    assert srv.delete("ConfigMap", "c", "default", dry_run=True, grace_period_seconds=0) is stored
    assert srv.get("ConfigMap", "c", "default") is stored


def test_a_delete_answers_the_removed_object_at_the_deletion_revision(srv: ApiServer) -> None:
    w = srv.watch("Pod")
    stored = srv.get("Pod", "a", "default")
    out = srv.delete("Pod", "a", "default")
    assert out.metadata.resource_version == str(srv.revision) != stored.metadata.resource_version
    assert out == replace(stored, metadata=replace(stored.metadata, resource_version=str(srv.revision)))
    [ev] = w.channel.get_nowait_batch()
    assert (ev.type, ev.revision, ev.object) == ("DELETED", srv.revision, out)
