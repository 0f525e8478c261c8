"""``gpuSharing: dra`` of the ``alibaba-gpu-2023`` format (``emulator/app/scenario/trace_gpus.py``):
each kind of row as the pod, claim template and node it becomes; bad input; and
``scenarios/trace-gpu-sharing.yaml`` end to end in both modes: shares pack several pods onto one
GPU with DRA, where whole devices of the device plugin hold one pod each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from emulator.app.scenario.drivers import dra_settings
from emulator.app.scenario.loader import load_scenario, load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.app.scenario.schema import NodeFile, Replay, Scenario
from emulator.app.scenario.trace_gpus import (
    GPU_DEVICE_CLASS,
    GPU_DRIVER,
    SHARE_CAPACITY,
    dra_trace_node,
    dra_trace_pod,
    feature_gates,
)
from emulator.app.scenario.workload_traces import GPU_MILLI_ANNOTATION, GPU_RESOURCE, TraceNode, read_pods, trace_pod
from emulator.base.apiserver.server import WriteRecord
from emulator.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "scenarios" / "trace-gpu-sharing.yaml"
HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"


def _row(num_gpu: int, gpu_milli: int, spec: str) -> Any:
    text = f"{HEADER}\np,1000,1024,{num_gpu},{gpu_milli},{spec},LS,Running,0,,\n"
    (entry,) = read_pods(text.splitlines(), "t.csv", "alibaba-gpu-2023")
    return entry


@pytest.mark.parametrize(
    ("num_gpu", "gpu_milli", "spec", "template", "count", "share", "selector"),
    [
        pytest.param(2, 1000, "", "gpu-2", 2, None, None, id="whole-gpus"),
        pytest.param(1, 1000, "", "gpu-1", 1, None, None, id="one-whole-gpu"),
        pytest.param(1, 250, "", "gpu-share-250m", 1, 250, None, id="share"),
        pytest.param(
            1,
            500,
            "V100M16|V100M32",
            "gpu-share-500m-v100m16-v100m32",
            1,
            500,
            'device.attributes["gpu.nvidia.com"].productName in ["V100M16", "V100M32"]',
            id="share-with-spec",
        ),
        pytest.param(
            8,
            1000,
            "A10",
            "gpu-8-a10",
            8,
            None,
            'device.attributes["gpu.nvidia.com"].productName in ["A10"]',
            id="spec",
        ),
        pytest.param(0, 0, "", None, 0, None, None, id="no-gpu"),
    ],
)
def test_rows_become_pods_with_claims(
    num_gpu: int,
    gpu_milli: int,
    spec: str,
    template: str | None,
    count: int,
    share: int | None,
    selector: str | None,
) -> None:
    entry = _row(num_gpu, gpu_milli, spec)
    pod, tmpl = dra_trace_pod(entry, name="p", namespace="openb")
    (container,) = pod.spec.containers
    assert GPU_RESOURCE not in container.resources.requests
    assert GPU_RESOURCE not in container.resources.limits
    assert GPU_MILLI_ANNOTATION not in pod.metadata.annotations
    assert pod.spec.affinity is None  # gpu_spec is the claim's selector
    if template is None:
        assert tmpl is None
        assert pod == trace_pod(entry, name="p", namespace="openb")  # the default mode's pod
        return
    assert tmpl is not None
    assert (tmpl.metadata.namespace, tmpl.metadata.name) == ("openb", template)
    assert [(c.name, c.resource_claim_template_name) for c in pod.spec.resource_claims] == [("gpu", template)]
    assert [c.name for c in container.resources.claims] == ["gpu"]
    (request,) = tmpl.spec.spec.devices.requests
    exactly = request.exactly
    assert (request.name, exactly.device_class_name, exactly.count) == ("gpu", GPU_DEVICE_CLASS, count)
    if share is None:
        assert exactly.capacity is None  # the whole device: the share policy's default, 1
    else:
        assert exactly.capacity.requests[SHARE_CAPACITY].milli == share
    assert [s.cel.expression for s in exactly.selectors] == ([selector] if selector else [])


def test_nodes_publish_their_gpus_through_the_driver() -> None:
    node = dra_trace_node(TraceNode(line=2, name="n", cpu_milli=8000, memory=2**34, gpu=4, model="T4"))
    assert GPU_RESOURCE not in node.status.capacity
    assert node.metadata.labels["nvidia.com/gpu.product"] == "T4"
    scenario = load_scenario(EXAMPLE)
    (settings,) = dra_settings(scenario)
    assert settings.name == GPU_DRIVER
    assert sorted(settings.nodes) == ["gpu-a10", "gpu-t4"]  # not the CPU node
    t4 = settings.nodes["gpu-t4"]
    assert (t4.count, t4.allow_multiple_allocations) == (1, True)
    assert {k: v.string_value for k, v in t4.attributes.items()} == {"type": "gpu", "productName": "T4"}
    share = t4.capacity[SHARE_CAPACITY]
    assert (share.value.milli, share.request_policy.default.milli) == (1000, 1000)
    assert feature_gates(scenario) == {"DRAConsumableCapacity": True}


def _with_mode(scenario: Scenario, mode: str) -> Scenario:
    """The example read again with ``gpuSharing: <mode>`` on its node list and replay."""
    text = EXAMPLE.read_text().replace("gpuSharing: dra", f"gpuSharing: {mode}")
    return load_scenario_text(text, source=str(EXAMPLE), base_dir=EXAMPLE.parent)


def _run(scenario: Scenario) -> tuple[Any, dict[str, Any]]:
    claims: dict[str, Any] = {}

    def keep(w: WriteRecord) -> None:
        if w.kind == "ResourceClaim" and w.new is not None:
            claims[w.new.metadata.name] = w.new

    return run_scenario(scenario, RunOptions(on_write=keep)), claims


def test_shares_pack_pods_onto_one_gpu_where_whole_devices_cannot() -> None:
    dra = load_scenario(EXAMPLE)
    result, claims = _run(dra)
    assert result.passed, [e for e in result.expectations if not e.passed]
    on_device: dict[str, list[int]] = {}
    for claim in claims.values():
        if claim.status.allocation is not None:
            (r,) = claim.status.allocation.devices.results
            share = r.consumed_capacity.get(SHARE_CAPACITY)
            on_device.setdefault(f"{r.pool}/{r.device}", []).append(share.milli if share is not None else 0)
    assert sorted(on_device["gpu-t4/gpu-0"]) == [250, 250, 500]  # three pods on the one T4
    assert on_device["gpu-a10/gpu-0"] == [1000]  # the whole-GPU pod has it to itself
    plugin = _with_mode(dra, "device-plugin")
    assert feature_gates(plugin) == {}
    result, claims = _run(plugin)
    assert claims == {}
    found = {e.name.split(":")[0]: e.detail for e in result.expectations}
    # one pod per GPU (the whole A10, the half T4) and the CPU pod; the three quarters wait
    assert (found["podsRunning"], found["podsPending"]) == ("3 of 6 pods", "3 of 6 pods")


def test_the_run_warns_that_an_alpha_gate_is_on(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(EXAMPLE)]) == 0
    err = capsys.readouterr().err
    assert "nodes[0].gpuSharing: dra turns on the feature gate DRAConsumableCapacity (alpha" in err


NODES = "sn,cpu_milli,memory_mib,gpu,model\nn-a,4000,8192,2,T4\n"
PODS = f"{HEADER}\np,1000,1024,1,500,,LS,Running,0,,\n"


@pytest.mark.parametrize(
    ("nodes", "step", "message"),
    [
        pytest.param(
            "{fromFile: nodes.csv, format: alibaba-gpu-2023, gpuSharing: mps}",
            "{file: pods.csv, format: alibaba-gpu-2023}",
            's.yaml:3:53: nodes[0].gpuSharing: expected "device-plugin" or "dra", got "mps"',
            id="unknown-mode-nodes",
        ),
        pytest.param(
            "{fromFile: nodes.csv, format: alibaba-gpu-2023}",
            "{file: pods.csv, format: alibaba-gpu-2023, gpuSharing: time-slicing}",
            's.yaml:5:56: steps[0].replay.gpuSharing: expected "device-plugin" or "dra", got "time-slicing"',
            id="unknown-mode-replay",
        ),
        pytest.param(
            "{fromFile: nodes.csv, format: alibaba-gpu-2023, gpuSharing: dra}",
            "{file: pods.csv, format: alibaba-gpu-2023}",
            "s.yaml:5:5: steps[0].replay.gpuSharing: expected dra, as nodes[0] (a trace's nodes and pods request "
            "GPUs the same way), got device-plugin",
            id="modes-disagree",
        ),
        pytest.param(
            "{fromFile: nodes.csv, format: alibaba-gpu-2023}",
            "{file: pods.csv, format: csv, gpuSharing: dra}",
            "s.yaml:5:43: steps[0].replay.gpuSharing: only format alibaba-gpu-2023 has it, got format csv",
            id="csv-has-no-shares",
        ),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], nodes: str, step: str, message: str
) -> None:
    (tmp_path / "nodes.csv").write_text(NODES)
    (tmp_path / "pods.csv").write_text(PODS)
    (tmp_path / "s.yaml").write_text(f"name: r\nnodes:\n  - {nodes}\nsteps:\n  - replay: {step}\n")
    assert main(["validate", str(tmp_path / "s.yaml")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path}/{message}\n"


def test_replay_objects_are_one_class_and_a_template_per_request() -> None:
    scenario = load_scenario(EXAMPLE)
    (nodes,) = scenario.nodes
    assert isinstance(nodes, NodeFile)
    assert nodes.gpus == {"gpu-a10": (1, "A10"), "gpu-t4": (1, "T4")}
    replay = next(s for s in scenario.steps if isinstance(s, Replay))
    kinds = [(o.kind, o.metadata.name) for o in replay.objects]
    assert kinds == [
        ("DeviceClass", GPU_DEVICE_CLASS),
        ("ResourceClaimTemplate", "gpu-1-a10"),
        ("ResourceClaimTemplate", "gpu-share-500m-t4"),
        ("ResourceClaimTemplate", "gpu-share-250m"),
    ]


def test_a_second_replay_reuses_the_class_and_templates(tmp_path: Path) -> None:
    (tmp_path / "nodes.csv").write_text(NODES)
    (tmp_path / "a.csv").write_text(PODS.replace("\np,", "\na,"))
    (tmp_path / "b.csv").write_text(PODS.replace("\np,", "\nb,"))
    text = (
        "name: r\nnodes:\n  - {fromFile: nodes.csv, format: alibaba-gpu-2023, gpuSharing: dra}\nsteps:\n"
        "  - replay: {file: a.csv, format: alibaba-gpu-2023, gpuSharing: dra}\n"
        "  - replay: {file: b.csv, format: alibaba-gpu-2023, gpuSharing: dra}\n"
        "  - sleep: 1m\nexpect:\n  - podsRunning: {count: 2}\n"
        "  - objectCount: {kind: ResourceClaimTemplate, count: 1, namespace: default}\n"
    )
    result, claims = _run(load_scenario_text(text, source=str(tmp_path / "s.yaml"), base_dir=tmp_path))
    assert result.passed, [e for e in result.expectations if not e.passed]
    # two half-GPU claims on the node's first T4
    assert sorted(c.status.allocation.devices.results[0].device for c in claims.values()) == ["gpu-0", "gpu-0"]


def test_gpu_allocation_counts_dra_devices_and_shares() -> None:
    """The observer's ``gpuAllocation`` counts DRA devices (``observe_devices``): in the example
    both GPUs end fully held either way, but with DRA the T4 fills a quarter at a time."""
    dra, _ = _run(load_scenario(EXAMPLE))
    plugin, _ = _run(_with_mode(load_scenario(EXAMPLE), "device-plugin"))
    held = [r.extra["metrics"]["gpuAllocation"] for r in (dra, plugin)]
    assert all(h is not None for h in held)
    assert 0.5 < held[0]["mean"] < held[1]["mean"] <= 1.0


def test_device_use_holds_shares_in_milli_devices() -> None:
    from emulator.app.scenario.observe_devices import DeviceUse
    from emulator.base.api.codec import load_manifests

    slice_, claim = load_manifests(
        """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.nvidia.com
  nodeName: n
  pool: {name: n, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0, capacity: {share: {value: '1'}}}, {name: gpu-1}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: default}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}
