"""``explain_pod``: every filter plugin's status on every node, Skip, PreFilterResult and
PreFilter rejections, nominated pods, scores, host selection, failure messages, preemption;
``ExplainRecorder`` during a real run (every attempt, same decisions as the cycle, the run
itself unchanged); and a property test against the framework's own filter verdict."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.scheduler.cache import Snapshot
from agents.scheduler.config import load_config
from agents.scheduler.explain import Decided, ExplainRecorder, Explanation, explain_pod
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import Code, CycleState, PodInfo, Status
from agents.scheduler.registry import in_tree_registry
from agents.scheduler.scheduler import SchedulerOptions, select_host
from emulator.base.api.codec import convert
from emulator.base.api.core import Affinity, Node, Pod
from emulator.base.runtime.clock import format_timestamp
from tests import builders
from tests.scheduler.world import world

S, U, UU, SKIP, ERR = (
    Code.Success,
    Code.Unschedulable,
    Code.UnschedulableAndUnresolvable,
    Code.Skip,
    Code.Error,
)
TAINT_MSG = "node(s) had untolerated taint(s)"


# --- builders -----------------------------------------------------------------------------


class FakeClock:
    virtual = True

    def now(self) -> float:
        return 100.0

    async def sleep(self, seconds: float) -> None:
        return None

    async def sleep_until(self, t: float) -> None:
        return None

    def timestamp(self, t: float | None = None) -> str:
        return format_timestamp(100.0 if t is None else t)


class FakeNominator:
    def __init__(self, by_node: Mapping[str, list[Pod]]) -> None:
        self.by_node = {n: [PodInfo(p) for p in ps] for n, ps in by_node.items()}

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self.by_node.get(node_name, []))


def mk_node(
    name: str,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "10",
    *,
    taint: str | None = None,
    **kw: Any,
) -> Node:
    """A node the API server never saw (capacity only); ``taint`` is a ``dedicated=<value>``
    NoSchedule taint; ``kw`` goes to ``tests.builders.node``."""
    if taint is not None:
        kw["taints"] = [builders.taint("dedicated", taint)]
    return builders.node(name, cpu=cpu, memory=memory, pods=pods, capacity_only=True, **kw)


def mk_pod(name: str, cpu: str = "1", memory: str = "1Gi", *, node: str = "", priority: int = 0, **kw: Any) -> Pod:
    """A pod (uid ``uid-<name>``, priority 0, image i) asking ``cpu`` and ``memory``;
    ``kw`` goes to ``tests.builders.pod``."""
    return builders.pod(name, uid=f"uid-{name}", cpu=cpu, memory=memory, image="i", node=node, priority=priority, **kw)


def framework(
    config: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    nominated: Mapping[str, list[Pod]] | None = None,
) -> Framework:
    registry = {**in_tree_registry(), **(extra or {})}
    spec = load_config(config, registry).profiles[0].to_spec()
    return Framework(spec, registry, clock=FakeClock(), rng=random.Random(7), nominator=FakeNominator(nominated or {}))


def explain(
    nodes: list[Node],
    pod: Pod,
    running: Sequence[Pod] = (),
    fwk: Framework | None = None,
    **kw: Any,
) -> Explanation:
    fwk = fwk or framework()
    return explain_pod(fwk, Snapshot.from_objects(running, nodes), pod, rng=random.Random(0), **kw)


def codes(exp: Explanation, node: str) -> dict[str, Code]:
    return {p: s.code for p, s in exp.node(node).filter.items()}


def config_with(plugin: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": plugin}]}}}
        ],
    }


# --- fake plugins ----------------------------------------------------------------------------


class Gate:
    """PreFilter that rejects the whole cycle."""

    name = "Gate"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[Any]) -> tuple[None, Status]:
        return None, Status(UU, "gate closed")

    def pre_filter_extensions(self) -> None:
        return None


class Boom:
    """Filter that fails with an Error on n1."""

    name = "Boom"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: Any) -> Status:
        return Status(ERR, "boom") if node_info.name == "n1" else Status()


# --- filters ------------------------------------------------------------------------------------


def test_every_filter_runs_and_feasible_is_the_first_failure_verdict() -> None:
    nodes = [mk_node("n1", cpu="2", taint="infra"), mk_node("n2")]
    exp = explain(nodes, mk_pod("p", cpu="1"), [mk_pod("r", cpu="1500m", node="n1")])
    n1 = exp.node("n1")
    assert n1.filter["TaintToleration"] == Status(UU, TAINT_MSG)
    assert n1.filter["NodeResourcesFit"] == Status(U, "Insufficient cpu")  # run although TaintToleration failed
    assert n1.status == Status(UU, TAINT_MSG)  # upstream stops at the first failure
    assert (n1.feasible, n1.scores, n1.total) == (False, None, None)
    assert set(codes(exp, "n2").values()) <= {S, SKIP}
    assert exp.node("n2").feasible
    assert exp.selected == "n2"
    assert exp.message is None


def test_skipped_filters_report_skip() -> None:
    exp = explain([mk_node("n1")], mk_pod("p"))
    assert codes(exp, "n1") == {
        "NodeUnschedulable": S,
        "NodeName": S,
        "TaintToleration": S,
        "NodeAffinity": SKIP,  # no selector, no required affinity
        "NodePorts": SKIP,  # no host ports
        "NodeResourcesFit": S,
        "VolumeRestrictions": SKIP,  # no claims
        "NodeVolumeLimits": SKIP,
        "VolumeBinding": SKIP,
        "VolumeZone": SKIP,
        "PodTopologySpread": SKIP,
        "InterPodAffinity": SKIP,
        "DynamicResources": SKIP,  # no resource claims
    }


def test_prefilter_result_leaves_the_excluded_nodes_with_the_absent_status() -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [  # matchFields In takes exactly one value
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
                    for name in ("n2", "n3")
                ]
            }
        }
    }
    nodes = [mk_node("n1"), mk_node("n2", cpu="2"), mk_node("n3", cpu="2")]
    running = [mk_pod("r2", cpu="1500m", node="n2"), mk_pod("r3", cpu="1500m", node="n3")]
    exp = explain(nodes, mk_pod("p", cpu="1", affinity=convert(affinity, Affinity)), running)
    absent = Status(UU, "node(s) didn't satisfy plugin(s) [NodeAffinity]")
    assert exp.node("n1").filter == {"NodeAffinity": absent}
    assert not exp.node("n1").feasible
    assert exp.node("n2").filter["NodeResourcesFit"] == Status(U, "Insufficient cpu")
    assert exp.node("n2").filter["NodeAffinity"].code is S
    assert exp.selected is None
    assert exp.message is not None
    assert exp.message.startswith(
        "0/3 nodes are available: 1 node(s) didn't satisfy plugin(s) [NodeAffinity], 2 Insufficient cpu. "
        "no new claims to deallocate, preemption: "
    )


def test_a_prefilter_rejection_gives_every_node_that_status() -> None:
    exp = explain([mk_node("n1"), mk_node("n2")], mk_pod("p"), fwk=framework(config_with("Gate"), {"Gate": Gate}))
    for name in ("n1", "n2"):
        assert exp.node(name).filter == {"Gate": Status(UU, "gate closed")}
        assert not exp.node(name).feasible
    assert exp.message == (
        "0/2 nodes are available: gate closed. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_a_filter_error_aborts_the_cycle_with_its_message() -> None:
    exp = explain([mk_node("n1"), mk_node("n2")], mk_pod("p"), fwk=framework(config_with("Boom"), {"Boom": Boom}))
    assert exp.node("n1").filter["Boom"] == Status(ERR, 'running "Boom" filter plugin: boom')
    assert exp.node("n2").feasible
    assert (exp.selected, exp.message) == (None, 'running "Boom" filter plugin: boom')


@pytest.mark.parametrize(
    ("nominated_priority", "fits_n1"),
    [
        pytest.param(10, False, id="higher-priority-nominated-pod-counts"),
        pytest.param(0, False, id="equal-priority-nominated-pod-counts"),
        pytest.param(-1, True, id="lower-priority-nominated-pod-ignored"),
    ],
)
def test_nominated_pods_are_taken_into_account(nominated_priority: int, fits_n1: bool) -> None:
    other = mk_pod("other", cpu="3", priority=nominated_priority)
    fwk = framework(nominated={"n1": [other]})
    exp = explain([mk_node("n1"), mk_node("n2", cpu="2")], mk_pod("p", cpu="2"), fwk=fwk)
    assert exp.node("n1").feasible is fits_n1
    expected = S if fits_n1 else U
    assert exp.node("n1").filter["NodeResourcesFit"].code is expected


# --- scores and selection -----------------------------------------------------------------------


def test_scores_are_raw_normalized_weighted_and_summed() -> None:
    nodes = [mk_node("n1", cpu="2"), mk_node("n2", cpu="8"), mk_node("n3", cpu="4"), mk_node("n4", taint="x")]
    exp = explain(nodes, mk_pod("p"), [mk_pod("r", cpu="1", node="n3")])
    weights = {"TaintToleration": 3, "NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}
    for name in ("n1", "n2", "n3"):
        ne = exp.node(name)
        assert ne.scores is not None
        assert {s.name: s.weight for s in ne.scores} == weights
        for s in ne.scores:
            assert s.score == s.normalized_score * s.weight
        assert ne.total == sum(s.score for s in ne.scores)
    assert exp.node("n4").scores is None
    totals = [(n.name, n.total or 0) for n in exp.nodes if n.feasible]
    assert exp.selected == select_host(totals, random.Random(0)) == "n2"  # most room
    assert exp.node("n1").total == exp.node("n3").total == 449  # a tie: ranked in snapshot order
    assert [n.name for n in exp.ranked()] == ["n2", "n1", "n3", "n4"]


def test_the_pods_nominated_node_is_chosen_when_it_fits() -> None:
    nodes = [mk_node("n1", cpu="8"), mk_node("n2", cpu="2")]
    exp = explain(nodes, mk_pod("p", nominated="n2"))
    assert (exp.node("n1").total or 0) > (exp.node("n2").total or 0)
    assert exp.selected == "n2"


def test_without_score_plugins_every_node_totals_1_and_the_first_feasible_wins() -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"score": {"disabled": [{"name": "*"}]}}}],
    }
    nodes = [mk_node("n1", cpu="1"), mk_node("n2"), mk_node("n3", cpu="16")]
    exp = explain(nodes, mk_pod("p", cpu="2"), fwk=framework(config))
    assert [(n.name, n.total, n.scores) for n in exp.nodes] == [("n1", None, None), ("n2", 1, []), ("n3", 1, [])]
    assert exp.selected == "n2"


def test_no_nodes() -> None:
    exp = explain([], mk_pod("p"))
    assert (exp.nodes, exp.selected, exp.message) == ([], None, "no nodes available to schedule pods")


# --- failures and preemption --------------------------------------------------------------------


def test_failure_message_counts_each_nodes_first_failure_and_preemption_finds_no_victims() -> None:
    nodes = [mk_node("n1", cpu="2", taint="infra"), mk_node("n2", cpu="2")]
    exp = explain(nodes, mk_pod("p", cpu="1"), [mk_pod("r", cpu="1500m", node="n2")])
    assert exp.message == (
        f"0/2 nodes are available: 1 Insufficient cpu, 1 {TAINT_MSG}. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: "
        "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    )
    assert exp.preemption is None


def test_preemption_reports_the_nominated_node_and_its_victims() -> None:
    nodes = [mk_node("n1", cpu="2"), mk_node("n2", cpu="2")]
    running = [mk_pod("a", cpu="1500m", node="n1"), mk_pod("b", cpu="1", node="n2"), mk_pod("c", cpu="1", node="n2")]
    fwk = framework()
    exp = explain(nodes, mk_pod("p", cpu="1500m", priority=100), running, fwk=fwk)
    assert exp.message == "0/2 nodes are available: 2 Insufficient cpu."
    assert exp.preemption is not None
    assert (exp.preemption.nominated_node, exp.preemption.victims) == ("n1", ("default/a",))
    assert exp.to_json()["preemption"] == {"nominatedNode": "n1", "victims": ["default/a"]}


def test_decided_reports_the_cycles_decision_without_running_postfilter_again() -> None:
    nodes = [mk_node("n1", cpu="2"), mk_node("n2", cpu="2")]
    running = [mk_pod("a", cpu="1500m", node="n1"), mk_pod("b", cpu="1500m", node="n2")]
    fwk = framework()
    preemption: Any = fwk.plugin("DefaultPreemption")
    before = preemption.attempts
    decided = Decided(None, "from the cycle", "n2")
    exp = explain(nodes, mk_pod("p", cpu="1500m", priority=100), running, fwk=fwk, decided=decided)
    assert preemption.attempts == before
    assert (exp.selected, exp.message) == (None, "from the cycle")
    assert exp.preemption is not None
    assert (exp.preemption.nominated_node, exp.preemption.victims) == ("n2", ("default/b",))


def test_json_shape() -> None:
    exp = explain([mk_node("n1", cpu="1"), mk_node("n2")], mk_pod("p", cpu="2"))
    doc = exp.to_json()
    assert list(doc) == ["pod", "profile", "nodes", "selected", "message", "preemption"]
    assert (doc["pod"], doc["profile"], doc["selected"], doc["message"], doc["preemption"]) == (
        "default/p",
        "default-scheduler",
        "n2",
        None,
        None,
    )
    assert list(doc["nodes"]) == ["n2", "n1"]
    assert set(doc["nodes"]["n2"]) == {"filter", "feasible", "score", "total"}
    assert set(doc["nodes"]["n1"]) == {"filter", "feasible"}
    assert doc["nodes"]["n1"]["filter"]["NodeResourcesFit"] == {
        "code": "UnschedulableAndUnresolvable",  # more than the node's allocatable: preemption cannot help
        "reasons": ["Insufficient cpu"],
    }
    assert doc["nodes"]["n2"]["score"]["TaintToleration"] == {"raw": 0, "normalized": 100, "weighted": 300}
    json.dumps(doc)  # plain JSON


# --- during a run -------------------------------------------------------------------------------


def _lines(buf: io.BytesIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buf.getvalue().splitlines()]


@pytest.mark.asyncio
async def test_run_records_every_attempt_with_the_cycles_decision() -> None:
    from tests.scheduler.world import node, pod

    buf = io.BytesIO()
    recorder = ExplainRecorder(buf)
    async with world(options=SchedulerOptions(explain=recorder.record)) as w:
        w.server.create(node("small", cpu="1"))
        w.server.create(pod("p", cpu="2"))
        await w.until(lambda: len(_lines(buf)) >= 1)
        first = _lines(buf)[0]
        cond = next(c for c in w.pod("p").status.conditions if c.type == "PodScheduled")
        assert (first["attempt"], first["pod"], first["selected"]) == (1, "default/p", None)
        assert (
            first["message"]
            == cond.message
            == "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: "
            + ("0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
        )
        assert first["nodes"]["small"]["filter"]["NodeResourcesFit"]["code"] == "UnschedulableAndUnresolvable"
        w.server.create(node("big", cpu="8"))
        await w.until(lambda: bool(w.pod("p").spec.node_name))
    last = _lines(buf)[-1]
    assert last["attempt"] == len(_lines(buf)) >= 2
    assert last["selected"] == "big"
    assert last["nodes"]["big"]["feasible"]
    assert not last["nodes"]["small"]["feasible"]
    assert last["uid"] == w.pod("p").metadata.uid
    assert recorder.lines == len(_lines(buf))


async def _run_with_preemption(options: SchedulerOptions) -> list[tuple[str, str, str, bool]]:
    """Pods spread on 4 nodes, then a high-priority pod that must preempt: every Pod write."""
    from emulator.base.api.codec import convert as to
    from emulator.base.api.scheduling import PriorityClass
    from tests.scheduler.world import node, pod

    writes: list[tuple[str, str, str, bool]] = []

    def on_write(rec: Any) -> None:
        if rec.kind == "Pod":
            obj = rec.obj
            terminating = obj.metadata.deletion_timestamp is not None
            writes.append((rec.verb, obj.metadata.name, obj.spec.node_name, terminating))

    async with world(options=options, seed=3) as w:
        w.server.add_write_listener(on_write)
        w.server.create(to({"metadata": {"name": "high"}, "value": 1000}, PriorityClass))
        for i in range(4):
            w.server.create(node(f"n{i}", cpu="2"))
        for i in range(8):
            w.server.create(pod(f"p{i}", cpu="900m", grace_seconds=0))
        await w.until(lambda: all(p.spec.node_name for p in w.pods()))
        w.server.create(pod("hi", cpu="1500m", priority_class="high"))
        await w.until(lambda: bool(w.pod("hi").spec.node_name))
    return writes


@pytest.mark.asyncio
async def test_recording_does_not_change_the_run_and_agrees_with_the_cycle() -> None:
    buf = io.BytesIO()
    plain = await _run_with_preemption(SchedulerOptions())
    recorded = await _run_with_preemption(SchedulerOptions(explain=ExplainRecorder(buf).record))
    assert recorded == plain
    lines = _lines(buf)
    bound = {name: n for verb, name, n, _ in plain if verb == "bind"}
    last = {line["pod"].split("/")[1]: line["selected"] for line in lines}  # the last attempt per pod
    assert last == bound
    deleted = sorted(f"default/{name}" for verb, name, _, _ in plain if verb == "delete")
    preempting = [line for line in lines if line["preemption"] is not None]
    assert len(preempting) == 1
    assert preempting[0]["pod"] == "default/hi"
    assert sorted(preempting[0]["preemption"]["victims"]) == deleted
    assert preempting[0]["preemption"]["nominatedNode"] == bound["hi"]
    for line in lines:  # fewer than 100 nodes: the real cycle examined all, explain agrees on the top total
        if line["selected"] is not None:
            best = max(v["total"] for v in line["nodes"].values() if v["feasible"])
            assert line["nodes"][line["selected"]]["total"] == best


# --- property: explain's verdicts are the framework's ---------------------------------------------

ZONES = ["a", "b"]


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[Node], list[Pod], Pod]:
    nodes: list[Node] = []
    for i in range(draw(st.integers(2, 6))):
        taints = [builders.taint("dedicated", draw(st.sampled_from(["infra", "gpu"])))] if draw(st.booleans()) else []
        unschedulable = draw(st.integers(0, 9)) == 0
        labels = {"zone": draw(st.sampled_from(ZONES)), "disk": draw(st.sampled_from(["ssd", "hdd"]))}
        nodes.append(
            mk_node(
                f"n{i}",
                cpu=str(draw(st.integers(1, 8))),
                memory=f"{draw(st.integers(1, 16))}Gi",
                pods=str(draw(st.integers(1, 4))),
                labels=labels,
                taints=taints,
                unschedulable=unschedulable,
            )
        )
    running = [
        mk_pod(
            f"r{j}",
            cpu=f"{draw(st.integers(1, 30)) * 100}m",
            memory=f"{draw(st.integers(1, 8))}Gi",
            node=f"n{draw(st.integers(0, len(nodes) - 1))}",
        )
        for j in range(draw(st.integers(0, 8)))
    ]
    selector = {"disk": draw(st.sampled_from(["ssd", "hdd"]))} if draw(st.booleans()) else None
    tolerations = [builders.toleration("dedicated", "infra", effect="NoSchedule")] if draw(st.booleans()) else []
    cpu, memory = f"{draw(st.integers(1, 40)) * 100}m", f"{draw(st.integers(1, 8))}Gi"
    pod = mk_pod("p", cpu=cpu, memory=memory, node_selector=selector, tolerations=tolerations)
    return nodes, running, pod


@settings(max_examples=80, deadline=None)
@given(clusters(), st.integers(0, 2**32))
def test_property_selected_is_feasible_and_best_and_feasibility_is_the_frameworks(
    cluster: tuple[list[Node], list[Pod], Pod], seed: int
) -> None:
    nodes, running, pod = cluster
    snapshot = Snapshot.from_objects(running, nodes)
    exp = explain_pod(framework(), snapshot, pod, rng=random.Random(seed))
    # the oracle: a fresh cycle state through the framework's own runners
    fwk = framework()
    fwk.set_snapshot(snapshot)
    state = CycleState()
    pre, status, _ = fwk.run_pre_filter_plugins(state, pod, snapshot.node_info_list)
    expected: set[str] = set()
    if status.is_success():
        for ni in snapshot.node_info_list:
            if pre is not None and pre.node_names is not None and ni.name not in pre.node_names:
                continue
            if fwk.run_filter_plugins_with_nominated_pods(state, pod, ni).is_success():
                expected.add(ni.name)
    feasible = {n.name for n in exp.nodes if n.feasible}
    assert feasible == expected
    for ne in exp.nodes:  # every plugin passed (or was skipped) exactly on the feasible nodes
        assert ne.feasible == all(s.code in (S, SKIP) for s in ne.filter.values())
    if not feasible:
        assert exp.selected is None
        assert exp.message is not None
        assert exp.message.startswith(f"0/{len(nodes)} nodes are available:")
        return
    assert exp.selected in feasible
    assert exp.message is None
    best = max(exp.node(n).total or 0 for n in feasible)
    assert exp.node(exp.selected).total == best
    assert exp.ranked()[0].name == exp.selected
