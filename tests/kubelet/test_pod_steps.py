"""Plain pods on the kubelet's handles (``podsteps.py``) against their tasks (``run_pod``).

With ``PodSteps.enabled`` off every pod gets its task, the general path. Random runs of pods
(run durations, exit codes and restart policies, ``ready-after``, init containers, start
delays, images present or pulled), deleted (grace 0 and 2 s) or force-deleted behind the
kubelet's back, relabelled by someone else while the kubelet's watch lags (its writes then
meet Conflicts and NotFound), their image changed, the kubelet stopped: every write (revision,
virtual time, verb, kind, object) the same either way, and the same kubelet counters."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.kubelet import KubeletSettings, podsteps
from agents.kubelet.lifecycle import (
    EXIT_CODE_ANNOTATION,
    INIT_DURATION_ANNOTATION,
    READY_AFTER_ANNOTATION,
    RUN_DURATION_ANNOTATION,
)
from agents.kubelet.podsteps import FastRun, PodSteps
from agents.kubelet.podworker import PodWorker
from emulator.base.api.core import ContainerImage, Pod
from emulator.base.client.client import Latency
from emulator.base.runtime.loop import VirtualTimeEventLoop
from tests.builders import container, pod
from tests.kubelet.test_kubelet import NGINX, NODE, make_node, world

Mi = 2**20
NAMES = st.sampled_from(["a", "b", "c"])
SHAPES = st.fixed_dictionaries(
    {
        "run": st.sampled_from([None, "0s", "3s", "20s"]),
        "exit": st.sampled_from([None, "0", "1"]),
        "policy": st.sampled_from(["", "Never", "OnFailure", "Always"]),
        "ready": st.sampled_from([None, "2s"]),
        "init": st.sampled_from([None, "0s", "1s"]),
        "image": st.sampled_from([NGINX, "redis:7"]),
    }
)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("create"), NAMES, SHAPES),
        st.tuples(st.just("delete"), NAMES, st.sampled_from([0, 2])),
        st.tuples(st.just("force"), NAMES, st.none()),
        st.tuples(st.just("label"), NAMES, st.none()),
        st.tuples(st.just("image"), NAMES, st.sampled_from([NGINX, "redis:7", "busybox:1"])),
        st.tuples(st.just("wait"), st.sampled_from([0.0, 0.3, 1.0, 2.0, 3.0]), st.none()),
        st.tuples(st.just("stop"), st.none(), st.none()),
    ),
    max_size=14,
)
SETTINGS = st.sampled_from(["instant", "start-delay", "pulls", "watch-lag", "events", "events-pulls"])
PLAIN = {"run": "3s", "exit": None, "policy": "", "ready": None, "init": None, "image": NGINX}
MEETING = [  # the run's timers and the ops at one instant: a step out of its handle's place shows
    ("create", "a", PLAIN),
    ("create", "b", {**PLAIN, "ready": "1s"}),
    ("wait", 3.0, None),
    ("label", "a", None),
    ("delete", "b", 0),
    ("create", "c", PLAIN),
    ("wait", 3.0, None),
    ("stop", None, None),
]


def _pod(name: str, shape: dict[str, Any]) -> Pod:
    notes = {
        key: value
        for key, value in (
            (RUN_DURATION_ANNOTATION, shape["run"]),
            (EXIT_CODE_ANNOTATION, shape["exit"]),
            (READY_AFTER_ANNOTATION, shape["ready"]),
            (INIT_DURATION_ANNOTATION, shape["init"]),
        )
        if value is not None
    }
    inits = [container("init", image="busybox:1", cpu="10m")] if shape["init"] is not None else []
    p = pod(
        name,
        node=NODE,
        containers=[container("app", image=shape["image"], cpu="100m")],
        init_containers=inits,
        annotations=notes,
    )
    return replace(p, spec=replace(p.spec, restart_policy=shape["policy"]))


def _settings(kind: str) -> tuple[KubeletSettings, Latency | None]:
    base = KubeletSettings(container_events=False, heartbeat_interval=0)
    if kind == "start-delay":
        return dataclasses.replace(base, container_start=Latency(1.0, jitter=0.5)), None
    if kind == "pulls":
        return dataclasses.replace(base, image_pull_bandwidth=25 * Mi, image_sizes={"redis:7": 30 * Mi}), None
    if kind == "watch-lag":
        return base, Latency(0.3)
    if kind == "events":  # the container Events (Pulling, Pulled, Created, Started, Killing, BackOff)
        return dataclasses.replace(base, container_events=True), Latency(0.3)
    if kind == "events-pulls":
        return dataclasses.replace(
            base, container_events=True, image_pull_bandwidth=25 * Mi, image_sizes={"redis:7": 30 * Mi}
        ), None
    return base, None


async def _play(ops: list[tuple[Any, ...]], kind: str) -> tuple[list[Any], dict[str, Any]]:
    kubelet_settings, watch = _settings(kind)
    node = make_node(images=[ContainerImage(names=[NGINX], size_bytes=50 * Mi)])
    async with world(kubelet_settings, node=node, watch_latency=watch) as w:
        server, t = w.cluster.server, 1.0
        await w.at(t)
        for op, a, b in ops:
            try:
                if op == "create":
                    server.create(_pod(a, b))
                elif op == "delete":
                    server.delete("Pod", a, "default", grace_period_seconds=b)
                elif op == "force":  # behind the kubelet's back: no graceful delete first
                    server.delete("Pod", a, "default", grace_period_seconds=0)
                elif op == "label":
                    p = server.get("Pod", a, "default")
                    meta = replace(p.metadata, labels={**p.metadata.labels, "touched": str(t)})
                    server.update(replace(p, metadata=meta))
                elif op == "image":
                    p = server.get("Pod", a, "default")
                    app = replace(p.spec.containers[0], image=b)
                    server.update(replace(p, spec=replace(p.spec, containers=[app])))
                elif op == "stop" and not w.task.done():
                    w.task.cancel()
            except Exception as err:  # a pod absent, already there or invalid: the same either way
                w.cluster.writes.append(type(err).__name__)  # type: ignore[arg-type]
            t += a if op == "wait" else 0.0  # on a coarse grid: the pods' timers and the ops meet
            await w.at(t)
        await w.at(t + 40.0)
        writes = [x if isinstance(x, str) else (x.revision, x.time, x.verb, x.kind, x.new) for x in w.cluster.writes]
        stats = w.kubelet.statistics()
        return writes, stats


def _run(ops: list[tuple[Any, ...]], kind: str, steps: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setattr(PodSteps, "enabled", steps)
        loop = VirtualTimeEventLoop()
        try:
            return loop.run_until_complete(_play(ops, kind))
        finally:
            loop.close()


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(ops=OPS, kind=SETTINGS)
@example(ops=MEETING, kind="instant")
@example(ops=MEETING, kind="pulls")
@example(ops=MEETING, kind="events-pulls")
def test_pods_on_handles_write_what_their_tasks_write(
    ops: list[tuple[Any, ...]], kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _run(ops, kind, True, monkeypatch) == _run(ops, kind, False, monkeypatch)


def test_the_runs_reach_the_handles_and_the_tasks_left_to_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison covers pods that run on handles to their end, pods whose write met a
    Conflict (their watch lagging behind someone else's write) and went on in a task, and
    Event writes stepped from the handles."""
    started: list[FastRun] = []
    carried: list[str] = []
    start, carry = PodSteps.start, PodSteps._carry

    def counting_start(self: PodSteps, rec: Any, host_ip: str) -> FastRun:
        fast = start(self, rec, host_ip)
        started.append(fast)
        return fast

    def counting_carry(self: PodSteps, fast: FastRun, coro: Any) -> None:
        carried.append(coro.__qualname__)
        carry(self, fast, coro)

    stepped: list[str] = []
    step = PodSteps._step

    def counting_step(self: PodSteps, fast: FastRun, coro: Any, then: Any, waited: Any = None) -> None:
        if waited is podsteps._FIRST:
            stepped.append(coro.__qualname__)
        step(self, fast, coro, then, waited)

    monkeypatch.setattr(PodSteps, "start", counting_start)
    monkeypatch.setattr(PodSteps, "_carry", counting_carry)
    monkeypatch.setattr(PodSteps, "_step", counting_step)
    plain = PLAIN
    ops = [
        ("create", "a", plain),
        ("create", "b", {**plain, "ready": "2s", "run": "20s"}),
        ("wait", 2.1, None),
        ("label", "b", None),  # just before b's ready write, which the watch's lag makes conflict
        ("wait", 1.5, None),
        ("create", "c", {**plain, "exit": "1", "policy": "Always", "run": "1s"}),
        ("wait", 5.0, None),
    ]
    on = _run(ops, "watch-lag", True, monkeypatch)
    assert len(started) == 3
    assert "PodSteps._run_then" in carried  # b's ready write met the Conflict
    assert "PodWorker.after_write" in stepped  # c's restart: a BackOff Event, written from the step
    off = _run(ops, "watch-lag", False, monkeypatch)
    assert len(started) == 3  # none with the steps off
    assert on == off
    succeeded = [x for x in on[0] if not isinstance(x, str) and x[3] == "Pod" and x[4].status.phase == "Succeeded"]
    assert [x[4].metadata.name for x in succeeded] == ["a", "b"]


