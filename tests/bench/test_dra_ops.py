"""Upstream scheduler_perf's DRA ops as the bench plays them (``emulator/app/bench/dra.py``,
``upstream_ops.py``, ``steady.py``): ``createResourceDriver`` (upstream ``resourceSlice``: a
slice per node matching the glob), ``createResourceClaims``, ``allocResourceClaims`` (the
scheduler's allocator, claim by claim), the steady state, the DRA feature gates (skipped naming
the gate, or run with it on when the emulator has its behaviour), and one run of upstream's dra/
test cases at their integration-test sizes (``tests/bench/data/perfconfig/dra``: upstream's
templates, copied unchanged)."""

from __future__ import annotations

import argparse
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from emulator.app.bench.dra import (
    allocate_claims,
    create_driver,
    dra_features,
    resource_slice,
    server_settings,
    uses_dra,
)
from emulator.app.bench.dra import honoured as gate_honoured
from emulator.app.bench.gates import skip_reason
from emulator.app.bench.spec import WorkloadError
from emulator.app.bench.steps import AllocClaimsStep, AnyStep, DriverStep
from emulator.app.bench.workload_file import load_workloads
from emulator.app.commands.arguments import add_bench
from emulator.app.commands.bench import run
from emulator.base.api.codec import object_from_dict
from emulator.base.api.core import Namespace, Node
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.resourcedefaults import drop_disabled
from emulator.base.apiserver.server import ApiServer
from emulator.base.runtime.clock import StoppedClock

DRA = Path(__file__).resolve().parent / "data" / "perfconfig" / "dra"
DRIVER = "test-driver.cdi.k8s.io"


def _config(tmp_path: Path, ops: list[dict[str, Any]], params: dict[str, Any] | None = None) -> Path:
    """An upstream config of one test case: ``ops`` then a measured createPods; upstream's
    templates beside it."""
    shutil.copytree(DRA / "templates", tmp_path / "templates", dirs_exist_ok=True)
    case = {
        "name": "Case",
        "workloadTemplate": [*ops, {"opcode": "createPods", "count": 1, "collectMetrics": True}],
        "workloads": [{"name": "one", "params": params or {}}],
    }
    path = tmp_path / "performance-config.yaml"
    path.write_text(yaml.safe_dump([case]))
    return path


@pytest.mark.parametrize(
    ("op", "params", "step"),
    [
        pytest.param(
            {"opcode": "createResourceDriver", "driverName": DRIVER, "nodes": "dra-*", "maxClaimsPerNode": 3},
            {},
            DriverStep(DRIVER, "dra-*", 3),
            id="driver",
        ),
        pytest.param(
            {"opcode": "createResourceDriver", "driverName": DRIVER, "nodes": "*", "maxClaimsPerNodeParam": "$max"},
            {"max": 10},
            DriverStep(DRIVER, "*", 10),  # a per-node capacity: never scaled (the file is read at scale 0.5)
            id="driver-param",
        ),
        pytest.param({"opcode": "allocResourceClaims", "namespace": "init"}, {}, AllocClaimsStep("init"), id="alloc"),
        pytest.param({"opcode": "allocResourceClaims"}, {}, AllocClaimsStep(""), id="alloc-every-namespace"),
    ],
)
def test_dra_ops_become_steps(tmp_path: Path, op: dict[str, Any], params: dict[str, Any], step: Any) -> None:
    (wl,) = load_workloads(_config(tmp_path, [op], params), scale=0.5)
    assert wl.steps[0] == step


def test_create_resource_claims_is_create_any_of_its_claim(tmp_path: Path) -> None:
    op = {
        "opcode": "createResourceClaims",
        "count": 2,
        "namespace": "ns",
        "templatePath": "templates/resourceclaim.yaml",
    }
    (wl,) = load_workloads(_config(tmp_path, [op]))
    step = wl.steps[0]
    assert isinstance(step, AnyStep)
    assert (step.count, step.namespace) == (2, "ns")
    assert "kind: ResourceClaim" in step.text


