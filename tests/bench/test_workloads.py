"""The benchmark harness: every workload runs at a tiny size and reports well-formed JSON; the
throughput arithmetic on synthetic timestamps; the noop profile; workload-file errors."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from agents.scheduler import start_schedulers
from emulator.app.bench.harness import run_workload
from emulator.app.bench.instruments import enabled_plugins, scheduler_settings
from emulator.app.bench.metrics import millis, summarize, throughput_samples
from emulator.app.bench.result import BenchOptions
from emulator.app.bench.spec import WorkloadError
from emulator.app.bench.steps import PodsStep
from emulator.app.bench.workload_file import load_workloads, load_workloads_text, select_workloads
from emulator.app.commands.arguments import add_bench
from emulator.app.commands.bench import run
from emulator.base.apiserver.server import ApiServer
from emulator.base.client.client import Client
from emulator.base.runtime.clock import LoopClock
from emulator.base.runtime.loop import new_virtual_loop
from emulator.base.runtime.rng import Seeds

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS = ROOT / "bench" / "workloads.yaml"
ALL = [w.name for w in load_workloads(WORKLOADS)]
SCALE = 0.01


def _bench(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    """Run the command; (exit status, the JSON on stdout — or the text of stdout and stderr)."""
    parser = argparse.ArgumentParser(prog="python -m emulator")
    add_bench(parser.add_subparsers(dest="command"))
    code = run(parser.parse_args(["bench", "--file", str(WORKLOADS), *argv]))
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip().startswith("[") else out + err


# --- every workload, tiny ------------------------------------------------------------------------


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in ALL])
def test_every_workload_at_a_hundredth_gives_a_well_formed_report(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    (wl,) = [w for w in load_workloads(WORKLOADS, scale=SCALE) if w.name == name]
    code, reports = _bench(
        capsys, "--workload", name, "--scale", str(SCALE), "--output", "json", "--stall-timeout", "3s"
    )
    assert isinstance(reports, list)
    assert len(reports) == 1
    r = reports[0]
    assert r["workload"] == name
    assert r["profile"] == "default"
    assert r["nodes"] == wl.nodes > 0
    assert r["measuredPods"] == wl.measured_pods > 0
    assert set(r["throughput"]) == {"average", "p50", "p90", "p95", "p99", "samples", "overall", "overallCpu"}
    assert r["throughput"]["overall"] > 0
    # CPU time of the measured phase: positive, and one process cannot use more of it than wall
    # time on this single event loop (a little slack for threads the interpreter may run).
    assert 0 < r["measuredCpuSeconds"] <= 1.5 * r["measuredSeconds"] + 0.05
    assert r["throughput"]["overallCpu"] > 0
    for key in ("attemptMs", "e2eMs", "filterMs", "scoreMs"):
        assert set(r[key]) == {"p50", "p90", "p99"}
    assert r["attemptMs"]["p50"] is not None
    assert 0 < r["attemptMs"]["p50"] <= r["attemptMs"]["p90"] <= r["attemptMs"]["p99"]
    assert r["filterMs"]["p50"] is not None
    assert r["peakRssMiB"] > 0
    assert r["wallSeconds"] >= r["measuredSeconds"] > 0
    assert r["maxPodsPerNode"] <= 110
    # A workload either completes, or says which plugins it ran without.
    assert r["complete"] or r["pluginsMissing"]
    assert code == (0 if r["complete"] else 1)
    if r["complete"]:
        assert r["scheduledPods"] == r["measuredPods"]


def test_kubelets_on_waits_for_running_and_reports_startup(capsys: pytest.CaptureFixture[str]) -> None:
    code, (r,) = _bench(
        capsys, "--workload", "SchedulingBasic/500Nodes", "--scale", "0.01", "--kubelets", "on", "--output", "json"
    )
    assert code == 0
    assert r["kubelets"] is True
    assert r["complete"] is True
    assert r["startupMs"]["p50"] is not None
    assert r["startupMs"]["p50"] <= r["startupMs"]["p99"]


def test_compare_runs_both_profiles_and_gives_the_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    code, reports = _bench(
        capsys, "--workload", "SchedulingBasic/500Nodes", "--scale", "0.02", "--compare", "--output", "json"
    )
    assert code == 0
    assert [r["profile"] for r in reports] == ["default", "noop"]
    cmp = reports[0]["compare"]
    assert cmp == reports[1]["compare"]
    basis = cmp["basis"]
    assert cmp["default"] == reports[0]["throughput"][basis]
    assert cmp["noop"] == reports[1]["throughput"][basis]
    assert cmp["ratio"] == pytest.approx(cmp["default"] / cmp["noop"], rel=1e-3)


def test_repeat_interleaves_the_profiles_and_gives_the_median_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    code, reports = _bench(
        capsys,
        "--workload",
        "SchedulingBasic/500Nodes",
        "--scale",
        "0.02",
        "--compare",
        "--repeat",
        "3",
        "--output",
        "json",
    )
    assert code == 0
    assert [(r["profile"], r["run"]) for r in reports] == [
        ("default", 1),
        ("noop", 1),
        ("default", 2),
        ("noop", 2),
        ("default", 3),
        ("noop", 3),
    ]
    ratios = []
    for d, n in zip(reports[::2], reports[1::2], strict=True):
        cmp = d["compare"]
        assert cmp == n["compare"]
        basis = cmp["basis"]
        assert cmp["default"] == d["throughput"][basis]
        assert cmp["noop"] == n["throughput"][basis]
        # rounded to 4 decimals: under heavy load the ratio can be small enough for that to exceed rel
        assert cmp["ratio"] == pytest.approx(d["throughput"][basis] / n["throughput"][basis], rel=1e-3, abs=5e-5)
        ratios.append(cmp["ratio"])
    assert reports[0]["compare"]["ratios"] == ratios
    assert reports[0]["compare"]["median"] == sorted(ratios)[1]


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_repeat_must_be_a_whole_number_of_at_least_one(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m emulator")
    add_bench(parser.add_subparsers(dest="command"))
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["bench", "--repeat", value])
    assert exc.value.code == 2
    assert "expected a whole number >= 1" in capsys.readouterr().err


def test_text_output_is_a_table_naming_each_run(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _bench(capsys, "--workload", "SchedulingBasic/500Nodes", "--scale", "0.01")
    assert code == 0
    assert "SchedulingBasic/500Nodes" in out
    assert "pods/s avg" in out


# --- throughput sampling ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bound_at", "end", "expected"),
    [
        pytest.param([], 5.0, [], id="nothing-bound"),
        # 10 pods by t=1 (the skipped baseline), 20 more by t=2, 30 more by t=3.
        pytest.param([0.5] * 10 + [1.5] * 20 + [2.5] * 30, 3.0, [20.0, 30.0], id="first-sample-skipped"),
        pytest.param([0.5] * 10 + [1.5] * 20 + [2.5] * 30, 2.9, [20.0], id="partial-last-interval-dropped"),
        # Nothing new during (1, 2]: the 40 pods of (2, 3] are spread over 2 s and counted twice.
        pytest.param([0.5] * 10 + [2.5] * 40 + [3.5] * 5, 4.0, [20.0, 20.0, 5.0], id="idle-interval-merged"),
        pytest.param([1.5] * 7 + [2.5] * 3, 3.0, [3.0], id="first-binding-late"),
        pytest.param([0.2, 0.4], 10.0, [], id="nothing-after-the-baseline"),
    ],
)
def test_throughput_samples_follow_upstream_collector(bound_at: list[float], end: float, expected: list[float]) -> None:
    assert throughput_samples(bound_at, 0.0, end) == pytest.approx(expected)


def test_throughput_samples_are_relative_to_the_phase_start() -> None:
    t0 = 1000.0
    bound = [t0 + 0.5, t0 + 1.5, t0 + 1.6]
    assert throughput_samples(bound, t0, t0 + 2.0) == [2.0]


@pytest.mark.parametrize(
    ("samples", "expected"),
    [
        pytest.param(
            [float(v) for v in range(100, 0, -1)],
            {"average": 50.5, "p50": 50.0, "p90": 90.0, "p95": 95.0, "p99": 99.0, "samples": 100},
            id="one-to-hundred",
        ),
        pytest.param([3.0, 1.0, 2.0], {"average": 2.0, "p50": 2.0, "p90": 3.0, "p95": 3.0, "p99": 3.0, "samples": 3}),
        pytest.param([7.0], {"average": 7.0, "p50": 7.0, "p90": 7.0, "p95": 7.0, "p99": 7.0, "samples": 1}, id="one"),
        pytest.param(
            [], {"average": None, "p50": None, "p90": None, "p95": None, "p99": None, "samples": 0}, id="none"
        ),
    ],
)
def test_summarize_uses_upstream_nearest_rank(samples: list[float], expected: dict[str, Any]) -> None:
    assert summarize(samples) == expected


def test_millis_reports_seconds_as_milliseconds() -> None:
    assert millis([0.001 * v for v in range(1, 11)]) == {"p50": 5.0, "p90": 9.0, "p99": 10.0}
    assert millis([]) == {"p50": None, "p90": None, "p99": None}


# --- profiles --------------------------------------------------------------------------------------


class _Stop(Exception):
    pass


def _plugins(profile: Any) -> dict[str, list[str]]:
    """The enabled plugins of the bench's scheduler, started as the harness starts it."""
    found: dict[str, list[str]] = {}

    async def main() -> None:
        clock = LoopClock(asyncio.get_running_loop(), virtual=True)
        server = ApiServer(clock, Seeds(0).stream("apiserver"))
        try:
            async with asyncio.TaskGroup() as tg:
                group = start_schedulers(
                    scheduler_settings(profile),
                    tg,
                    new_client=lambda name: Client(server, clock, Seeds(0).stream(f"client/{name}"), name=name),
                    clock=clock,
                    seeds=Seeds(0),
                )
                assert group.missing_plugins == [] or profile == "default"
                found.update(enabled_plugins(group))
                raise _Stop
        except* _Stop:
            pass

    loop = new_virtual_loop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    return found