def test_a_step_that_fails_fails_the_kubelet_as_the_pods_task_would(monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception in a step is not left to the loop's handler: the kubelet's task group
    fails with it, as it fails when a pod's task raises."""

    def broken(*_args: Any) -> Any:
        raise RuntimeError("a bug in a status builder")

    async def play() -> None:
        async with world(KubeletSettings(container_events=False, heartbeat_interval=0)) as w:
            monkeypatch.setattr(PodWorker, "started_build", broken)
            w.cluster.server.create(_pod("a", PLAIN))
            await w.at(2.0)

    for steps in (True, False):
        monkeypatch.setattr(PodSteps, "enabled", steps)
        loop = VirtualTimeEventLoop()
        try:
            with pytest.raises(BaseExceptionGroup) as failed:
                loop.run_until_complete(play())
        finally:
            loop.close()
        bugs = failed.value.subgroup(lambda e: isinstance(e, RuntimeError))
        assert bugs is not None
        assert "a bug in a status builder" in repr(bugs)


def test_a_failing_step_fails_the_kubelet_and_stops_every_pod_on_handles() -> None:
    # Pod a's status builder raises at its first exit tick (t=2). The kubelet's run fails with
    # that error, and no pod on handles writes once it was raised (before the fix, pods due
    # in the same instant kept stepping while the group aborted, and a continuation's spawn
    # into the aborting group went to the loop's exception handler).
    orig_build = PodWorker.run_build
    errors: list[dict[str, Any]] = []
    shapes = [
        {**PLAIN, "run": "2s", "exit": "1", "policy": "Always", "ready": "1s"},
        {**PLAIN, "run": "1s", "exit": "1", "policy": "Always", "ready": "2s"},
        {**PLAIN, "run": "3s", "policy": "Never"},
        {**PLAIN, "run": "1s", "ready": "2s"},
        {**PLAIN, "run": "3s", "policy": "Never", "ready": "1s"},
    ]
    raised_at: list[float] = []

    def run_build(self: PodWorker, run: Any, ips: Any) -> Any:
        build = orig_build(self, run, ips)

        def wrapped(p: Pod) -> Any:
            if p.metadata.name == "a" and p.status.phase == "Running":
                raised_at.append(asyncio.get_running_loop().time())
                raise RuntimeError("boom")
            return build(p)

        return wrapped

    captured: dict[str, Any] = {}

    async def go() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: errors.append(ctx))
        node = make_node(images=[ContainerImage(names=[NGINX], size_bytes=50 * 2**20)])
        async with world(KubeletSettings(container_events=False, heartbeat_interval=0), node=node) as w:
            captured["w"] = w
            await w.at(1.0)
            for name, shape in zip("abcde", shapes, strict=True):
                w.cluster.server.create(_pod(name, shape))
            await w.at(30.0)

    loop = VirtualTimeEventLoop()
    PodSteps.enabled = True
    try:
        with pytest.MonkeyPatch.context() as m:
            m.setattr(PodWorker, "run_build", run_build)
            with pytest.raises(BaseException) as failed:  # noqa: PT011 (whatever wraps it: "boom" below)
                loop.run_until_complete(go())
    finally:
        loop.close()
    assert "boom" in repr(failed.value)
    assert raised_at
    writes = [x for x in captured["w"].cluster.writes if x.kind == "Pod" and x.verb == "updateStatus"]
    assert writes
    assert all(x.time < raised_at[0] for x in writes)
    assert errors == []
