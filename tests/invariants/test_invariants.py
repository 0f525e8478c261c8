"""The invariant checker: history invariants fed WriteRecords directly; final checks against a
real scheduler instance whose cache and queue the tests set up by hand; one whole run."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from msgspec.structs import replace

from agents.scheduler.config import load_config
from agents.scheduler.framework.types import EventResource
from agents.scheduler.registry import in_tree_registry
from agents.scheduler.scheduler import Scheduler, SchedulerGroup
from emulator.app.scenario import runner
from emulator.app.scenario.invariants import (
    CACHE_MATCHES_API_SERVER,
    EVERY_POD_RESOLVED,
    INVARIANTS,
    NO_DOUBLE_BINDING,
    NO_HOST_PORT_CLASH,
    NO_MISSED_REQUEUE,
    NO_OVERCOMMIT,
    InvariantChecker,
    InvariantResult,
    install,
)
from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, RunResult
from emulator.base.api.codec import convert
from emulator.base.api.core import Binding, ContainerPort, Namespace, Node, Pod, PodCondition
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver.server import ApiServer, WriteRecord
from emulator.base.client.client import Client
from emulator.base.runtime.clock import format_timestamp
from tests.builders import container, node, pod


class Clock:
    virtual = True

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    def timestamp(self, t: float | None = None) -> str:
        return format_timestamp(self.t if t is None else t)


def admitted(p: Pod, node_name: str) -> Pod:
    return replace(
        p,
        spec=replace(p.spec, node_name=node_name),
        status=replace(p.status, phase="Pending", start_time=format_timestamp(1)),
    )


def phase(p: Pod, value: str) -> Pod:
    return replace(p, status=replace(p.status, phase=value))


@dataclass
class Story:
    """Writes as the API server would report them: (time, verb, old, new)."""

    records: list[WriteRecord] = field(default_factory=list)

    def write(self, t: float, verb: Any, old: Any, new: Any) -> Story:
        kind = (new if new is not None else old).kind
        self.records.append(WriteRecord(len(self.records) + 1, t, verb, kind, old, new))
        return self


def play(story: Story) -> dict[str, InvariantResult]:
    """Feed the story to a checker; finish against an empty cluster with no scheduler."""
    checker = InvariantChecker()
    for rec in story.records:
        checker(rec)
    clock = Clock()
    empty = SimpleNamespace(server=ApiServer(clock, random.Random(0)), clock=clock, agents=[])
    return {r.name: r for r in checker.finish(empty)}


def small(name: str, cpu: str = "500m", *, ports: tuple[tuple[str, str, int], ...] = (), **spec: Any) -> Pod:
    """A pod asking ``cpu`` and 64Mi, uid ``uid-<name>``, with these (hostIP, protocol, port)s;
    ``spec`` goes to ``tests.builders.pod``."""
    bound = [ContainerPort(container_port=p, host_port=p, host_ip=ip, protocol=proto) for ip, proto, p in ports]
    return pod(name, uid=f"uid-{name}", containers=[container(cpu=cpu, memory="64Mi", ports=bound)], **spec)


A, B = small("a", "600m"), small("b", "600m")
SMALL_A, SMALL_B = small("a", "100m"), small("b", "100m")


def two_admissions(
    a: Pod, b: Pod, *, node_a: str = "n1", node_b: str = "n1", cpu: str = "1", pods: str = "10"
) -> Story:
    s = (
        Story()
        .write(0, "create", None, node("n1", cpu=cpu, memory="8Gi", pods=pods))
        .write(0, "create", None, node("n2", cpu=cpu, memory="8Gi", pods=pods))
    )
    return s.write(1, "updateStatus", a, admitted(a, node_a)).write(2, "updateStatus", b, admitted(b, node_b))


@pytest.mark.parametrize(
    ("story", "violations", "detail"),
    [
        pytest.param(
            two_admissions(A, B),
            1,
            "node n1: cpu requested 1200m > allocatable 1000m after admitting default/b",
            id="cpu-over",
        ),
        pytest.param(two_admissions(A, B, node_b="n2"), 0, "", id="other-node"),
        pytest.param(
            two_admissions(SMALL_A, SMALL_B, pods="1"), 1, "node n1: pods requested 2 > allocatable 1", id="pods-over"
        ),
        pytest.param(
            Story()
            .write(0, "create", None, node("n1", cpu="1", memory="8Gi", pods="10"))
            .write(1, "updateStatus", A, admitted(A, "n1"))
            .write(2, "bind", B, replace(B, spec=replace(B.spec, node_name="n1"))),
            0,
            "",
            id="bound-not-admitted",
        ),
        pytest.param(
            Story()
            .write(0, "create", None, node("n1", cpu="1", memory="8Gi", pods="10"))
            .write(1, "updateStatus", A, admitted(A, "n1"))
            .write(2, "updateStatus", admitted(A, "n1"), phase(admitted(A, "n1"), "Succeeded"))
            .write(3, "updateStatus", B, admitted(B, "n1")),
            0,
            "",
            id="released-on-success",
        ),
        pytest.param(
            Story()
            .write(0, "create", None, node("n1", cpu="1", memory="8Gi", pods="10"))
            .write(1, "updateStatus", A, admitted(A, "n1"))
            .write(2, "delete", admitted(A, "n1"), None)
            .write(3, "updateStatus", B, admitted(B, "n1")),
            0,
            "",
            id="released-on-delete",
        ),
        pytest.param(
            Story()
            .write(0, "create", None, node("n1", cpu="1", memory="8Gi", pods="10"))
            .write(1, "updateStatus", A, phase(replace(A, spec=replace(A.spec, node_name="n1")), "Running"))
            .write(2, "updateStatus", B, admitted(B, "n1")),
            1,
            "cpu requested 1200m",
            id="running-counts-without-start-time",
        ),
    ],
)
def test_overcommit_as_admitted(story: Story, violations: int, detail: str) -> None:
    result = play(story)[NO_OVERCOMMIT]
    assert result.violations == violations
    assert detail in result.first_detail
    assert (result.first_time == 2) if violations else result.first_time is None


BOUND = replace(A, spec=replace(A.spec, node_name="n1"))


@pytest.mark.parametrize(
    ("story", "violations", "detail"),
    [
        pytest.param(Story().write(1, "create", None, A).write(2, "bind", A, BOUND), 0, "", id="bound-once"),
        pytest.param(Story().write(1, "create", None, BOUND), 0, "", id="created-bound"),
        pytest.param(
            Story().write(1, "create", None, A).write(2, "bind", A, BOUND).write(3, "bind", BOUND, BOUND),
            1,
            "pod default/a bound to n1 while already bound to n1",
            id="bound-twice",
        ),
        pytest.param(
            Story()
            .write(1, "create", None, BOUND)
            .write(2, "update", BOUND, replace(BOUND, spec=replace(BOUND.spec, node_name="n2"))),
            1,
            "pod default/a moved from node n1 to n2",
            id="moved",
        ),
        pytest.param(
            Story()
            .write(1, "create", None, BOUND)
            .write(2, "update", BOUND, A)
            .write(3, "bind", A, replace(BOUND, spec=replace(BOUND.spec, node_name="n2"))),
            2,
            "pod default/a moved from node n1 to (none)",
            id="unbound-then-bound-elsewhere",
        ),
        pytest.param(
            Story()
            .write(1, "create", None, BOUND)
            .write(2, "delete", BOUND, None)
            .write(
                3,
                "create",
                None,
                replace(
                    BOUND, metadata=replace(BOUND.metadata, uid="uid-a2"), spec=replace(BOUND.spec, node_name="n2")
                ),
            ),
            0,
            "",
            id="recreated-with-new-uid",
        ),
    ],
)
def test_double_binding(story: Story, violations: int, detail: str) -> None:
    result = play(story)[NO_DOUBLE_BINDING]
    assert result.violations == violations
    assert result.first_detail.startswith(detail)


def ported(name: str, *ports: tuple[str, str, int]) -> Pod:
    return small(name, "100m", ports=ports)


ANY, IP1, IP2 = "0.0.0.0", "10.0.0.1", "10.0.0.2"


@pytest.mark.parametrize(
    ("a", "b", "node_b", "violations"),
    [
        pytest.param(ported("a", (ANY, "TCP", 80)), ported("b", (ANY, "TCP", 80)), "n1", 1, id="same-port"),
        pytest.param(ported("a", (ANY, "TCP", 80)), ported("b", (ANY, "UDP", 80)), "n1", 0, id="other-protocol"),
        pytest.param(ported("a", (IP1, "TCP", 80)), ported("b", (IP2, "TCP", 80)), "n1", 0, id="other-ips"),
        pytest.param(ported("a", (ANY, "TCP", 80)), ported("b", (IP1, "TCP", 80)), "n1", 1, id="wildcard-ip"),
        pytest.param(ported("a", (ANY, "TCP", 80)), ported("b", (ANY, "TCP", 80)), "n2", 0, id="other-node"),
        pytest.param(ported("a", (ANY, "TCP", 80)), ported("b", (ANY, "TCP", 81)), "n1", 0, id="other-port"),
    ],
)
def test_host_port_clash(a: Pod, b: Pod, node_b: str, violations: int) -> None:
    result = play(two_admissions(a, b, node_b=node_b))[NO_HOST_PORT_CLASH]
    assert result.violations == violations
    if violations:
        assert result.first_detail.startswith("node n1: pods default/a and default/b both use hostPort TCP/80")
        assert result.first_time == 2


def test_host_port_freed_when_the_pod_ends() -> None:
    a, b = ported("a", (ANY, "TCP", 80)), ported("b", (ANY, "TCP", 80))
    story = two_admissions(a, b)
    story.records.insert(
        3, WriteRecord(99, 1.5, "updateStatus", "Pod", admitted(a, "n1"), phase(admitted(a, "n1"), "Failed"))
    )
    assert play(story)[NO_HOST_PORT_CLASH].violations == 0


# --- final checks against a real scheduler instance -------------------------------------------


class World:
    """API server + one scheduler whose cache and queue the test fills; the checker listens."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.server = ApiServer(self.clock, random.Random(0))
        self.server.create(Namespace(metadata=ObjectMeta(name="default")))
        self.checker = install(self)
        reg = in_tree_registry()
        profiles = [p.to_spec() for p in load_config(None, reg).profiles]
        client = Client(self.server, self.clock, random.Random(1), name="default-scheduler")
        self.sched = Scheduler(client=client, clock=self.clock, rng=random.Random(2), profiles=profiles, registry=reg)
        self.agents: list[Any] = [SchedulerGroup([self.sched])]

    def node(self, n: Node) -> Node:
        created = self.server.create(n)
        self.sched.cache.add_node(created)
        return created

    def pod(self, p: Pod, *, bind: str = "", cache: bool = True) -> Pod:
        p = replace(p, metadata=replace(p.metadata, uid=""))
        created: Pod = self.server.create(p)
        if bind:
            created = self.server.bind(binding(p.metadata.name, bind))
            if cache:
                self.sched.cache.add_pod(created)
        return created

    def park(self, p: Pod, plugins: set[str], at: float = 0.0) -> None:
        """Queue ``p``, pop it and bring it back as rejected by ``plugins`` (at clock ``at``)."""
        self.clock.t = at
        self.sched.queue.add(p)
        qpi = self.sched.queue.pop_nowait()
        assert qpi is not None
        qpi.unschedulable_plugins = set(plugins)
        self.sched.queue.add_unschedulable_if_not_present(qpi, self.sched.queue.scheduling_cycle)
        assert self.sched.queue.where(f"default/{p.metadata.name}") == "Unschedulable"

    def report(self, p: Pod) -> Pod:
        cond = PodCondition(
            type="PodScheduled", status="False", reason="Unschedulable", message="0/1 nodes are available"
        )
        updated: Pod = self.server.update_status(replace(p, status=replace(p.status, conditions=[cond])))
        return updated

    def finish(self, now: float = 100.0, *, caught_up: bool = True) -> dict[str, InvariantResult]:
        self.clock.t = now
        if caught_up:
            self.sched.pods.revision = self.sched.nodes.revision = self.server.revision
        return {r.name: r for r in self.checker.finish(self)}


