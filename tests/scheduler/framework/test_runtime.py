"""Framework runners: order, short-circuits, Skip bookkeeping, scores, reserve, nominated pods.

Tiny fake plugins record what ran in a shared ``calls`` list; each table row states the
verdicts and the exact outcome (status code, reasons, plugin, and which plugins ran).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pytest

from agents.scheduler.framework.interface import (
    ExtensionPoint,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
    ProfileSpec,
)
from agents.scheduler.framework.plugin_set import WILDCARD_EVENT
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    NodeScore,
    PodInfo,
    Status,
)
from emulator.base.api.core import Pod
from tests.builders import node, pod

S, E, U, UU, SKIP = Code.Success, Code.Error, Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Skip
EP = ExtensionPoint


# --- fixtures ------------------------------------------------------------------------------


class FakeClock:
    virtual = True

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


def make_pod(name: str = "p", *, cpu: str = "1", priority: int | None = None, uid: str = "") -> Pod:
    return pod(name, uid=uid or f"uid-{name}", cpu=cpu, priority=priority, image="i")


def make_node(name: str, cpu: str = "2") -> NodeInfo:
    return NodeInfo(node(name, cpu=cpu, memory=None, allocatable_only=True))


class Sort:
    name = "Sort"

    def less(self, a: Any, b: Any) -> bool:
        return bool(a.timestamp < b.timestamp)


class Binder:
    name = "Binder"

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status()


def build(points: dict[ExtensionPoint, list[Any]], **kw: Any) -> Framework:
    """A framework whose points hold the given plugin objects (or (plugin, weight) pairs)."""
    plugins: dict[str, Any] = {"Sort": Sort()}
    spec_points: dict[ExtensionPoint, list[tuple[str, int]]] = {EP.QueueSort: [("Sort", 0)]}
    if EP.Bind not in points:
        plugins["Binder"] = Binder()
        spec_points[EP.Bind] = [("Binder", 0)]
    for point, entries in points.items():
        spec_points[point] = []
        for entry in entries:
            pl, weight = entry if isinstance(entry, tuple) else (entry, 0)
            plugins[pl.name] = pl
            spec_points[point].append((pl.name, weight))
    registry = {name: (lambda args, handle, pl=pl: pl) for name, pl in plugins.items()}
    spec = ProfileSpec(scheduler_name="test-scheduler", plugins=spec_points)
    kw.setdefault("clock", FakeClock())
    return Framework(spec, registry, rng=random.Random(0), **kw)  # type: ignore[arg-type]


# --- Filter ----------------------------------------------------------------------------------


class Filt:
    def __init__(self, name: str, calls: list[str], status: Status | None = None) -> None:
        self.name, self.calls, self.status = name, calls, status or Status()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        self.calls.append(self.name)
        return self.status


@pytest.mark.parametrize(
    ("verdicts", "want_code", "want_reasons", "want_plugin", "want_ran"),
    [
        pytest.param([S, S, S], S, (), "", ["A", "B", "C"], id="all-pass"),
        pytest.param([S, U, U], U, ("B says no",), "B", ["A", "B"], id="stops-at-first-unschedulable"),
        pytest.param([UU, U, S], UU, ("A says no",), "A", ["A"], id="first-plugin-unresolvable"),
        pytest.param([S, E, S], E, ('running "B" filter plugin: B says no',), "B", ["A", "B"], id="error-wrapped"),
        pytest.param(
            [S, S, SKIP], E, ('running "C" filter plugin: C says no',), "C", ["A", "B", "C"], id="skip-is-error"
        ),
        pytest.param([S, S, Code.Pending], Code.Pending, ("C says no",), "C", ["A", "B", "C"], id="pending-kept"),
    ],
)
def test_filter_stops_at_the_first_failing_plugin(
    verdicts: list[Code], want_code: Code, want_reasons: tuple[str, ...], want_plugin: str, want_ran: list[str]
) -> None:
    calls: list[str] = []
    plugins = [
        Filt(n, calls, Status(v, f"{n} says no") if v is not S else None) for n, v in zip("ABC", verdicts, strict=True)
    ]
    fw = build({EP.Filter: plugins})
    status = fw.run_filter_plugins(CycleState(), make_pod(), make_node("n1"))
    assert (status.code, status.reasons, status.plugin) == (want_code, want_reasons, want_plugin)
    assert calls == want_ran


# --- PreFilter -------------------------------------------------------------------------------


class PreFilt:
    """A PreFilter+Filter plugin whose PreFilter returns a fixed (result, status)."""

    def __init__(
        self, name: str, calls: list[str], nodes: set[str] | None = None, status: Status | None = None
    ) -> None:
        self.name, self.calls = name, calls
        self.result = PreFilterResult(frozenset(nodes)) if nodes is not None else None
        self.status = status or Status()
        self.added: list[str] = []

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        self.calls.append(f"pre:{self.name}")
        return self.result, self.status

    def pre_filter_extensions(self) -> PreFilt:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pi: PodInfo, node_info: NodeInfo) -> Status:
        self.added.append(pi.pod.metadata.name)
        state.write(f"{self.name}/added", self.added[:])
        return Status()

    def remove_pod(self, state: CycleState, pod: Pod, pi: PodInfo, node_info: NodeInfo) -> Status:
        return Status()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        self.calls.append(f"filter:{self.name}")
        return Status()


def test_pre_filter_skip_skips_the_coupled_filter_and_extensions() -> None:
    calls: list[str] = []
    skipper = PreFilt("Skipper", calls, status=Status(SKIP))
    other = PreFilt("Other", calls)
    fw = build({EP.PreFilter: [skipper, other], EP.Filter: [skipper, other]})
    state = CycleState()
    result, status, _ = fw.run_pre_filter_plugins(state, make_pod(), [make_node("n1")])
    assert (result, status.code) == (None, S)
    assert state.skip_filter_plugins == {"Skipper"}
    assert fw.run_filter_plugins(state, make_pod(), make_node("n1")).is_success()
    assert fw.run_pre_filter_extension_add_pod(state, make_pod(), PodInfo(make_pod("q")), make_node("n1")).is_success()
    assert calls == ["pre:Skipper", "pre:Other", "filter:Other"]
    assert (skipper.added, other.added) == ([], ["q"])


@pytest.mark.parametrize(
    ("node_sets", "want_nodes", "want_code", "want_msg", "want_with_nodes"),
    [
        pytest.param([None, None], None, S, "", set(), id="no-restriction"),
        pytest.param([{"a", "b"}, None], {"a", "b"}, S, "", {"P0"}, id="one-restricts"),
        pytest.param([{"a", "b"}, {"b", "c"}], {"b"}, S, "", {"P0", "P1"}, id="intersection"),
        pytest.param([set(), None], set(), UU, "node(s) didn't satisfy plugin P0", {"P0"}, id="single-plugin-empty"),
        pytest.param(
            [{"a"}, None, {"b"}],
            set(),
            UU,
            "node(s) didn't satisfy plugin(s) [P0 P2] simultaneously",
            {"P0", "P2"},
            id="disjoint-two-plugins",
        ),
    ],
)
def test_pre_filter_results_are_intersected(
    node_sets: list[set[str] | None],
    want_nodes: set[str] | None,
    want_code: Code,
    want_msg: str,
    want_with_nodes: set[str],
) -> None:
    calls: list[str] = []
    plugins = [PreFilt(f"P{i}", calls, nodes) for i, nodes in enumerate(node_sets)]
    fw = build({EP.PreFilter: plugins})
    result, status, with_nodes = fw.run_pre_filter_plugins(CycleState(), make_pod(), [])
    got_nodes = None if result is None or result.node_names is None else set(result.node_names)
    assert (got_nodes, status.code, status.message(), with_nodes) == (want_nodes, want_code, want_msg, want_with_nodes)


def test_pre_filter_intersection_message_lists_plugins_sorted() -> None:
    calls: list[str] = []
    fw = build({EP.PreFilter: [PreFilt("Zeta", calls, {"a"}), PreFilt("Alpha", calls, {"b"})]})
    _, status, _ = fw.run_pre_filter_plugins(CycleState(), make_pod(), [])
    assert status.message() == "node(s) didn't satisfy plugin(s) [Alpha Zeta] simultaneously"


@pytest.mark.parametrize(
    ("second", "want_code", "want_msg", "want_plugin", "want_ran"),
    [
        pytest.param(UU, UU, "no", "B", ["pre:A", "pre:B"], id="unresolvable-aborts"),
        pytest.param(U, U, "no", "B", ["pre:A", "pre:B", "pre:C"], id="unschedulable-runs-the-rest"),
        pytest.param(E, E, 'running PreFilter plugin "B": no', "B", ["pre:A", "pre:B"], id="error-aborts"),
    ],
)
def test_pre_filter_failures(
    second: Code, want_code: Code, want_msg: str, want_plugin: str, want_ran: list[str]
) -> None:
    calls: list[str] = []
    plugins = [PreFilt("A", calls), PreFilt("B", calls, status=Status(second, "no")), PreFilt("C", calls)]
    fw = build({EP.PreFilter: plugins})
    result, status, _ = fw.run_pre_filter_plugins(CycleState(), make_pod(), [])
    assert (result, status.code, status.message(), status.plugin) == (None, want_code, want_msg, want_plugin)
    assert calls == want_ran


# --- PostFilter ------------------------------------------------------------------------------


class PostFilt:
    def __init__(self, name: str, calls: list[str], status: Status, nominated: str | None = None) -> None:
        self.name, self.calls, self.status = name, calls, status
        self.result = PostFilterResult(nominated) if nominated is not None else None

    def post_filter(self, state: CycleState, pod: Pod, m: NodeToStatus) -> tuple[PostFilterResult | None, Status]:
        self.calls.append(self.name)
        return self.result, self.status


@pytest.mark.parametrize(
    ("verdicts", "want_code", "want_reasons", "want_plugin", "want_nominated", "want_ran"),
    [
        pytest.param([U, S], S, (), "", "n-B", ["A", "B"], id="runs-until-success"),
        pytest.param([UU, S], UU, ("A failed",), "A", "n-A", ["A"], id="unresolvable-stops"),
        pytest.param([U, U], U, ("A failed", "B failed"), "A", "n-B", ["A", "B"], id="reasons-accumulate"),
        pytest.param([E, S], E, ("A failed",), "A", None, ["A"], id="error-stops"),
    ],
)
def test_post_filter_chain(
    verdicts: list[Code],
    want_code: Code,
    want_reasons: tuple[str, ...],
    want_plugin: str,
    want_nominated: str | None,
    want_ran: list[str],
) -> None:
    calls: list[str] = []
    plugins = [
        PostFilt(n, calls, Status(v, f"{n} failed") if v is not S else Status(), f"n-{n}")
        for n, v in zip("AB", verdicts, strict=True)
    ]
    fw = build({EP.PostFilter: plugins})
    result, status = fw.run_post_filter_plugins(CycleState(), make_pod(), NodeToStatus())
    assert (status.code, status.reasons, status.plugin) == (want_code, want_reasons, want_plugin)
    assert (result.nominated_node_name if result else None) == want_nominated
    assert calls == want_ran


# --- Score -------------------------------------------------------------------------------------


class Scorer:
    def __init__(
        self,
        name: str,
        scores: dict[str, int],
        normalize: Callable[[list[NodeScore]], None] | None = None,
        status: Status | None = None,
        norm_status: Status | None = None,
    ) -> None:
        self.name, self.scores, self.normalize = name, scores, normalize
        self.status, self.norm_status = status or Status(), norm_status or Status()
        self.scored: list[str] = []

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        self.scored.append(node_info.name)
        return self.scores[node_info.name], self.status

    def score_extensions(self) -> Scorer | None:
        return self if self.normalize is not None else None

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        assert self.normalize is not None
        self.normalize(scores)
        return self.norm_status


def scale_to_100(scores: list[NodeScore]) -> None:
    top = max(s.score for s in scores)
    for s in scores:
        s.score = s.score * 100 // top


def test_scores_are_normalized_weighted_and_kept_per_plugin() -> None:
    nodes = [make_node("n1"), make_node("n2")]
    a = Scorer("A", {"n1": 5, "n2": 10}, scale_to_100)
    b = Scorer("B", {"n1": 40, "n2": 0})
    fw = build({EP.Score: [(a, 3), (b, 0)]})
    scores, status = fw.run_score_plugins(CycleState(), make_pod(), nodes)
    assert status.is_success()
    assert fw.score_plugin_weight == {"A": 3, "B": 1}
    got = [
        (n.name, [(s.name, s.raw_score, s.normalized_score, s.weight, s.score) for s in n.scores], n.total_score)
        for n in scores
    ]
    assert got == [
        ("n1", [("A", 5, 50, 3, 150), ("B", 40, 40, 1, 40)], 190),
        ("n2", [("A", 10, 100, 3, 300), ("B", 0, 0, 1, 0)], 300),
    ]


def test_pre_score_skip_skips_the_coupled_score() -> None:
    class SkippingScorer(Scorer):
        def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
            return Status(SKIP)

    a = SkippingScorer("A", {"n1": 1})
    b = Scorer("B", {"n1": 7})
    fw = build({EP.PreScore: [a], EP.Score: [a, b]})
    state = CycleState()
    assert fw.run_pre_score_plugins(state, make_pod(), [make_node("n1")]).is_success()
    scores, _ = fw.run_score_plugins(state, make_pod(), [make_node("n1")])
    assert (a.scored, [s.name for s in scores[0].scores], scores[0].total_score) == ([], ["B"], 7)


def _set_all(value: int) -> Callable[[list[NodeScore]], None]:
    def f(scores: list[NodeScore]) -> None:
        for s in scores:
            s.score = value

    return f


@pytest.mark.parametrize(
    ("scorer", "want_msg"),
    [
        pytest.param(
            Scorer("A", {"n1": 101}),
            'applying score defaultWeights on Score plugins: plugin "A" returns an invalid score 101, '
            "it should in the range of [0, 100] after normalizing",
            id="raw-above-100",
        ),
        pytest.param(
            Scorer("A", {"n1": 50}, _set_all(-1)),
            'applying score defaultWeights on Score plugins: plugin "A" returns an invalid score -1, '
            "it should in the range of [0, 100] after normalizing",
            id="normalized-below-0",
        ),
        pytest.param(
            Scorer("A", {"n1": 1}, status=Status(E, "kaput")),
            'running Score plugins: plugin "A" failed with: kaput',
            id="score-error",
        ),
        pytest.param(
            Scorer("A", {"n1": 1}, _set_all(1), norm_status=Status(E, "kaput")),
            'running Normalize on Score plugins: plugin "A" failed with: kaput',
            id="normalize-error",
        ),
    ],
)
def test_score_errors(scorer: Scorer, want_msg: str) -> None:
    fw = build({EP.Score: [scorer]})
    scores, status = fw.run_score_plugins(CycleState(), make_pod(), [make_node("n1")])
    assert (scores, status.code, status.message()) == ([], E, want_msg)


def test_a_boundary_score_of_100_is_accepted() -> None:
    fw = build({EP.Score: [Scorer("A", {"n1": 100, "n2": 0})]})
    scores, status = fw.run_score_plugins(CycleState(), make_pod(), [make_node("n1"), make_node("n2")])
    assert status.is_success()
    assert [n.total_score for n in scores] == [100, 0]


# --- Reserve -------------------------------------------------------------------------------------


class Res:
    def __init__(self, name: str, calls: list[str], status: Status | None = None) -> None:
        self.name, self.calls, self.status = name, calls, status or Status()

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self.calls.append(f"reserve:{self.name}")
        return self.status

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(f"unreserve:{self.name}")


@pytest.mark.parametrize(
    ("failing", "want_code", "want_msg"),
    [
        pytest.param(U, U, "B full", id="rejection"),
        pytest.param(E, E, 'running Reserve plugin "B": B full', id="error"),
    ],
)
def test_reserve_failure_then_unreserve_all_in_reverse(failing: Code, want_code: Code, want_msg: str) -> None:
    calls: list[str] = []
    fw = build({EP.Reserve: [Res("A", calls), Res("B", calls, Status(failing, "B full")), Res("C", calls)]})
    state, pod = CycleState(), make_pod()
    status = fw.run_reserve_plugins_reserve(state, pod, "n1")
    assert (status.code, status.message(), status.plugin) == (want_code, want_msg, "B")
    fw.run_reserve_plugins_unreserve(state, pod, "n1")
    assert calls == ["reserve:A", "reserve:B", "unreserve:C", "unreserve:B", "unreserve:A"]


# --- nominated pods ------------------------------------------------------------------------------


class CpuFit:
    """Filter: the pod's cpu must fit in allocatable minus requested (an Insufficient cpu)."""

    name = "CpuFit"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        want = PodInfo(pod).resource.milli_cpu
        if node_info.requested.milli_cpu + want > node_info.allocatable.milli_cpu:
            return Status(U, "Insufficient cpu")
        return Status()


