"""Probes as upstream's prober manager runs them (``pkg/kubelet/prober``: ``worker.go``
``doProbe``, ``prober.go``, ``kuberuntime_manager.go`` ``computePodActions``), on virtual time.

One kubelet, pods bound to it, asserted on the stored pod, its status writes and its Events
at exact simulated times. The probes succeed unless the ``*-fails-after`` annotations (or
``ready-after``, for readiness) say otherwise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.kubelet.lifecycle import Lifecycle
from agents.kubelet.podrecord import PodRecord
from agents.kubelet.podworker import PodWorker
from agents.kubelet.prober import prober_for
from emulator.base.api.core import Event, Pod, PodCondition, PodStatus
from emulator.base.api.errors import Invalid
from emulator.base.api.probe import ExecAction, HTTPGetAction, Probe
from emulator.base.api.validation import validate
from tests.builders import container, pod
from tests.cluster import Cluster
from tests.kubelet.test_restarts import cond, kubelet, make_pod, t, web

HTTP = HTTPGetAction(path="/healthz", port=8080)


def probed(
    name: str,
    *,
    annotations: Mapping[str, str] | None = None,
    policy: str = "Always",
    **probes: Probe,
) -> Pod:
    p = make_pod(name, policy=policy, annotations=annotations)
    c = replace(p.spec.containers[0], **probes)
    return replace(p, spec=replace(p.spec, containers=[c]))


def ready_times(c: Cluster, name: str) -> list[tuple[float, bool]]:
    """(time, web's ready) at each status write where it changed."""
    out: list[tuple[float, bool]] = []
    for w in c.of("Pod", name, "updateStatus"):
        cs = next((s for s in w.new.status.container_statuses if s.name == "web"), None)
        if cs is not None and (not out or out[-1][1] != cs.ready):
            out.append((w.time, cs.ready))
    return out


def events(c: Cluster, reason: str) -> list[tuple[str, str, int]]:
    """(message, fieldPath, count) of each Event of ``reason`` as last written."""
    last: dict[str, Event] = {}
    for w in c.of("Event"):
        assert isinstance(w.new, Event)
        if w.new.reason == reason:
            last[w.new.metadata.name] = w.new
    return [(e.message, e.involved_object.field_path, e.count) for e in last.values()]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("probe", "annotations", "expected"),
    [
        pytest.param(Probe(http_get=HTTP), {}, [(0, False), (0, True)], id="first-probe-at-start"),
        pytest.param(Probe(http_get=HTTP, initial_delay_seconds=10), {}, [(0, False), (10, True)], id="initial-delay"),
        pytest.param(
            Probe(http_get=HTTP, initial_delay_seconds=10, period_seconds=5, success_threshold=2),
            {},
            [(0, False), (15, True)],
            id="success-threshold",
        ),
        pytest.param(
            Probe(http_get=HTTP, period_seconds=5),
            {"emulator.k8s.io/ready-after": "12s"},
            [(0, False), (15, True)],
            id="ready-after-fails-the-probe-until-then",
        ),
        pytest.param(
            Probe(http_get=HTTP),
            {"emulator.k8s.io/readiness-fails-after": "25s"},
            [(0, False), (0, True), (50, False)],
            id="readiness-fails-after-threshold-3",
        ),
    ],
)
async def test_readiness_probe_drives_ready(
    probe: Probe, annotations: dict[str, str], expected: list[tuple[float, bool]]
) -> None:
    async with kubelet() as (c, _):
        c.server.create(probed("web-0", annotations=annotations, readiness_probe=probe))
        await c.at(60)
        assert ready_times(c, "web-0") == expected
        p = c.pod("web-0")
        assert cond(p, "Ready")[0] == ("True" if expected[-1][1] else "False")
        assert cond(p, "ContainersReady")[0] == cond(p, "Ready")[0]


@pytest.mark.asyncio
async def test_failed_readiness_probes_are_unhealthy_events() -> None:
    async with kubelet() as (c, _):
        pod = probed(
            "web-0",
            annotations={"emulator.k8s.io/ready-after": "12s"},
            readiness_probe=Probe(http_get=HTTP, period_seconds=5),
        )
        c.server.create(pod)
        await c.at(20)
        # one Event per failed probe (the kubelet's recorder here does not aggregate)
        assert (
            events(c, "Unhealthy")
            == [("Readiness probe failed: HTTP probe failed with statuscode: 500", "spec.containers{web}", 1)] * 3
        )
        assert cond(c.pod("web-0"), "Ready")[0] == "True"


