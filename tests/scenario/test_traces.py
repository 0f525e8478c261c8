"""The trace readers (``emulator/app/scenario/workload_traces.py``): good rows become the pods and nodes
they should, and every malformed row fails with its file, line, column and column name."""

from __future__ import annotations

import pytest

from emulator.app.scenario.schema import RUN_DURATION_ANNOTATION
from emulator.app.scenario.workload_traces import (
    GPU_MILLI_ANNOTATION,
    GPU_MODEL_LABEL,
    GPU_RESOURCE,
    QOS_LABEL,
    TraceError,
    TraceFormat,
    TracePod,
    read_nodes,
    read_pods,
    trace_node,
    trace_pod,
)
from emulator.base.api.quantity import parse_quantity

CSV_HEADER = "arrival,duration,cpu,memory,gpu,priority,name,namespace,labels"
ALI_HEADER = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
)


def pods(text: str, fmt: TraceFormat = "csv") -> list[TracePod]:
    return list(read_pods(text.splitlines(keepends=True), "t.csv", fmt))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "arrival,duration,cpu,memory\n0,90s,500m,1Gi\n1.5,2m,2,512Mi\n",
            [
                TracePod(line=2, arrival=0.0, duration=90.0, cpu_milli=500, memory=2**30),
                TracePod(line=3, arrival=1.5, duration=120.0, cpu_milli=2000, memory=2**29),
            ],
            id="required-columns",
        ),
        pytest.param(
            "\ufeffarrival,duration,cpu,memory\r\n0,90,1,1Mi\r\n",
            [TracePod(line=2, arrival=0.0, duration=90.0, cpu_milli=1000, memory=2**20)],
            id="byte-order-mark-and-crlf",
        ),
        pytest.param(
            f'{CSV_HEADER}\n10s,30,1,1Gi,2,high,job-a,team-a,"app=x;tier=batch"\n\n20s,5,100m,1Mi,,7,,,\n',
            [
                TracePod(
                    line=2,
                    arrival=10.0,
                    duration=30.0,
                    cpu_milli=1000,
                    memory=2**30,
                    gpu=2,
                    priority_class="high",
                    name="job-a",
                    namespace="team-a",
                    labels={"app": "x", "tier": "batch"},
                ),
                TracePod(
                    line=4,
                    arrival=20.0,
                    duration=5.0,
                    cpu_milli=100,
                    memory=2**20,
                    priority_class="priority-7",
                ),
            ],
            id="optional-columns-and-blank-line",
        ),
        pytest.param(
            f"{ALI_HEADER}\n"
            "p-1,4000,8192,1,470,V100M16|V100M32,LS,Running,1000,1600,1010\n"
            "p-2,2000,1024,0,0,,Guaranteed,Pending,1030,,\n"
            "p-3,2000,1024,8,1000,,BE,Failed,1040,1100,\n",
            [
                TracePod(
                    line=2,
                    arrival=0.0,
                    duration=590.0,
                    cpu_milli=4000,
                    memory=8192 * 2**20,
                    gpu=1,
                    name="p-1",
                    labels={QOS_LABEL: "LS"},
                    annotations={GPU_MILLI_ANNOTATION: "470"},
                    gpu_models=["V100M16", "V100M32"],
                    gpu_milli=470,
                ),
                TracePod(
                    line=3,
                    arrival=30.0,
                    duration=None,
                    cpu_milli=2000,
                    memory=2**30,
                    guaranteed=True,
                    name="p-2",
                    labels={QOS_LABEL: "Guaranteed"},
                ),
                TracePod(
                    line=4,
                    arrival=40.0,
                    duration=60.0,
                    cpu_milli=2000,
                    memory=2**30,
                    gpu=8,
                    name="p-3",
                    labels={QOS_LABEL: "BE"},
                    gpu_milli=1000,
                ),
            ],
            id="alibaba-share-spec-unscheduled-alive",
        ),
    ],
)
def test_good_rows(text: str, expected: list[TracePod]) -> None:
    fmt: TraceFormat = "alibaba-gpu-2023" if text.startswith("name,cpu_milli") else "csv"
    assert pods(text, fmt) == expected