def test_noop_profile_keeps_only_queue_sort_and_binder() -> None:
    assert _plugins("noop") == {"queueSort": ["PrioritySort"], "bind": ["DefaultBinder"]}


def test_default_profile_has_filter_and_score_plugins() -> None:
    plugins = _plugins("default")
    assert "NodeResourcesFit" in plugins["filter"]
    assert "NodeResourcesFit" in plugins["score"]
    assert plugins["bind"] == ["DefaultBinder"]


OVERCOMMIT = """
templates:
  node: {apiVersion: v1, kind: Node, metadata: {generateName: n-},
         status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}}
  big: {apiVersion: v1, kind: Pod, metadata: {generateName: big-},
        spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]}}
testCases:
  - name: Overcommit
    workloadTemplate:
      - {opcode: createNodes, count: 2, nodeTemplate: node}
      - {opcode: createPods, count: 3, podTemplate: big, collectMetrics: true}
    workloads: [{name: One}]
"""


@pytest.mark.parametrize(
    ("profile", "bound", "per_node", "complete"),
    [
        pytest.param("default", 2, 1, False, id="default-fits-one-per-node"),
        pytest.param("noop", 3, 2, True, id="noop-filters-nothing"),
    ],
)
def test_noop_profile_really_skips_filtering(profile: Any, bound: int, per_node: int, complete: bool) -> None:
    """Two 4-CPU nodes, three 3-CPU pods: only noop binds the third (round-robin, no fit check)."""
    (wl,) = load_workloads_text(OVERCOMMIT, source="t.yaml")
    result = run_workload(wl, BenchOptions(profile=profile, stall_timeout=0.3, virtual=True))
    assert result.scheduled_pods == bound
    assert result.complete is complete
    assert result.stopped_by == (None if complete else "stall")
    assert result.max_pods_per_node == per_node
    assert (result.score_ms["p50"] is None) is (profile == "noop")
    assert (result.filter_ms["p50"] is None) is (profile == "noop")


