"""Scenarios with the workload kinds: accepted in ``objects`` and ``create`` steps, stored by
the API server (the only pods are their controllers'), deleted by name, refused at load with the
field's path when upstream's validation would refuse them."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import msgspec
import pytest

from emulator.app.scenario.loader import ScenarioError, load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from tests.api.test_workload_kinds import KUBECTL_CREATE_DEPLOYMENT, MANIFESTS

NODE = "nodes: [{count: 1, namePrefix: n, template: {status: {capacity: {cpu: '4', memory: 8Gi, pods: '10'}}}}]\n"


def _flow(kind: str) -> str:
    doc = {k: v for k, v in MANIFESTS[kind].items() if k != "status"}
    return msgspec.json.encode(doc).decode()


def _run(text: str) -> list[dict[str, object]]:
    scenario = load_scenario_text(text, source="s.yaml", base_dir=Path("."))
    trace = io.BytesIO()
    run_scenario(scenario, RunOptions(source="s.yaml", trace=trace))
    return [json.loads(line) for line in trace.getvalue().splitlines()]


def test_one_object_of_each_kind_is_created_and_stored() -> None:
    kinds = list(MANIFESTS)
    objects = "".join(f"  - {_flow(k)}\n" for k in kinds[:4])
    created = "".join(f"      - {_flow(k)}\n" for k in kinds[4:])
    lines = _run(f"name: kinds\nsettle: 1s\n{NODE}objects:\n{objects}steps:\n  - create:\n{created}")
    creates = {(x["kind"], x["name"]) for x in lines if x["verb"] == "create"}
    for kind in kinds:
        assert (kind, MANIFESTS[kind]["metadata"]["name"]) in creates
    owners = tuple(f"{MANIFESTS[k]['metadata']['name']}-" for k in kinds)
    assert all(str(x["name"]).startswith(owners) for x in lines if x["kind"] == "Pod"), "only controllers make pods"


def test_kubectl_create_deployment_output_runs_unchanged() -> None:
    body = textwrap.indent(KUBECTL_CREATE_DEPLOYMENT, "    ").replace("    apiVersion", "  - apiVersion", 1)
    lines = _run(f"name: k\nsettle: 1s\n{NODE}objects:\n{body}")
    assert ("Deployment", "web") in {(x["kind"], x["name"]) for x in lines if x["verb"] == "create"}


def test_a_workload_is_deleted_by_name() -> None:
    steps = "steps:\n  - delete: {kind: CronJob, name: tick}\n"
    text = f"name: d\nsettle: 1s\n{NODE}objects:\n  - {_flow('CronJob')}\n{steps}"
    lines = _run(text)
    assert [x["verb"] for x in lines if x["kind"] == "CronJob"] == ["create", "delete"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "steps:\n  - delete: {kind: Deployment, name: web}\n",
            'scenario.yaml: steps[0].delete.name: Deployment "default/web" does not exist at this point',
            id="delete-a-deployment-never-created",
        ),
        pytest.param(
            "objects:\n  - {apiVersion: apps/v1, kind: Deployment, metadata: {name: w}, spec: {replicas: -1, "
            "selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: "
            "[{name: c, image: i}]}}}}\n",
            "scenario.yaml: objects[0].spec.replicas: Invalid value: -1: must be greater than or equal to 0",
            id="negative-replicas",
        ),
        pytest.param(
            "objects:\n  - {apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: p}, spec: "
            "{minAvailable: 1, maxUnavailable: 1}}\n",
            'scenario.yaml: objects[0].spec: Invalid value: {"minAvailable":1,"maxUnavailable":1}: '
            "minAvailable and maxUnavailable cannot be both set",
            id="pdb-both-set",
        ),
        pytest.param(
            "steps:\n  - create:\n      - {apiVersion: batch/v1, kind: CronJob, metadata: {name: c}, spec: "
            "{schedule: '* * *', jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: "
            "[{name: c, image: i}]}}}}}}\n",
            'scenario.yaml: steps[0].create[0].spec.schedule: Invalid value: "* * *": '
            "expected exactly 5 fields, found 3: [* * *]",
            id="malformed-schedule",
        ),
        pytest.param(
            f"objects:\n  - {_flow('Service')}\n  - {_flow('Service')}\n",
            'scenario.yaml: objects[1].metadata.name: Service "default/web" already exists (created by objects[0])',
            id="duplicate",
        ),
    ],
)
def test_refused_at_load(text: str, message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(f"name: x\n{text}", source="scenario.yaml", base_dir=Path("."))
    assert _unlocated(str(err.value)) == message


def _unlocated(message: str) -> str:
    """The message without the ``:line:column`` after the file name."""
    file, _, rest = message.partition(": ")
    return f"{file.split(':')[0]}: {rest}"
