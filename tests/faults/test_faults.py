"""``FaultPlan``: the decision tables of every fault kind, windows and arming, the
determinism of its draws, and the two client hooks it installs (interceptor, watch delay
and reordering in ``WatchStream``)."""

from __future__ import annotations

import asyncio
import itertools
import random
from pathlib import Path

import pytest
from msgspec.structs import replace

from emulator.app.scenario.faults import FaultPlan
from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.schema import (
    ApiError as ApiErrorFault,
)
from emulator.app.scenario.schema import (
    ApiLatency,
    ContainerStartFailure,
    Delay,
    FaultSpec,
    ImagePullSlow,
    NodeHeartbeatStop,
    WatchCut,
    WatchDelay,
    WatchReorder,
)
from emulator.base.api.core import LabelSelector, Namespace
from emulator.base.api.errors import ApiError, Conflict, InternalError, NotFound
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.scheduling import PriorityClass
from emulator.base.apiserver.server import ApiServer
from emulator.base.apiserver.watcher import WatchEvent
from emulator.base.client.client import Client
from emulator.base.client.informer import Informer
from emulator.base.runtime.clock import LoopClock
from emulator.base.runtime.rng import Seeds
from tests.builders import container, pod
from tests.cluster import Cluster


def plan(*specs: FaultSpec, seed: int = 1, armed: bool = True) -> FaultPlan:
    return FaultPlan([(f"faults[{i}]", s, armed) for i, s in enumerate(specs)], Seeds(seed))


APP = [container("app", image="i")]


# --- API calls --------------------------------------------------------------------------------

CALL = (5.0, "default-scheduler", "bind", "Pod")

API_CASES = [
    pytest.param(ApiErrorFault(verb="bind"), CALL, 0.0, InternalError, id="verb-matches"),
    pytest.param(ApiErrorFault(verb="create"), CALL, 0.0, None, id="other-verb"),
    pytest.param(ApiErrorFault(kind="Node"), CALL, 0.0, None, id="other-kind"),
    pytest.param(ApiErrorFault(kind="Pod", error="Conflict"), CALL, 0.0, Conflict, id="kind-matches"),
    pytest.param(ApiErrorFault(agent="default-scheduler*", error="NotFound"), CALL, 0.0, NotFound, id="agent-glob"),
    pytest.param(ApiErrorFault(agent="kubelet:*"), CALL, 0.0, None, id="other-agent"),
    pytest.param(ApiErrorFault(start=5.0), CALL, 0.0, InternalError, id="at-start"),
    pytest.param(ApiErrorFault(start=5.5), CALL, 0.0, None, id="before-start"),
    pytest.param(ApiErrorFault(stop=5.0), CALL, 0.0, None, id="at-stop-excluded"),
    pytest.param(ApiErrorFault(probability=0.0), CALL, 0.0, None, id="probability-zero"),
    pytest.param(ApiLatency(delay=Delay(mean=2.0)), CALL, 2.0, None, id="latency"),
    pytest.param(ApiLatency(delay=Delay(mean=2.0), verb="get"), CALL, 0.0, None, id="latency-other-verb"),
]


@pytest.mark.parametrize(("spec", "call", "delay", "error"), API_CASES)
def test_api_decision(spec: FaultSpec, call: tuple[float, str, str, str], delay: float, error: type | None) -> None:
    got_delay, got_error = plan(spec).api_call(*call)
    assert got_delay == delay
    assert type(got_error) is (error or type(None))


@pytest.mark.parametrize(
    ("spec", "verb", "kind", "message"),
    [
        pytest.param(
            ApiErrorFault(error="Conflict"),
            "bind",
            "Pod",
            "Operation cannot be fulfilled on pods/binding: injected by faults[0]",
            id="bind-conflict",
        ),
        pytest.param(
            ApiErrorFault(error="NotFound"), "get", "Node", "nodes not found: injected by faults[0]", id="not-found"
        ),
        pytest.param(
            ApiErrorFault(), "updateStatus", "Pod", "Internal error occurred: injected by faults[0]", id="internal"
        ),
    ],
)
def test_injected_errors_read_like_the_servers(spec: ApiErrorFault, verb: str, kind: str, message: str) -> None:
    _, error = plan(spec).api_call(0.0, "runner", verb, kind)
    assert error is not None
    assert error.message == message


