"""``PodRun`` and ``CrashBackoff`` (agents/kubelet/podrun.py), ``lifecycle_of`` (lifecycle.py),
pure: no event loop.

A run is driven as the kubelet drives it: ask ``next_event()``, jump to it, ``advance``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.kubelet.lifecycle import (
    EXIT_CODE_ANNOTATION,
    INIT_DURATION_ANNOTATION,
    INIT_EXIT_CODE_ANNOTATION,
    READY_AFTER_ANNOTATION,
    RUN_DURATION_ANNOTATION,
    Lifecycle,
    effective_restart_policy,
    lifecycle_of,
    parse_exit_code,
)
from agents.kubelet.podrun import CrashBackoff, PodRun, RunPhase
from agents.kubelet.podstatus import running_status
from agents.kubelet.runstatus import run_status
from emulator.base.api.core import Container, Pod, PodSpec
from emulator.base.api.meta import OwnerReference
from emulator.base.runtime.clock import format_timestamp
from tests.builders import container, pod

LABEL = "web-0_default(uid-1)"


def spec(*, inits: Sequence[Container] = (), containers: Sequence[str] = ("web",)) -> PodSpec:
    return PodSpec(containers=[container(n) for n in containers], init_containers=list(inits))


def step(run: PodRun) -> tuple[float, list[str]]:
    """Jump to the next event and do it: (its time, containers that entered back-off)."""
    event = run.next_event()
    assert event is not None
    at = event[0] + event[1]
    return at, run.advance(at)


def restart_waits(run: PodRun, restarts: int) -> list[float]:
    """Seconds between each exit and the restart that follows it."""
    waits: list[float] = []
    exited_at = 0.0
    while run.app.restarts < restarts:
        before = run.app.restarts
        at, _ = step(run)
        if run.app.restarts > before:
            waits.append(at - exited_at)
        elif run.app.state != "running":
            exited_at = at
    return waits


# --- annotations ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        pytest.param("0", 0, id="zero"),
        pytest.param("255", 255, id="max"),
        pytest.param(" 3 ", 3, id="spaces"),
    ],
)
def test_exit_code_parses(text: str, code: int) -> None:
    assert parse_exit_code(text) == code


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("256", id="too-large"),
        pytest.param("-1", id="negative"),
        pytest.param("1.5", id="fraction"),
        pytest.param("", id="empty"),
        pytest.param("one", id="word"),
        pytest.param("١", id="non-ascii-digit"),
    ],
)
def test_exit_code_refused(text: str) -> None:
    with pytest.raises(ValueError, match="must be an integer from 0 to 255"):
        parse_exit_code(text)


def test_lifecycle_of_reads_every_annotation_and_lists_the_bad_ones() -> None:
    p = pod(
        "web",
        annotations={
            RUN_DURATION_ANNOTATION: "1m",
            EXIT_CODE_ANNOTATION: "2",
            READY_AFTER_ANNOTATION: "10s",
            INIT_DURATION_ANNOTATION: "oops",
            INIT_EXIT_CODE_ANNOTATION: "300",
        },
    )
    life, bad = lifecycle_of(replace(p, spec=replace(p.spec, restart_policy="OnFailure")))
    assert life == Lifecycle(
        run_duration=60, exit_code=2, ready_after=10, restart_policy="OnFailure", init_restart_policy="OnFailure"
    )
    assert bad == (INIT_DURATION_ANNOTATION, INIT_EXIT_CODE_ANNOTATION)


def test_a_bare_pod_runs_to_completion_but_its_init_containers_restart() -> None:
    """Regression: the bare-pod deviation once made a failed init container fail the pod."""
    life, _ = lifecycle_of(pod("web", annotations={INIT_EXIT_CODE_ANNOTATION: "1"}))
    assert (life.restart_policy, life.init_restart_policy) == ("Never", "Always")


OWNED = [OwnerReference(kind="ReplicaSet", name="web", uid="rs-1", controller=True)]


@pytest.mark.parametrize(
    ("policy", "annotations", "owners", "effective"),
    [
        pytest.param("Always", {}, [], "Never", id="bare-always-runs-to-completion"),
        pytest.param("", {}, [], "Never", id="bare-unset-runs-to-completion"),
        pytest.param("Always", {EXIT_CODE_ANNOTATION: "0"}, [], "Always", id="bare-with-exit-code"),
        pytest.param("Always", {}, OWNED, "Always", id="controlled"),
        pytest.param(
            "Always", {}, [replace(OWNED[0], controller=False)], "Never", id="owned-but-not-controlled-is-bare"
        ),
        pytest.param("OnFailure", {}, [], "OnFailure", id="on-failure"),
        pytest.param("Never", {}, OWNED, "Never", id="never"),
    ],
)
def test_effective_restart_policy(
    policy: str, annotations: dict[str, str], owners: list[OwnerReference], effective: str
) -> None:
    p = pod("web", annotations=annotations)
    p = replace(p, metadata=replace(p.metadata, owner_references=owners), spec=replace(p.spec, restart_policy=policy))
    assert effective_restart_policy(p) == effective


# --- restartPolicy x exit code --------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "code", "phase", "restarts", "last"),
    [
        pytest.param("Never", 0, "Succeeded", 0, None, id="never-0"),
        pytest.param("Never", 1, "Failed", 0, None, id="never-1"),
        pytest.param("OnFailure", 0, "Succeeded", 0, None, id="onfailure-0"),
        pytest.param("OnFailure", 3, "Running", 1, (0.0, 5.0, 3, "Error"), id="onfailure-3"),
        pytest.param("Always", 0, "Running", 1, (0.0, 5.0, 0, "Completed"), id="always-0"),
        pytest.param("Always", 137, "Running", 1, (0.0, 5.0, 137, "Error"), id="always-137"),
    ],
)
def test_exit_then_restart_policy(
    policy: str, code: int, phase: str, restarts: int, last: tuple[float, float, int, str] | None
) -> None:
    run = PodRun.start(spec(), Lifecycle(run_duration=5, exit_code=code, restart_policy=policy), LABEL, 0.0)
    assert run.pod_phase() == "Running"
    assert step(run) == (5.0, [])  # the exit
    if phase != "Running":
        assert (run.pod_phase(), run.phase, run.next_event()) == (phase, RunPhase.DONE, None)
        assert (run.app.state, run.app.exit_code) == ("terminated", code)
        return
    assert (run.app.state, run.app.exit_code, run.app.restart_at) == ("terminated", code, 5.0)
    assert step(run) == (5.0, [])  # restarted at once: no back-off yet
    assert (run.pod_phase(), run.app.state, run.app.restarts, run.app.last) == (phase, "running", restarts, last)


def test_crash_loop_back_off_doubles_to_five_minutes() -> None:
    run = PodRun.start(spec(), Lifecycle(run_duration=1, exit_code=1, restart_policy="Always"), LABEL, 0.0)
    assert restart_waits(run, 9) == [0, 10, 20, 40, 80, 160, 300, 300, 300]


def test_back_off_state_and_events() -> None:
    run = PodRun.start(
        spec(containers=("web", "log")), Lifecycle(run_duration=1, exit_code=1, restart_policy="Always"), LABEL, 0.0
    )
    assert step(run) == (1.0, [])
    assert step(run) == (1.0, [])  # restart 1
    assert step(run) == (2.0, ["web", "log"])  # exit: both containers wait 10 s
    app = run.app
    assert (app.state, app.reason, app.wait, app.restart_at, app.restarts) == ("waiting", "CrashLoopBackOff", 10, 12, 1)
    assert app.last == (1.0, 2.0, 1, "Error")
    assert run.pod_phase() == "Running"
    assert step(run) == (12.0, [])
    assert (app.state, app.restarts, app.started) == ("running", 2, 12.0)


@pytest.mark.parametrize(
    ("run_seconds", "waits"),
    [
        pytest.param(600, [0, 10, 20], id="10-minutes-is-not-stable"),
        pytest.param(601, [0, 0, 0], id="over-10-minutes-resets"),
    ],
)
def test_back_off_resets_after_a_stable_run(run_seconds: float, waits: list[float]) -> None:
    life = Lifecycle(run_duration=run_seconds, exit_code=1, restart_policy="Always")
    assert restart_waits(PodRun.start(spec(), life, LABEL, 0.0), 3) == waits


def test_crash_backoff_resets_after_twice_the_cap() -> None:
    b = CrashBackoff()
    for at, want in [(0, 10), (10, 20), (30, 40), (70, 80), (150, 160), (310, 300), (610, 300)]:
        b.next("app", at, at)
        assert b.get("app") == want
    assert b.in_backoff_since("app", 900, 900)  # 290 s after the last move: still backing off
    assert not b.in_backoff_since("app", 1211, 1211)  # 601 s after it: stable
    b.next("app", 1211, 1211)
    assert b.get("app") == 10


@given(st.lists(st.floats(min_value=0, max_value=2000, allow_nan=False), min_size=1, max_size=30))
def test_crash_backoff_stays_between_initial_and_cap(gaps: list[float]) -> None:
    b, now = CrashBackoff(), 0.0
    for gap in gaps:
        now += gap
        b.next("k", now, now)
        assert 10 <= b.get("k") <= 300


# --- ready-after ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ready_after", "run_duration", "ready_at"),
    [
        pytest.param(0, None, 0.0, id="at-once"),
        pytest.param(10, None, 10.0, id="after-10s"),
        pytest.param(10, 30, 10.0, id="before-the-exit"),
        pytest.param(30, 30, None, id="not-before-the-exit"),
    ],
)
def test_ready_after(ready_after: float, run_duration: float | None, ready_at: float | None) -> None:
    life = Lifecycle(run_duration=run_duration, ready_after=ready_after, restart_policy="Never")
    run = PodRun.start(spec(), life, LABEL, 0.0)
    became: float | None = 0.0 if run.app.ready else None
    while became is None and run.next_event() is not None:
        at, _ = step(run)
        if run.app.ready:
            became = at
    assert became == ready_at


def test_a_restarted_container_is_ready_again_after_ready_after() -> None:
    life = Lifecycle(run_duration=20, exit_code=1, ready_after=5, restart_policy="Always")
    run = PodRun.start(spec(), life, LABEL, 0.0)
    assert [step(run)[0] for _ in range(3)] == [5.0, 20.0, 20.0]  # ready, exit, restart
    assert (run.app.ready, run.app.restarts) == (False, 1)
    assert step(run)[0] == 25.0
    assert run.app.ready


# --- init containers and sidecars -----------------------------------------------------------

INITS = [container("migrate"), container("proxy", restart_policy="Always"), container("warm")]


def test_init_containers_run_in_order_and_sidecars_keep_running() -> None:
    run = PodRun.start(spec(inits=INITS), Lifecycle(init_duration=5, restart_policy="Never"), LABEL, 0.0)

    def states() -> list[str]:
        return [r.state for r in run.inits]

    assert (run.pod_phase(), states(), run.app.state) == ("Pending", ["running", "waiting", "waiting"], "waiting")
    assert step(run)[0] == 5.0
    assert (run.pod_phase(), states(), run.app.state) == ("Pending", ["terminated", "running", "running"], "waiting")
    assert run.inits[1].started == 5.0
    assert step(run)[0] == 10.0
    assert (run.pod_phase(), states(), run.app.state) == ("Running", ["terminated", "running", "terminated"], "running")
    assert run.app.started == 10.0


def test_zero_length_init_containers_pass_at_once() -> None:
    run = PodRun.start(spec(inits=INITS), Lifecycle(run_duration=5, restart_policy="OnFailure"), LABEL, 0.0)
    assert (run.phase, run.app.started) == (RunPhase.APP, 0.0)
    assert step(run) == (5.0, [])
    assert run.pod_phase() == "Succeeded"
    assert [r.state for r in run.inits] == ["terminated"] * 3  # the sidecar was stopped with the pod
    assert run.inits[1].exit_code == 0


@pytest.mark.parametrize(
    ("policy", "phase"),
    [pytest.param("Never", "Failed", id="never-fails-the-pod"), pytest.param("OnFailure", "Pending", id="restarts")],
)
def test_failing_init_container(policy: str, phase: str) -> None:
    life = Lifecycle(init_duration=5, init_exit_code=2, init_restart_policy=policy)
    run = PodRun.start(spec(inits=INITS), life, LABEL, 0.0)
    step(run)
    assert run.pod_phase() == phase
    assert (run.inits[0].exit_code, run.inits[1].state, run.app.state) == (2, "waiting", "waiting")
    if phase == "Pending":
        assert step(run) == (5.0, [])  # restarted at once
        assert step(run) == (10.0, ["migrate"])  # fails again: back-off
        assert (run.inits[0].reason, run.inits[0].restarts, run.inits[0].restart_at) == ("CrashLoopBackOff", 1, 20.0)


def test_failing_zero_length_init_container_backs_off_without_looping() -> None:
    life = Lifecycle(init_exit_code=1, init_restart_policy="Always")
    run = PodRun.start(spec(inits=INITS), life, LABEL, 0.0)
    assert run.inits[0].state == "terminated"
    assert step(run) == (0.0, ["migrate"])  # restart, fail at once, back-off
    assert (run.inits[0].restarts, run.next_event()) == (1, (10.0, 0.0))


# --- statuses -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "inits",
    [pytest.param([], id="no-init"), pytest.param(INITS, id="init-and-sidecar")],
)
def test_plain_run_status_is_running_status(inits: list[Container]) -> None:
    """Differential: the run's first status of a plain pod is the status the kubelet wrote
    before runs existed (so existing runs write exactly what they did)."""
    p: Pod = pod("web", containers=[container("web"), container("a-log")], init_containers=inits)
    ips = {"host_ip": "10.0.0.1", "pod_ip": "10.1.0.5", "start_time": format_timestamp(0)}
    run = PodRun.start(p.spec, Lifecycle(), LABEL, 7.0)
    got = run_status(p, run, stamp=format_timestamp, now=7.0, **ips)
    assert got == running_status(p, now=format_timestamp(7.0), **ips)