def test_time_limit_cuts_a_workload_short() -> None:
    (wl,) = load_workloads_text(OVERCOMMIT, source="t.yaml")
    # The third pod never fits: the 2 s limit, not the 30 s stall timeout, ends the run (on the
    # virtual clock: the two that fit are bound at once, and waiting costs no wall time).
    result = run_workload(wl, BenchOptions(stall_timeout=30.0, time_limit=2.0, virtual=True))
    assert result.stopped_by == "timeLimit"
    assert result.complete is False
    assert result.scheduled_pods == 2


# --- the workload file -----------------------------------------------------------------------------


def test_scale_rounds_parameters_and_keeps_at_least_one() -> None:
    wl = next(w for w in load_workloads(WORKLOADS, scale=0.001) if w.name == "SchedulingBasic/5000Nodes_10000Pods")
    pods = [s for s in wl.steps if isinstance(s, PodsStep)]
    assert (wl.nodes, pods[0].count, pods[1].count) == (5, 1, 10)


def test_upstream_priorities_become_priority_classes() -> None:
    wl = next(w for w in load_workloads(WORKLOADS) if w.name == "PreemptionBasic/500Nodes")
    assert wl.priority_classes == (("bench-priority-10", 10),)
    assert wl.measured is not None
    assert wl.measured.template.spec.priority_class_name == "bench-priority-10"