def test_latency_and_error_faults_combine_and_the_first_error_wins() -> None:
    p = plan(
        ApiLatency(delay=Delay(mean=1.0)),
        ApiErrorFault(error="Conflict"),
        ApiLatency(delay=Delay(mean=0.5)),
        ApiErrorFault(error="NotFound"),
    )
    delay, error = p.api_call(0.0, "runner", "create", "Pod")
    assert delay == 1.5
    assert isinstance(error, Conflict)
    assert [s["injected"] for s in p.statistics()] == [1, 1, 1, 0]


def test_count_caps_the_injections() -> None:
    p = plan(ApiErrorFault(count=2))
    results = [p.api_call(float(t), "runner", "get", "Pod")[1] for t in range(5)]
    assert [e is not None for e in results] == [True, True, False, False, False]


def test_probability_one_draws_nothing() -> None:
    p = plan(ApiErrorFault(), ApiLatency(delay=Delay(mean=1.0)))
    states = [f.rng.getstate() for f in p.faults]
    p.api_call(0.0, "runner", "get", "Pod")
    assert [f.rng.getstate() for f in p.faults] == states


def _decisions(seed: int) -> list[tuple[float, str]]:
    p = plan(ApiErrorFault(probability=0.3), ApiLatency(delay=Delay(mean=1.0, jitter=0.5), probability=0.5), seed=seed)
    out = []
    for t in range(200):
        delay, error = p.api_call(float(t), "kubelet:n1", "updateStatus", "Pod")
        out.append((delay, "" if error is None else error.reason))
    return out


def test_same_seed_same_decisions_other_seed_others() -> None:
    first, again, other = _decisions(7), _decisions(7), _decisions(8)
    assert first == again
    assert first != other
    errors = sum(1 for _, e in first if e)
    delayed = sum(1 for d, _ in first if d > 0)
    assert 40 <= errors <= 80  # probability 0.3 of 200
    assert 70 <= delayed <= 130  # probability 0.5 of 200
    assert all(d == 0 or 0.5 <= d <= 1.5 for d, _ in first)


def test_faults_draw_from_independent_streams() -> None:
    """Adding a fault never changes another fault's decisions."""
    alone = plan(ApiErrorFault(probability=0.5))
    both = FaultPlan(
        [("faults[0]", ApiErrorFault(probability=0.5), True), ("faults[1]", ApiErrorFault(probability=0.5), True)],
        Seeds(1),
    )
    a = [alone.api_call(0.0, "runner", "get", "Pod")[1] is not None for _ in range(50)]
    b = [both.api_call(0.0, "runner", "get", "Pod")[1] for _ in range(50)]
    assert [e is not None and e.message.endswith("faults[0]") for e in b] == a


def test_a_step_fault_acts_only_once_armed() -> None:
    p = plan(ApiErrorFault(start=10.0), ApiErrorFault(), armed=False)
    assert p.api_call(50.0, "runner", "get", "Pod") == (0.0, None)
    p.arm("faults[0]", 30.0)
    assert p.api_call(20.0, "runner", "get", "Pod") == (0.0, None)  # start 10s, but armed at 30s
    assert p.api_call(30.0, "runner", "get", "Pod")[1] is not None
    p.arm("faults[0]", 60.0)  # arming twice keeps the first time
    assert p.get("faults[0]").armed_at == 30.0


def test_from_scenario_numbers_top_level_faults_then_step_faults() -> None:
    text = (
        "name: x\nobjects:\n  - {apiVersion: v1, kind: Node, metadata: {name: n}}\n"
        "faults:\n  - apiError: {}\n  - watchCut: {agent: runner, at: 1s}\n"
        "steps:\n  - sleep: 1s\n  - fault: {nodeHeartbeatStop: {node: n}}\n"
    )
    p = FaultPlan.from_scenario(load_scenario_text(text, source="s.yaml", base_dir=Path(".")), Seeds(0))
    assert p is not None
    assert [(f.index, f.where, f.type, f.armed_at) for f in p.faults] == [
        (0, "faults[0]", "apiError", 0.0),
        (1, "faults[1]", "watchCut", 0.0),
        (2, "steps[1].fault", "nodeHeartbeatStop", None),
    ]
    assert (
        FaultPlan.from_scenario(load_scenario_text("name: x\n", source="s.yaml", base_dir=Path(".")), Seeds(0)) is None
    )