ALI_ROW = "p,4000,8192,1,1000,,LS,Running,100,200,110"


@pytest.mark.parametrize(
    ("text", "fmt", "message"),
    [
        pytest.param("", "csv", "^t.csv:1:1: empty file: expected a header row$", id="empty"),
        pytest.param(
            "arrival,duration,cpu\n",
            "csv",
            "^t.csv:1:1: missing required column\\(s\\): memory$",
            id="missing-column",
        ),
        pytest.param(
            "arrival,duration,cpu,memory,colour\n",
            "csv",
            "^t.csv:1:29: colour: unknown column \\(known: arrival, duration, cpu, memory, gpu, priority, name, "
            "namespace, labels\\)$",
            id="unknown-column",
        ),
        pytest.param(
            "arrival,duration,cpu,cpu,memory\n", "csv", "^t.csv:1:22: cpu: duplicate column$", id="duplicate-column"
        ),
        pytest.param(
            "arrival,duration,cpu,memory\n0,1,1\n",
            "csv",
            "^t.csv:2:5: expected 4 fields \\(the header's\\), got 3$",
            id="short-row",
        ),
        pytest.param(
            "arrival,duration,cpu,memory\n0,1,1,1Gi\n5,soon,1,1Gi\n",
            "csv",
            '^t.csv:3:3: duration: expected a duration like "90s" or a number of seconds, got "soon"$',
            id="bad-duration",
        ),
        pytest.param(
            "arrival,duration,cpu,memory\n0,,1,1Gi\n",
            "csv",
            "^t.csv:2:3: duration: required, got an empty field$",
            id="empty-required",
        ),
        pytest.param(
            "arrival,duration,cpu,memory\n0,1,lots,1Gi\n",
            "csv",
            '^t.csv:2:5: cpu: expected a quantity, got "lots"$',
            id="bad-quantity",
        ),
        pytest.param(
            "arrival,duration,cpu,memory\n0,1,-1,1Gi\n",
            "csv",
            '^t.csv:2:5: cpu: expected a quantity >= 0 of at most int64, got "-1"$',
            id="negative-quantity",
        ),
        pytest.param(
            "arrival,duration,cpu,memory,gpu\n0,1,1,1Gi,1.5\n",
            "csv",
            '^t.csv:2:11: gpu: expected an integer >= 0, got "1.5"$',
            id="fractional-gpu",
        ),
        pytest.param(
            "arrival,duration,cpu,memory,labels\n0,1,1,1Gi,app\n",
            "csv",
            '^t.csv:2:11: labels: expected k=v;k=v, got "app"$',
            id="bad-labels",
        ),
        pytest.param(
            "arrival,duration,cpu,memory\n10,1,1,1Gi\n5,1,1,1Gi\n",
            "csv",
            "^t.csv:3:1: arrival: rows must come in arrival order: 5s is before the previous 10s$",
            id="arrival-backwards",
        ),
        pytest.param(
            "arrival,duration,cpu,memory\n0,2d,1,1Gi\n",
            "csv",
            '^t.csv:2:3: duration: expected a duration like "90s" or a number of seconds, got "2d"$',
            id="duration-over-a-day",
        ),
        pytest.param(
            f"{ALI_HEADER}\np,4000,8192,1,1000,,LS,Running,soon,200,110\n",
            "alibaba-gpu-2023",
            '^t.csv:2:32: creation_time: expected a number of seconds, got "soon"$',
            id="alibaba-bad-time",
        ),
        pytest.param(
            f"{ALI_HEADER}\np,4000,8192,1,1000,,LS,Running,100,105,110\n",
            "alibaba-gpu-2023",
            "^t.csv:2:36: deletion_time: 105 is before scheduled_time 110$",
            id="alibaba-deleted-before-scheduled",
        ),
        pytest.param(
            f"{ALI_HEADER}\np,4000,8192,1,1500,,LS,Running,100,200,110\n",
            "alibaba-gpu-2023",
            "^t.csv:2:15: gpu_milli: expected 0-1000 \\(a share of one GPU\\), got 1500$",
            id="alibaba-gpu-milli",
        ),
        pytest.param(
            f"{ALI_HEADER}\np,4000,8192,1,1000,,Gold,Running,100,200,110\n",
            "alibaba-gpu-2023",
            '^t.csv:2:21: qos: expected one of LS, BE, Burstable, Guaranteed, got "Gold"$',
            id="alibaba-qos",
        ),
        pytest.param(
            f"{ALI_HEADER}\n{ALI_ROW}\n{ALI_ROW.replace(',100,', ',50,')}\n",
            "alibaba-gpu-2023",
            "^t.csv:3:32: creation_time: rows must come in arrival order: -50s is before the previous 0s$",
            id="alibaba-backwards",
        ),
    ],
)
def test_bad_rows(text: str, fmt: TraceFormat, message: str) -> None:
    with pytest.raises(TraceError, match=message):
        pods(text, fmt)