@pytest.mark.asyncio
async def test_liveness_failure_restarts_then_crash_loops() -> None:
    """Probes at 0, 10, 20 ...; failing from 20 s: the third failure (40 s) kills web, restarted
    at once (exit 143); again 40 s later, then CrashLoopBackOff 10 s (``doBackOff``)."""
    async with kubelet() as (c, _):
        live = Probe(exec=ExecAction(command=["true"]))
        c.server.create(
            probed("web-0", annotations={"emulator.k8s.io/liveness-fails-after": "20s"}, liveness_probe=live)
        )
        await c.at(41)
        cs = web(c.pod("web-0"))
        assert cs.restart_count == 1
        assert cs.state.running is not None
        assert cs.state.running.started_at == t(40)
        assert cs.last_state.terminated is not None
        assert (cs.last_state.terminated.exit_code, cs.last_state.terminated.reason) == (143, "Error")
        assert events(c, "Killing") == [
            ("Container web failed liveness probe, will be restarted", "spec.containers{web}", 1)
        ]
        assert events(c, "Unhealthy") == [("Liveness probe failed: ", "spec.containers{web}", 1)] * 3
        await c.at(81)
        cs = web(c.pod("web-0"))
        assert cs.state.waiting is not None
        assert cs.state.waiting.reason == "CrashLoopBackOff"
        await c.at(91)
        cs = web(c.pod("web-0"))
        assert cs.restart_count == 2
        assert cs.state.running is not None
        assert cs.state.running.started_at == t(90)
        assert len(events(c, "Killing")) == 2


@pytest.mark.asyncio
async def test_liveness_failure_with_restart_policy_never_fails_the_pod() -> None:
    async with kubelet() as (c, _):
        live = Probe(http_get=HTTP, period_seconds=5, failure_threshold=1)
        c.server.create(
            probed(
                "web-0", policy="Never", annotations={"emulator.k8s.io/liveness-fails-after": "7s"}, liveness_probe=live
            )
        )
        await c.at(12)
        p = c.pod("web-0")
        assert p.status.phase == "Failed"
        assert events(c, "Killing") == [("Container web failed liveness probe", "spec.containers{web}", 1)]


@pytest.mark.asyncio
async def test_startup_probe_gates_readiness_and_liveness() -> None:
    """Not started nor ready until the startup probe succeeds (5 s); the readiness worker
    then probes at its next tick (10 s); liveness, failing from 0 s, only runs after 5 s."""
    async with kubelet() as (c, _):
        c.server.create(
            probed(
                "web-0",
                startup_probe=Probe(http_get=HTTP, initial_delay_seconds=5),
                readiness_probe=Probe(http_get=HTTP),
                liveness_probe=Probe(http_get=HTTP, initial_delay_seconds=100),
            )
        )
        await c.at(1)
        cs = web(c.pod("web-0"))
        assert (cs.started, cs.ready) == (False, False)
        await c.at(6)
        cs = web(c.pod("web-0"))
        assert (cs.started, cs.ready) == (True, False)
        await c.at(11)
        assert ready_times(c, "web-0") == [(0, False), (10, True)]


@pytest.mark.asyncio
async def test_startup_probe_failure_kills_the_container() -> None:
    async with kubelet() as (c, _):
        c.server.create(
            probed(
                "web-0",
                annotations={"emulator.k8s.io/startup-fails-after": "0s"},
                startup_probe=Probe(http_get=HTTP, failure_threshold=2),
                readiness_probe=Probe(http_get=HTTP),
            )
        )
        await c.at(11)
        assert events(c, "Killing") == [
            ("Container web failed startup probe, will be restarted", "spec.containers{web}", 1)
        ]
        assert (
            events(c, "Unhealthy")
            == [("Startup probe failed: HTTP probe failed with statuscode: 500", "spec.containers{web}", 1)] * 3
        )  # at 0 and 10 (the kill), and at 10 again: the restarted container's first probe
        assert web(c.pod("web-0")).restart_count == 1


def test_a_pod_without_probes_gets_no_prober() -> None:
    assert prober_for([container("web")], Lifecycle(), "10.0.0.1") is None


@pytest.mark.parametrize(
    ("probe", "field", "detail"),
    [
        (
            Probe(http_get=HTTP, period_seconds=-1),
            "livenessProbe.periodSeconds",
            "Invalid value: -1: must be greater than or equal to 0",
        ),
        (Probe(), "livenessProbe", "Required value: must specify a handler type"),
        (
            Probe(http_get=HTTP, exec=ExecAction(command=["x"])),
            "livenessProbe",
            "Forbidden: may not specify more than 1 handler type",
        ),
        (Probe(http_get=HTTP, success_threshold=2), "livenessProbe.successThreshold", "Invalid value: 2: must be 1"),
        (
            Probe(http_get=HTTP, termination_grace_period_seconds=0),
            "livenessProbe.terminationGracePeriodSeconds",
            "Invalid value: 0: must be greater than 0",
        ),
    ],
)
def test_probe_validation(probe: Probe, field: str, detail: str) -> None:
    """Upstream ``validateProbe``/``validateHandler``/``validateLivenessProbe``."""
    with pytest.raises(Invalid) as err:
        validate(probed("web-0", liveness_probe=probe))
    assert (err.value.field, err.value.detail) == (f"spec.containers[0].{field}", detail)