@pytest.mark.parametrize(
    ("patterns", "expected"),
    [
        pytest.param(
            [],
            [
                "SchedulingBasic/500Nodes",
                "SchedulingBasic/5000Nodes",
                "SchedulingNodeAffinity/500Nodes",
                "TopologySpreading/500Nodes",
                "PreferredTopologySpreading/500Nodes",
                "SchedulingPodAntiAffinity/500Nodes",
                "PreemptionBasic/500Nodes",
                "PreemptionAsync/500Nodes",
                "Unschedulable/500Nodes/10Init/1kPods",
                "SchedulingWithMixedChurn/1000Nodes",
            ],
            id="short-by-default",
        ),
        pytest.param(["SchedulingBasic"], [n for n in ALL if n.startswith("SchedulingBasic/")], id="test-case"),
        pytest.param(["*/5000Nodes_10000Pods"], [n for n in ALL if n.endswith("/5000Nodes_10000Pods")], id="glob"),
        pytest.param(["Scale/5000Nodes_150000Pods"], ["Scale/5000Nodes_150000Pods"], id="exact"),
    ],
)
def test_select_workloads(patterns: list[str], expected: list[str]) -> None:
    chosen = select_workloads(load_workloads(WORKLOADS), patterns, source="w.yaml")
    assert [w.name for w in chosen] == expected


def test_unknown_workload_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _bench(capsys, "--workload", "NoSuchThing")
    assert code == 2
    assert f'error: {WORKLOADS}: no workload matches "NoSuchThing"' in out


GOOD_OP = "{opcode: createPods, countParam: $pods, collectMetrics: true}"


def _doc(ops: str = GOOD_OP, params: str = "{pods: 1}", extra: str = "") -> str:
    return f"""
templates:
  node-default: {{apiVersion: v1, kind: Node, metadata: {{generateName: n-}}}}
  pod-default: {{apiVersion: v1, kind: Pod, metadata: {{generateName: p-}},
                spec: {{containers: [{{name: c, image: x}}]}}}}
testCases:
  - name: T
    workloadTemplate: [{ops}]
    workloads: [{{name: W, params: {params}}}]
{extra}"""


