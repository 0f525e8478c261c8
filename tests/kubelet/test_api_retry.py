"""The kubelet's pod writes retry failed calls after ``API_RETRY``'s waits (0.5 s doubling to
30 s, until done); a Conflict re-reads at once without advancing the backoff; NotFound ends
the call. Pins the timing the old ``retry_delay(attempt)`` had."""

from __future__ import annotations

import asyncio
import random

import pytest
from msgspec.structs import replace

from agents.kubelet.podapi import API_RETRY, PodWriter
from emulator.base.api.codec import convert
from emulator.base.api.core import Namespace, Pod, PodStatus
from emulator.base.api.errors import ApiError, Conflict, InternalError
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver import ApiServer
from emulator.base.client.client import Client, Interceptor
from emulator.base.client.retry import UNLIMITED, Backoff
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
