"""Proportional scaling (upstream ``scale``) as a property: whatever the sizes of the
active ReplicaSets, scaling a RollingUpdate Deployment mid-rollout leaves exactly
``replicas + maxSurge`` replicas across them, never a negative size, and never grows a
ReplicaSet scaled to zero (the last of these is "empty-never-grows" in the table of
``test_deployment_util``, here over any sizes)."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.controllers.deployment.sync import Rollout, Writer, scale
from agents.controllers.deployment.util import MAX_REPLICAS, max_surge
from emulator.base.api.apps import ReplicaSet, ReplicaSetSpec
from emulator.base.api.meta import ObjectMeta
from emulator.base.runtime.clock import StoppedClock, format_timestamp
from tests.controllers.appsworld import deployment, template

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Drive a coroutine that never waits (the fake writer does no I/O)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    raise AssertionError("the coroutine waited")


class FakeWriter(Writer):
    def __init__(self) -> None:
        self.clock = StoppedClock()
        self.sizes: dict[str, int] = {}
        self.scaled = 0

    async def scale(self, ro: Rollout, rs: ReplicaSet, new_scale: int, operation: str) -> tuple[bool, ReplicaSet]:
        self.sizes[rs.metadata.name] = new_scale
        return (rs.spec.replicas or 0) != new_scale, ro.put(replace(rs, spec=replace(rs.spec, replicas=new_scale)))


@given(
    sizes=st.lists(st.integers(0, 40), min_size=2, max_size=4),
    before=st.integers(1, 60),
    replicas=st.integers(0, 60),
    surge=st.integers(0, 5),
)
def test_proportional_scaling_hands_out_exactly_what_is_allowed(
    sizes: list[int], before: int, replicas: int, surge: int
) -> None:
    d = deployment("web", replicas, max_surge=surge, max_unavailable=1)
    rss = [
        ReplicaSet(
            metadata=ObjectMeta(
                name=f"web-{i}",
                uid=f"u{i}",
                creation_timestamp=format_timestamp(float(i)),
                annotations={MAX_REPLICAS: str(before)},
            ),
            spec=ReplicaSetSpec(replicas=n, template=template({"app": "web", "v": str(i)})),
        )
        for i, n in enumerate(sizes)
    ]
    live = [rs for rs in rss if rs.spec.replicas]
    if len(live) < 2:
        return  # one active ReplicaSet simply gets all the replicas
    w = FakeWriter()
    ro = Rollout(d, list(rss))
    new_rs, olds = rss[-1], rss[:-1]
    if (new_rs.spec.replicas or 0) == 0:
        new_rs = None  # the new one has no replicas yet: scale() sees only old ones
        olds = rss
    run(scale(w, ro, new_rs, olds))
    allowed = replicas + max_surge(d) if replicas > 0 else 0
    after = {rs.metadata.name: w.sizes.get(rs.metadata.name, rs.spec.replicas or 0) for rs in rss}
    assert all(v >= 0 for v in after.values())
    assert all(after[rs.metadata.name] == 0 for rs in rss if not rs.spec.replicas)
    total = sum(after.values())
    # the rounding leftover goes to the largest; only its clamp at zero may leave more
    assert total == allowed or (total > allowed and 0 in (after[rs.metadata.name] for rs in live))