# --- watch delivery ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "agent", "kind", "t", "expected"),
    [
        pytest.param(WatchDelay(agent="default-scheduler", delay=Delay(mean=3.0)), "default-scheduler", "Pod", 1.0,
                     (3.0, False), id="delay"),
        pytest.param(WatchDelay(agent="default-scheduler", delay=Delay(mean=3.0)), "kubelet:n", "Pod", 1.0,
                     (0.0, False), id="other-agent"),
        pytest.param(WatchDelay(agent="*", kind="Node", delay=Delay(mean=3.0)), "runner", "Pod", 1.0,
                     (0.0, False), id="other-kind"),
        pytest.param(WatchDelay(agent="*", delay=Delay(mean=3.0), stop=1.0), "runner", "Pod", 1.0,
                     (0.0, False), id="written-after-stop"),
    ],
)  # fmt: skip
def test_watch_delay(spec: FaultSpec, agent: str, kind: str, t: float, expected: tuple[float, bool]) -> None:
    assert plan(spec).watch_delay(agent, kind, t) == expected


def test_watch_reorder_draws_up_to_its_window() -> None:
    p = plan(WatchReorder(agent="*", window=0.5))
    draws = [p.watch_delay("runner", "Pod", 0.0) for _ in range(100)]
    assert all(reorder and 0.0 <= d <= 0.5 for d, reorder in draws)
    assert len({d for d, _ in draws}) > 90


# --- kubelet faults ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("node", "now", "enabled"),
    [
        pytest.param("n1", 9.9, True, id="before"),
        pytest.param("n1", 10.0, False, id="from-start"),
        pytest.param("n1", 19.9, False, id="inside"),
        pytest.param("n1", 20.0, True, id="at-stop"),
        pytest.param("n2", 15.0, True, id="other-node"),
    ],
)
def test_heartbeat_window(node: str, now: float, enabled: bool) -> None:
    assert plan(NodeHeartbeatStop(node="n1", start=10.0, stop=20.0)).heartbeat_enabled(node, now) is enabled


@pytest.mark.parametrize(
    ("spec", "node", "image", "seconds"),
    [
        pytest.param(ImagePullSlow(factor=3.0), "n1", "nginx:1.27", 15.0, id="factor"),
        pytest.param(ImagePullSlow(bandwidth=2**20), "n1", "nginx:1.27", 100.0, id="bandwidth"),
        pytest.param(ImagePullSlow(node="n2", factor=3.0), "n1", "nginx:1.27", 5.0, id="other-node"),
        pytest.param(ImagePullSlow(image="nginx:1.27", factor=2.0), "n1", "nginx:1.27", 10.0, id="image"),
        pytest.param(ImagePullSlow(image="busybox", factor=2.0), "n1", "busybox:latest", 10.0, id="image-latest"),
        pytest.param(ImagePullSlow(image="redis", factor=2.0), "n1", "nginx:1.27", 5.0, id="other-image"),
    ],
)
def test_pull_seconds(spec: ImagePullSlow, node: str, image: str, seconds: float) -> None:
    assert plan(spec).pull_seconds(node, image, 100 * 2**20, 5.0, 0.0) == seconds


def test_start_failure_selects_pods_and_names_the_fault() -> None:
    p = plan(
        ContainerStartFailure(selector=LabelSelector(match_labels={"app": "web"})),
        ContainerStartFailure(node="n2", reason="ContainerCannotRun", message="exec format error"),
    )
    assert p.start_failure("n1", pod("web", namespace="", labels={"app": "web"}, containers=APP), 0.0) == (
        "StartError",
        'failed to start container "app": injected by faults[0]',
    )
    assert p.start_failure("n1", pod("db", namespace="", labels={"app": "db"}, containers=APP), 0.0) is None
    assert p.start_failure("n2", pod("db", namespace="", containers=APP), 0.0) == (
        "ContainerCannotRun",
        "exec format error",
    )