@pytest.mark.parametrize(
    ("op", "error"),
    [
        pytest.param(
            {"opcode": "createResourceDriver", "driverName": DRIVER, "nodes": "*"},
            "exactly one of maxClaimsPerNode and maxClaimsPerNodeParam is required",
            id="no-capacity",
        ),
        pytest.param(
            {"opcode": "createResourceDriver", "driver": DRIVER, "nodes": "*", "maxClaimsPerNode": 1},
            "[0].workloadTemplate[0].driver: unknown field",
            id="unknown-field",
        ),
        pytest.param(
            {"opcode": "createResourceClaims", "count": 1, "templatePath": "templates/resourceclaim.yaml"},
            "namespace: expected a namespace (upstream: Namespace must be set)",
            id="claims-without-namespace",
        ),
        pytest.param(
            {
                "opcode": "createResourceClaims",
                "count": 1,
                "namespace": "ns",
                "templatePath": "templates/deviceclass.yaml",
            },
            'template "templates/deviceclass.yaml" is a DeviceClass, expected a ResourceClaim',
            id="claims-of-another-kind",
        ),
    ],
)
def test_bad_dra_ops_are_refused(tmp_path: Path, op: dict[str, Any], error: str) -> None:
    with pytest.raises(WorkloadError) as got:
        load_workloads(_config(tmp_path, [op]))
    assert error in str(got.value)


def _server(nodes: tuple[str, ...] = (), gates: tuple[tuple[str, bool], ...] = ()) -> ApiServer:
    server = ApiServer(StoppedClock(), random.Random(1), server_settings(gates))
    for name in nodes:
        server.create(Node(metadata=ObjectMeta(name=name)))
    return server


@pytest.mark.parametrize(
    ("glob", "served"),
    [
        pytest.param("scheduler-perf-dra-*", ["scheduler-perf-dra-0", "scheduler-perf-dra-1"], id="prefix"),
        pytest.param("*", ["other-0", "scheduler-perf-dra-0", "scheduler-perf-dra-1"], id="every-node"),
        pytest.param("scheduler-perf-dra-?", ["scheduler-perf-dra-0", "scheduler-perf-dra-1"], id="one-character"),
        pytest.param("scheduler-perf-dra-[1]", ["scheduler-perf-dra-1"], id="class"),
        pytest.param("none-*", [], id="none"),
    ],
)
def test_create_resource_driver_publishes_a_slice_per_matching_node(glob: str, served: list[str]) -> None:
    server = _server(("other-0", "scheduler-perf-dra-0", "scheduler-perf-dra-1"))
    assert create_driver(server, DriverStep(DRIVER, glob, 2)) == served
    slices = server.list("ResourceSlice")[0]
    assert [(s.metadata.name, s.spec.node_name, s.spec.pool.name) for s in slices] == [(n, n, n) for n in served]
    for s in slices:
        assert (s.spec.driver, s.spec.pool.resource_slice_count) == (DRIVER, 1)
        assert [d.name for d in s.spec.devices] == ["instance-0", "instance-1"]


def test_the_driver_slice_has_upstreams_devices() -> None:
    """Upstream ``resourceSlice``: model, family, driverVersion, numa = index, 1Gi memory; its
    binding fields (DRADeviceBindingConditions, alpha) dropped by the API server with the gate off."""
    server = _server(("n",))
    create_driver(server, DriverStep(DRIVER, "n", 3))
    (stored,) = server.list("ResourceSlice")[0]
    device = stored.spec.devices[2]
    attrs = {k: (v.string_value or v.version_value or v.int_value) for k, v in device.attributes.items()}
    assert attrs == {"model": "A100", "family": "GPU", "driverVersion": "1.2.3", "dra.example.com/numa": 2}
    assert str(device.capacity["memory"].value) == "1Gi"
    assert (device.binding_conditions, device.binds_to_node) == ([], None)
    made = resource_slice(DRIVER, "n", 1).spec.devices[0]
    assert (made.binding_conditions, made.binding_failure_conditions) == (["DeviceAttached"], ["AttachmentFailed"])