class NeedsCompany:
    """Filter that passes only on a node that already holds a pod (like required pod affinity)."""

    name = "NeedsCompany"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status() if node_info.pods else Status(UU, "node(s) didn't match pod affinity rules")


class Nominator:
    def __init__(self, by_node: dict[str, list[Pod]]) -> None:
        self.by_node = by_node

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return [PodInfo(p) for p in self.by_node.get(node_name, [])]


@pytest.mark.parametrize(
    ("nominated", "pod_priority", "want_code", "want_added"),
    [
        pytest.param([], 0, S, [], id="none-nominated"),
        pytest.param([("hi", 10, "2")], 0, U, ["hi"], id="higher-priority-holds-the-room"),
        pytest.param([("eq", 5, "2")], 5, U, ["eq"], id="equal-priority-holds-the-room"),
        pytest.param([("lo", -5, "2")], 0, S, [], id="lower-priority-is-ignored"),
        pytest.param([("p", 10, "2")], 0, S, [], id="the-pod-itself-is-ignored"),
        pytest.param([("hi", 10, "500m"), ("lo", 1, "2")], 5, S, ["hi"], id="only-ge-priority-added"),
    ],
)
def test_filters_with_nominated_pods(
    nominated: list[tuple[str, int, str]], pod_priority: int, want_code: Code, want_added: list[str]
) -> None:
    calls: list[str] = []
    tracker = PreFilt("Tracker", calls)
    nominator = Nominator({"n1": [make_pod(n, cpu=cpu, priority=prio) for n, prio, cpu in nominated]})
    fw = build({EP.PreFilter: [tracker], EP.Filter: [CpuFit()]}, nominator=nominator)
    node, state = make_node("n1", cpu="2"), CycleState()
    status = fw.run_filter_plugins_with_nominated_pods(state, make_pod("p", cpu="1", priority=pod_priority), node)
    assert status.code == want_code
    assert tracker.added == want_added
    assert node.pods == []  # the snapshot's NodeInfo is never modified
    assert "Tracker/added" not in state  # nor the cycle state: pass 1 works on clones


