"""The kubelet's per-pod short cuts against its general path, on wider pods and wider runs.

``test_kubelet_shortcuts.py`` plays one-container pods created, resized, deleted and
finished. Here the pods may have an init container and a restartable sidecar init container
(``restartPolicy: Always``, resized like the app container), a readiness probe turning ready
after a delay, ``restartPolicy`` ``Never`` or ``OnFailure`` (or ``Always``) with a container
exit code; and the runs add another writer setting a pod's ``Ready`` condition ``False`` (the
kubelet writes its own conditions back), labels-only updates (a new spec object with the same
content: ``settled`` must not take it for the spec it settled), and ``Conflict`` or
``InternalError`` raised by the server itself on the kubelet's next pod status writes (the
worker's own first try meets them and hands them to the retry loop), with and without API
latency. Operations between two waits happen at the same virtual instant (another writer's
``Ready`` and a deletion together: the kubelet's write-back then meets a terminating pod).
With the short cuts (``Resizer.shortcut``, ``PodWorker.direct``) on or off, every API
write must be the same object at the same virtual time in the same order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.kubelet import EXIT_CODE_ANNOTATION, READY_AFTER_ANNOTATION, RUN_DURATION_ANNOTATION
from agents.kubelet.podapi import PodWriter
from emulator.base.api.core import Container, Pod, PodCondition, ResourceRequirements
from emulator.base.api.errors import ApiError, Conflict, InternalError
from emulator.base.api.probe import HTTPGetAction, Probe
from emulator.base.api.quantity import parse_quantity
from emulator.base.client.client import Latency
from tests.builders import container, pod
from tests.kubelet.shortcutrun import run_with_shortcuts
from tests.kubelet.test_kubelet import NODE, world

NAMES = st.sampled_from(["a", "b"])
CPUS = st.sampled_from(["100m", "1", "2", "9"])
SHAPES = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from(["100m", "1", "2"]),
        "init": st.booleans(),
        "sidecar": st.booleans(),
        "probe": st.sampled_from([False, True, False]),
        "ready_after": st.sampled_from([None, "1s", "4s"]),
        "policy": st.sampled_from(["Always", "Never", "OnFailure"]),
        "run": st.sampled_from([None, "3s", "12s"]),
        "exit": st.sampled_from([None, "0", "1"]),
    }
)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("create"), NAMES, SHAPES),
        st.tuples(st.just("resize"), NAMES, st.tuples(st.sampled_from(["app", "sidecar"]), CPUS)),
        st.tuples(st.just("delete"), NAMES, st.sampled_from([0, 2])),
        st.tuples(st.just("unready"), NAMES, st.sampled_from([2, None, 0])),
        st.tuples(st.just("relabel"), NAMES, st.sampled_from(["x", "y"])),
        st.tuples(st.just("fail"), st.sampled_from(["Conflict", "InternalError"]), st.integers(1, 3)),
        st.tuples(st.just("wait"), st.sampled_from([0.01, 0.5, 2.0, 7.0]), st.none()),
    ),
    max_size=14,
)
HTTP = HTTPGetAction(path="/healthz", port=8080)


def make_pod(name: str, shape: dict[str, Any]) -> Pod:
    """A pod bound to the node: container ``app`` (``cpu``), optionally an init container
    ``setup`` and a sidecar ``sidecar`` (100m), a readiness probe on ``app``, its policy and
    run-duration, exit-code and ready-after annotations."""
    app = container("app", image="nginx:1.27", cpu=shape["cpu"])
    if shape["probe"]:
        app = replace(app, readiness_probe=Probe(http_get=HTTP))
    inits: list[Container] = []
    if shape["init"]:
        inits.append(container("setup", image="nginx:1.27", cpu="100m"))
    if shape["sidecar"]:
        inits.append(container("sidecar", image="nginx:1.27", cpu="100m", restart_policy="Always"))
    notes = {
        k: v
        for k, v in (
            (RUN_DURATION_ANNOTATION, shape["run"]),
            (EXIT_CODE_ANNOTATION, shape["exit"]),
            (READY_AFTER_ANNOTATION, shape["ready_after"]),
        )
        if v is not None
    }
    p = pod(name, node=NODE, containers=[app], init_containers=inits, annotations=notes or None)
    return replace(p, spec=replace(p.spec, restart_policy=shape["policy"]))


def _resized(p: Pod, name: str, cpu: str) -> Pod:
    def put(cs: list[Container]) -> list[Container]:
        return [
            replace(c, resources=ResourceRequirements(requests={**c.resources.requests, "cpu": parse_quantity(cpu)}))
            if c.name == name
            else c
            for c in cs
        ]

    return replace(
        p, spec=replace(p.spec, containers=put(p.spec.containers), init_containers=put(p.spec.init_containers))
    )


def _unready(p: Pod) -> Pod:
    """``p`` with its ``Ready`` condition ``False`` (added when absent), as another writer sets it."""
    ready = PodCondition(type="Ready", status="False", reason="SomeoneElse")
    conditions = [ready if c.type == "Ready" else c for c in p.status.conditions]
    if not any(c.type == "Ready" for c in conditions):
        conditions.append(ready)
    return replace(p, status=replace(p.status, conditions=conditions))


async def _play(ops: list[tuple[Any, ...]], latency: bool) -> list[Any]:
    api = Latency(0.01) if latency else None
    async with world(api_latency=api) as w:
        server, t = w.cluster.server, 1.0
        update_status: Callable[[Any], Any] = server.update_status
        armed: list[ApiError] = []

        def failing(obj: Any) -> Any:
            """The server's status write, which raises the armed errors on the next Pod writes."""
            if obj.kind == "Pod" and armed:
                raise armed.pop()
            return update_status(obj)

        server.update_status = failing  # type: ignore[method-assign]
        await w.at(t)
        for kind, a, b in ops:
            try:
                if kind == "create":
                    server.create(make_pod(a, b))
                elif kind == "resize":
                    server.update_resize(_resized(server.get("Pod", a, "default"), *b))
                elif kind == "delete":
                    server.delete("Pod", a, "default", grace_period_seconds=b)
                elif kind == "unready":
                    update_status(_unready(server.get("Pod", a, "default")))
                    if b is not None:  # and deleted at the same instant
                        server.delete("Pod", a, "default", grace_period_seconds=b)
                elif kind == "relabel":
                    p = server.get("Pod", a, "default")
                    meta = replace(p.metadata, labels={**(p.metadata.labels or {}), "tier": b})
                    server.update(replace(p, metadata=meta, spec=replace(p.spec)))
                elif kind == "fail":
                    armed[:0] = [Conflict("injected") if a == "Conflict" else InternalError("injected")] * b
            except Exception as err:  # a pod absent, already there, or refused: the same either way
                w.cluster.writes.append(type(err).__name__)  # type: ignore[arg-type]
            if kind == "wait":  # the other operations one after another at the same instant
                t += a
                await w.at(t)
        await w.at(t + 30.0)
        return [w if isinstance(w, str) else (w.revision, w.time, w.verb, w.kind, w.new) for w in w.cluster.writes]