def binding(name: str, node_name: str) -> Binding:
    return convert({"metadata": {"name": name, "namespace": "default"}, "target": {"name": node_name}}, Binding)


def cache_in_sync(w: World) -> None:
    w.node(node("n1", cpu="2", memory="8Gi", pods="10"))
    w.pod(small("a"), bind="n1")


def leaked_assumed(w: World) -> None:
    cache_in_sync(w)
    b = w.pod(small("b"))
    w.sched.cache.assume_pod(replace(b, spec=replace(b.spec, node_name="n1")))


def missing_pod(w: World) -> None:
    w.node(node("n1", cpu="2", memory="8Gi", pods="10"))
    w.pod(small("a"), bind="n1", cache=False)


def stale_requests(w: World) -> None:
    w.node(node("n1", cpu="2", memory="8Gi", pods="10"))
    a = w.pod(small("a"), bind="n1", cache=False)
    w.sched.cache.add_pod(replace(a, spec=replace(a.spec, containers=[container(cpu="100m", memory="64Mi")])))


def deleted_node(w: World) -> None:
    cache_in_sync(w)
    w.server.delete("Node", "n1")


def terminal_still_cached(w: World) -> None:
    cache_in_sync(w)
    a = w.server.get("Pod", "a", "default")
    w.server.update_status(phase(a, "Succeeded"))