def _claims(server: ApiServer, namespace: str, n: int) -> None:
    if not server.list("Namespace", fields={"metadata.name": namespace})[0]:
        server.create(Namespace(metadata=ObjectMeta(name=namespace)))
    for i in range(n):
        doc = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": f"claim-{i}", "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "test-class"}}]}},
        }
        server.create(object_from_dict(doc, source="test"))


@pytest.mark.parametrize(
    ("nodes", "per_node", "claims", "namespace", "error", "allocated"),
    [
        pytest.param(2, 2, {"init": 4}, "init", "", 4, id="fills-the-cluster"),
        pytest.param(1, 2, {"init": 3}, "init", "Could not allocate claim 2 out of 3", 2, id="one-too-many"),
        pytest.param(1, 4, {"init": 2, "other": 2}, "init", "", 2, id="its-namespace-only"),
        pytest.param(1, 4, {"init": 2, "other": 2}, "", "", 4, id="every-namespace"),
    ],
)
def test_alloc_resource_claims_allocates_each_claim_on_some_node(
    nodes: int, per_node: int, claims: dict[str, int], namespace: str, error: str, allocated: int
) -> None:
    server = _server(tuple(f"dra-{i}" for i in range(nodes)))
    create_driver(server, DriverStep(DRIVER, "dra-*", per_node))
    server.create(object_from_dict(yaml.safe_load((DRA / "templates" / "deviceclass.yaml").read_text()), source="t"))
    for ns, n in claims.items():
        _claims(server, ns, n)
    assert allocate_claims(server, AllocClaimsStep(namespace), None, random.Random(1)) == error
    done = [c for c in server.list("ResourceClaim")[0] if c.status.allocation is not None]
    assert len(done) == allocated
    devices = [(r.pool, r.device) for c in done for r in c.status.allocation.devices.results]
    assert len(set(devices)) == len(devices)  # never a device twice
    again = allocate_claims(server, AllocClaimsStep(namespace), None, random.Random(2))
    assert again == error  # the allocated ones are skipped; the rest still does not fit


@pytest.mark.parametrize(
    ("gates", "reason"),
    [
        pytest.param({"DynamicResourceAllocation": True}, "", id="ga"),
        pytest.param({"DRAPrioritizedList": True, "DRAAdminAccess": True}, "", id="beta-on"),
        pytest.param({"DRAPartitionableDevices": True}, "", id="alpha-implemented"),
        pytest.param({"DRAConsumableCapacity": True}, "", id="alpha-implemented-too"),
        pytest.param({"DRADeviceTaints": True}, "feature gate DRADeviceTaints (off (Alpha); ", id="alpha"),
        pytest.param({"DRAExtendedResource": True}, "feature gate DRAExtendedResource (off (Alpha); ", id="alpha-2"),
        pytest.param({"DRADeviceTaints": False}, "", id="alpha-set-off"),
        pytest.param(
            {"DRAListTypeAttributes": True}, "feature gate DRAListTypeAttributes (not in 1.34 (from 1.36); ", id="later"
        ),
        pytest.param(
            {"DRAPartitionableDevices": True, "DRADeviceCompatibilityGroups": True},
            "feature gate DRADeviceCompatibilityGroups (not in 1.34 (from 1.37); ",
            id="implemented-and-later",
        ),
        pytest.param({"SchedulerAsyncAPICalls": True}, "", id="not-dra"),
    ],
)
def test_dra_gates_off_in_1_34_skip_unless_implemented(gates: dict[str, bool], reason: str) -> None:
    got = skip_reason(gates)
    assert got.startswith(reason) if reason else got == ""
    if reason:
        assert got.endswith("which the emulator does not have")


@pytest.mark.parametrize(
    ("gates", "features", "server"),
    [
        pytest.param((), None, None, id="none"),
        pytest.param((("SchedulerQueueingHints", False),), None, None, id="no-dra-gate"),
        pytest.param(
            (("DRAPartitionableDevices", True), ("DynamicResourceAllocation", True)),
            {"partitionable_devices": True, "consumable_capacity": False, "prioritized_list": True},
            (("DRAPartitionableDevices", True),),
            id="partitionable",
        ),
        pytest.param(
            (("DRAConsumableCapacity", True), ("DRAPrioritizedList", False)),
            {"partitionable_devices": False, "consumable_capacity": True, "prioritized_list": False},
            (("DRAConsumableCapacity", True), ("DRAPrioritizedList", False)),
            id="consumable",
        ),
    ],
)
def test_a_workloads_dra_gates_reach_the_allocator_and_the_api_server(
    gates: tuple[tuple[str, bool], ...], features: dict[str, bool] | None, server: Any
) -> None:
    got = dra_features(gates)
    if features is None:
        assert got is None
    else:
        assert got is not None
        assert {k: getattr(got, k) for k in features} == features
    settings = server_settings(gates)
    assert (settings.feature_gates if settings else None) == server


