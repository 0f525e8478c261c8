"""Faults acting on real agents: the kubelet's hooks in a small virtual-time world, and
whole scenario runs (``faults-demo``, watch cuts, a second scheduler, a start failure)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from agents.kubelet import KubeletSettings
from emulator.app.scenario.faults import FaultPlan
from emulator.app.scenario.loader import load_scenario, load_scenario_text
from emulator.app.scenario.runner import RunOptions, RunResult, run_scenario
from emulator.app.scenario.schema import (
    ContainerStartFailure,
    FaultSpec,
    ImagePullSlow,
    NodeHeartbeatStop,
)
from emulator.base.api.core import Event, LabelSelector, Pod
from emulator.base.apiserver.server import WriteRecord
from emulator.base.client.client import Latency
from emulator.base.runtime.rng import Seeds
from tests.builders import container, node, pod
from tests.cluster import Cluster, OnCluster, open_cluster

ROOT = Path(__file__).resolve().parents[2]
Mi = 2**20


# --- the kubelet's hooks ----------------------------------------------------------------------


APP = [container("app", image="nginx:1.27")]


@dataclass
class World(OnCluster):
    """The cluster with one kubelet (``n1``) under the faults."""

    cluster: Cluster

    def times(self, kind: str, verb: str) -> list[float]:
        return [round(w.time, 3) for w in self.cluster.of(kind, verb=verb)]


@asynccontextmanager
async def kubelet_world(settings: KubeletSettings, *faults: FaultSpec) -> AsyncIterator[World]:
    async with open_cluster(namespaces=("default", "kube-node-lease")) as c:
        c.server.create(node("n1", cpu="4", memory=None, pods="10"))
        c.writes.clear()  # the log starts with the kubelet
        plan = FaultPlan([(f"faults[{i}]", f, True) for i, f in enumerate(faults)], Seeds(0))
        await c.start_kubelet("n1", KubeletSettings(**{**vars_of(settings), "faults": plan}))
        yield World(c)


def vars_of(settings: KubeletSettings) -> dict[str, object]:
    return {name: getattr(settings, name) for name in settings.__dataclass_fields__}


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("frequency", "window", "until", "leases", "statuses"),
    [
        # nodeStatusReportFrequency 0: the status is posted on each beat outside the window
        pytest.param(
            0.0, (25.0, 55.0), 75.0, [10.0, 20.0, 60.0, 70.0], [0.0, 10.0, 20.0, 60.0, 70.0], id="every-heartbeat"
        ),
        # upstream's 5m: an unchanged status is posted at start-up only, within 75 s
        pytest.param(None, (25.0, 55.0), 75.0, [10.0, 20.0, 60.0, 70.0], [0.0], id="upstream-no-post-due"),
        # upstream's 5m: the post due at 300 s falls in the window; the first beat after it posts
        pytest.param(
            None,
            (295.0, 325.0),
            345.0,
            [10.0 * i for i in range(1, 30)] + [330.0, 340.0],
            [0.0, 330.0],
            id="upstream-post-due-in-window",
        ),
    ],
)
async def test_heartbeat_stop_silences_lease_and_status_inside_its_window(
    frequency: float | None,
    window: tuple[float, float],
    until: float,
    leases: list[float],
    statuses: list[float],
) -> None:
    settings = KubeletSettings(heartbeat_interval=10.0)
    if frequency is not None:
        settings = KubeletSettings(heartbeat_interval=10.0, node_status_report_frequency=frequency)
    async with kubelet_world(settings, NodeHeartbeatStop(node="n1", start=window[0], stop=window[1])) as w:
        await w.clock.sleep_until(until)
        assert w.times("Lease", "create") == [0.0]
        assert w.times("Lease", "update") == leases
        assert w.times("Node", "updateStatus") == statuses


@pytest.mark.asyncio
async def test_other_nodes_heartbeats_are_untouched() -> None:
    async with kubelet_world(KubeletSettings(heartbeat_interval=10.0), NodeHeartbeatStop(node="n2")) as w:
        await w.clock.sleep_until(31.0)
        assert w.times("Lease", "update") == [10.0, 20.0, 30.0]


@pytest.mark.parametrize(
    ("fault", "running_at"),
    [
        pytest.param(None, 5.0, id="no-fault"),
        pytest.param(ImagePullSlow(factor=3.0), 15.0, id="factor"),
        pytest.param(ImagePullSlow(bandwidth=25 * Mi), 2.0, id="bandwidth"),
        pytest.param(ImagePullSlow(image="redis", factor=3.0), 5.0, id="other-image"),
    ],
)
@pytest.mark.asyncio
async def test_slow_pulls_delay_the_start(fault: ImagePullSlow | None, running_at: float) -> None:
    settings = KubeletSettings(heartbeat_interval=0, image_pull_bandwidth=10 * Mi, image_sizes={"nginx:1.27": 50 * Mi})
    async with kubelet_world(settings, *([fault] if fault else [])) as w:
        w.server.create(pod("web", node="n1", containers=APP))
        await w.clock.sleep_until(60.0)
        running = [
            w.time for w in w.writes if w.kind == "Pod" and w.new is not None and w.new.status.phase == "Running"
        ]
        assert [round(t, 3) for t in running] == [running_at]


@pytest.mark.asyncio
async def test_container_start_failure_fails_the_pod_as_a_start_error() -> None:
    settings = KubeletSettings(heartbeat_interval=0, container_start=Latency(1.0))
    fault = ContainerStartFailure(selector=LabelSelector(match_labels={"app": "web"}))
    async with kubelet_world(settings, fault) as w:
        w.server.create(pod("web", node="n1", labels={"app": "web"}, containers=APP))
        w.server.create(pod("db", node="n1", labels={"app": "db"}, containers=APP))
        await w.clock.sleep_until(10.0)
        web: Pod = w.server.get("Pod", "web", "default")
        db: Pod = w.server.get("Pod", "db", "default")
        assert (web.status.phase, db.status.phase) == ("Failed", "Running")
        (cs,) = web.status.container_statuses
        assert cs.state.terminated is not None
        term = cs.state.terminated
        assert (term.exit_code, term.reason, term.message) == (
            128,
            "StartError",
            'failed to start container "app": injected by faults[0]',
        )
        assert (cs.ready, cs.started) == (False, False)
        conds = {c.type: (c.status, c.reason) for c in web.status.conditions}
        assert conds["Ready"] == ("False", "PodFailed")
        assert conds["ContainersReady"] == ("False", "PodFailed")
        events: list[Event] = w.server.list("Event")[0]
        warnings = [e for e in events if e.type == "Warning"]  # the image Events are Normal
        assert [(e.type, e.reason, e.message, e.involved_object.name) for e in warnings] == [
            ("Warning", "Failed", 'Error: failed to start container "app": injected by faults[0]', "web")
        ]
        failed_at = [
            round(x.time, 3)
            for x in w.writes
            if x.kind == "Pod" and x.new is not None and x.new.status.phase == "Failed"
        ]
        assert failed_at == [1.0]  # at the end of the start delay, instead of Running


# --- whole runs -------------------------------------------------------------------------------


def run(text: str, *, seed: int | None = None) -> tuple[RunResult, list[WriteRecord]]:
    writes: list[WriteRecord] = []
    scenario = load_scenario_text(text, source="s.yaml", base_dir=ROOT)
    return run_scenario(scenario, RunOptions(seed=seed, on_write=writes.append)), writes


def report(result: RunResult, key: str) -> object:
    return next(a[key] for a in result.extra["agents"] if key in a)


@pytest.mark.slow
def test_faults_demo_story() -> None:
    writes: list[WriteRecord] = []
    result = run_scenario(load_scenario(ROOT / "scenarios" / "faults-demo.yaml"), RunOptions(on_write=writes.append))
    assert result.passed
    events = [w.new for w in writes if w.kind == "Event"]
    failed = [e for e in events if e.reason == "FailedScheduling"]
    injected = "Operation cannot be fulfilled on pods/binding: injected by faults[0]"
    conflicts = [e for e in failed if injected in e.message]
    assert len(conflicts) == 2
    assert report(result, "faults") == [
        {"fault": "faults[0]", "type": "apiError", "armed": True, "injected": 2},
        {"fault": "faults[1]", "type": "nodeHeartbeatStop", "armed": True, "injected": 32},
    ]
    # node-2: last beat at 50 s, stamped by the pass at 55 s, Unknown at the first pass after 105 s
    unknown = [
        w
        for w in writes
        if w.kind == "Node" and w.verb == "updateStatus" and w.new.status.conditions[-1].status == "Unknown"
    ]
    assert [(w.obj.metadata.name, round(w.time)) for w in unknown] == [("node-2", 110)]
    ready = unknown[0].new.status.conditions[-1]
    assert (ready.type, ready.reason, ready.message) == (
        "Ready",
        "NodeStatusUnknown",
        "Kubelet stopped posting node status.",
    )
    taints = [
        (round(w.time), [(t.key, t.effect) for t in w.new.spec.taints])
        for w in writes
        if w.kind == "Node" and w.verb == "update"
    ]
    unreachable = "node.kubernetes.io/unreachable"
    assert taints == [
        (110, [(unreachable, "NoSchedule")]),
        (115, [(unreachable, "NoSchedule"), (unreachable, "NoExecute")]),
    ]
    # MarkPodsNotReady (pkg/controller/util/node/controller_utils.go) after the Unknown write;
    # this kubelet still reaches the API server (its heartbeats alone stop), so its status
    # manager's reconcile (pkg/kubelet/status needsReconcile) writes Ready back at once
    readiness = [
        (round(w.time), w.obj.metadata.name, next(c.status for c in w.new.status.conditions if c.type == "Ready"))
        for w in writes
        if w.kind == "Pod" and w.verb == "updateStatus" and 100 < w.time < 140
    ]
    node_2_pods = sorted({name for _, name, _ in readiness})
    assert len(node_2_pods) == 2
    for name in node_2_pods:
        assert [(at, ready) for at, n, ready in readiness if n == name] == [(110, "False"), (110, "True")]
    assert sorted(e.involved_object.name for e in events if e.reason == "NodeNotReady" and e.type == "Warning") == (
        node_2_pods
    )
    evictions = sorted(e.message for e in events if e.reason == "TaintManagerEviction")
    on_node_2 = sorted(
        w.obj.metadata.name for w in writes if w.kind == "Pod" and w.verb == "bind" and w.obj.spec.node_name == "node-2"
    )
    assert evictions == [f"Marking for deletion Pod default/{n}" for n in on_node_2]
    assert len(on_node_2) == 2
    gone = [round(w.time) for w in writes if w.kind == "Pod" and w.verb == "delete" and w.new is None]
    assert gone == [147, 147]  # 30 s of toleration after the NoExecute taint, plus the 2 s termination
    # the ReplicaSet replaces the evicted pods at once; upstream's PodTopologySpread keeps them
    # Pending: node-2 still counts as a domain (nodeTaintsPolicy Ignore) with 0 matching pods
    creates = [(round(w.time), w.new.metadata.name) for w in writes if w.kind == "Pod" and w.verb == "create"]
    replacements = sorted(name for at, name in creates if at == 145)
    assert len(replacements) == 2
    assert [at for at, _ in creates] == [0] * 6 + [145, 145, 180]
    bound = {w.obj.metadata.name for w in writes if w.kind == "Pod" and w.verb == "bind"}
    assert not bound & set(replacements)
    assert {e.involved_object.name for e in failed if e not in conflicts} == set(replacements)
    assert {e.message for e in failed if e not in conflicts} == {SPREAD_BLOCKED}
    node_controllers = {k: v for k, v in report(result, "controllers").items() if k in NODE_CONTROLLERS}
    assert node_controllers == {  # the workload controllers' entries are their own tests'
        "nodelifecycle": {"markedUnknown": 1, "noExecuteTainted": 1, "noExecuteRemoved": 0, "noScheduleSwaps": 1,
                          "podsMarkedNotReady": 2, "overdue": 0, "zones": 1},
        "tainteviction": {"scheduled": 2, "cancelled": 0, "evicted": 2, "failed": 0, "taintedNodes": 1, "pending": 0},
        "podgc": {"terminated": 0, "orphaned": 0, "terminating": 0, "errors": 0, "missingNodes": 0},
    }  # fmt: skip


NODE_CONTROLLERS = ("nodelifecycle", "tainteviction", "podgc")
SPREAD_BLOCKED = (
    "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
    "2 node(s) didn't match pod topology spread constraints. no new claims to deallocate, "
    "preemption: 0/3 nodes are available: "
    "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
)

BASE = """
name: t
seed: 3
latency: {api: {mean: 2ms, jitter: 1ms}, watch: {mean: 5ms, jitter: 2ms}}
kubelet: {heartbeatInterval: 0}
nodes:
  - {count: 2, namePrefix: node, template: {status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}}}