status:
  allocation:
    devices:
      results:
        - {request: gpu, driver: gpu.nvidia.com, pool: n, device: gpu-0, consumedCapacity: {share: 250m}}
        - {request: gpu, driver: gpu.nvidia.com, pool: n, device: gpu-1}
        - {request: gpu, driver: gpu.nvidia.com, pool: n, device: gpu-1, adminAccess: true}
""",
        source="m.yaml",
    )
    use = DeviceUse()
    assert use.slice(None, slice_) == "n"
    assert use.node_devices("n") == 2000
    use.claim(None, claim)
    assert use.claims == {"default/c": 1250}  # a quarter of gpu-0, all of gpu-1, admin access nothing
    use.claim(claim, None)
    assert use.claims == {}
    assert use.slice(slice_, None) == "n"
    assert use.node_devices("n") == 0


def test_a_long_model_list_makes_a_short_template_name() -> None:
    pod, tmpl = dra_trace_pod(_row(1, 500, "|".join(f"MODEL{i:03d}" for i in range(40))), name="p", namespace="n")
    assert tmpl is not None
    name = tmpl.metadata.name
    assert len(name) <= 253
    assert name.startswith("gpu-share-500m-model000-model001-")
    assert pod.spec.resource_claims[0].resource_claim_template_name == name
