"""A client whose calls cannot suspend (``Client.instant``) calls the server directly from its
hot verbs (create, get, update_status, bind, delete); that is ``_call`` with nothing to
await: random sequences of calls (successes and typed errors alike) give the same answers,
errors, server state and call and error counts as a client whose every call goes through
``_call`` (a no-op interceptor). ``instant`` itself: no limiter (the Event limiter for
Events), no interceptor, no latency (also when the latency is set after construction)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from emulator.base.api.codec import convert
from emulator.base.api.core import Event, Namespace, Pod, PodStatus
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.apiserver import ApiServer
from emulator.base.client.client import Client, Latency
from emulator.base.client.ratelimit import TokenBucket
from tests.clocks import ManualClock

OPS = st.sampled_from(["create", "create-event", "get", "status", "stale-status", "bind", "delete"])


async def _noop(agent: str, verb: str, kind: str) -> None:
    return None


def _pod(name: str) -> Pod:
    return convert({"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "i"}]}}, Pod)


async def _run(client: Client, srv: ApiServer, ops: list[tuple[str, str]]) -> list[Any]:
    out: list[Any] = []
    for op, name in ops:
        try:
            if op == "create":
                res: Any = await client.create(_pod(name))
            elif op == "create-event":
                ref = ObjectReference(kind="Pod", name=name, namespace="default")
                ev = Event(metadata=ObjectMeta(name=f"{name}.1", namespace="default"), involved_object=ref, reason="R")
                res = await client.create(ev)
            elif op == "get":
                res = await client.get("Pod", name, "default")
            elif op in ("status", "stale-status"):
                pod = srv.get("Pod", name, "default")
                if op == "stale-status":
                    pod = replace(pod, metadata=replace(pod.metadata, resource_version="1"))
                res = await client.update_status(replace(pod, status=PodStatus(phase="Running", reason=str(len(out)))))
            elif op == "bind":
                res = await client.bind("default", name, "n1")
            else:
                res = await client.delete("Pod", name, "default")
        except Exception as err:
            res = (type(err).__name__, str(err))
        out.append(res)
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(OPS, st.sampled_from(["a", "b"])), max_size=12))
def test_direct_calls_equal_calls_through_call(ops: list[tuple[str, str]]) -> None:
    results = []
    for direct in (True, False):
        srv = ApiServer(ManualClock(), random.Random(0))
        srv.create(Namespace(metadata=ObjectMeta(name="default")))
        client = Client(srv, ManualClock(), random.Random(1), name="c")  # type: ignore[arg-type]
        if not direct:
            client.interceptor = _noop
        assert client.instant() is direct
        answers = asyncio.run(_run(client, srv, ops))
        results.append((answers, client.stats.calls, client.stats.errors, srv.list("Pod"), srv.list("Event")))
    assert results[0] == results[1]


def test_instant() -> None:
    clock = ManualClock()
    srv = ApiServer(clock, random.Random(0))
    client = Client(srv, clock, random.Random(1), name="c")  # type: ignore[arg-type]
    assert client.instant()
    assert client.instant("Event")
    client.event_rate_limiter = TokenBucket(10, 1, clock)  # type: ignore[arg-type]
    assert client.instant("Pod")
    assert not client.instant("Event")
    client.event_rate_limiter = None
    client.rate_limiter = TokenBucket(10, 1, clock)  # type: ignore[arg-type]
    assert not client.instant("Pod")
    assert client.instant("Event")
    client.rate_limiter = None
    client.api_latency = Latency(0.0, 0.01)
    assert not client.instant()
    assert not client.instant("Event")
    client.api_latency = Latency()
    assert client.instant()
    client.interceptor = _noop
    assert not client.instant()
    slow = Client(srv, clock, random.Random(1), name="s", api_latency=Latency(0.01))  # type: ignore[arg-type]
    assert not slow.instant()


@pytest.mark.parametrize("kind", ["Pod", "Event"])
def test_a_limited_client_still_waits(kind: str) -> None:
    """With a limiter for the call's kind the call goes through ``_call`` (and its wait)."""
    clock = ManualClock()
    srv = ApiServer(clock, random.Random(0))
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    client = Client(srv, clock, random.Random(1), name="c")  # type: ignore[arg-type]
    waited: list[str] = []

    class Limiter:
        async def wait(self) -> None:
            waited.append(kind)

    if kind == "Event":
        client.event_rate_limiter = Limiter()  # type: ignore[assignment]
        ref = ObjectReference(kind="Pod", name="a", namespace="default")
        obj: Any = Event(metadata=ObjectMeta(name="a.1", namespace="default"), involved_object=ref, reason="R")
    else:
        client.rate_limiter = Limiter()  # type: ignore[assignment]
        obj = _pod("a")
    asyncio.run(client.create(obj))
    assert waited == [kind]