def test_rows_stream() -> None:
    """A bad row further down does not stop the rows before it from being read first."""
    rows = read_pods(iter(["arrival,duration,cpu,memory\n", "0,1,1,1Gi\n", "1,x,1,1Gi\n"]), "t.csv", "csv")
    assert next(rows).line == 2
    with pytest.raises(TraceError, match=r"^t\.csv:3:3: duration: "):
        next(rows)


def test_pod_object() -> None:
    [entry] = pods(f"{ALI_HEADER}\np-1,4000,8192,1,470,T4,Guaranteed,Running,0,100,10\n", "alibaba-gpu-2023")
    pod = trace_pod(entry, name="ignored", namespace="trace", time_scale=0.5)
    assert pod.metadata.name == "p-1"
    assert pod.metadata.namespace == "trace"
    assert pod.metadata.annotations == {GPU_MILLI_ANNOTATION: "470", RUN_DURATION_ANNOTATION: "45s"}
    [container] = pod.spec.containers
    assert container.resources.requests == {
        "cpu": parse_quantity("4"),
        "memory": parse_quantity("8Gi"),
        GPU_RESOURCE: parse_quantity("1"),
    }
    assert container.resources.limits == container.resources.requests
    assert pod.spec.affinity is not None
    assert pod.spec.affinity.node_affinity is not None
    required = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    assert required is not None
    [term] = required.node_selector_terms
    assert [(r.key, r.operator, r.values) for r in term.match_expressions] == [(GPU_MODEL_LABEL, "In", ["T4"])]


def test_burstable_pod_limits_only_gpus() -> None:
    [entry] = pods("arrival,duration,cpu,memory,gpu\n0,1,1,1Gi,2\n")
    pod = trace_pod(entry, name="trace-0", namespace="default")
    assert pod.metadata.name == "trace-0"
    assert pod.spec.containers[0].resources.limits == {GPU_RESOURCE: parse_quantity("2")}
    assert pod.spec.affinity is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "sn,cpu_milli,memory_mib,gpu\n", "^n.csv:1:1: missing required column\\(s\\): model$", id="missing"
        ),
        pytest.param(
            "sn,cpu_milli,memory_mib,gpu,model\nn-1,96000,lots,8,G2\n",
            '^n.csv:2:11: memory_mib: expected an integer >= 0, got "lots"$',
            id="bad-memory",
        ),
        pytest.param(
            "sn,cpu_milli,memory_mib,gpu,model\n,96000,1,8,G2\n",
            "^n.csv:2:1: sn: required, got an empty field$",
            id="no-name",
        ),
    ],
)
def test_bad_nodes(text: str, message: str) -> None:
    with pytest.raises(TraceError, match=message):
        list(read_nodes(text.splitlines(), "n.csv"))


def test_node_object() -> None:
    [entry] = read_nodes(["sn,cpu_milli,memory_mib,gpu,model", "openb-node-1,96000,393216,8,G2"], "n.csv")
    node = trace_node(entry)
    assert node.metadata.name == "openb-node-1"
    assert node.metadata.labels == {"kubernetes.io/hostname": "openb-node-1", GPU_MODEL_LABEL: "G2"}
    assert node.status.allocatable == {
        "cpu": parse_quantity("96"),
        "memory": parse_quantity("384Gi"),
        GPU_RESOURCE: parse_quantity("8"),
        "pods": parse_quantity("110"),
    }
