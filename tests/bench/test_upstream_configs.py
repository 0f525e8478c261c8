"""``bench --file`` on configs in upstream scheduler_perf's own format (``emulator/app/bench/upstream.py``):
templates by relative path, ``$params``, labels, featureGates, the played opcodes, and the
workloads reported as skipped with their reason."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest

from emulator.app.bench.harness import _Play, run_workload
from emulator.app.bench.instruments import Tracker
from emulator.app.bench.resolve import render, render_any
from emulator.app.bench.result import BenchOptions
from emulator.app.bench.spec import WorkloadError
from emulator.app.bench.steps import AnyStep, ChurnStep, DeletePodsStep, NamespacesStep, NodesStep, PodsStep
from emulator.app.bench.workload_file import load_workloads
from emulator.app.commands.arguments import add_bench
from emulator.app.commands.bench import run
from emulator.base.api.core import Pod
from emulator.base.apiserver.server import ApiServer
from emulator.base.runtime.clock import LoopClock
from emulator.base.runtime.clock import run as run_virtual
from emulator.base.runtime.rng import Seeds

DATA = Path(__file__).resolve().parent / "data" / "perfconfig"
SUITE = DATA / "suite" / "performance-config.yaml"


def _bench(capsys: pytest.CaptureFixture[str], file: Path, *argv: str) -> tuple[int, Any]:
    parser = argparse.ArgumentParser(prog="python -m emulator")
    add_bench(parser.add_subparsers(dest="command"))
    code = run(parser.parse_args(["bench", "--file", str(file), "--output", "json", *argv]))
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip().startswith("[") else out + err


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        pytest.param(
            "AnyUnknownKind/one",
            r"claim.yaml\" is a PersistentVolumeClaim: needs PersistentVolumeClaims, which the emulator lacks",
            id="createAny-unknown-kind",
        ),
        pytest.param(
            "NeedsClaims/one", "mounts an ephemeral volume, no bench controller makes its claim", id="ephemeral"
        ),
        pytest.param("ClaimObjects/one", "is a PersistentVolumeClaim: needs PersistentVolumeClaims", id="pvc-kind"),
        pytest.param(
            "UnknownExpression/one",
            r'the Go template expression \{\{ template "suffix" . \}\} is not understood \(template is not known\)',
            id="unknown-expression",
        ),
        pytest.param(
            "DraClaims/one",
            r"opcode updateDeviceConditions needs devices' binding conditions \(DRADeviceBindingConditions\)",
            id="dra",
        ),
        pytest.param("EveryPlayedOpcode/tiny", "", id="runs"),
    ],
)
def test_workloads_needing_what_is_missing_are_skipped_with_the_reason(name: str, reason: str) -> None:
    wl = {w.name: w for w in load_workloads(SUITE)}[name]
    if reason:
        assert wl.skipped
        assert re.search(reason, wl.skipped), wl.skipped
        assert wl.steps == ()
    else:
        assert wl.skipped == ""
        assert len(wl.steps) == 10


def test_templates_params_and_feature_gates_are_read() -> None:
    by_name = {w.name: w for w in load_workloads(SUITE)}
    tiny, bigger = by_name["EveryPlayedOpcode/tiny"], by_name["DefaultTemplates/2Nodes"]
    assert tiny.nodes == 3 + 1
    assert tiny.measured_pods == 6
    assert tiny.measured is not None
    assert tiny.measured.template.metadata.generate_name == "light-"  # defaultPodTemplatePath
    assert tiny.feature_gates == (("SchedulerAsyncAPICalls", False), ("SchedulerQueueingHints", True))
    assert bigger.measured is not None
    assert bigger.measured.template.metadata.generate_name == "pod-"  # upstream's default pod
    scaled = {w.name: w for w in load_workloads(SUITE, scale=0.01)}
    assert scaled["EveryPlayedOpcode/bigger"].nodes == 3 + 1  # 300 at a hundredth, plus count: 1


def test_pod_sets_namespace_templates_and_deletions_become_steps() -> None:
    by_name = {w.name: w for w in load_workloads(SUITE)}
    sets = by_name["PodSets/two"].steps
    assert sets[1] == NamespacesStep(("set-0", "set-1"), (("team", "storage"),))
    pods = [(s.namespace, s.count, s.template.metadata.generate_name) for s in sets if isinstance(s, PodsStep)]
    assert pods == [("set-0", 3, "important-"), ("set-1", 3, "important-"), ("namespace-3", 1, "pod-")]
    deletes = [s for s in by_name["DeletesPods/one"].steps if isinstance(s, DeletePodsStep)]
    assert deletes == [DeletePodsStep("namespace-1", 10, True), DeletePodsStep("namespace-3", 0, False)]


@pytest.mark.parametrize(
    ("index", "name", "rack"),
    [pytest.param(0, "rack-node-0", "r0", id="first"), pytest.param(7, "rack-node-7", "r7", id="eighth")],
)
def test_index_templates_render_per_object(index: int, name: str, rack: str) -> None:
    wl = {w.name: w for w in load_workloads(SUITE)}["IndexedNames/one"]
    nodes = wl.steps[0]
    assert isinstance(nodes, NodesStep)
    assert nodes.indexed
    assert nodes.template.metadata.name == "rack-node-0"  # index 0, checked at load time
    obj = render(nodes.indexed, index)
    assert (obj.metadata.name, obj.metadata.labels["rack"]) == (name, rack)


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        pytest.param(["short"], ["EveryPlayedOpcode/tiny"], id="short"),
        pytest.param(["integration-test", "short"], ["EveryPlayedOpcode/tiny"], id="both"),
        pytest.param(["performance"], ["EveryPlayedOpcode/bigger"], id="performance"),
    ],
)
def test_label_selects_workloads(capsys: pytest.CaptureFixture[str], labels: list[str], expected: list[str]) -> None:
    code, out = _bench(capsys, SUITE, "--scale", "0.01", *[a for x in labels for a in ("--label", x)])
    assert code == 0, out
    assert [o["workload"] for o in out] == expected


def test_integration_test_label_runs_or_skips_every_workload(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _bench(capsys, SUITE, "--label", "integration-test", "--stall-timeout", "20s")
    assert code == 0, out
    ran = {o["workload"]: o for o in out if "skipped" not in o}
    skipped = {o["workload"]: o["skipped"] for o in out if "skipped" in o}
    assert sorted(ran) == [
        "AnyObject/one",
        "DefaultTemplates/2Nodes",
        "DeletesPods/one",
        "EveryPlayedOpcode/tiny",
        "IndexedNames/one",
        "PodSets/two",
        "WaitsForAttempts/one",
    ]
    assert all(o["complete"] and o["scheduledPods"] == o["measuredPods"] for o in ran.values())
    assert ran["EveryPlayedOpcode/tiny"]["featureGatesNotHonoured"] == {
        "SchedulerAsyncAPICalls": False,
        "SchedulerQueueingHints": True,
    }
    assert len(skipped) == 5
    assert all(set(o) == {"workload", "skipped"} for o in out if "skipped" in o)


TEMPLATE = """\
- name: Case
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPods
    count: 1
    collectMetrics: true
{extra_op}  workloads:
  - name: w
{extra_wl}"""


@pytest.mark.parametrize(
    ("extra_op", "extra_wl", "where", "detail"),
    [
        pytest.param(
            "  - opcode: explode\n", "", r":8:\d+: \[0\]\.workloadTemplate\[2\]\.opcode", "unknown opcode", id="op"
        ),
        pytest.param(
            "  - opcode: createPods\n    count: 1\n    podTemplatePath: nowhere.yaml\n",
            "",
            r": \[0\]\.workloadTemplate\[2\]\.podTemplatePath",
            'cannot read template "nowhere.yaml"',
            id="missing-template",
        ),
        pytest.param(
            "", "    featureGates: {A: maybe}\n", r": \[0\]\.workloads\[0\]\.featureGates", "feature gate", id="gates"
        ),
        pytest.param("", "    colour: blue\n", r": \[0\]\.workloads\[0\]\.colour", "unknown field", id="wl-field"),
        pytest.param(
            "  - opcode: barrier\n    stageRequirement: Bound\n",
            "",
            r": \[0\]\.workloadTemplate\[2\]\.stageRequirement",
            'expected "Scheduled" or "Attempted"',
            id="stage",
        ),
        pytest.param(
            "  - opcode: createPods\n    countParam: $gone\n",
            "",
            r": \[0\]\.workloads\[0\]\.params",
            'missing "gone"',
            id="param",
        ),
    ],
)
def test_bad_upstream_files_exit_2_naming_the_file_and_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra_op: str, extra_wl: str, where: str, detail: str
) -> None:
    file = tmp_path / "performance-config.yaml"
    file.write_text(TEMPLATE.format(extra_op=extra_op, extra_wl=extra_wl))
    with pytest.raises(WorkloadError, match=detail):
        load_workloads(file)
    code, out = _bench(capsys, file)
    assert code == 2
    assert out.startswith(f"error: {file}")
    assert re.search(where, out), out
    assert detail in out.replace("\\", "")


@pytest.mark.parametrize(
    ("template", "where", "detail"),
    [
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata: {generateName: p-}\nspec:\n  containers: 5\n",
            ":5:3: spec.containers",
            "Expected `array`, got `int`",
            id="bad-field",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
            r": \[0\]\.workloadTemplate\[1\]\.podTemplate",
            'template "t/pod.yaml" is a Namespace, expected a Pod',
            id="wrong-kind",
        ),
        pytest.param("a: [\n", "", "not valid YAML", id="bad-yaml"),
    ],
)
def test_bad_templates_name_the_template_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], template: str, where: str, detail: str
) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "pod.yaml").write_text(template)
    file = tmp_path / "performance-config.yaml"
    measured = "    count: 1\n    collectMetrics"
    with_template = TEMPLATE.replace(measured, "    count: 1\n    podTemplatePath: t/pod.yaml\n    collectMetrics")
    file.write_text(with_template.format(extra_op="", extra_wl=""))
    code, out = _bench(capsys, file, "--label", "x")
    assert code == 2
    assert re.search(where, out), out
    assert detail in out


BARRIERS = DATA / "barriers" / "performance-config.yaml"


@pytest.mark.parametrize(
    ("name", "stopped_by", "error", "pods_per_node"),
    [
        pytest.param("GatedAttempted/one", None, "", 1, id="attempted-passes-gated-pods"),
        pytest.param("GatedScheduled/one", "stall", "", 1, id="scheduled-waits-for-gated-pods"),
        pytest.param("SelectedWeb/one", None, "", 4, id="selector-counts-matching-pods"),
        pytest.param("SelectedOther/one", "stall", "", 4, id="selector-matching-nothing-waits"),
        pytest.param(
            "ForgottenNamespace/twice", "error", "barrier[3]: unknown namespace once", 1, id="scheduled-forgets"
        ),
    ],
)
def test_barriers_as_upstream(name: str, stopped_by: str | None, error: str, pods_per_node: int) -> None:
    """On the virtual clock: a stall costs no wall time, and the outcome is the same every run
    (a stalled wait lets the later steps run; an error stops the workload)."""
    wl = {w.name: w for w in load_workloads(BARRIERS)}[name]
    result = run_workload(wl, BenchOptions(virtual=True, stall_timeout=30.0))
    assert (result.stopped_by, result.extra.get("error", "")) == (stopped_by, error)
    assert result.complete is (stopped_by is None)
    assert result.max_pods_per_node == pods_per_node


def test_delete_pods_deletes_only_the_selected_pods() -> None:
    wl = {w.name: w for w in load_workloads(BARRIERS)}["DeleteSelected/web"]
    pods = [s for s in wl.steps if isinstance(s, PodsStep)]
    (delete,) = [s for s in wl.steps if isinstance(s, DeletePodsStep)]
    assert delete.label_selector == (("app", "web"),)

    async def play() -> list[str]:
        clock = LoopClock(virtual=True)
        server = ApiServer(clock, Seeds(0).stream("apiserver"))
        player = _Play(wl, BenchOptions(virtual=True), server, clock, Seeds(0), Tracker(kubelets=False))
        for step in pods[:2]:
            for _ in range(step.count):
                player.create_object(step.template, step.namespace)
        await player.delete_pods(delete)
        return sorted(p.metadata.name for p in server.list("Pod", namespace="pool")[0])

    assert run_virtual(play) == ["pod-0", "pod-1"]


def test_create_any_makes_objects_of_other_kinds() -> None:
    wl = {w.name: w for w in load_workloads(SUITE)}["AnyObject/one"]
    made = [(s.count, s.namespace, "{{.Index}}" in s.text) for s in wl.steps if isinstance(s, AnyStep)]
    assert made == [(1, "web", False), (2, "", True)]
    assert render_any(wl.steps[1].text, 1).metadata.name == "tier-1"  # type: ignore[union-attr]


def test_churn_templates_may_be_any_kind_the_server_has() -> None:
    wl = {w.name: w for w in load_workloads(SUITE)}["EveryPlayedOpcode/tiny"]
    churns = [s for s in wl.steps if isinstance(s, ChurnStep)]
    assert [(c.mode, [t.kind for t in c.templates]) for c in churns] == [
        ("create", ["Pod"]),
        ("recreate", ["Node", "Pod", "Service"]),
    ]


FEATURES = DATA / "features" / "performance-config.yaml"


def test_measured_window_counts_the_selected_pods_bound_inside_it() -> None:
    wl = {w.name: w for w in load_workloads(FEATURES)}["MeasuredWindow/four"]
    assert wl.measured is None
    assert wl.measured_pods == 4
    result = run_workload(wl, BenchOptions(virtual=True))
    assert result.complete
    assert (result.measured_pods, result.scheduled_pods, result.max_pods_per_node) == (4, 4, 14)


WINDOW = """\
- name: Case
  workloadTemplate:
  - opcode: createNodes
    count: 1
{ops}  workloads:
  - name: w
