"""Every field and opcode of upstream scheduler_perf's config format is accepted
(``emulator/app/bench/upstream_fields.py``): ``updateAny`` (with the status subresource),
``metricsCollectorConfig`` honoured as far as the emulator's metrics go, ``signatureBatchSize``,
``countMultiplierParam``, sleep's ``durationParam``, thresholds and their selectors, Go-template
control structures; what the emulator cannot play is skipped naming what is missing. And
``bench --file DIR``: every config under a directory, then the tally per directory
(``emulator/app/bench/tally.py``) with 1.34's gate defaults (``gates.py``). Our own data files:
``tests/bench/data/perfconfig/format`` and ``tree``."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest

from emulator.app.bench.gates import describe
from emulator.app.bench.harness import _Play
from emulator.app.bench.resolve import render
from emulator.app.bench.spec import WorkloadError
from emulator.app.bench.steps import PodsStep, SleepStep, UpdateStep
from emulator.app.bench.workload_file import load_workloads
from emulator.app.commands.arguments import add_bench
from emulator.app.commands.bench import run

DATA = Path(__file__).resolve().parent / "data" / "perfconfig"
FORMAT = DATA / "format" / "performance-config.yaml"
TREE = DATA / "tree"


def _bench(capsys: pytest.CaptureFixture[str], file: Path, *argv: str) -> tuple[int, Any]:
    parser = argparse.ArgumentParser(prog="python -m emulator")
    add_bench(parser.add_subparsers(dest="command"))
    code = run(parser.parse_args(["bench", "--file", str(file), *argv]))
    out, err = capsys.readouterr()
    try:
        return code, json.loads(out)
    except ValueError:
        return code, out + err


def test_every_workload_of_the_format_file_runs_or_is_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _bench(capsys, FORMAT, "--label", "integration-test", "--stall-timeout", "20s", "--output", "json")
    assert code == 0, out
    ran = {o["workload"]: o for o in out if "skipped" not in o}
    skipped = {o["workload"]: o["skipped"] for o in out if "skipped" in o}
    assert sorted(ran) == [
        "BranchyTemplate/three",
        "RateLimitedClient/one",
        "ReleaseGates/four",
        "ResizePods/one",
        "Signatures/six",
        "SteadyState/one",
        "TwoMeasuredPhases/one",
        "UpdateNodes/two",
        "UpdateStatus/one",
        "VolumeLimits/one",
    ]
    assert all(o["complete"] and o["stoppedBy"] is None for o in ran.values()), ran
    # updateAny made the waiting pods schedulable: all bound inside the measured window.
    assert ran["UpdateNodes/two"]["scheduledPods"] == 4
    # steadyState: batches of 2 pods, each deleted once scheduled and replaced, for 1 s (steady.py).
    assert ran["SteadyState/one"]["scheduledPods"] >= 4
    assert ran["SteadyState/one"]["measuredSeconds"] == pytest.approx(1.0, abs=0.2)
    assert ran["UpdateStatus/one"]["scheduledPods"] == 2
    assert ran["ReleaseGates/four"]["scheduledPods"] == 4
    assert ran["ReleaseGates/four"]["wallSeconds"] >= 4 / 50 - 0.01  # updatePerSecond: 50
    # Two measured phases (a collectMetrics op, then a start/stopCollectingMetrics window around
    # another), each its own entry as upstream's data items; the unmeasured 2 pods in between
    # count in neither; the top-level figures pool the two.
    two = ran["TwoMeasuredPhases/one"]
    assert two["measuredPods"] == 1 + 3
    assert [(p["phase"], p["openedBy"], p["scheduledPods"]) for p in two["phases"]] == [
        (1, "createPods[1]", 1),
        (2, "startCollectingMetrics[3]", 3),
    ]
    assert two["scheduledPods"] == 4
    assert two["measuredSeconds"] == pytest.approx(sum(p["measuredSeconds"] for p in two["phases"]), abs=0.002)
    assert "phases" not in ran["UpdateNodes/two"]  # one phase: no per-phase list
    # schedulerApiClientQPS/Burst: the scheduler's client waits for tokens (ratelimit.py).
    assert ran["RateLimitedClient/one"]["schedulerApiClient"]["qps"] == 100
    assert ran["RateLimitedClient/one"]["schedulerApiClient"]["burst"] == 100
    assert "schedulerApiClient" not in ran["UpdateNodes/two"]
    expected = {
        "DeviceConditions/one": r"feature gate DRADeviceBindingConditions \(off \(Alpha\); what it turns on\)",
        "Profiled/one": r"opcode startCollectingProfile needs Go runtime profiles",
        "NominatedPods/one": r"createPods nominatedNodeName needs pods created nominated to a node",
    }
    assert sorted(skipped) == sorted(expected)
    for name, reason in expected.items():
        assert re.search(reason, skipped[name]), skipped[name]
        assert skipped[name].endswith("which the emulator does not have")


def test_metrics_collector_config_is_honoured_as_far_as_the_emulator_goes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _bench(capsys, FORMAT, "--workload", "UpdateNodes", "--output", "json", "--stall-timeout", "20s")
    assert code == 0, out
    (o,) = out
    assert o["metricsCollected"] == ["scheduler_scheduling_attempt_duration_seconds"]
    assert o["metricsNotCollected"] == ["scheduler_queue_incoming_pods_total"]
    assert o["attemptMs"]["p50"] is not None
    assert o["e2eMs"] == {"p50": None, "p90": None, "p99": None}  # not collected by this config
    assert o["threshold"] is None  # a threshold per topic: none without a topic, as upstream


def test_new_fields_become_steps() -> None:
    by_name = {w.name: w for w in load_workloads(FORMAT)}
    steps = by_name["Signatures/six"].steps
    grouped, pause, measured = steps[1], steps[2], steps[3]
    assert isinstance(grouped, PodsStep)
    assert grouped.count == 2 * 3  # countMultiplierParam
    assert pause == SleepStep(0.01)  # durationParam
    assert isinstance(measured, PodsStep)
    assert measured.signature_batch == 4
    labels = [_Play.pod(measured, k).metadata.labels["signature"] for k in range(6)]
    assert labels == ["signature-label-0"] * 4 + ["signature-label-1"] * 2
    assert "signature" not in _Play.pod(grouped, 0).metadata.labels
    update = by_name["UpdateNodes/two"].steps[4]
    assert isinstance(update, UpdateStep)
    assert (update.count, update.namespace, update.per_second, update.status_only) == (2, "", 0, False)
    status = by_name["UpdateStatus/one"].steps[4]
    assert isinstance(status, UpdateStep)
    assert status.status_only
    paced = by_name["ReleaseGates/four"].steps[4]
    assert isinstance(paced, UpdateStep)
    assert (paced.namespace, paced.per_second) == ("held", 50)


def test_go_template_control_structures_render_per_pod() -> None:
    wl = {w.name: w for w in load_workloads(FORMAT)}["BranchyTemplate/three"]
    pods = wl.steps[1]
    assert isinstance(pods, PodsStep)
    assert pods.indexed
    labels = [render(pods.indexed, k, count=3, params=pods.params).metadata.labels for k in range(3)]
    assert [x["tier"] for x in labels] == ["high", "mid", "low"]
    assert (labels[0]["key-0"], labels[0]["key-1"]) == ("alpha", "beta")
    assert labels[0]["extra"] == "x"


@pytest.mark.parametrize(
    ("op", "where", "detail"),
    [
        pytest.param(
            "  - opcode: updateAny\n    templatePath: x.yaml\n    updatesPerSecond: 1\n",
            r"\[0\]\.workloadTemplate\[1\]\.updatesPerSecond",
            r"unknown field \(a updateAny op has count, countParam, namespace, opcode, subresources",
            id="typo-in-an-op",
        ),
        pytest.param(
            "  - opcode: updateAll\n",
            r"\[0\]\.workloadTemplate\[1\]\.opcode",
            r'unknown opcode "updateAll" \(known: .*updateAny.*updateDeviceConditions',
            id="unknown-opcode",
        ),
    ],
)
def test_what_upstream_does_not_define_is_still_refused(tmp_path: Path, op: str, where: str, detail: str) -> None:
    config = tmp_path / "performance-config.yaml"
    config.write_text(
        "- name: T\n  workloadTemplate:\n  - opcode: createNodes\n    count: 1\n"
        + op
        + "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n"
        "  workloads:\n  - name: w\n"
    )
    with pytest.raises(WorkloadError, match=where) as err:
        load_workloads(config)
    assert re.search(detail, str(err.value)), str(err.value)


@pytest.mark.parametrize(
    ("case", "where"),
    [
        pytest.param(
            "  metricsCollectorConfig: {metrics: {m: [{label: x}]}}\n", r"metricsCollectorConfig\.metrics\.m\[0\]"
        ),
        pytest.param("  metricsCollectorConfig: {other: 1}\n", r"\[0\]\.metricsCollectorConfig: expected a mapping"),
        pytest.param("  schedulerApiClientQPS: fast\n", r"\[0\]\.schedulerApiClientQPS: expected a non-negative"),
        pytest.param("  defaultThresholdMetricSelector: {dataBucket: Average}\n", r"defaultThresholdMetricSelector"),
    ],
)
def test_malformed_new_fields_name_their_path(tmp_path: Path, case: str, where: str) -> None:
    config = tmp_path / "performance-config.yaml"
    config.write_text(
        "- name: T\n" + case + "  workloadTemplate:\n  - opcode: createNodes\n    count: 1\n"
        "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n  workloads:\n  - name: w\n"
    )
    with pytest.raises(WorkloadError, match=where):
        load_workloads(config)


def test_an_unknown_update_subresource_is_skipped_naming_it(tmp_path: Path) -> None:
    config = tmp_path / "performance-config.yaml"
    config.write_text(
        "- name: T\n  workloadTemplate:\n  - opcode: createNodes\n    count: 1\n"
        "  - opcode: updateAny\n    templatePath: x.yaml\n    subresources: [scale]\n"
        "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n  workloads:\n  - name: w\n"
    )
    (wl,) = load_workloads(config)
    assert wl.skipped == "updateAny of subresource scale needs that subresource, which the emulator does not have"


@pytest.mark.parametrize(
    ("gate", "expected"),
    [
        pytest.param("InPlacePodVerticalScaling", "on (Beta)", id="beta-on"),
        pytest.param("SchedulerQueueingHints", "on (GA)", id="ga"),
        pytest.param("SchedulerAsyncAPICalls", "off (Beta)", id="beta-off"),
        pytest.param("DRADeviceTaints", "off (Alpha)", id="alpha"),
        pytest.param("OpportunisticBatching", "not in 1.34 (from 1.35)", id="later"),
        pytest.param("NoSuchGate", "unknown", id="unknown"),
    ],
)
def test_gate_defaults_of_1_34(gate: str, expected: str) -> None:
    assert describe(gate) == expected


def test_a_directory_runs_every_config_and_tallies_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _bench(capsys, TREE, "--label", "integration-test", "--stall-timeout", "20s", "--output", "json")
    assert code == 1, out  # the refused file is a failure
    assert [f["file"] for f in out["files"]] == [
        "good/alpha/performance-config.yaml",
        "good/beta/gamma/performance-config.yaml",
        "refused/performance-config.yaml",
    ]
    assert [o["workload"] for o in out["files"][0]["results"]] == ["Basic/small", "Gated/one"]
    assert "no-such-node.yaml" in out["files"][2]["error"]
    t = out["tally"]
    assert t["directories"] == [
        {"directory": "good/alpha", "complete": 1, "skipped": 1, "failed": 0},
        {"directory": "good/beta/gamma", "complete": 0, "skipped": 2, "failed": 0},
        {"directory": "refused", "complete": 0, "skipped": 0, "failed": 1, "error": out["files"][2]["error"]},
    ]
    assert t["total"] == {"complete": 1, "skipped": 3, "failed": 1}
    assert t["skipped"] == [
        {
            "reason": "feature gate DRADeviceTaints (off (Alpha); what it turns on), which the emulator does not have",
            "workloads": ["good/beta/gamma/Claims/one", "good/beta/gamma/Claims/two"],
        },
        {
            # A gate 1.34 lacks that changes what the workload measures is named first.
            "reason": "feature gate OpportunisticBatching (the scheduler's opportunistic batching of pods with "
            "one signature; not in 1.34 (from 1.35)), which the emulator does not have",
            "workloads": ["good/alpha/Gated/one"],
        },
    ]
    gates = {g["gate"]: g for g in t["gates"]}
    assert gates["OpportunisticBatching"] == {
        "gate": "OpportunisticBatching",
        "1.34": "not in 1.34 (from 1.35)",
        "setTrue": ["good/alpha/Gated/one"],
        "setFalse": [],
    }
    assert gates["SchedulerAsyncAPICalls"]["setFalse"] == ["good/beta/gamma/Claims/two"]
    assert gates["DRADeviceTaints"]["1.34"] == "off (Alpha)"


def test_the_tally_as_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _bench(capsys, TREE, "--label", "integration-test", "--stall-timeout", "20s")
    assert code == 1
    tally = out[out.index("tally of 3 performance-config.yaml under") :]
    lines = tally.splitlines()
    assert lines[1].split() == ["directory", "complete", "skipped", "failed"]
    assert lines[2].split() == ["good/alpha", "1", "1", "0"]
    assert lines[4].split()[:4] == ["refused", "0", "0", "1"]
    assert "(file refused)" in lines[4]
    assert lines[5].split() == ["total", "1", "3", "1"]
    assert "  2 × feature gate DRADeviceTaints (off (Alpha); what it turns on)" in tally
    assert "  refused: file refused: " in tally
    assert "  InPlacePodVerticalScaling: true 1, false 0; 1.34: on (Beta)" in tally
    assert "== good/alpha/performance-config.yaml" in out


def test_a_directory_without_failures_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _bench(capsys, TREE / "good", "--label", "integration-test", "--output", "json")
    assert code == 0, out
    assert out["tally"]["total"] == {"complete": 1, "skipped": 3, "failed": 0}


def test_workload_patterns_select_in_every_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _bench(capsys, TREE / "good", "--workload", "Claims/*", "--output", "json")
    assert code == 0, out
    assert [[o["workload"] for o in f["results"]] for f in out["files"]] == [[], ["Claims/one", "Claims/two"]]


@pytest.mark.real_time
def test_an_incomplete_workload_is_a_failure_of_its_directory(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _bench(capsys, TREE / "good", "--label", "stalls", "--stall-timeout", "0.3s", "--output", "json")
    assert code == 1
    assert out["tally"]["failed"] == [{"directory": "beta/gamma", "workload": "Stalls/one", "stoppedBy": "stall"}]


def test_a_directory_without_configs_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out = _bench(capsys, tmp_path)
    assert code == 2
    assert "no performance-config.yaml under this directory" in out


GATED = DATA / "gated" / "performance-config.yaml"


def test_a_gate_1_34_lacks_skips_and_resize_runs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _bench(capsys, GATED, "--label", "integration-test", "--stall-timeout", "20s", "--output", "json")
    assert code == 0, out
    by = {o["workload"]: o for o in out}
    assert by["ResizePreemption/one"]["skipped"] == (
        "feature gate InPlacePodVerticalScalingSchedulerPreemption (the scheduler's preemption for deferred "
        "in-place resizes; not in 1.34 (from 1.37)), which the emulator does not have"
    )
    assert by["Resize/two"]["complete"], by["Resize/two"]
    assert by["Resize/two"]["scheduledPods"] == 2


def test_a_missing_template_of_a_workload_that_runs_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = GATED.read_text().replace(
        "InPlacePodVerticalScalingSchedulerPreemption: true", "SchedulerAsyncAPICalls: false"
    )
    (tmp_path / "performance-config.yaml").write_text(
        text.replace("../templates/", f"{GATED.parent.parent}/templates/")
    )
    code, out = _bench(capsys, tmp_path / "performance-config.yaml", "--output", "json")
    assert code == 2
    assert 'cannot read template "templates/node-not-here.yaml"' in out