def test_init_container_probes_are_forbidden() -> None:
    p = make_pod("web-0")
    init = replace(container("setup"), readiness_probe=Probe(http_get=HTTP))
    with pytest.raises(Invalid) as err:
        validate(replace(p, spec=replace(p.spec, init_containers=[init])))
    assert err.value.field == "spec.initContainers[0].readinessProbe"
    assert "may not be set for init containers" in err.value.detail


def test_bad_fails_after_annotation_is_refused() -> None:
    with pytest.raises(Invalid) as err:
        validate(probed("web-0", annotations={"emulator.k8s.io/liveness-fails-after": "soon"}))
    assert err.value.field == "metadata.annotations[emulator.k8s.io/liveness-fails-after]"


@settings(max_examples=200, deadline=None)
@given(
    delay=st.integers(0, 30),
    period=st.integers(1, 30),
    failure=st.integers(1, 6),
    fails_after=st.integers(0, 120),
)
def test_liveness_kill_time_property(delay: int, period: int, failure: int, fails_after: int) -> None:
    """``doProbe``: the kill comes at the ``failureThreshold``-th failing tick, ticks at
    ``initialDelaySeconds + k * periodSeconds`` after the start."""
    probe = Probe(http_get=HTTP, initial_delay_seconds=delay, period_seconds=period, failure_threshold=failure)
    life = Lifecycle(liveness_fails_after=float(fails_after))
    prober = prober_for([replace(container("web"), liveness_probe=probe)], life, "10.0.0.1")
    assert prober is not None
    prober.restart(0.0, 0.0)
    kill_at = None
    while (due := prober.next_due()) is not None:
        _, _, kill = prober.tick(due)
        if kill is not None:
            kill_at = due
            break
    first_failing = max(0, -(-(fails_after - delay) // period))  # the first tick index at or past fails_after
    assert kill_at == delay + (first_failing + failure - 1) * period


@pytest.mark.asyncio
async def test_the_kubelets_own_ready_flips_applied_in_place_are_not_reconciled() -> None:
    # its pod informer gets the status write's event before the write returns: compared with
    # the status being written, not the last one written, it is no one else's change
    async with kubelet() as (c, k):
        reconciled: list[str] = []
        reconcile = k._reconcile
        k._reconcile = lambda rec: reconciled.append(rec.label) or reconcile(rec)  # type: ignore[method-assign]
        pod = probed(
            "web-0",
            annotations={"emulator.k8s.io/readiness-fails-after": "25s"},
            readiness_probe=Probe(http_get=HTTP),
        )
        c.server.create(pod)
        await c.at(60)
        assert ready_times(c, "web-0") == [(0, False), (0, True), (50, False)]
        assert reconciled == []
        assert c.server.unchanged.get(("updateStatus", "Pod"), 0) == 0


@pytest.mark.asyncio
async def test_two_status_writes_in_flight_each_compare_with_their_own_echo() -> None:
    # a probe's write and a reconcile's, with API latency, both in flight on one pod: the
    # first to return must not take the second's status with it (its echo, handed in place
    # before it returns, is then compared with the last status written and reconciled)
    def status(ready: str) -> PodStatus:
        return PodStatus(phase="Running", conditions=[PodCondition(type="Ready", status=ready)])

    class SlowWriter:
        client = SimpleNamespace(instant=lambda _kind: False)  # API latency: no first try at once

        def __init__(self, delays: list[float]) -> None:
            self.delays = delays

        async def write_status(
            self, current: Pod, uid: str, build: Callable[[Pod], PodStatus], *, deleting: bool = False
        ) -> None:
            build(current)
            await asyncio.sleep(self.delays.pop(0))
            return  # dropped: only what is in flight matters here

    p = pod("web")
    rec = PodRecord(("default", "web"), p.metadata.uid, p, reported=status("False"))
    worker = object.__new__(PodWorker)
    worker._writer = SlowWriter([0.1, 0.3])  # type: ignore[assignment]
    first = asyncio.create_task(worker.write_status(rec, lambda _p: status("False")), name="first")
    second = asyncio.create_task(worker.write_status(rec, lambda _p: status("True")), name="second")
    await asyncio.sleep(0.05)
    assert not rec.needs_reconcile(status("True"))  # each write's echo, either
    assert not rec.needs_reconcile(status("False"))
    await asyncio.sleep(0.15)  # the first returned, the second is in flight
    assert not rec.needs_reconcile(status("True"))  # the second's own echo
    await asyncio.gather(first, second)
    assert rec.writing == {}
    assert rec.needs_reconcile(status("True"))  # dropped: the last written says not Ready