_SLICE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "s"},
    "spec": {
        "driver": DRIVER,
        "nodeName": "n",
        "pool": {"name": "p", "resourceSliceCount": 1},
        "devices": [
            {
                "name": "d",
                "consumesCounters": [{"counterSet": "cs", "counters": {"c": {"value": "1"}}}],
                "allowMultipleAllocations": True,
            }
        ],
    },
}


@pytest.mark.parametrize(
    ("gates", "counters", "multiple"),
    [
        pytest.param(None, 0, None, id="v1.34-defaults"),
        pytest.param({"DRAPartitionableDevices": True}, 1, None, id="partitionable-on"),
        pytest.param({"DRAConsumableCapacity": True}, 0, True, id="consumable-on"),
        pytest.param({"DRAPartitionableDevices": True, "DRAConsumableCapacity": True}, 1, True, id="both-on"),
    ],
)
def test_the_api_server_drops_only_the_fields_of_gates_that_are_off(
    gates: dict[str, bool] | None, counters: int, multiple: bool | None
) -> None:
    (device,) = drop_disabled(object_from_dict(_SLICE, source="t"), gates).spec.devices
    assert (len(device.consumes_counters), device.allow_multiple_allocations) == (counters, multiple)


def test_steady_state_needs_a_duration(tmp_path: Path) -> None:
    op = {"opcode": "createPods", "count": 1, "steadyState": True, "duration": "soon", "collectMetrics": True}
    path = tmp_path / "performance-config.yaml"
    path.write_text(yaml.safe_dump([{"name": "Case", "workloadTemplate": [op], "workloads": [{"name": "one"}]}]))
    with pytest.raises(WorkloadError) as got:
        load_workloads(path)
    assert "workloadTemplate[0].duration: expected a duration, got 'soon'" in str(got.value)


def test_steady_state_param_and_duration_param(tmp_path: Path) -> None:
    op = {
        "opcode": "createPods",
        "count": 3,
        "steadyStateParam": "$steady",
        "durationParam": "$duration",
        "collectMetrics": True,
    }
    case = {
        "name": "Case",
        "workloadTemplate": [op],
        "workloads": [
            {"name": "steady", "params": {"steady": True, "duration": "2s"}},
            {"name": "rapid", "params": {"steady": False, "duration": "0s"}},
        ],
    }
    path = tmp_path / "performance-config.yaml"
    path.write_text(yaml.safe_dump([case]))
    steady, rapid = load_workloads(path)
    assert [getattr(w.steps[0], "steady", "?") for w in (steady, rapid)] == [2.0, None]


def _bench(capsys: pytest.CaptureFixture[str], file: Path, *argv: str) -> tuple[int, Any]:
    parser = argparse.ArgumentParser(prog="python -m emulator")
    add_bench(parser.add_subparsers(dest="command"))
    code = run(parser.parse_args(["bench", "--file", str(file), *argv]))
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else err


