"""``PodWriter.write_status`` with a client whose calls cannot suspend makes its first try at
once (no retry loop) and hands a failure to the loop as the loop would have met it. Against
the loop alone (``retry_status(..., None)``, the general path): random runs of server errors
(transient ``InternalError``/``Invalid``, ``Conflict``, ``NotFound``) raised by the server
itself, on fresh, stale, deleted, terminating, terminal and re-created pods, with and without
``deleting``, give the same answer, the same server calls at the same virtual times, the same
counters (status writes, conflicts, API errors, the client's calls and errors), and the same
stored pod."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.kubelet.podapi import PodWriter
from agents.kubelet.podrecord import PodRecord
from agents.kubelet.podworker import PodWorker
from agents.kubelet.settings import KubeletSettings
from emulator.base.api.codec import convert
from emulator.base.api.core import Namespace, Pod, PodStatus
from emulator.base.api.errors import ApiError, Conflict, InternalError, Invalid, NotFound
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver import ApiServer
from emulator.base.client.client import Client
from emulator.base.runtime.clock import LoopClock
from emulator.base.runtime.loop import VirtualTimeEventLoop

ERRORS = st.sampled_from(["internal", "invalid", "conflict", "notfound"])
STATES = st.sampled_from(["fresh", "stale", "deleted", "terminating", "terminal", "recreated", "finalized"])


def _error(name: str) -> ApiError:
    return {
        "internal": InternalError("injected"),
        "invalid": Invalid("injected"),
        "conflict": Conflict("injected"),
        "notfound": NotFound("injected"),
    }[name]


def _pod(name: str = "p", finalizers: list[str] | None = None) -> Pod:
    body = {
        "metadata": {"name": name, "namespace": "default", "finalizers": finalizers or []},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]},
    }
    return convert(body, Pod)


async def _scenario(fast: bool | str, state: str, errors: list[str], deleting: bool) -> Any:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    srv = ApiServer(clock, random.Random(0))
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    pod = srv.create(_pod(finalizers=["keep"] if state == "finalized" else None))
    uid = pod.metadata.uid
    if state == "stale":
        srv.update_status(replace(pod, status=replace(pod.status, reason="other")))
    elif state == "deleted":
        srv.delete("Pod", "p", "default", grace_period_seconds=0)
    elif state == "terminating":
        srv.delete("Pod", "p", "default", grace_period_seconds=30)  # bound, running: only marked
        pod = srv.get("Pod", "p", "default")
    elif state == "terminal":
        pod = srv.update_status(replace(pod, status=replace(pod.status, phase="Succeeded")))
    elif state == "recreated":
        srv.delete("Pod", "p", "default", grace_period_seconds=0)
        srv.create(_pod())
    elif state == "finalized":
        srv.delete("Pod", "p", "default", grace_period_seconds=0)  # kept, marked, by its finalizer
    client = Client(srv, clock, random.Random(1), name="kubelet:n1")
    assert client.instant("Pod")
    calls: list[tuple[float, str]] = []
    pending = list(errors)
    real = srv.update_status

    def update_status(obj: Any) -> Any:
        calls.append((clock.now(), obj.status.phase))
        if pending:
            raise _error(pending.pop(0))
        return real(obj)

    srv.update_status = update_status  # type: ignore[method-assign]
    writer = PodWriter(client, clock, "n1")
    built: list[str] = []

    def build(p: Pod) -> PodStatus:
        built.append(p.metadata.resource_version)
        return replace(p.status, phase="Running", reason=f"try{len(built)}")

    rec = PodRecord(("default", "p"), uid, pod)
    worker = PodWorker(clock, KubeletSettings(), writer, None, "n1", {}, lambda _rec: None)  # type: ignore[arg-type]
    worker.direct = fast == "direct"
    try:
        if fast in ("direct", "worker"):
            answer: Any = await worker.write_status(rec, build, deleting=deleting)
        elif fast:
            answer = await writer.write_status(pod, uid, build, deleting=deleting)
        else:
            answer = await writer.retry_status(pod, uid, build, deleting, None)
    except Exception as err:
        answer = (type(err).__name__, str(err))
    counters = (writer.status_writes, writer.conflicts, writer.api_errors, client.stats.calls, client.stats.errors)
    kept = (rec.pod, rec.reported, rec.writing)
    return answer, calls, built, counters, clock.now(), srv.list("Pod"), srv.revision, kept


def _run(fast: bool | str, state: str, errors: list[str], deleting: bool) -> Any:
    loop = VirtualTimeEventLoop()
    try:
        return loop.run_until_complete(_scenario(fast, state, errors, deleting))
    finally:
        loop.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STATES, st.lists(ERRORS, max_size=4), st.booleans())
def test_first_try_at_once_equals_the_retry_loop(state: str, errors: list[str], deleting: bool) -> None:
    assert _run(True, state, errors, deleting)[:-1] == _run(False, state, errors, deleting)[:-1]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STATES, st.lists(ERRORS, max_size=4), st.booleans())
def test_the_pod_workers_own_first_try_equals_the_writers(state: str, errors: list[str], deleting: bool) -> None:
    """``PodWorker.write_status`` trying first itself (``direct``) against handing every try to
    ``PodWriter.write_status``: the same answer, calls, builds, counters, stored pod, and the
    same record kept (newest pod, reported status, no write left in flight)."""
    assert _run("direct", state, errors, deleting) == _run("worker", state, errors, deleting)


def test_cases_that_matter_are_reached() -> None:
    """The comparison above covers a retried success, a give-up and a refused write."""
    answer, calls, _, counters, now, _, _, _ = _run(True, "fresh", ["internal", "conflict"], False)
    assert answer.status.phase == "Running"
    assert now == 0.5
    assert counters[:3] == (1, 1, 1)
    assert [t for t, _ in calls] == [0.0, 0.5, 0.5]
    answer, calls, _, counters, _, _, _, _ = _run(True, "deleted", [], False)
    assert answer is None
    assert len(calls) == 1
    assert counters[:3] == (0, 0, 0)
    answer, calls, _, _, _, _, _, _ = _run(True, "terminal", [], False)
    assert answer is None
    assert calls == []


def test_an_error_after_a_failed_first_try_carries_no_context_from_it() -> None:
    """The retry after a failed first try runs outside its ``except``: an error raised later
    (here by the status builder) is not chained to the first try's error, as under the
    retry loop alone."""

    async def main() -> BaseException | None:
        clock = LoopClock(asyncio.get_running_loop(), virtual=True)
        srv = ApiServer(clock, random.Random(0))
        srv.create(Namespace(metadata=ObjectMeta(name="default")))
        spec = {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}
        pod = srv.create(convert({"metadata": {"name": "p", "namespace": "default"}, "spec": spec}, Pod))
        client = Client(srv, clock, random.Random(1), name="kubelet:n1")
        real, calls = srv.update_status, [0]

        def flaky(obj: Any) -> Any:
            calls[0] += 1
            if calls[0] == 1:
                raise InternalError("transient")
            return real(obj)

        srv.update_status = flaky  # type: ignore[method-assign]
        builds = [0]

        def build(p: Pod) -> PodStatus:
            builds[0] += 1
            if builds[0] == 2:
                raise RuntimeError("a builder's bug")
            return replace(p.status, phase="Running")

        with pytest.raises(RuntimeError) as caught:
            await PodWriter(client, clock, "n1").write_status(pod, pod.metadata.uid, build)
        return caught.value.__context__

    loop = VirtualTimeEventLoop()
    try:
        assert loop.run_until_complete(main()) is None
    finally:
        loop.close()
