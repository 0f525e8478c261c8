"""Coscheduling (example out-of-tree gang plugin) on the real framework runtime: loaded through
the configuration and the registry as a user would, then Reserve/Permit/Unreserve driven directly."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from agents.scheduler import registry as reg
from agents.scheduler.config import load_config
from agents.scheduler.examples.coscheduling import (
    MIN_AVAILABLE_ANNOTATION,
    NAME,
    POD_GROUP_LABEL,
    Coscheduling,
)
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    PodInfo,
)
from agents.scheduler.framework.types import QueueingHint as QH
from emulator.base.api.core import Pod
from emulator.base.runtime.clock import LoopClock
from tests import builders

IMPORT_PATH = "agents.scheduler.examples.coscheduling:Coscheduling"


class FakeClock:
    virtual = True

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


class FakeLister:
    def __init__(self, *node_infos: NodeInfo) -> None:
        self.node_info_list = list(node_infos)


def member(name: str, group: str | None = "g1", min_available: str | None = "3", *, ns: str = "default") -> Pod:
    labels = {POD_GROUP_LABEL: group} if group else {}
    annotations = {MIN_AVAILABLE_ANNOTATION: min_available} if min_available is not None else {}
    return builders.pod(name, namespace=ns, uid=f"uid-{name}", labels=labels, annotations=annotations, image="")


def framework(clock: Any, args: dict[str, Any] | None = None, snapshot: Any = None) -> Framework:
    registry = reg.build_registry({NAME: IMPORT_PATH}, entry_point_group=None)
    doc: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": NAME}]}}}],
    }
    if args is not None:
        doc["profiles"][0]["pluginConfig"] = [{"name": NAME, "args": args}]
    prof = load_config(doc, registry).profiles[0]
    assert prof.plugins["permit"] == [(NAME, 0)]
    assert prof.plugins["reserve"] == [("VolumeBinding", 0), ("DynamicResources", 0), (NAME, 0)]
    return Framework(prof.to_spec(), registry, clock=clock, rng=random.Random(0), snapshot=snapshot)


def permit(fwk: Framework, pod: Pod) -> Code:
    state = CycleState()
    assert fwk.run_reserve_plugins_reserve(state, pod, "n1").is_success()
    return fwk.run_permit_plugins(state, pod, "n1").code


def waiting(fwk: Framework) -> dict[str, Any]:
    """name → status of each waiting pod (None while still waiting)."""
    out: dict[str, Any] = {}
    fwk.iterate_over_waiting_pods(lambda wp: out.__setitem__(wp.pod.metadata.name, wp.status))
    return out


def test_gang_waits_until_min_available_then_allows_all() -> None:
    fwk = framework(FakeClock())
    assert permit(fwk, member("a")) is Code.Wait
    assert permit(fwk, member("b")) is Code.Wait
    assert waiting(fwk) == {"a": None, "b": None}
    assert permit(fwk, member("other-group", group="g2")) is Code.Wait  # its own gang, min 3
    assert permit(fwk, member("c")) is Code.Success
    statuses = waiting(fwk)
    assert statuses["a"].is_success()
    assert statuses["b"].is_success()
    assert statuses["other-group"] is None


def test_same_group_name_in_another_namespace_is_another_gang() -> None:
    fwk = framework(FakeClock())
    assert permit(fwk, member("a", min_available="2")) is Code.Wait
    assert permit(fwk, member("x", min_available="2", ns="other")) is Code.Wait
    assert waiting(fwk) == {"a": None, "x": None}


@pytest.mark.parametrize(
    ("args", "timeout"),
    [pytest.param(None, 60.0, id="default-60s"), pytest.param({"permitWaitingTimeSeconds": 5}, 5.0, id="from-args")],
)
def test_timeout_rejects(args: dict[str, Any] | None, timeout: float) -> None:
    clock = FakeClock()
    fwk = framework(clock, args)
    assert permit(fwk, member("a")) is Code.Wait
    clock.t = timeout - 0.001
    assert waiting(fwk) == {"a": None}
    clock.t = timeout
    status = waiting(fwk)["a"]
    assert (status.code, status.plugin) == (Code.Unschedulable, NAME)
    assert status.reasons[0].startswith(f"rejected due to timeout after waiting {'1m0s' if timeout == 60 else '5s'}")


def test_unreserve_rejects_the_other_waiting_members() -> None:
    fwk = framework(FakeClock())
    for name in ("a", "b"):
        assert permit(fwk, member(name)) is Code.Wait
    assert permit(fwk, member("z", group="g2")) is Code.Wait
    fwk.run_reserve_plugins_unreserve(CycleState(), member("c"), "n1")
    statuses = waiting(fwk)
    for name in ("a", "b"):
        assert (statuses[name].code, statuses[name].reasons, statuses[name].plugin) == (
            Code.Unschedulable,
            ("rejection in Unreserve",),
            NAME,
        )
    assert statuses["z"] is None


def test_members_already_on_nodes_count() -> None:
    ni = NodeInfo(builders.node("n1", cpu=None, memory=None, pods="10", allocatable_only=True))
    ni.add_pod(PodInfo(member("bound-1")))
    ni.add_pod(PodInfo(member("bound-2", group="g2")))
    fwk = framework(FakeClock(), snapshot=FakeLister(ni))
    assert permit(fwk, member("a")) is Code.Wait  # bound-1 + a = 2 < 3
    assert permit(fwk, member("b")) is Code.Success  # bound-1 + a + b
    assert waiting(fwk)["a"].is_success()


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(member("solo", group=None), Code.Success, id="not-a-member"),
        pytest.param(member("m", min_available=None), Code.Success, id="no-annotation-means-1"),
        pytest.param(member("m", min_available="1"), Code.Success, id="gang-of-one"),
        pytest.param(member("m", min_available="three"), Code.UnschedulableAndUnresolvable, id="not-a-number"),
        pytest.param(member("m", min_available="0"), Code.UnschedulableAndUnresolvable, id="zero"),
    ],
)
def test_permit_edge_cases(pod: Pod, want: Code) -> None:
    fwk = framework(FakeClock())
    assert permit(fwk, pod) is want
    assert waiting(fwk) == {}


def test_bad_args() -> None:
    with pytest.raises(ValueError, match="unknown field"):
        Coscheduling({"permitWaitingTime": 3}, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positive number"):
        Coscheduling({"permitWaitingTimeSeconds": 0}, None)  # type: ignore[arg-type]


def test_events() -> None:
    ev, node_add = Coscheduling(None, None).events_to_register()  # type: ignore[arg-type]
    assert ev.event == ClusterEvent(EventResource.Pod, ActionType.Add)
    assert node_add.event == ClusterEvent(EventResource.Node, ActionType.Add)
    assert node_add.hint is None  # always Queue
    hint = Coscheduling.is_schedulable_after_pod_add
    assert hint(member("a"), None, member("b")) is QH.Queue
    assert hint(member("a"), None, member("b", group="g2")) is QH.QueueSkip
    assert hint(member("a"), None, member("a")) is QH.QueueSkip
    assert hint(member("solo", group=None), None, member("b")) is QH.QueueSkip


@pytest.mark.asyncio
async def test_binding_cycle_waits_then_is_allowed_or_times_out() -> None:
    clock = LoopClock(virtual=True)
    fwk = framework(clock, {"permitWaitingTimeSeconds": 30})
    a, b, c = member("a", min_available="2"), member("b", min_available="2"), member("c", min_available="2", group="g3")
    assert permit(fwk, a) is Code.Wait
    async with asyncio.TaskGroup() as tg:
        waiter = tg.create_task(fwk.wait_on_permit(a))
        await clock.sleep(10)
        assert permit(fwk, b) is Code.Success
    assert waiter.result().is_success()
    assert clock.now() == 10
    assert permit(fwk, c) is Code.Wait
    status = await fwk.wait_on_permit(c)
    assert (status.code, status.plugin, clock.now()) == (Code.Unschedulable, NAME, 40)