def test_upstreams_dra_test_cases_run(capsys: pytest.CaptureFixture[str]) -> None:
    """End to end: claims from templates (the resourceclaim controller), shared claims, claims
    allocated before the pods (``allocResourceClaims``) with a steady state using the last two
    devices, and a gate off in v1.34 the emulator has (partitionable devices) run with it on."""
    code, out = _bench(
        capsys,
        DRA / "performance-config.yaml",
        "--label",
        "integration-test",
        "--stall-timeout",
        "20s",
        "--output",
        "json",
    )
    assert code == 0, out
    got = {o["workload"]: o for o in out}
    assert all(o["complete"] and o["stoppedBy"] is None for o in out), out
    assert got["SchedulingWithResourceClaimTemplate/fast"]["scheduledPods"] == 10
    assert got["SchedulingWithResourceClaim/fast"]["scheduledPods"] == 10
    assert got["SchedulingWithResourceClaim/fast"]["maxPodsPerNode"] == 10  # 2 shared claims, 1 node
    assert got["SteadyStateClusterResourceClaimTemplate/fast"]["scheduledPods"] > 2  # batches were replaced
    assert got["Partitionable/fast"]["scheduledPods"] == 2
    assert got["Partitionable/fast"]["featureGatesHonoured"] == {
        "DRAPartitionableDevices": True,
        "DynamicResourceAllocation": True,
    }
    assert "featureGatesNotHonoured" not in got["Partitionable/fast"]


def test_an_invalid_create_any_object_fails_its_workload_not_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Upstream's createAny sends the object to the API server: its refusal fails that workload."""
    bad = {**_SLICE, "spec": {k: v for k, v in _SLICE["spec"].items() if k != "nodeName"}}  # no node selection
    path = _config(tmp_path, [{"opcode": "createAny", "templatePath": "templates/bad-slice.yaml"}])
    (tmp_path / "templates" / "bad-slice.yaml").write_text(yaml.safe_dump(bad))
    parser = argparse.ArgumentParser(prog="python -m emulator")
    add_bench(parser.add_subparsers(dest="command"))
    code = run(parser.parse_args(["bench", "--file", str(path), "--workload", "Case/one", "--output", "json"]))
    (result,) = json.loads(capsys.readouterr().out)
    assert code == 1
    assert (result["workload"], result["complete"], result["stoppedBy"]) == ("Case/one", False, "error")
    assert result["error"].startswith("createAny[0]: spec: Required value: exactly one of `nodeName`")


def test_with_kubelets_every_driver_prepares_claims(capsys: pytest.CaptureFixture[str]) -> None:
    """``--kubelets on``: pods with claims start whether their slices came from
    ``createResourceDriver`` or ``createAny`` (``BenchPlugins``: every driver on every node)."""
    code, out = _bench(
        capsys,
        DRA / "performance-config.yaml",
        "--workload",
        "SchedulingWithResourceClaimTemplate/fast",
        "--workload",
        "Partitionable/fast",
        "--kubelets",
        "on",
        "--stall-timeout",
        "20s",
        "--output",
        "json",
    )
    assert code == 0, out
    assert [(o["workload"], o["complete"], o["scheduledPods"]) for o in out] == [
        ("SchedulingWithResourceClaimTemplate/fast", True, 10),
        ("Partitionable/fast", True, 2),
    ]


@pytest.mark.parametrize(
    ("gate", "on", "honoured"),
    [
        pytest.param("DynamicResourceAllocation", True, True, id="dra-on"),
        pytest.param("DynamicResourceAllocation", False, False, id="dra-off"),
        pytest.param("DRAPartitionableDevices", True, True, id="allocator-gate"),
        pytest.param("DRAPrioritizedList", False, True, id="allocator-gate-off"),
        pytest.param("SchedulerQueueingHints", False, False, id="not-dra"),
    ],
)
def test_which_gates_the_bench_honours(gate: str, on: bool, honoured: bool) -> None:
    assert gate_honoured(gate, on) is honoured


@pytest.mark.parametrize(
    ("case", "dra"),
    [
        pytest.param("SchedulingWithResourceClaimTemplate", True, id="driver-op"),
        pytest.param("Partitionable", True, id="resource-objects"),
    ],
)
def test_a_workload_with_dra_runs_the_claim_controller(case: str, dra: bool) -> None:
    (wl,) = [w for w in load_workloads(DRA / "performance-config.yaml") if w.name.startswith(case + "/")]
    assert uses_dra(wl) is dra


def test_a_workload_without_dra_runs_no_claim_controller(tmp_path: Path) -> None:
    (wl,) = load_workloads(_config(tmp_path, [{"opcode": "createNodes", "count": 1}]))
    assert uses_dra(wl) is False