@pytest.mark.parametrize(
    ("setup", "violations", "detail"),
    [
        pytest.param(cache_in_sync, 0, "", id="in-sync"),
        pytest.param(leaked_assumed, 2, "default-scheduler: pod default/b is still assumed", id="leaked-assumed"),
        pytest.param(
            missing_pod, 1, "default-scheduler: node n1: pods missing from the cache ['default/a']", id="missing-pod"
        ),
        pytest.param(
            stale_requests,
            1,
            "default-scheduler: node n1: cache requested {cpu: 100m, memory: 67108864}, pods request {cpu: 500m",
            id="stale-requests",
        ),
        pytest.param(
            deleted_node, 1, "default-scheduler: node n1 was deleted but the cache still has it", id="deleted-node"
        ),
        pytest.param(
            terminal_still_cached,
            1,
            "default-scheduler: node n1: pods missing from the cache [], extra in the cache ['default/a']",
            id="terminal-cached",
        ),
    ],
)
def test_cache_matches_api_server(setup: Callable[[World], None], violations: int, detail: str) -> None:
    w = World()
    setup(w)
    result = w.finish()[CACHE_MATCHES_API_SERVER]
    assert (result.violations, result.skipped) == (violations, "")
    assert result.first_detail.startswith(detail)
    assert (result.first_time == 100.0) if violations else result.first_time is None


