"""The kubelet's pod writes retry failed calls after ``API_RETRY``'s waits (0.5 s doubling to
30 s, until done); a Conflict re-reads at once without advancing the backoff; NotFound ends
the call. Pins the timing the old ``retry_delay(attempt)`` had."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from msgspec.structs import replace

from agents.kubelet.podapi import API_RETRY, PodWriter
from emulator.base.api.codec import convert
from emulator.base.api.core import Namespace, Pod, PodStatus
from emulator.base.api.errors import ApiError, Conflict, InternalError, NotFound
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver import ApiServer
from emulator.base.client.client import Client, Interceptor
from emulator.base.client.retry import UNLIMITED, Backoff, on_error
from emulator.base.runtime.clock import LoopClock

OLD_WAITS = [min(0.5 * 2.0 ** min(a, 16), 30.0) for a in range(12)]  # the former retry_delay


def _setup() -> tuple[ApiServer, Client, LoopClock, Pod]:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    srv = ApiServer(clock, random.Random(0))
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    pod = srv.create(
        convert(
            {
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]},
            },
            Pod,
        )
    )
    return srv, Client(srv, clock, random.Random(1), name="kubelet:n1"), clock, pod


def _failing(clock: LoopClock, verb: str, errors: list[ApiError], seen: list[float]) -> Interceptor:
    async def interceptor(agent: str, v: str, kind: str) -> None:
        if v == verb and kind == "Pod":
            seen.append(clock.now())
            if errors:
                raise errors.pop(0)

    return interceptor


def _times(waits: list[float]) -> list[float]:
    t, out = 0.0, [0.0]
    for w in waits:
        t += w
        out.append(t)
    return out


def test_api_retry_is_the_old_schedule() -> None:
    assert Backoff(duration=0.5, factor=2.0, cap=30.0, steps=UNLIMITED) == API_RETRY
    waits = API_RETRY.delays()
    assert [next(waits) for _ in OLD_WAITS] == OLD_WAITS


@pytest.mark.parametrize("failures", [pytest.param(1, id="one"), pytest.param(8, id="past-the-cap")])
@pytest.mark.asyncio
async def test_confirm_deletion_retries_until_done(failures: int) -> None:
    srv, client, clock, pod = _setup()
    seen: list[float] = []
    client.interceptor = _failing(clock, "delete", [InternalError(str(i)) for i in range(failures)], seen)
    writer = PodWriter(client, clock, "n1")
    await writer.confirm_deletion("default", "p", pod.metadata.uid)
    assert seen == _times(OLD_WAITS[:failures])
    assert writer.api_errors == failures
    assert srv.list("Pod")[0] == []


@pytest.mark.asyncio
async def test_write_status_conflict_rereads_at_once_and_errors_back_off() -> None:
    _, client, clock, pod = _setup()
    seen: list[float] = []
    errors: list[ApiError] = [InternalError("a"), Conflict("b"), InternalError("c"), Conflict("d")]
    client.interceptor = _failing(clock, "updateStatus", errors, seen)
    writer = PodWriter(client, clock, "n1")

    def build(p: Pod) -> PodStatus:
        return replace(p.status, phase="Running")

    written = await writer.write_status(pod, pod.metadata.uid, build)
    assert written is not None
    assert written.status.phase == "Running"
    # waits 0.5 after "a", none after "b", 1.0 after "c", none after "d"
    assert seen == [0.0, 0.5, 0.5, 1.5, 1.5]
    assert (writer.api_errors, writer.conflicts, writer.status_writes) == (2, 2, 1)


@pytest.mark.asyncio
async def test_write_status_gives_up_on_a_deleted_pod() -> None:
    srv, client, clock, pod = _setup()
    srv.delete("Pod", "p", "default", grace_period_seconds=0)
    writer = PodWriter(client, clock, "n1")
    assert await writer.write_status(pod, pod.metadata.uid, lambda p: p.status) is None
    assert clock.now() == 0.0


async def _reference_write_status(writer: PodWriter, current: Pod, uid: str, build: Any) -> Pod | None:
    """``PodWriter.write_status`` as it was before its first try ran without ``on_error``:
    every try an ``attempt`` coroutine under ``on_error``."""
    client = writer._client
    namespace, name = current.metadata.namespace, current.metadata.name
    pod: Pod | None = current

    async def attempt() -> Pod | None:
        nonlocal pod
        while True:
            if pod is None:
                pod = await client.get("Pod", name, namespace)
            assert pod is not None
            meta = pod.metadata
            if meta.uid != uid or meta.deletion_timestamp is not None or pod.status.phase in ("Succeeded", "Failed"):
                return None
            try:
                written: Pod = await client.update_status(replace(pod, status=build(pod)))
            except Conflict:
                writer.conflicts += 1
                pod = None
                continue
            except ApiError:
                pod = None
                raise
            writer.status_writes += 1
            return written

    try:
        return await on_error(API_RETRY, writer._transient, attempt, clock=writer._clock, attempts=UNLIMITED)
    except NotFound:
        return None


_SEQUENCES = {
    "clean": [],
    "conflict": ["Conflict"],
    "conflicts": ["Conflict", "Conflict", "Conflict"],
    "error": ["Internal"],
    "errors-then-conflict": ["Internal", "Internal", "Conflict", "Internal"],
    "conflict-then-error": ["Conflict", "Internal"],
    "not-found": ["NotFound"],
    "error-then-not-found": ["Internal", "NotFound"],
    "conflict-then-not-found": ["Conflict", "NotFound"],
    "bug": ["ValueError"],
    "error-then-bug": ["Internal", "ValueError"],
    "conflict-then-terminal": ["Conflict", "terminal"],
    "error-then-terminal": ["Internal", "terminal"],
}


@pytest.mark.parametrize("sequence", list(_SEQUENCES), ids=list(_SEQUENCES))
@pytest.mark.asyncio
async def test_write_status_does_what_the_on_error_reference_does(sequence: str) -> None:
    """The first try runs without ``on_error``; every error sequence gives what the reference
    gives: the calls' times, the counters, the result (or the error raised)."""

    async def play(reference: bool) -> tuple[Any, ...]:
        srv, client, clock, pod = _setup()
        seen: list[tuple[str, float]] = []
        steps = list(_SEQUENCES[sequence])

        async def interceptor(agent: str, verb: str, kind: str) -> None:
            if kind != "Pod":
                return
            seen.append((verb, clock.now()))
            if verb != "updateStatus" or not steps:
                return
            step = steps.pop(0)
            if step == "terminal":  # someone else finished it before this write
                srv.update_status(replace(srv.get("Pod", "p", "default"), status=PodStatus(phase="Failed")))
                raise Conflict("finished")
            raise {"Conflict": Conflict, "Internal": InternalError, "NotFound": NotFound, "ValueError": ValueError}[
                step
            ](step)

        client.interceptor = interceptor
        writer = PodWriter(client, clock, "n1")

        def build(p: Pod) -> PodStatus:
            return replace(p.status, phase="Running")

        call = _reference_write_status(writer, pod, pod.metadata.uid, build) if reference else None
        try:
            if call is None:
                written = await writer.write_status(pod, pod.metadata.uid, build)
            else:
                written = await call
            outcome: Any = None if written is None else (written.status.phase, written.metadata.resource_version)
        except ValueError as err:
            outcome = repr(err)
        return outcome, seen, writer.api_errors, writer.conflicts, writer.status_writes, clock.now()

    assert await play(False) == await play(True)
