"""``EventRecorder(mode="series")`` with a client whose calls cannot suspend creates the first
Event of a key at once (no coroutine for the series step and the client's call) and awaits the
rest as before. Against the recorder whose client is made not ``instant`` (every create
awaited): random runs of Events (repeats of one key and new keys, time passing, the finish
pass) with server errors injected on creates and updates give the same stored Events and
revision, the same writes at the same virtual times, the same counters (recorded, repeats,
failed, the errors handed on, the client's calls and errors)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.base.api.core import Namespace
from emulator.base.api.errors import ApiError, InternalError, Invalid
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.apiserver import ApiServer
from emulator.base.client.client import Client
from emulator.base.client.events import EventRecorder
from emulator.base.runtime.clock import LoopClock
from emulator.base.runtime.loop import VirtualTimeEventLoop

PODS = [ObjectReference(api_version="v1", kind="Pod", namespace="default", name=f"p{i}", uid=f"u{i}") for i in range(3)]
STEPS = st.lists(
    st.tuples(
        st.integers(0, 2),  # which pod
        st.sampled_from(["Scheduled", "FailedScheduling"]),
        st.sampled_from([0.0, 0.0, 1.0, 400.0]),  # time passing first
        st.sampled_from([None, None, None, "internal", "invalid"]),  # the write's error
        st.booleans(),  # the finish pass after it
    ),
    max_size=12,
)


async def _scenario(fast: bool, steps: list[tuple[int, str, float, str | None, bool]]) -> Any:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    srv = ApiServer(clock, random.Random(0))
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    writes: list[tuple[float, str, str]] = []
    srv.add_write_listener(lambda rec: writes.append((rec.time, rec.verb, rec.kind)))
    client = Client(srv, clock, random.Random(1), name="default-scheduler")
    assert client.instant("Event")
    if not fast:
        client.instant = lambda kind="": False  # type: ignore[method-assign]
    failures: list[str] = []
    rec = EventRecorder(
        client,
        clock,
        "default-scheduler",
        legacy_source=False,
        naming="random",
        rng=random.Random(3),
        mode="series",
        on_error=lambda err: failures.append(f"{type(err).__name__}: {err}"),
    )
    error: list[ApiError] = []
    real_create, real_update = srv.create, srv.update

    def create(obj: Any, **options: Any) -> Any:
        if error:
            raise error.pop()
        return real_create(obj, **options)

    def update(obj: Any) -> Any:
        if error:
            raise error.pop()
        return real_update(obj)

    srv.create = create  # type: ignore[method-assign]
    srv.update = update  # type: ignore[method-assign]
    for pod, reason, wait, err, finish in steps:
        if wait:
            await clock.sleep(wait)
        if err is not None:
            error[:] = [InternalError("injected") if err == "internal" else Invalid("injected")]
        kind = "Normal" if reason == "Scheduled" else "Warning"
        await rec.event(PODS[pod], kind, reason, f"{reason} {pod}", action="Binding")
        error.clear()
        if finish:
            await rec.finish_series()
    counters = (rec.recorded, rec.repeats, rec.failed, failures, client.stats.calls, client.stats.errors)
    return counters, writes, srv.list("Event"), srv.revision, clock.now()


def _run(fast: bool, steps: list[tuple[int, str, float, str | None, bool]]) -> Any:
    loop = VirtualTimeEventLoop()
    try:
        return loop.run_until_complete(_scenario(fast, steps))
    finally:
        loop.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS)
def test_series_events_at_once_equal_the_awaited_creates(steps: list[tuple[int, str, float, str | None, bool]]) -> None:
    assert _run(True, steps) == _run(False, steps)


def test_cases_that_matter_are_reached() -> None:
    """A created Event, a failed create, a series update and a finished series are covered."""
    steps = [(0, "Scheduled", 0.0, None, False), (1, "Scheduled", 0.0, "internal", False)]
    steps += [
        (0, "Scheduled", 1.0, None, False),
        (0, "Scheduled", 400.0, None, True),
        (2, "Scheduled", 400.0, None, True),
    ]
    counters, writes, stored, _, _ = _run(True, steps)
    assert counters[:4] == (2, 2, 1, ["InternalError: injected"])
    created, updated = "create", "update"
    assert writes == [
        (0.0, created, "Event"),
        (1.0, updated, "Event"),
        (801.0, created, "Event"),
        (801.0, updated, "Event"),
    ]
    assert len(stored) == 2