@pytest.mark.parametrize(
    ("make_behind", "why"),
    [
        pytest.param(
            lambda w: setattr(w.sched.pods, "revision", 0),
            "its pod informer has not seen every pod write",
            id="pod-informer",
        ),
        pytest.param(
            lambda w: setattr(w.sched.nodes, "revision", 0),
            "its node informer has not seen every node write",
            id="node-informer",
        ),
        pytest.param(
            lambda w: w.sched.client.stats.calls.update(bind=2), "1 bind request(s) on the wire", id="bind-on-the-wire"
        ),
    ],
)
def test_final_scheduler_checks_wait_for_quiescence(make_behind: Callable[[World], None], why: str) -> None:
    w = World()
    missing_pod(w)  # would be a violation if judged
    w.sched.pods.revision = w.sched.nodes.revision = w.server.revision
    make_behind(w)
    results = w.finish(caught_up=False)
    for name in (CACHE_MATCHES_API_SERVER, NO_MISSED_REQUEUE):
        assert results[name].violations == 0
        assert results[name].skipped == f"default-scheduler not quiescent: {why}"


@pytest.mark.parametrize(
    ("node_cpu", "plugins", "extra", "violations", "detail"),
    [
        pytest.param(
            "2",
            {"NodeResourcesFit"},
            {},
            1,
            "default-scheduler: pod default/p parked in unschedulablePods at t=3s "
            "(rejected by ['NodeResourcesFit']) fits node n1 now",
            id="fits-now",
        ),
        pytest.param("100m", {"NodeResourcesFit"}, {}, 0, "", id="still-too-big"),
        pytest.param("2", {"Coscheduling"}, {}, 0, "", id="rejected-outside-filters"),
        pytest.param("2", {"NodeAffinity"}, {"node_selector": {"zone": "a"}}, 0, "", id="selector-still-unmatched"),
    ],
)
def test_missed_requeue(node_cpu: str, plugins: set[str], extra: dict[str, Any], violations: int, detail: str) -> None:
    w = World()
    w.node(node("n1", cpu=node_cpu, memory="8Gi", pods="10"))
    p = w.pod(small("p", **extra))
    w.park(p, plugins, at=3.0)
    w.report(p)
    result = w.finish()[NO_MISSED_REQUEUE]
    assert (result.violations, result.first_detail) == (violations, detail)


