"""The ``replay`` step and ``nodes: [{fromFile}]`` entries: what the loader reads from the
trace files (times scaled, rows limited, names and namespaces filled in, integer priorities'
classes), the errors it reports before anything runs, and the step played end to end on the
shipped sample (pods created at their arrival after the step starts, same seed, same trace)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from emulator.app.scenario.loader import ScenarioError, load_scenario, load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.app.scenario.schema import RUN_DURATION_ANNOTATION, NodeFile, Replay, Scenario
from emulator.app.scenario.workload_traces import GPU_MODEL_LABEL
from emulator.base.apiserver.server import WriteRecord
from emulator.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "scenarios" / "trace-replay.yaml"
JOBS = "arrival,duration,cpu,memory,priority,name\n0,10s,100m,1Mi,,\n5,20,100m,1Mi,7,named\n30,1m,100m,1Mi,,\n"
NODES = "sn,cpu_milli,memory_mib,gpu,model\nn-a,4000,8192,2,T4\nn-b,4000,8192,0,\n"


def load(tmp_path: Path, body: str, *, jobs: str = JOBS, nodes: str = NODES) -> Scenario:
    (tmp_path / "jobs.csv").write_text(jobs)
    (tmp_path / "nodes.csv").write_text(nodes)
    text = f"name: r\nnodes:\n  - {{fromFile: nodes.csv, format: alibaba-gpu-2023}}\nsteps:\n  - {body}\n"
    return load_scenario_text(text, source=str(tmp_path / "s.yaml"), base_dir=tmp_path)


def test_loader_reads_rows(tmp_path: Path) -> None:
    scenario = load(tmp_path, "replay: {file: jobs.csv, format: csv, timeScale: 0.5, limit: 2, namespace: jobs}")
    [step] = scenario.steps
    assert isinstance(step, Replay)
    assert [(p.at, p.line, p.pod.metadata.namespace, p.pod.metadata.name) for p in step.pods] == [
        (0.0, 2, "jobs", "trace-0"),
        (2.5, 3, "jobs", "named"),
    ]
    assert [p.pod.metadata.annotations[RUN_DURATION_ANNOTATION] for p in step.pods] == ["5s", "10s"]
    assert step.pods[1].pod.spec.priority_class_name == "priority-7"
    assert step.priority_classes == {"priority-7": 7}
    [entry] = scenario.nodes
    assert isinstance(entry, NodeFile)
    assert [(n.metadata.name, n.metadata.labels.get(GPU_MODEL_LABEL)) for n in entry.items] == [
        ("n-a", "T4"),
        ("n-b", None),
    ]


@pytest.mark.parametrize(
    ("body", "jobs", "nodes", "message"),
    [
        pytest.param(
            "replay: {file: jobs.csv, format: csv}",
            "arrival,duration,cpu,memory\n0,1,1,1Gi\n1,1,1,many\n",
            NODES,
            r"^{dir}/jobs\.csv:3:7: memory: expected a quantity, got \"many\"$",
            id="bad-row",
        ),
        pytest.param(
            "replay: {file: jobs.csv, format: csv}",
            "arrival,duration,cpu,memory,name\n0,1,1,1Gi,Bad_Name\n",
            NODES,
            r"^{dir}/jobs\.csv:2:1: Pod \"Bad_Name\" is invalid: metadata\.name: Invalid value: \"Bad_Name\": "
            r"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '\.', "
            r"and must start and end with an alphanumeric character$",
            id="invalid-name",
        ),
        pytest.param(
            "replay: {file: jobs.csv, format: csv}",
            "arrival,duration,cpu,memory,priority\n0,1,1,1Gi,low\n",
            NODES,
            r"^{dir}/jobs\.csv:2: spec\.priorityClassName: no PriorityClass with name low was found \(define it in "
            r"objects or an earlier create step\)$",
            id="missing-priority-class",
        ),
        pytest.param(
            "replay: {file: none.csv, format: csv}",
            JOBS,
            NODES,
            r"^{dir}/s\.yaml:5:14: steps\[0\]\.replay\.file: cannot read file: No such file or directory: "
            r"{dir}/none\.csv$",
            id="missing-file",
        ),
        pytest.param(
            "replay: {file: jobs.csv, format: tsv}",
            JOBS,
            NODES,
            r"^{dir}/s\.yaml:5:30: steps\[0\]\.replay\.format: expected \"csv\" or \"alibaba-gpu-2023\", got \"tsv\"$",
            id="unknown-format",
        ),
        pytest.param(
            "replay: {file: jobs.csv, format: csv, pods: []}",
            JOBS,
            NODES,
            r"^{dir}/s\.yaml:5:43: steps\[0\]\.replay\.pods: unknown field; expected one of: file, format, timeScale, "
            r"limit, namespace, gpuSharing$",
            id="pods-not-writable",
        ),
        pytest.param(
            "replay: {file: jobs.csv, format: csv}",
            JOBS,
            "sn,cpu_milli,memory_mib,gpu,model\nn-a,4000,8192,two,T4\n",
            r"^{dir}/nodes\.csv:2:15: gpu: expected an integer >= 0, got \"two\"$",
            id="bad-node-row",
        ),
    ],
)
def test_loader_errors(tmp_path: Path, body: str, jobs: str, nodes: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load(tmp_path, body, jobs=jobs, nodes=nodes)
    text = str(info.value).replace(str(tmp_path), "{dir}")
    assert re.fullmatch(message.replace("{dir}", r"\{dir\}"), text), text


def test_cli_reports_a_bad_row_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "jobs.csv").write_text("arrival,duration,cpu,memory\n0,forever,1,1Gi\n")
    (tmp_path / "s.yaml").write_text("name: r\nsteps:\n  - replay: {file: jobs.csv, format: csv}\n")
    assert main(["validate", str(tmp_path / "s.yaml")]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: {tmp_path}/jobs.csv:2:3: duration: "
        'expected a duration like "90s" or a number of seconds, got "forever"\n'
    )


def test_sample_pods_arrive_on_time_and_the_run_is_deterministic() -> None:
    scenario = load_scenario(SAMPLE)
    replays = [s for s in scenario.steps if isinstance(s, Replay)]
    created: dict[str, float] = {}

    def on_write(record: WriteRecord) -> None:
        if record.kind == "Pod" and record.verb == "create":
            created[f"{record.new.metadata.namespace}/{record.new.metadata.name}"] = record.time

    first = run_scenario(scenario, RunOptions(on_write=on_write))
    assert first.passed
    assert len(created) == sum(len(s.pods) for s in replays) == 160
    openb = replays[0].pods
    start = created[f"openb/{openb[0].pod.metadata.name}"]
    late = [p.pod.metadata.name for p in openb if created[f"openb/{p.pod.metadata.name}"] - start < p.at - 1e-9]
    assert not late
    second = run_scenario(load_scenario(SAMPLE))
    assert second.trace_hash == first.trace_hash


def test_samples_are_what_the_seeded_generator_writes(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("generate", ROOT / "scenarios" / "traces" / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["alibaba-gpu-2023-nodes.csv", "alibaba-gpu-2023-pods.csv", "jobs.csv"]
    for name in names:
        assert (tmp_path / name).read_bytes() == (ROOT / "scenarios" / "traces" / name).read_bytes(), name


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            "replay: {file: jobs.csv, format: alibaba-gpu-2023}",
            r"^{dir}/s\.yaml:5:5: steps\[0\]\.replay: the timeline reaches 48h0m0s here, past the limit of 24h0m0s "
            r"\(1 day\); shorten it, or set until to end the run earlier$",
            id="past-the-horizon",
        ),
        pytest.param(
            "replay: {file: jobs.csv, format: alibaba-gpu-2023, timeScale: 0.25}",
            "",
            id="scaled-within-the-horizon",
        ),
    ],
)
def test_horizon_counts_the_last_arrival(tmp_path: Path, body: str, message: str) -> None:
    header = (
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
    )
    rows = f"{header}\na,1000,1,0,0,,LS,Running,0,10,1\nb,1000,1,0,0,,LS,Running,172800,172810,172801\n"
    if not message:
        [step] = load(tmp_path, body, jobs=rows).steps
        assert isinstance(step, Replay)
        assert [p.at for p in step.pods] == [0.0, 43200.0]
        return
    with pytest.raises(ScenarioError) as info:
        load(tmp_path, body, jobs=rows)
    text = str(info.value).replace(str(tmp_path), "{dir}")
    assert re.fullmatch(message.replace("{dir}", r"\{dir\}"), text), text


def test_gpus_are_counted_by_the_scheduler(tmp_path: Path) -> None:
    """Three one-GPU jobs on a node with two GPUs (and room for all three otherwise): two run,
    the third waits until one of them ends, then runs too."""
    jobs = "arrival,duration,cpu,memory,gpu,name\n0,60s,100m,1Mi,1,a\n0,60s,100m,1Mi,1,b\n1,60s,100m,1Mi,1,c\n"
    scenario = load(tmp_path, "replay: {file: jobs.csv, format: csv}\n  - sleep: 3m", jobs=jobs)
    bound: dict[str, float] = {}

    def on_write(record: WriteRecord) -> None:
        pod = record.new
        if record.kind == "Pod" and pod is not None and pod.spec.node_name and pod.metadata.name not in bound:
            bound[pod.metadata.name] = record.time

    result = run_scenario(scenario, RunOptions(on_write=on_write))
    assert result.pods["succeeded"] == 3
    assert sorted(bound, key=bound.__getitem__) == ["a", "b", "c"]
    assert bound["c"] >= 60.0


def test_a_duplicate_row_names_the_row_that_first_made_it(tmp_path: Path) -> None:
    jobs = "arrival,duration,cpu,memory,name\n0,1,1,1Mi,same\n1,1,1,1Mi,same\n"
    with pytest.raises(ScenarioError) as info:
        load(tmp_path, "replay: {file: jobs.csv, format: csv}", jobs=jobs)
    assert str(info.value).replace(str(tmp_path), "{dir}") == (
        '{dir}/jobs.csv:3: metadata.name: Pod "default/same" already exists '
        "(created by steps[0].replay ({dir}/jobs.csv:2))"
    )
