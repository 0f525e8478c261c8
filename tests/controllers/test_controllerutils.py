"""The controllers' shared helpers: upstream's ``ActivePodsWithRanks`` order one criterion
at a time, ``ControllerExpectations``, and ``slowStartBatch``."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from msgspec.structs import replace

from agents.controllers.controllerutils import (
    POD_DELETION_COST,
    BatchError,
    Expectations,
    deletion_order,
    related_ranks,
    slow_start_batch,
)
from emulator.base.api.core import ContainerStatus, Pod, PodCondition
from emulator.base.runtime.clock import LoopClock, StoppedClock, format_timestamp
from tests.builders import pod

NOW = 10_000.0


def p(
    name: str,
    *,
    node: str = "n1",
    phase: str = "Running",
    ready_at: float | None = None,
    cost: int | None = None,
    restarts: int = 0,
    created: float = 0.0,
) -> Pod:
    conds = (
        [PodCondition(type="Ready", status="True", last_transition_time=format_timestamp(ready_at))]
        if ready_at is not None
        else []
    )
    x = pod(
        name,
        uid=f"uid-{name}",
        node=node,
        phase=phase,
        conditions=conds,
        annotations={POD_DELETION_COST: str(cost)} if cost is not None else None,
    )
    return replace(
        x,
        metadata=replace(x.metadata, creation_timestamp=format_timestamp(created)),
        status=replace(x.status, container_statuses=[ContainerStatus(name="c", restart_count=restarts)]),
    )


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param(p("a", node=""), p("b"), id="unbound-first"),
        pytest.param(p("a", phase="Pending"), p("b", phase="Unknown"), id="pending-before-unknown"),
        pytest.param(p("a", phase="Unknown"), p("b", phase="Running"), id="unknown-before-running"),
        pytest.param(p("a"), p("b", ready_at=0.0), id="not-ready-first"),
        pytest.param(p("a", cost=-5), p("b", cost=0), id="lower-deletion-cost-first"),
        pytest.param(p("a", ready_at=NOW - 10), p("b", ready_at=NOW - 1000), id="ready-for-less-time-first"),
        pytest.param(p("a", restarts=3), p("b", restarts=1), id="more-restarts-first"),
        pytest.param(p("a", created=NOW - 10), p("b", created=NOW - 1000), id="newer-first"),
        pytest.param(p("a", created=NOW - 10), p("b", created=NOW - 11), id="same-log-rank-by-uid"),
    ],
)
def test_deletion_order_per_criterion(first: Pod, second: Pod) -> None:
    for pods in ([first, second], [second, first]):
        assert [x.metadata.name for x in deletion_order(pods, [0, 0], NOW)] == ["a", "b"]


def test_pods_doubled_up_on_a_node_go_first() -> None:
    pods = [p("a", node="n1"), p("b", node="n2"), p("c", node="n2")]
    ranks = related_ranks(pods, pods)
    assert ranks == [1, 2, 2]
    order = [x.metadata.name for x in deletion_order(pods, ranks, NOW)]
    assert order[-1] == "a"


def test_deletion_order_does_not_depend_on_input_order() -> None:
    pods = [p(f"x{i}", ready_at=NOW - 10 * i, restarts=i % 2, created=NOW - i) for i in range(5)]
    orders = {
        tuple(x.metadata.name for x in deletion_order(list(perm), [0] * 5, NOW))
        for perm in itertools.permutations(pods)
    }
    assert len(orders) == 1


def test_expectations() -> None:
    e = Expectations(StoppedClock())
    assert e.satisfied("rs")
    e.expect_creations("rs", 2)
    assert not e.satisfied("rs")
    e.creation_observed("rs")
    assert not e.satisfied("rs")
    e.creation_observed("rs")
    assert e.satisfied("rs")
    e.expect_deletions("rs", ["ns/a", "ns/b"])
    e.deletion_observed("rs", "ns/other")  # not one we deleted
    e.deletion_observed("rs", "ns/a")
    e.deletion_observed("rs", "ns/a")  # seen twice (marked, then gone): counted once
    assert not e.satisfied("rs")
    e.deletion_observed("rs", "ns/b")
    assert e.satisfied("rs")
    e.expect_creations("rs", 3)
    e.lower_creations("rs", 3)
    assert e.satisfied("rs")
    e.expect_creations("rs", 1)
    e.delete("rs")
    assert e.satisfied("rs")


@pytest.mark.asyncio
async def test_expectations_expire_after_five_minutes() -> None:
    clock = LoopClock(asyncio.get_running_loop(), virtual=True)
    e = Expectations(clock)
    e.expect_creations("rs", 1)
    await clock.sleep(300.0)
    assert not e.satisfied("rs")
    await clock.sleep(0.5)
    assert e.satisfied("rs")


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("count", "fail_at", "batches", "succeeded"),
    [
        pytest.param(10, None, [1, 2, 4, 3], 10, id="all-good"),
        pytest.param(1, None, [1], 1, id="one"),
        pytest.param(0, None, [], 0, id="none"),
        pytest.param(10, {0}, [1], 0, id="first-fails"),
        pytest.param(10, {2}, [1, 2], 2, id="stops-after-the-failing-batch"),
        pytest.param(10, {3, 4}, [1, 2, 4], 5, id="two-failures-in-a-batch"),
    ],
)
async def test_slow_start_batch(count: int, fail_at: set[int] | None, batches: list[int], succeeded: int) -> None:
    calls: list[int] = []
    sizes: list[int] = []
    in_batch = 0

    async def fn(i: int) -> None:
        nonlocal in_batch
        if in_batch == 0:
            sizes.append(0)
        in_batch += 1
        sizes[-1] += 1
        calls.append(i)
        await asyncio.sleep(0)
        in_batch -= 1
        if fail_at and i in fail_at:
            raise ValueError(f"call {i}")

    if fail_at:
        with pytest.raises(BatchError) as info:
            await slow_start_batch(count, fn)
        assert info.value.succeeded == succeeded
        assert len(info.value.errors) == len(fail_at & set(calls))
    else:
        assert await slow_start_batch(count, fn) == succeeded
    assert sizes == batches
    assert calls == list(range(sum(batches)))