def test_parked_pod_that_is_bound_in_the_api_server() -> None:
    w = World()
    w.node(node("n1", cpu="100m", memory="8Gi", pods="10"))
    p = w.pod(small("p", "500m"))
    w.park(p, {"NodeResourcesFit"})
    w.server.bind(binding("p", "n1"))
    w.sched.cache.add_pod(w.server.get("Pod", "p", "default"))
    result = w.finish()[NO_MISSED_REQUEUE]
    assert (
        result.first_detail
        == "default-scheduler: pod default/p waits in unschedulablePods but is bound to n1 in the API server"
    )


PENDING = "pod default/p (created at t=0s) is pending without PodScheduled=False and a reason"


def unqueued(w: World) -> None:
    w.pod(small("p", "500m"))


def reported(w: World) -> None:
    w.report(w.pod(small("p", "500m")))


def in_active_q(w: World) -> None:
    w.sched.queue.add(w.pod(small("p", "500m")))


def other_scheduler(w: World) -> None:
    w.pod(small("p", scheduler="my-scheduler"))


def gated(w: World) -> None:
    w.pod(small("p", gates=["wait"]))


def parked_recently(w: World) -> None:
    w.park(w.pod(small("p", "500m")), {"NodeResourcesFit"}, at=98.0)


def parked_long_ago(w: World) -> None:
    w.park(w.pod(small("p", "500m")), {"NodeResourcesFit"}, at=7.0)


def terminal(w: World) -> None:
    w.server.update_status(phase(w.pod(small("p", "500m")), "Failed"))


@pytest.mark.parametrize(
    ("setup", "detail"),
    [
        pytest.param(
            unqueued,
            f"{PENDING}; default-scheduler: in no queue",
            id="in-no-queue",
        ),
        pytest.param(
            parked_long_ago,
            f"{PENDING}; default-scheduler: in unschedulablePods since t=7s",
            id="parked-unreported",
        ),
        pytest.param(reported, "", id="reported"),
        pytest.param(in_active_q, "", id="in-active-q"),
        pytest.param(other_scheduler, "", id="no-scheduler-serves-it"),
        pytest.param(gated, "", id="scheduling-gates"),
        pytest.param(parked_recently, "", id="report-may-be-on-the-wire"),
        pytest.param(terminal, "", id="terminal"),
    ],
)
def test_every_pod_resolved(setup: Callable[[World], None], detail: str) -> None:
    w = World()
    w.node(node("n1", cpu="100m", memory="8Gi", pods="10"))
    setup(w)
    result = w.finish()[EVERY_POD_RESOLVED]
    assert (result.violations, result.first_detail) == ((1, detail) if detail else (0, ""))


