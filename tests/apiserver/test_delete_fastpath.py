"""``ApiServer.delete``'s shortcut (an object without finalizers, no policy given, a kind in
``_plain_deletes``, grace 0: removed without asking ``finalizers_for_deletion`` and
``held_on_delete``, the option checks skipped when no option is given) equals the general
steps: the same answer or typed error (message included), revision, stored objects, write
records and watch events, on random sequences of deletes of pods bound and not, running and
terminal, with and without finalizers, grace, policy (a bad one included), uid and
resourceVersion preconditions, of Jobs (orphaned by default), Nodes and Namespaces (held by
their strategy while their spec has finalizers). A server with ``_plain_deletes`` emptied is
the general path (the oracle)."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from emulator.base.api.batch import Job
from emulator.base.api.codec import convert
from emulator.base.api.core import Namespace, Node, Pod
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver import ApiServer, WriteRecord
from tests.clocks import ManualClock

PODS = ("bound", "unbound", "done", "held")


def _server(fast: bool) -> tuple[ApiServer, list[WriteRecord], list[Any]]:
    srv = ApiServer(ManualClock(), random.Random(0))
    assert "Pod" in srv._plain_deletes
    assert not {"Job", "Namespace"} & srv._plain_deletes
    if not fast:
        srv._plain_deletes = frozenset()
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    records: list[WriteRecord] = []
    srv.add_write_listener(records.append)
    watchers = [
        srv.watch("Pod"),
        srv.watch("Pod", fields={"spec.nodeName": "n1"}),
        srv.watch("Pod", fields={"status.phase": "Succeeded"}),
        srv.watch("Job"),
        srv.watch("Node"),
        srv.watch("Namespace"),
    ]
    for name in PODS:
        spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}], "terminationGracePeriodSeconds": 30}
        if name != "unbound":
            spec["nodeName"] = "n1"
        meta: dict[str, Any] = {"name": name, "namespace": "default"}
        if name == "held":
            meta["finalizers"] = ["example.com/keep"]
        pod = srv.create(convert({"metadata": meta, "spec": spec}, Pod))
        if name == "done":
            srv.update_status(replace(pod, status=replace(pod.status, phase="Succeeded")))
    job = {"template": {"spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"}}}
    srv.create(convert({"metadata": {"name": "j", "namespace": "default"}, "spec": job}, Job))
    srv.create(convert({"metadata": {"name": "n1"}}, Node))
    srv.create(Namespace(metadata=ObjectMeta(name="other")))
    return srv, records, watchers


@st.composite
def deletes(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "target": draw(st.sampled_from([*PODS, "gone", "job", "node", "namespace"])),
        "grace": draw(st.sampled_from([None, 0, 5, -1])),
        "policy": draw(st.sampled_from([None, None, "Background", "Orphan", "Foreground", "Sideways"])),
        "uid": draw(st.sampled_from(["none", "none", "kept", "other"])),
        "rv": draw(st.sampled_from(["none", "none", "kept", "stale"])),
        "namespace": draw(st.sampled_from(["default", ""])),
    }


def _apply(srv: ApiServer, d: dict[str, Any]) -> Any:
    target = d["target"]
    kind, name = {"job": ("Job", "j"), "node": ("Node", "n1"), "namespace": ("Namespace", "other")}.get(
        target, ("Pod", target)
    )
    namespace = "" if kind in ("Node", "Namespace") else d["namespace"]
    try:
        current = srv.get(kind, name, namespace)
        uid = {"none": "", "kept": current.metadata.uid, "other": "x-other"}[d["uid"]]
        rv = {"none": "", "kept": current.metadata.resource_version, "stale": "1"}[d["rv"]]
    except Exception:
        uid = rv = ""
    srv.clock.t += 1.0  # type: ignore[attr-defined]
    try:
        return srv.delete(
            kind,
            name,
            namespace,
            grace_period_seconds=d["grace"],
            uid=uid,
            propagation_policy=d["policy"],
            resource_version=rv,
        )
    except Exception as err:
        return (type(err).__name__, str(err))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(deletes(), min_size=1, max_size=8))
def test_plain_delete_equals_the_general_steps(ds: list[dict[str, Any]]) -> None:
    outcomes = []
    for fast in (True, False):
        srv, records, watchers = _server(fast)
        answers = [_apply(srv, d) for d in ds]
        events = [w.channel.get_nowait_batch() for w in watchers]
        stored = {kind: srv.list(kind) for kind in ("Pod", "Job", "Node", "Namespace")}
        outcomes.append((answers, srv.revision, records, events, stored))
    assert outcomes[0] == outcomes[1]


def test_a_force_delete_of_a_plain_pod_takes_the_shortcut() -> None:
    """PodGC's force-delete of a terminated pod: no ``finalizers_for_deletion`` call (looked up
    by ``deletion.left_by_delete``, where the general steps ask it)."""
    import emulator.base.apiserver.deletion as deletion_module

    srv, records, _ = _server(True)
    calls: list[str] = []
    general = deletion_module.finalizers_for_deletion

    def spy(kind: str, finalizers: list[str], policy: str | None) -> list[str]:
        calls.append(kind)
        return general(kind, finalizers, policy)

    deletion_module.finalizers_for_deletion = spy  # type: ignore[assignment]
    try:
        gone = srv.delete("Pod", "done", "default", grace_period_seconds=0)
        srv.delete("Pod", "held", "default", grace_period_seconds=0)
    finally:
        deletion_module.finalizers_for_deletion = general
    assert calls == ["Pod"]  # the pod with a finalizer only
    assert (records[-2].verb, records[-2].new, records[-2].old.metadata.name) == ("delete", None, "done")
    assert gone.metadata.name == "done"
