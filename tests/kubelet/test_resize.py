"""In-place resize on the kubelet (upstream 1.34's allocation manager), on the virtual clock:
an accepted resize is allocated at once (``allocatedResources``, ``PodResizeInProgress``) and
actuated ``ACTUATION_SECONDS`` later (``resources``, the condition cleared); a resize beyond the
node's allocatable is ``Infeasible``; one that does not fit next to the other pods is
``Deferred`` with the admission's message and accepted once a pod leaves; a resize back to the
allocated resources clears the pending condition."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from agents.kubelet.resize import ACTUATION_SECONDS
from emulator.base.api.core import ContainerResizePolicy, Event, Pod, ResourceRequirements
from emulator.base.api.quantity import parse_quantity
from tests.kubelet.test_kubelet import NODE, make_pod, world


def _resized(p: Pod, cpu: str) -> Pod:
    c = p.spec.containers[0]
    res = ResourceRequirements(requests={**c.resources.requests, "cpu": parse_quantity(cpu)})
    return replace(p, spec=replace(p.spec, containers=[replace(c, resources=res)]))


def _cond(p: Pod, kind: str) -> Any:
    return next(((c.reason, c.message) for c in p.status.conditions if c.type == kind), None)


def _alloc(p: Pod) -> str:
    got = p.status.container_statuses[0].allocated_resources
    return str(got["cpu"])  # type: ignore[index]


def _actual(p: Pod) -> str:
    got = p.status.container_statuses[0].resources
    return str(got.requests["cpu"])  # type: ignore[union-attr]


@pytest.mark.asyncio
async def test_accepted_then_actuated() -> None:
    async with world() as w:
        w.cluster.server.create(make_pod("a", cpu="1"))
        await w.at(5.0)
        assert w.pod("a").status.phase == "Running"
        assert (_alloc(w.pod("a")), _actual(w.pod("a"))) == ("1", "1")
        w.cluster.server.update_resize(_resized(w.pod("a"), "2"))
        await w.at(5.0 + ACTUATION_SECONDS / 2)
        p = w.pod("a")
        assert (_alloc(p), _actual(p)) == ("2", "1")
        assert _cond(p, "PodResizeInProgress") == ("", "")
        await w.at(5.0 + ACTUATION_SECONDS * 2)
        p = w.pod("a")
        assert (_alloc(p), _actual(p)) == ("2", "2")
        assert _cond(p, "PodResizeInProgress") is None
        assert p.metadata.generation == 2


@pytest.mark.asyncio
async def test_infeasible() -> None:
    async with world() as w:
        w.cluster.server.create(make_pod("a", cpu="1"))
        await w.at(5.0)
        w.cluster.server.update_resize(_resized(w.pod("a"), "5"))
        await w.at(6.0)
        p = w.pod("a")
        assert _cond(p, "PodResizePending") == (
            "Infeasible",
            "Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000",
        )
        assert _alloc(p) == "1"


@pytest.mark.asyncio
async def test_deferred_until_a_pod_leaves_then_cleared() -> None:
    async with world() as w:
        server = w.cluster.server
        server.create(make_pod("a", cpu="1"))
        server.create(make_pod("b", cpu="2"))
        await w.at(5.0)
        server.update_resize(_resized(w.pod("a"), "2500m"))
        await w.at(6.0)
        p = w.pod("a")
        assert _cond(p, "PodResizePending") == (
            "Deferred",
            "Node didn't have enough resource: cpu, requested: 2500, used: 2000, capacity: 4000",
        )
        assert w.kubelet._resizer.pending == [("default", "a")]
        server.delete("Pod", "b", "default", grace_period_seconds=0)
        await w.at(8.0)
        p = w.pod("a")
        assert _cond(p, "PodResizePending") is None
        assert (_alloc(p), _actual(p)) == ("2500m", "2500m")
        assert w.kubelet._resizer.pending == []


@pytest.mark.asyncio
async def test_resize_back_clears_pending() -> None:
    async with world() as w:
        server = w.cluster.server
        server.create(make_pod("a", cpu="1"))
        server.create(make_pod("b", cpu="2"))
        await w.at(5.0)
        server.update_resize(_resized(w.pod("a"), "2500m"))
        await w.at(6.0)
        assert _cond(w.pod("a"), "PodResizePending") is not None
        server.update_resize(_resized(w.pod("a"), "1"))
        await w.at(7.0)
        assert _cond(w.pod("a"), "PodResizePending") is None
        assert w.kubelet._resizer.pending == []
        assert w.pod("a").spec.node_name == NODE


@pytest.mark.asyncio
@pytest.mark.parametrize("resize_first", [False, True])
async def test_race_pod_bound_while_a_resize_is_accepted(resize_first: bool) -> None:
    """The scheduler (its cache still counting ``a`` at 1 cpu) binds ``b`` (2 cpu) to the node
    in the very instant ``a`` is resized to 3 cpu: the kubelet referees in the order the writes
    came, as upstream's does. ``b`` first: admitted, and the resize Deferred; the resize first:
    accepted, and ``b`` rejected OutOfcpu. The node is never overcommitted."""
    async with world() as w:
        server = w.cluster.server
        server.create(make_pod("a", cpu="1"))
        await w.at(5.0)
        if resize_first:
            server.update_resize(_resized(w.pod("a"), "3"))
            server.create(make_pod("b", cpu="2"))
        else:
            server.create(make_pod("b", cpu="2"))
            server.update_resize(_resized(w.pod("a"), "3"))
        await w.at(8.0)
        a, b = w.pod("a"), w.pod("b")
        if resize_first:
            assert (_alloc(a), _cond(a, "PodResizePending")) == ("3", None)
            assert (b.status.phase, b.status.reason) == ("Failed", "OutOfcpu")
        else:
            assert b.status.phase == "Running"
            assert _cond(a, "PodResizePending") == (
                "Deferred",
                "Node didn't have enough resource: cpu, requested: 3000, used: 2000, capacity: 4000",
            )
            assert _alloc(a) == "1"
        assert w.kubelet._usage.requested["cpu"] <= 4000


@pytest.mark.asyncio
async def test_observed_generation_follows_the_resize() -> None:
    async with world() as w:
        w.cluster.server.create(make_pod("a", cpu="1"))
        await w.at(5.0)
        assert w.pod("a").status.observed_generation == 1
        w.cluster.server.update_resize(_resized(w.pod("a"), "2"))
        await w.at(6.0)
        p = w.pod("a")
        assert (p.metadata.generation, p.status.observed_generation) == (2, 2)
        ready = next(c for c in p.status.conditions if c.type == "Ready")
        assert ready.observed_generation == 2


def _with_policy(p: Pod, **policies: str) -> Pod:
    c = p.spec.containers[0]
    rp = [ContainerResizePolicy(resource_name=r, restart_policy=v) for r, v in policies.items()]
    return replace(p, spec=replace(p.spec, containers=[replace(c, resize_policy=rp)]))


def _resized_memory(p: Pod, memory: str) -> Pod:
    c = p.spec.containers[0]
    res = ResourceRequirements(requests={**c.resources.requests, "memory": parse_quantity(memory)})
    return replace(p, spec=replace(p.spec, containers=[replace(c, resources=res)]))


def _killings(w: Any, name: str) -> list[str]:
    return [
        r.new.message
        for r in w.of("Event")
        if isinstance(r.new, Event) and r.new.reason == "Killing" and r.new.involved_object.name == name
    ]


@pytest.mark.asyncio
async def test_restart_container_policy_restarts_the_container_for_its_resource_only() -> None:
    """Upstream ``computePodResizeAction``: a changed resource whose policy is
    ``RestartContainer`` kills and starts the container (Killing "Container app resize requires
    restart", exit 143, restartCount + 1); a change to a ``NotRequired`` resource does not."""
    async with world() as w:
        w.cluster.server.create(_with_policy(make_pod("a", cpu="1"), cpu="NotRequired", memory="RestartContainer"))
        await w.at(5.0)
        w.cluster.server.update_resize(_resized(w.pod("a"), "2"))
        await w.at(6.0)
        cs = w.pod("a").status.container_statuses[0]
        assert (_actual(w.pod("a")), cs.restart_count, _killings(w, "a")) == ("2", 0, [])
        w.cluster.server.update_resize(_resized_memory(w.pod("a"), "256Mi"))
        await w.at(7.0)
        p = w.pod("a")
        cs = p.status.container_statuses[0]
        assert _killings(w, "a") == ["Container app resize requires restart"]
        assert cs.restart_count == 1
        assert cs.last_state.terminated is not None
        assert cs.last_state.terminated.exit_code == 143
        assert cs.state.running is not None
        assert str(cs.resources.requests["memory"]) == "256Mi"  # type: ignore[union-attr]
        assert _cond(p, "PodResizeInProgress") is None
        assert p.status.phase == "Running"