def test_without_scheduler_the_final_checks_are_skipped() -> None:
    w = World()
    w.agents = []
    unqueued(w)
    results = w.finish()
    assert [r.name for r in results.values()] == list(INVARIANTS)
    for name in (CACHE_MATCHES_API_SERVER, NO_MISSED_REQUEUE, EVERY_POD_RESOLVED):
        assert (results[name].violations, results[name].skipped) == (0, "no scheduler instance")


def test_json_lists_every_invariant() -> None:
    w = World()
    missing_pod(w)
    first = w.finish()
    assert w.finish() == first  # finishing again checks again, it does not add up
    docs = [r.to_json() for r in first.values()]
    assert [d["name"] for d in docs] == list(INVARIANTS)
    by_name = {d["name"]: d for d in docs}
    assert by_name[NO_OVERCOMMIT] == {"name": NO_OVERCOMMIT, "violations": 0, "first": None}
    assert by_name[CACHE_MATCHES_API_SERVER] == {
        "name": CACHE_MATCHES_API_SERVER,
        "violations": 1,
        "first": {
            "time": 100.0,
            "detail": "default-scheduler: node n1: pods missing from the cache ['default/a'], extra in the cache []",
        },
    }


# --- a whole run --------------------------------------------------------------------------------


ROOT = Path(__file__).resolve().parents[2]


def checked_run(monkeypatch: pytest.MonkeyPatch, scenario: str, options: RunOptions) -> tuple[RunResult, Any]:
    """Run ``scenario`` with a checker installed on its cluster; (result, cluster)."""
    clusters: list[Any] = []

    class Recorded(runner.Cluster):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.checker = install(self)
            clusters.append(self)

    monkeypatch.setattr(runner, "Cluster", Recorded)
    result = runner.run_scenario(load_scenario(ROOT / scenario), options)
    (cluster,) = clusters
    return result, cluster


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["scenarios/quickstart.yaml", "scenarios/kubelet-basics.yaml"])
def test_real_runs_hold_every_invariant(monkeypatch: pytest.MonkeyPatch, scenario: str) -> None:
    result, cluster = checked_run(monkeypatch, scenario, RunOptions(seed=3))
    assert result.passed
    results = cluster.checker.finish(cluster)
    assert [(r.name, r.violations, r.skipped) for r in results] == [(n, 0, "") for n in INVARIANTS]
    assert cluster.checker.bind_writes == result.extra["agents"][0]["scheduling"]["bound"]


def test_a_queue_that_drops_node_events_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Quickstart's large pods wait for the large nodes that join at t=60s; a queue deaf to
    Node events leaves them parked although they fit."""
    from agents.scheduler.queue.scheduling_queue import SchedulingQueue

    move = SchedulingQueue.move_all_to_active_or_backoff

    def deaf(self: SchedulingQueue, event: Any, old: Any = None, new: Any = None, pre_check: Any = None) -> None:
        if event.resource is not EventResource.Node:
            move(self, event, old, new, pre_check)

    monkeypatch.setattr(SchedulingQueue, "move_all_to_active_or_backoff", deaf)
    _, cluster = checked_run(monkeypatch, "scenarios/quickstart.yaml", RunOptions(until=100.0))
    results = {r.name: r for r in cluster.checker.finish(cluster)}
    requeue = results[NO_MISSED_REQUEUE]
    assert requeue.violations == 2
    assert requeue.first_detail.startswith("default-scheduler: pod default/large-0 parked in unschedulablePods at t=")
    assert requeue.first_detail.endswith("fits node large-node-0 now")
    assert [n for n, r in results.items() if r.violations] == [NO_MISSED_REQUEUE]
