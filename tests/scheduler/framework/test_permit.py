"""Permit and WaitOnPermit on the virtual clock; WaitingPod's first-event-wins rules."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from agents.scheduler.framework.interface import ExtensionPoint, ProfileSpec
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import Code, CycleState, Status
from agents.scheduler.framework.waiting_pods import WaitingPod
from emulator.base.api.core import Pod
from emulator.base.runtime.clock import Clock, LoopClock
from tests.builders import pod

EP = ExtensionPoint
U = Code.Unschedulable


class FakeClock:
    virtual = True

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


def make_pod(name: str = "p") -> Pod:
    return pod(name, uid=f"uid-{name}", containers=[])


class Sort:
    name = "Sort"

    def less(self, a: Any, b: Any) -> bool:
        return False


class Binder:
    name = "Binder"

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status()


class Perm:
    def __init__(self, name: str, status: Status, timeout: float = 0.0) -> None:
        self.name, self.status, self.timeout = name, status, timeout

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        return self.status, self.timeout


def waiter(name: str, timeout: float) -> Perm:
    return Perm(name, Status(Code.Wait), timeout)


def build(permits: list[Perm], clock: Any) -> Framework:
    plugins: dict[str, Any] = {"Sort": Sort(), "Binder": Binder(), **{p.name: p for p in permits}}
    spec = ProfileSpec(
        scheduler_name="s",
        plugins={EP.QueueSort: [("Sort", 0)], EP.Bind: [("Binder", 0)], EP.Permit: [(p.name, 0) for p in permits]},
    )
    registry = {name: (lambda a, h, pl=pl: pl) for name, pl in plugins.items()}
    return Framework(spec, registry, clock=clock, rng=random.Random(0))


# --- run_permit_plugins (no waiting) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("permits", "want_code", "want_msg", "want_plugin", "want_waiting"),
    [
        pytest.param([Perm("A", Status())], Code.Success, "", "", None, id="all-allow"),
        pytest.param(
            [waiter("A", 5), Perm("B", Status(U, "no room"))], U, "no room", "B", None, id="rejection-beats-wait"
        ),
        pytest.param(
            [Perm("A", Status(Code.Error, "boom")), waiter("B", 5)],
            Code.Error,
            'running Permit plugin "A": boom',
            "A",
            None,
            id="error",
        ),
        pytest.param(
            [waiter("A", 5), Perm("B", Status()), waiter("C", 7)],
            Code.Wait,
            'one or more plugins asked to wait and no plugin rejected pod "p"',
            "",
            ["A", "C"],
            id="wait-registers-waiting-pod",
        ),
    ],
)
def test_run_permit_plugins(
    permits: list[Perm], want_code: Code, want_msg: str, want_plugin: str, want_waiting: list[str] | None
) -> None:
    fw = build(permits, FakeClock())
    status = fw.run_permit_plugins(CycleState(), make_pod(), "n1")
    assert (status.code, status.message(), status.plugin) == (want_code, want_msg, want_plugin)
    wp = fw.get_waiting_pod("uid-p")
    assert (wp.get_pending_plugins() if wp else None) == want_waiting


# --- wait_on_permit on the virtual clock -------------------------------------------------------------


async def _after(clock: Clock, t: float, action: Any) -> None:
    await clock.sleep_until(t)
    action()


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("timeouts", "events", "want_code", "want_msg", "want_plugin", "want_at"),
    [
        pytest.param({"A": 10}, [(3, "allow", "A")], Code.Success, "", "", 3, id="allowed-by-another-task"),
        pytest.param(
            {"A": 10, "B": 20}, [(3, "allow", "B"), (4, "allow", "A")], Code.Success, "", "", 4, id="allowed-by-all"
        ),
        pytest.param({"A": 10}, [(4, "reject", "A")], U, "A: no", "A", 4, id="rejected"),
        pytest.param(
            {"A": 10},
            [],
            U,
            "rejected due to timeout after waiting 10s at plugin A",
            "A",
            10,
            id="timeout-at-exactly-the-deadline",
        ),
        pytest.param(
            {"A": 10},
            [(10, "allow", "A")],
            U,
            "rejected due to timeout after waiting 10s at plugin A",
            "A",
            10,
            id="allow-at-the-deadline-loses",
        ),
        pytest.param({"A": 10}, [(9.999, "allow", "A")], Code.Success, "", "", 9.999, id="allow-just-before-wins"),
        pytest.param(
            {"A": 5, "B": 10},
            [(2, "allow", "A")],
            U,
            "rejected due to timeout after waiting 10s at plugin B",
            "B",
            10,
            id="next-deadline-after-an-allow",
        ),
        pytest.param(
            {"A": 2.5, "B": 10},
            [(1, "allow", "B")],
            U,
            "rejected due to timeout after waiting 2.5s at plugin A",
            "A",
            2.5,
            id="earliest-pending-deadline",
        ),
        pytest.param(
            {"A": 3600},
            [],
            U,
            "rejected due to timeout after waiting 15m0s at plugin A",
            "A",
            900,
            id="capped-at-15-minutes",
        ),
        pytest.param({"A": 10}, [(4, "reject", "A"), (5, "allow", "A")], U, "A: no", "A", 4, id="first-event-wins"),
    ],
)
async def test_wait_on_permit(
    timeouts: dict[str, float],
    events: list[tuple[float, str, str]],
    want_code: Code,
    want_msg: str,
    want_plugin: str,
    want_at: float,
) -> None:
    clock = LoopClock(virtual=True)
    fw = build([waiter(name, t) for name, t in timeouts.items()], clock)
    pod = make_pod()
    assert fw.run_permit_plugins(CycleState(), pod, "n1").code is Code.Wait
    wp = fw.get_waiting_pod(pod.metadata.uid)
    assert wp is not None

    def act(kind: str, plugin: str) -> Any:
        return (lambda: wp.allow(plugin)) if kind == "allow" else (lambda: wp.reject(plugin, f"{plugin}: no"))

    async with asyncio.TaskGroup() as tg:
        for t, kind, plugin in events:
            tg.create_task(_after(clock, t, act(kind, plugin)), name=f"{kind}:{plugin}@{t}")
        status = await fw.wait_on_permit(pod)
        finished_at = clock.now()
    assert (status.code, status.message(), status.plugin) == (want_code, want_msg, want_plugin)
    assert finished_at == pytest.approx(want_at, abs=1e-9)
    assert fw.get_waiting_pod(pod.metadata.uid) is None


@pytest.mark.asyncio
async def test_reject_waiting_pod_through_the_handle() -> None:
    clock = LoopClock(virtual=True)
    fw = build([waiter("A", 10)], clock)
    pod = make_pod()
    fw.run_permit_plugins(CycleState(), pod, "n1")
    seen: list[str] = []
    fw.iterate_over_waiting_pods(lambda wp: seen.append(wp.get_pod().metadata.name))
    assert seen == ["p"]
    assert fw.reject_waiting_pod(pod.metadata.uid) is True
    assert fw.reject_waiting_pod("no-such-uid") is False
    status = await fw.wait_on_permit(pod)
    assert (status.code, status.message(), status.plugin, clock.now()) == (U, "removed", "", 0.0)


@pytest.mark.asyncio
async def test_wait_on_permit_for_a_pod_not_waiting_is_success() -> None:
    fw = build([Perm("A", Status())], LoopClock(virtual=True))
    assert (await fw.wait_on_permit(make_pod())).is_success()


# --- WaitingPod without a loop -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("steps", "want"),
    [
        pytest.param([("allow", "A")], (None, ["B"]), id="partial-allow"),
        pytest.param([("allow", "A"), ("allow", "B")], ((Code.Success, ""), []), id="all-allowed"),
        pytest.param([("allow", "X")], (None, ["A", "B"]), id="unknown-plugin-ignored"),
        pytest.param([("reject", "B"), ("allow", "A"), ("allow", "B")], ((U, "B"), []), id="reject-is-final"),
        pytest.param([("allow", "A"), ("allow", "B"), ("reject", "A")], ((Code.Success, ""), []), id="allow-is-final"),
        pytest.param(
            [("advance", "5"), ("allow", "A"), ("allow", "B")], ((U, "A"), []), id="deadline-passed-before-allow"
        ),
        pytest.param(
            [("advance", "4.9"), ("allow", "A"), ("allow", "B")], ((Code.Success, ""), []), id="before-deadline"
        ),
    ],
)
def test_waiting_pod_first_event_wins(
    steps: list[tuple[str, str]], want: tuple[tuple[Code, str] | None, list[str]]
) -> None:
    clock = FakeClock()
    wp = WaitingPod(make_pod(), {"A": 5, "B": 8}, clock)  # type: ignore[arg-type]
    for kind, arg in steps:
        if kind == "advance":
            clock.t = float(arg)
        elif kind == "allow":
            wp.allow(arg)
        else:
            wp.reject(arg, "no")
    status = wp.status
    assert ((status.code, status.plugin) if status else None, wp.get_pending_plugins()) == want