def test_nominated_pods_second_pass_runs_without_them() -> None:
    fw = build({EP.Filter: [NeedsCompany()]}, nominator=Nominator({"n1": [make_pod("hi", priority=10)]}))
    node = make_node("n1")
    # Pass 1 (with the nominated pod) passes, pass 2 (without it) fails: infeasible.
    status = fw.run_filter_plugins_with_nominated_pods(CycleState(), make_pod("p", priority=0), node)
    assert (status.code, status.plugin) == (UU, "NeedsCompany")
    fw2 = build({EP.Filter: [NeedsCompany()]})
    assert fw2.run_filter_plugins_with_nominated_pods(CycleState(), make_pod("p"), node).code == UU


# --- PreEnqueue, Bind, construction, events ---------------------------------------------------------


class Gate:
    def __init__(self, name: str, calls: list[str], status: Status | None = None) -> None:
        self.name, self.calls, self.status = name, calls, status or Status()

    def pre_enqueue(self, pod: Pod) -> Status:
        self.calls.append(self.name)
        return self.status


@pytest.mark.parametrize(
    ("gating", "fail", "want", "want_ran"),
    [
        pytest.param("", "", (S, ""), ["A", "B", "C"], id="all-admit"),
        pytest.param("", "B", (U, "B"), ["A", "B"], id="stops-at-gate"),
        pytest.param("C", "C", (U, "C"), ["C"], id="gating-plugin-first"),
        pytest.param("C", "A", (U, "A"), ["C", "A"], id="gating-plugin-now-admits"),
    ],
)
def test_pre_enqueue(gating: str, fail: str, want: tuple[Code, str], want_ran: list[str]) -> None:
    calls: list[str] = []
    gates = [Gate(n, calls, Status(U, "gated") if n == fail else None) for n in "ABC"]
    fw = build({EP.PreEnqueue: gates})
    status, plugin = fw.run_pre_enqueue_plugins(make_pod(), gating)
    assert (status.code, plugin) == want
    assert status.plugin == plugin
    assert calls == want_ran