@pytest.mark.parametrize(
    ("text", "path", "detail"),
    [
        pytest.param(
            _doc(ops="{opcode: createPodz, count: 1}"),
            "testCases[0].workloadTemplate[0].opcode",
            "Invalid value 'createPodz'",
            id="opcode",
        ),
        pytest.param(_doc(params="{}"), "testCases[0].workloads[0].params", 'missing "pods"', id="missing-param"),
        pytest.param(
            _doc(params="{pods: 1, nodez: 2}"), "testCases[0].workloads[0].params.nodez", "not used", id="unused-param"
        ),
        pytest.param(
            _doc(params="{pods: -1}"),
            "testCases[0].workloads[0].params.pods",
            "expected an integer >= 0, got -1",
            id="negative",
        ),
        pytest.param(
            _doc(ops="{opcode: createPods, count: 1, podTemplate: nope, collectMetrics: true}"),
            "testCases[0].workloadTemplate[0].podTemplate",
            'unknown template "nope"',
            id="unknown-template",
        ),
        pytest.param(
            _doc(ops=f"{{opcode: createNodes, count: 1, nodeTemplate: pod-default}}, {GOOD_OP}"),
            "testCases[0].workloadTemplate[0].nodeTemplate",
            'template "pod-default" is a Pod, expected a Node',
            id="template-kind",
        ),
        pytest.param(
            _doc(ops=f"{{opcode: startCollectingMetrics, namespaces: [namespace-1]}}, {GOOD_OP}"),
            "testCases[0].workloadTemplate[1].collectMetrics",
            "metrics collection is overlapping",
            id="measured-inside-a-window",
        ),
        pytest.param(
            _doc(ops="{opcode: createPods, count: 1}"),
            "testCases[0].workloadTemplate",
            "no op collects metrics",
            id="unmeasured",
        ),
        pytest.param(
            _doc(ops="{opcode: createPods, count: 1, countParam: $pods, collectMetrics: true}"),
            "testCases[0].workloadTemplate[0]",
            "exactly one of count and countParam",
            id="count-and-param",
        ),
        pytest.param(
            _doc(ops="{opcode: createPods, countParam: pods, collectMetrics: true}"),
            "testCases[0].workloadTemplate[0].countParam",
            'expected "$name"',
            id="param-syntax",
        ),
        pytest.param(
            _doc(ops=f"{{opcode: sleep, duration: 2 secs}}, {GOOD_OP}"),
            "testCases[0].workloadTemplate[0].duration",
            "expected a duration",
            id="duration",
        ),
        pytest.param(
            _doc(ops="{opcode: createPods, count: 1, namespace: Bad_NS, collectMetrics: true}"),
            "testCases[0].workloadTemplate[0].namespace",
            "not a valid namespace name",
            id="namespace",
        ),
        pytest.param(
            _doc(ops="{opcode: churn, mode: recreate, templates: [pod-default]}, " + GOOD_OP),
            "testCases[0].workloadTemplate[0].number",
            "recreate needs number >= 1",
            id="recreate-number",
        ),
        pytest.param(_doc(extra="bogus: 1"), "", "Object contains unknown field `bogus`", id="unknown-field"),
        pytest.param(
            _doc().replace(
                "spec: {containers: [{name: c, image: x}]}",
                "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: lots}}}]}",
            ),
            "templates.pod-default.spec.containers[0].resources.requests.cpu",
            "",
            id="template-manifest",
        ),
    ],
)
def test_workload_file_errors_name_the_path(text: str, path: str, detail: str) -> None:
    with pytest.raises(WorkloadError) as info:
        load_workloads_text(text, source="w.yaml")
    assert info.value.file == "w.yaml"
    assert info.value.path == path
    assert detail in info.value.detail
    assert re.sub(r":\d+:\d+: ", ": ", str(info.value), count=1).startswith("w.yaml: ")  # line:column: tests/inputs


def test_the_shipped_file_has_every_issue_workload() -> None:
    required = {
        "SchedulingBasic/500Nodes",
        "SchedulingBasic/5000Nodes_10000Pods",
        "Scale/5000Nodes_150000Pods",
    }
    cases = {n.split("/", 1)[0] for n in ALL}
    assert required <= set(ALL)
    assert {
        "SchedulingNodeAffinity",
        "TopologySpreading",
        "PreferredTopologySpreading",
        "SchedulingPodAntiAffinity",
        "PreemptionBasic",
        "PreemptionAsync",
        "Unschedulable",
        "SchedulingWithMixedChurn",
    } <= cases