def _run(ops: list[tuple[Any, ...]], latency: bool, shortcuts: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    return run_with_shortcuts(lambda: _play(ops, latency), shortcuts, monkeypatch)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(first=st.lists(SHAPES, max_size=2), ops=OPS, latency=st.sampled_from([False, True, False]))
def test_shortcuts_write_what_the_general_path_writes_on_wide_pods(
    first: list[dict[str, Any]], ops: list[tuple[Any, ...]], latency: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``first``: pods created (``a``, then ``b``) and left to start for 2 s before ``ops``."""
    ops = [*(("create", n, shape) for n, shape in zip("ab", first, strict=False)), ("wait", 2.0, None), *ops]
    assert _run(ops, latency, True, monkeypatch) == _run(ops, latency, False, monkeypatch)


def test_the_wide_runs_reach_what_they_are_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fixed run covers a sidecar resized in place, a ready-after readiness probe, an exit code
    under ``OnFailure`` and ``Never``, the kubelet's Ready condition written back over another
    writer's (and a deletion at the same instant: no write-back to the terminating pod), a
    labels-only update, and server errors met by the worker's own first try (and
    handed to the retry loop with that first error), the same either way."""
    plain = {"policy": "Always", "run": None, "exit": None}
    shape = {"cpu": "1", "init": True, "sidecar": True, "probe": True, "ready_after": "4s"}
    ops: list[tuple[Any, ...]] = [
        ("create", "a", {**shape, **plain}),
        ("create", "b", {**shape, "policy": "OnFailure", "run": "12s", "exit": "1"}),
        ("create", "d", {"cpu": "100m", "init": False, "sidecar": False, "probe": False, "ready_after": None, **plain}),
        ("wait", 2.0, None),
        ("resize", "a", ("sidecar", "1")),
        ("wait", 0.5, None),
        ("relabel", "a", "x"),
        ("wait", 7.0, None),
        ("unready", "a", None),
        ("wait", 0.5, None),
        ("fail", "Conflict", 1),
        ("create", "c", {**shape, "cpu": "100m", "ready_after": None, "policy": "Never", "run": "3s", "exit": "1"}),
        ("wait", 2.0, None),
        ("fail", "InternalError", 1),
        ("unready", "a", None),
        ("wait", 7.0, None),
        ("unready", "d", 2),
        ("wait", 7.0, None),
    ]
    handed: dict[bool, list[str]] = {True: [], False: []}
    retry_status = PodWriter.retry_status
    writes = {}
    for shortcuts in (True, False):

        async def noting(self: PodWriter, *args: Any, on: bool = shortcuts) -> Any:
            if args[-1] is not None:
                handed[on].append(type(args[-1]).__name__)
            return await retry_status(self, *args)

        monkeypatch.setattr(PodWriter, "retry_status", noting)
        writes[shortcuts] = _run(ops, False, shortcuts, monkeypatch)
    assert writes[True] == writes[False]
    assert handed[True] == ["Conflict", "InternalError"]
    pods = {w[4].metadata.name: w[4] for w in writes[True] if not isinstance(w, str) and w[3] == "Pod" and w[4]}
    sidecar = {s.name: s for s in pods["a"].status.init_container_statuses}["sidecar"]
    assert sidecar.allocated_resources["cpu"] == parse_quantity("1")
    assert pods["a"].metadata.labels["tier"] == "x"
    ready = [
        (w[1], c.status)
        for w in writes[True]
        if not isinstance(w, str) and w[3] == "Pod" and w[4] and w[4].metadata.name == "a"
        for c in w[4].status.conditions
        if c.type == "Ready"
    ]
    assert ready[-3:-1] == [(11.0, "True"), (13.0, "False")]
    assert ready[-1][1] == "True"
    assert pods["b"].status.container_statuses[0].restart_count == 2  # OnFailure, exit code 1
    terminated = pods["c"].status.container_statuses[0].state.terminated
    assert pods["c"].status.phase == "Failed"
    assert terminated is not None
    assert terminated.exit_code == 1