class Bnd:
    def __init__(self, name: str, calls: list[str], status: Status) -> None:
        self.name, self.calls, self.status = name, calls, status

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self.calls.append(self.name)
        return self.status


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("verdicts", "want_code", "want_msg", "want_ran"),
    [
        pytest.param([SKIP, S, S], S, "", ["A", "B"], id="skip-lets-the-next-try"),
        pytest.param([SKIP, SKIP], SKIP, "", ["A", "B"], id="all-skip"),
        pytest.param([E, S], E, 'running Bind plugin "A": A: x', ["A"], id="error"),
    ],
)
async def test_bind_plugins(verdicts: list[Code], want_code: Code, want_msg: str, want_ran: list[str]) -> None:
    calls: list[str] = []
    binders = [
        Bnd(n, calls, Status(v, f"{n}: x") if v is E else Status(v)) for n, v in zip("ABC", verdicts, strict=False)
    ]
    fw = build({EP.Bind: binders})
    status = await fw.run_bind_plugins(CycleState(), make_pod(), "n1")
    assert (status.code, status.message()) == (want_code, want_msg)
    assert calls == want_ran


@pytest.mark.parametrize(
    ("points", "registry_extra", "want"),
    [
        pytest.param({EP.Filter: [("Nope", 0)]}, {}, 'FilterPlugin "Nope" does not exist', id="unknown"),
        pytest.param(
            {EP.Score: [("Sort", 0)]}, {}, 'plugin "Sort" does not extend ScorePlugin plugin', id="wrong-kind"
        ),
        pytest.param(
            {EP.QueueSort: [("Sort", 0), ("Sort", 0)]},
            {},
            'plugin "Sort" already registered as "QueueSortPlugin"',
            id="duplicate",
        ),
        pytest.param(
            {EP.QueueSort: []},
            {},
            'only one queue sort plugin required for profile with scheduler name "s", but got 0',
            id="no-queue-sort",
        ),
        pytest.param(
            {EP.Bind: []}, {}, 'at least one bind plugin is needed for profile with scheduler name "s"', id="no-bind"
        ),
    ],
)
def test_invalid_profiles(points: dict[ExtensionPoint, list[tuple[str, int]]], registry_extra: Any, want: str) -> None:
    base: dict[ExtensionPoint, list[tuple[str, int]]] = {EP.QueueSort: [("Sort", 0)], EP.Bind: [("Binder", 0)]}
    registry = {"Sort": lambda a, h: Sort(), "Binder": lambda a, h: Binder()}
    spec = ProfileSpec(scheduler_name="s", plugins={**base, **points})
    with pytest.raises(ValueError, match=f"^{re.escape(want)}$"):
        Framework(spec, registry, clock=FakeClock(), rng=random.Random(0))  # type: ignore[arg-type]