def test_start_failure_probability_is_seeded() -> None:
    def run(seed: int) -> list[bool]:
        p = plan(ContainerStartFailure(probability=0.5), seed=seed)
        return [p.start_failure("n", pod(f"p{i}", namespace="", containers=APP), 0.0) is not None for i in range(64)]

    assert run(3) == run(3)
    assert run(3) != run(4)
    assert 16 <= sum(run(3)) <= 48


# --- watch cuts -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "armed", "times"),
    [
        pytest.param(WatchCut(agent="runner", at=30.0), 0.0, [30.0], id="at"),
        pytest.param(WatchCut(agent="runner", at=30.0), 45.0, [45.0], id="at-in-the-past"),
        pytest.param(WatchCut(agent="runner", every=10.0, stop=40.0), 0.0, [10.0, 20.0, 30.0], id="every-until-stop"),
        pytest.param(WatchCut(agent="runner", every=10.0, start=5.0), 0.0, [15.0, 25.0, 35.0], id="every-from-start"),
        pytest.param(WatchCut(agent="runner", every=10.0, start=5.0), 12.0, [22.0, 32.0, 42.0], id="armed-late"),
    ],
)
def test_cut_times(spec: WatchCut, armed: float, times: list[float]) -> None:
    assert list(itertools.islice(FaultPlan.cut_times(spec, armed), 3)) == times


@pytest.mark.parametrize(
    ("spec", "watcher", "kind", "cut"),
    [
        pytest.param(WatchCut(agent="default-scheduler", at=1.0), "default-scheduler", "Pod", True, id="agent"),
        pytest.param(WatchCut(agent="default-scheduler", at=1.0), "default-scheduler-1", "Pod", False, id="exact"),
        pytest.param(WatchCut(agent="kubelet:*", kind="Node", at=1.0), "kubelet:n", "Node", True, id="glob-kind"),
        pytest.param(WatchCut(agent="kubelet:*", kind="Node", at=1.0), "kubelet:n", "Pod", False, id="other-kind"),
    ],
)
def test_cuts_watcher(spec: WatchCut, watcher: str, kind: str, cut: bool) -> None:
    assert FaultPlan.cuts_watcher(spec, watcher, kind) is cut


# --- the client hooks (virtual time) ----------------------------------------------------------


def _server() -> tuple[ApiServer, LoopClock]:
    c = Cluster(namespaces=())
    return c.server, c.clock


@pytest.mark.asyncio
async def test_attach_installs_hooks_only_on_clients_a_fault_may_hit() -> None:
    server, clock = _server()
    p = plan(
        ApiErrorFault(agent="kubelet:*", verb="create"),
        ApiLatency(agent="kubelet:*", verb="get", delay=Delay(mean=2.0)),
    )
    hit, spared = (Client(server, clock, random.Random(0), name=n) for n in ("kubelet:n1", "default-scheduler"))
    p.attach(hit)
    p.attach(spared)
    assert spared.interceptor is None
    assert spared.watch_faults is None
    assert hit.interceptor is not None
    assert hit.watch_faults is None
    with pytest.raises(InternalError, match="injected by faults"):
        await hit.create(Namespace(metadata=ObjectMeta(name="a")))
    assert server.writes == 0  # a rejected call changes nothing
    await spared.create(Namespace(metadata=ObjectMeta(name="a")))
    t0 = clock.now()
    await hit.get("Namespace", "a")
    assert clock.now() - t0 == 2.0
    assert hit.stats.errors == {"create": 1}


async def _deliveries(
    server: ApiServer, clock: LoopClock, client: Client, writes: int
) -> list[tuple[float, str, str, int]]:
    stream = client.watch("Namespace", resource_version=server.revision)
    out: list[tuple[float, str, str, int]] = []
    while len(out) < writes:
        for ev in await stream.next_batch():
            out.append((clock.now(), ev.type, ev.object.metadata.name, ev.revision))
    stream.close()
    return out


