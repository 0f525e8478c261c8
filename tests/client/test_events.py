"""``EventRecorder``: the Event each component writes (fields, name, namespace), the note
limit, repeats bumping ``count``, and failures handed to ``on_error`` instead of raised."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from emulator.base.api.core import Event, EventSource, Namespace
from emulator.base.api.errors import ApiError, InternalError
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.apiserver import ApiServer
from emulator.base.client.client import Client
from emulator.base.client.events import NOTE_LENGTH_LIMIT, EventRecorder
from emulator.base.runtime.clock import EPOCH, LoopClock

POD = ObjectReference(api_version="v1", kind="Pod", namespace="default", name="web-0", uid="uid-1")
NODE = ObjectReference(api_version="v1", kind="Node", name="n1", uid="uid-n1")
EPOCH_NS = int(EPOCH.timestamp()) * 10**9


def setup() -> tuple[ApiServer, Client, LoopClock]:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    srv = ApiServer(clock, random.Random(0))
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    srv.create(Namespace(metadata=ObjectMeta(name="team-a")))
    return srv, Client(srv, clock, random.Random(1), name="agent"), clock


def events(srv: ApiServer) -> list[Event]:
    items: list[Event] = srv.list("Event")[0]
    return sorted(items, key=lambda e: (e.metadata.namespace, e.metadata.name))


def _stored(ev: Event) -> Event:
    """``ev`` without what the API server stamps on it."""
    return Event(
        metadata=ObjectMeta(name=ev.metadata.name, namespace=ev.metadata.namespace),
        **{f: getattr(ev, f) for f in Event.__struct_fields__ if f != "metadata"},
    )


@pytest.mark.parametrize(
    ("kwargs", "involved", "expected"),
    [
        pytest.param(
            {"component": "node-controller"},
            NODE,
            {
                "name": f"n1.{EPOCH_NS + 7_250_000_000:x}",
                "namespace": "default",
                "source": EventSource(component="node-controller"),
                "reporting_component": "node-controller",
                "reporting_instance": "",
            },
            id="controller-cluster-scoped-object",
        ),
        pytest.param(
            {"component": "kubelet", "instance": "n1", "host": "n1"},
            POD,
            {
                "name": f"web-0.{EPOCH_NS + 7_250_000_000:x}",
                "namespace": "default",
                "source": EventSource(component="kubelet", host="n1"),
                "reporting_component": "kubelet",
                "reporting_instance": "n1",
            },
            id="kubelet",
        ),
        pytest.param(
            {"component": "default-scheduler", "legacy_source": False, "naming": "random", "rng": random.Random(4)},
            POD,
            {
                "name": f"web-0.{random.Random(4).getrandbits(64):016x}",
                "namespace": "default",
                "source": EventSource(),
                "reporting_component": "default-scheduler",
                "reporting_instance": "",
            },
            id="scheduler-random-name-no-source",
        ),
    ],
)
@pytest.mark.asyncio
async def test_the_event_each_component_writes(
    kwargs: dict[str, Any], involved: ObjectReference, expected: dict[str, Any]
) -> None:
    srv, client, clock = setup()
    recorder = EventRecorder(client, clock, **kwargs)
    await clock.sleep(7.25)
    await recorder.event(involved, "Warning", "Testing", "something happened")
    [ev] = events(srv)
    assert _stored(ev) == Event(
        metadata=ObjectMeta(name=expected["name"], namespace=expected["namespace"]),
        involved_object=involved,
        reason="Testing",
        message="something happened",
        type="Warning",
        source=expected["source"],
        first_timestamp="2026-01-01T00:00:07Z",
        last_timestamp="2026-01-01T00:00:07Z",
        reporting_component=expected["reporting_component"],
        reporting_instance=expected["reporting_instance"],
    )
    assert recorder.recorded == 1


@pytest.mark.asyncio
async def test_generated_name_is_left_to_the_server() -> None:
    srv, client, clock = setup()
    recorder = EventRecorder(client, clock, "default-scheduler", naming="generated")
    ref = ObjectReference(kind="Pod", namespace="team-a", name="victim", uid="u")
    await recorder.event(ref, "Normal", "Preempted", "Preempted by pod x on node n1", action="Preempting")
    [ev] = events(srv)
    assert ev.metadata.namespace == "team-a"
    assert ev.metadata.name.startswith("victim.")
    assert len(ev.metadata.name) > len("victim.")
    assert ev.action == "Preempting"


@pytest.mark.parametrize(
    ("length", "stored"),
    [
        pytest.param(NOTE_LENGTH_LIMIT, "x" * NOTE_LENGTH_LIMIT, id="at-limit-kept"),
        pytest.param(NOTE_LENGTH_LIMIT + 1, "x" * (NOTE_LENGTH_LIMIT - 4) + " ...", id="over-limit-cut"),
    ],
)
@pytest.mark.asyncio
async def test_note_length_limit(length: int, stored: str) -> None:
    srv, client, clock = setup()
    await EventRecorder(client, clock, "c").event(POD, "Normal", "Long", "x" * length)
    [ev] = events(srv)
    assert ev.message == stored
    assert len(ev.message) <= NOTE_LENGTH_LIMIT


@pytest.mark.asyncio
async def test_repeats_bump_count_when_aggregating() -> None:
    srv, client, clock = setup()
    rng = random.Random(2)
    recorder = EventRecorder(client, clock, "s", legacy_source=False, naming="random", rng=rng, aggregate=True)
    await recorder.event(POD, "Warning", "FailedScheduling", "0/3 nodes are available")
    await clock.sleep(61)
    await recorder.event(POD, "Warning", "FailedScheduling", "0/3 nodes are available")
    await recorder.event(POD, "Warning", "FailedScheduling", "0/3 nodes are available")
    await recorder.event(POD, "Warning", "FailedScheduling", "0/4 nodes are available")
    first, second = sorted(events(srv), key=lambda e: e.message)
    assert (first.message, first.count) == ("0/3 nodes are available", 3)
    assert (first.first_timestamp, first.last_timestamp) == ("2026-01-01T00:00:00Z", "2026-01-01T00:01:01Z")
    assert (second.message, second.count) == ("0/4 nodes are available", 1)
    assert (recorder.recorded, recorder.repeats) == (2, 2)


@pytest.mark.asyncio
async def test_without_aggregation_every_event_is_its_own_object() -> None:
    srv, client, clock = setup()
    recorder = EventRecorder(client, clock, "c")
    await recorder.event(POD, "Normal", "R", "same")
    await clock.sleep(0.001)
    await recorder.event(POD, "Normal", "R", "same")
    assert [e.count for e in events(srv)] == [1, 1]


@pytest.mark.asyncio
async def test_a_failed_write_goes_to_on_error_and_is_not_raised() -> None:
    srv, client, clock = setup()
    seen: list[ApiError] = []

    async def refuse(agent: str, verb: str, kind: str) -> None:
        raise InternalError(f"{verb} {kind} refused")

    client.interceptor = refuse
    recorder = EventRecorder(client, clock, "kubelet", on_error=seen.append)
    await recorder.event(POD, "Warning", "Failed", "Error: x")
    await EventRecorder(client, clock, "quiet").event(POD, "Warning", "Failed", "Error: x")
    assert [str(e) for e in seen] == ["create Event refused"]
    assert recorder.failed == 1
    assert events(srv) == []


@pytest.mark.asyncio
async def test_repeat_of_a_vanished_event_is_a_failure_not_a_crash() -> None:
    srv, client, clock = setup()
    recorder = EventRecorder(client, clock, "s", naming="random", rng=random.Random(0), aggregate=True)
    await recorder.event(POD, "Warning", "R", "m")
    [ev] = events(srv)
    srv.delete("Event", ev.metadata.name, ev.metadata.namespace)
    await recorder.event(POD, "Warning", "R", "m")
    assert recorder.failed == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"naming": "random"}, 'naming="random"\\) needs the seeded random.Random', id="random-needs-rng"),
    ],
)
@pytest.mark.asyncio
async def test_recorder_refuses_bad_settings(kwargs: dict[str, Any], message: str) -> None:
    _, client, clock = setup()
    with pytest.raises(ValueError, match=message):
        EventRecorder(client, clock, "c", **kwargs)


@pytest.mark.asyncio
async def test_event_type_is_normal_or_warning() -> None:
    _, client, clock = setup()
    with pytest.raises(ValueError, match="Event type must be one of Normal, Warning, got 'Error'"):
        await EventRecorder(client, clock, "c").event(POD, "Error", "R", "m")


@pytest.mark.asyncio
async def test_repr_shows_counts() -> None:
    _, client, clock = setup()
    recorder = EventRecorder(client, clock, "kubelet", instance="n1")
    await recorder.event(POD, "Normal", "Pulled", "done")
    assert repr(recorder) == "<EventRecorder kubelet/n1 recorded=1 repeats=0 failed=0>"