def test_one_instance_per_plugin_and_args_passed() -> None:
    made: list[tuple[str, Any]] = []

    class Both:
        name = "Both"

        def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
            return Status()

        def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
            return 0, Status()

        def score_extensions(self) -> None:
            return None

    def factory(args: Any, handle: Any) -> Both:
        made.append(("Both", args))
        assert handle.scheduler_name == "s"
        return Both()

    spec = ProfileSpec(
        scheduler_name="s",
        plugins={
            EP.QueueSort: [("Sort", 0)],
            EP.Filter: [("Both", 0)],
            EP.Score: [("Both", 2)],
            EP.Bind: [("Binder", 0)],
        },
        plugin_args={"Both": {"x": 1}},
    )
    registry = {"Sort": lambda a, h: Sort(), "Binder": lambda a, h: Binder(), "Both": factory}
    fw = Framework(spec, registry, clock=FakeClock(), rng=random.Random(0))  # type: ignore[arg-type]
    assert made == [("Both", {"x": 1})]
    assert fw.list_plugins() == {EP.QueueSort: ["Sort"], EP.Filter: ["Both"], EP.Score: ["Both"], EP.Bind: ["Binder"]}
    assert (fw.has_filter_plugins(), fw.has_score_plugins(), fw.has_post_filter_plugins()) == (True, True, False)
    assert fw.plugin("Both") is fw.plugins()["Both"]


def test_events_to_register() -> None:
    node_add = ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add))

    class Registered(Filt):
        def events_to_register(self) -> list[ClusterEventWithHint]:
            return [node_add]

    calls: list[str] = []
    fw = build({EP.Filter: [Registered("R", calls), Filt("F", calls)], EP.Score: [Scorer("ScoreOnly", {})]})
    assert fw.events_to_register() == {"R": [node_add], "F": [WILDCARD_EVENT]}
    assert WILDCARD_EVENT.event.is_wildcard()