"""


@pytest.mark.parametrize(
    ("ops", "where", "detail"),
    [
        pytest.param(
            "  - opcode: stopCollectingMetrics\n",
            r"\[0\]\.workloadTemplate\[1\]",
            "missing startCollectingMetrics operation before stopping",
            id="stop-first",
        ),
        pytest.param(
            "  - opcode: startCollectingMetrics\n    namespaces: [a]\n"
            "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n",
            r"\[0\]\.workloadTemplate\[2\]\.collectMetrics",
            "metrics collection is overlapping",
            id="overlap",
        ),
        pytest.param(
            "  - opcode: startCollectingMetrics\n    namespaces: []\n",
            r"\[0\]\.workloadTemplate\[1\]\.namespaces",
            "length >= 1",
            id="no-namespaces",
        ),
        pytest.param(
            "  - opcode: createPods\n    count: 1\n",
            r"\[0\]\.workloadTemplate",
            "no op collects metrics",
            id="none",
        ),
    ],
)
def test_bad_measured_windows_name_the_op(tmp_path: Path, ops: str, where: str, detail: str) -> None:
    file = tmp_path / "performance-config.yaml"
    file.write_text(WINDOW.format(ops=ops))
    with pytest.raises(WorkloadError, match=detail) as err:
        load_workloads(file)
    assert re.search(where, str(err.value)), str(err.value)


@pytest.mark.parametrize(
    ("index", "name", "zone"),
    [pytest.param(0, "zoned-0-of-3", "zone-0", id="first"), pytest.param(2, "zoned-2-of-3", "zone-0", id="third")],
)
def test_template_params_and_count_render_per_node(index: int, name: str, zone: str) -> None:
    wl = {w.name: w for w in load_workloads(FEATURES)}["TemplateParams/three"]
    nodes = wl.steps[0]
    assert isinstance(nodes, NodesStep)
    assert nodes.params == (("CPU", 2), ("Zones", 2))
    node = render(nodes.indexed, index, count=nodes.count, params=nodes.params)
    assert (node.metadata.name, node.metadata.labels["topology.kubernetes.io/zone"]) == (name, zone)


def test_template_functions_render_per_pod_and_the_workload_runs() -> None:
    wl = {w.name: w for w in load_workloads(FEATURES)}["TemplateParams/three"]
    pods = wl.steps[1]
    assert isinstance(pods, PodsStep)
    third = render(pods.indexed, 3, count=pods.count, params=pods.params)
    assert isinstance(third, Pod)
    assert third.metadata.labels["batch"] == "b1"
    assert str(third.spec.containers[0].resources.requests["cpu"]) == "500m"
    result = run_workload(wl, BenchOptions(virtual=True))
    assert (result.complete, result.scheduled_pods, result.nodes) == (True, 4, 3)


def test_scale_leaves_parameters_read_only_by_templates() -> None:
    wl = {w.name: w for w in load_workloads(FEATURES, scale=0.5)}["TemplateParams/three"]
    nodes, pods = wl.steps[0], wl.steps[1]
    assert isinstance(nodes, NodesStep)
    assert isinstance(pods, PodsStep)
    assert (nodes.count, pods.count) == (2, 2)
    assert nodes.params == (("CPU", 2), ("Zones", 2))
    assert pods.params == (("MilliCPU", 500), ("PerBatch", 2))


def test_a_template_field_without_a_value_names_the_op(tmp_path: Path) -> None:
    sized = (DATA / "templates" / "pod-sized.yaml").resolve()
    file = tmp_path / "performance-config.yaml"
    file.write_text(
        WINDOW.format(
            ops=f"  - opcode: createPods\n    count: 1\n    podTemplatePath: {sized}\n    collectMetrics: true\n"
            "    templateParams: {PerBatch: 2}\n"
        )
    )
    with pytest.raises(WorkloadError, match=r"reads \.MilliCPU, which is not set") as err:
        load_workloads(file)
    assert re.search(r":7:\d+: \[0\]\.workloadTemplate\[1\]\.podTemplatePath", str(err.value)), str(err.value)


@pytest.mark.parametrize(
    ("name", "config", "per_node"),
    [
        pytest.param("PacksWithOwnScheduler/2Nodes", "scheduler-config.yaml", 4, id="most-allocated-packs"),
        pytest.param("SpreadsWithDefaults/2Nodes", "", 2, id="defaults-spread"),
    ],
)
def test_scheduler_config_path_configures_the_scheduler(name: str, config: str, per_node: int) -> None:
    wl = {w.name: w for w in load_workloads(FEATURES)}[name]
    assert wl.scheduler_config == (str(FEATURES.parent / config) if config else "")
    result = run_workload(wl, BenchOptions(virtual=True))
    assert (result.complete, result.max_pods_per_node) == (True, per_node)
    assert result.extra.get("schedulerConfig", "") == wl.scheduler_config


@pytest.mark.parametrize(
    ("config", "where", "detail"),
    [
        pytest.param("nowhere.yaml", "nowhere.yaml", "cannot read file", id="missing"),
        pytest.param(
            str(FEATURES.parent / "bad-scheduler-config.yaml"),
            "bad-scheduler-config.yaml: percentageOfNodesToScore",
            "not in valid range",
            id="invalid",
        ),
    ],
)
def test_bad_scheduler_configs_name_the_file(tmp_path: Path, config: str, where: str, detail: str) -> None:
    file = tmp_path / "performance-config.yaml"
    text = WINDOW.format(ops="  - opcode: createPods\n    count: 1\n    collectMetrics: true\n")
    file.write_text(text.replace("- name: Case\n", f"- name: Case\n  schedulerConfigPath: {config}\n"))
    with pytest.raises(WorkloadError, match=detail) as err:
        load_workloads(file)
    assert where in str(err.value)


def test_a_create_any_the_api_server_refuses_stops_the_workload_with_the_error(tmp_path: Path) -> None:
    """Upstream's createAny fails its workload when the create fails; here the workload stops
    with ``stoppedBy: error`` naming the step and the API server's answer (it used to crash the run)."""
    (tmp_path / "pc.yaml").write_text(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: fixed}\nvalue: 1000\n"
    )
    (tmp_path / "performance-config.yaml").write_text(
        "- name: Twice\n"
        "  workloadTemplate:\n"
        "  - opcode: createAny\n    templatePath: pc.yaml\n    count: 2\n"
        "  - opcode: createNodes\n    count: 1\n"
        "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n"
        "  workloads:\n  - name: one\n"
    )
    wl = {w.name: w for w in load_workloads(tmp_path / "performance-config.yaml")}["Twice/one"]
    result = run_workload(wl, BenchOptions(virtual=True, stall_timeout=30.0))
    assert result.stopped_by == "error"
    assert result.extra.get("error", "") == 'createAny[0]: priorityclasses.scheduling.k8s.io "fixed" already exists'
    assert not result.complete