"""
PODS = """
  - createPods:
      count: {count}
      namePrefix: p
      ratePerSecond: 2
      template:
        metadata: {{labels: {{app: p}}}}
        spec: {{containers: [{{name: c, image: i, resources: {{requests: {{cpu: 100m}}}}}}]}}
"""


@pytest.mark.slow
def test_watch_cuts_make_the_scheduler_resume_and_relist_yet_schedule_everything() -> None:
    text = (
        BASE
        + "faults:\n  - watchCut: {agent: default-scheduler, kind: Pod, every: 3s, stop: 20s}\n"
        + "  - watchCut: {agent: default-scheduler, kind: Node, at: 7s, relist: true}\n"
        + "steps:"
        + PODS.format(count=30)
        + "expect:\n  - podsRunning: {count: 30}\n"
    )
    result, _ = run(text)
    assert result.passed
    assert [(f["fault"], f["injected"]) for f in report(result, "faults")] == [("faults[0]", 6), ("faults[1]", 1)]


@pytest.mark.slow
def test_watch_delay_makes_a_stale_scheduler_bind_later() -> None:
    text = (
        BASE
        + "faults:\n  - watchDelay: {agent: default-scheduler, kind: Pod, delay: {mean: 4s}}\n"
        + "steps:\n  - sleep: 1s"  # after the scheduler's first list: its pods come by the watch
        + PODS.format(count=2)
        + "expect:\n  - podsRunning: {count: 2}\n"
    )
    result, writes = run(text)
    assert result.passed
    created = {w.obj.metadata.name: w.time for w in writes if w.kind == "Pod" and w.verb == "create"}
    bound = {w.obj.metadata.name: w.time for w in writes if w.kind == "Pod" and w.verb == "bind"}
    assert sorted(bound) == sorted(created)
    assert all(4.0 <= bound[p] - created[p] < 4.1 for p in created)


@pytest.mark.slow
def test_a_second_scheduler_instance_joins_at_its_time() -> None:
    text = (
        BASE
        + "faults:\n  - scheduler: {instances: 1, at: 5s}\n"
        + "steps:"
        + PODS.format(count=20)
        + "expect:\n  - podsRunning: {count: 20}\n  - noOvercommit: true\n"
    )
    result, writes = run(text)
    assert result.passed
    assert report(result, "scheduling")["instances"] == 2  # type: ignore[index]
    binders = {w.new.reporting_component for w in writes if w.kind == "Event" and w.new.reason == "Scheduled"}
    assert binders == {"default-scheduler", "default-scheduler-1"}


@pytest.mark.slow
def test_an_api_fault_on_the_runner_is_retried() -> None:
    text = (
        BASE
        + "steps:\n  - fault: {apiError: {agent: runner, verb: create, kind: Pod, count: 3}}"
        + PODS.format(count=2)
        + "expect:\n  - podsRunning: {count: 2}\n"
    )
    result, writes = run(text)
    assert result.passed
    assert report(result, "faults") == [{"fault": "steps[0].fault", "type": "apiError", "armed": True, "injected": 3}]
    first = min(w.time for w in writes if w.kind == "Pod" and w.verb == "create")
    assert 3.5 <= first < 3.6  # retried after 0.5 + 1 + 2 s


@pytest.mark.slow
def test_a_start_failure_fault_counts_failed_pods() -> None:
    text = (
        BASE
        + "faults:\n  - containerStartFailure: {probability: 0.5}\n"
        + "steps:"
        + PODS.format(count=20)
        + "expect:\n  - podsFailed: {count: 0}\n"
    )
    result, _ = run(text)
    assert 4 <= result.pods["failed"] <= 16
    assert result.pods["failed"] + result.pods["running"] == 20
    again, _ = run(text)
    assert again.pods == result.pods
    other, _ = run(text, seed=4)
    assert other.trace_hash != result.trace_hash