@pytest.mark.asyncio
async def test_reorder_lets_other_objects_overtake_but_never_the_same_object() -> None:
    server, clock = _server()
    client = Client(server, clock, random.Random(0), name="runner")
    delays = {"a": [1.0, 0.0], "b": [0.2]}
    order: list[str] = []

    class Hook:
        def watch_delay(self, agent: str, kind: str, t: float) -> tuple[float, bool]:
            name = order.pop(0)
            return delays[name].pop(0), True

    client.watch_faults = Hook()
    task = asyncio.create_task(_deliveries(server, clock, client, 3))
    await asyncio.sleep(0)
    for name in ("a", "b"):
        order.append(name)
        server.create(Namespace(metadata=ObjectMeta(name=name)))
    order.append("a")
    a = server.get("Namespace", "a")
    server.update(replace(a, metadata=replace(a.metadata, labels={"v": "2"})))
    got = await task
    rev_a, rev_b, rev_a2 = 1, 2, 3
    assert got == [
        (0.2, "ADDED", "b", rev_b),  # overtook a
        (1.0, "ADDED", "a", rev_b),  # after b: carries the stream's progress, 2
        (1.0, "MODIFIED", "a", rev_a2),  # delay 0, but never before a's earlier event
    ]
    assert rev_a == 1


@pytest.mark.asyncio
async def test_watch_delay_without_reorder_keeps_the_write_order() -> None:
    server, clock = _server()
    client = Client(server, clock, random.Random(0), name="runner")
    delays = [1.0, 0.2]

    class Hook:
        def watch_delay(self, agent: str, kind: str, t: float) -> tuple[float, bool]:
            return delays.pop(0), False

    client.watch_faults = Hook()
    task = asyncio.create_task(_deliveries(server, clock, client, 2))
    await asyncio.sleep(0)
    server.create(Namespace(metadata=ObjectMeta(name="a")))
    server.create(Namespace(metadata=ObjectMeta(name="b")))
    assert await task == [(1.0, "ADDED", "a", 1), (1.0, "ADDED", "b", 2)]


@pytest.mark.asyncio
async def test_an_informer_under_reorder_and_cuts_sees_every_write_once() -> None:
    """Resuming after a cut while events are out of order neither skips nor replays."""
    server, clock = _server()
    writes: dict[str, list[str]] = {}
    server.add_write_listener(lambda w: writes.setdefault(w.obj.metadata.name, []).append(w.verb))
    client = Client(server, clock, random.Random(0), name="default-scheduler")
    plan(WatchReorder(agent="default-scheduler", window=2.0), seed=5).attach(client)
    assert client.watch_faults is not None
    informer = Informer(client, "PriorityClass")  # cluster-scoped, deleted at once
    seen: dict[str, list[str]] = {}
    informer.add_handlers(
        lambda o: seen.setdefault(o.metadata.name, []).append("create"),
        lambda _old, o: seen.setdefault(o.metadata.name, []).append("update"),
        lambda o: seen.setdefault(o.metadata.name, []).append("delete"),
    )
    rng = random.Random(9)
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(informer.run())
        await informer.synced.wait()
        for step in range(300):
            name = f"ns-{rng.randrange(40)}"
            try:
                current = server.get("PriorityClass", name)
            except NotFound:
                server.create(PriorityClass(value=1, metadata=ObjectMeta(name=name)))
            else:
                if rng.random() < 0.3:
                    server.delete("PriorityClass", name)
                else:
                    labels = {"step": str(step)}
                    server.update(replace(current, metadata=replace(current.metadata, labels=labels)))
            if step % 37 == 0:
                for w in server.watchers():
                    w.channel.close()  # a cut: the informer resumes from its revision
            await clock.sleep(rng.uniform(0.0, 0.3))
        await clock.sleep(5.0)
        truth = {o.metadata.name: o.metadata.resource_version for o in server.list("PriorityClass")[0]}
        task.cancel()
    assert {k[1]: o.metadata.resource_version for k, o in informer.store.items()} == truth
    assert seen == writes  # per object: every write once, in order (no replay after a cut)
    assert informer.relists == 0


def test_watch_event_revision_is_replaceable() -> None:
    """The watermark rewrite relies on replacing a frozen event's revision only."""
    ev = WatchEvent("ADDED", Namespace(metadata=ObjectMeta(name="a")), 7, 1.0)
    low = replace(ev, revision=3)
    assert (low.type, low.object, low.revision, low.time) == ("ADDED", ev.object, 3, 1.0)


def test_api_error_is_an_api_error() -> None:
    _, error = plan(ApiErrorFault(error="Conflict")).api_call(0.0, "runner", "update", "Node")
    assert isinstance(error, ApiError)
    assert (error.code, error.reason) == (409, "Conflict")
