"""``explain`` accepts the workload kinds in its inputs (a dumped namespace carries them):
decoded and validated, then left out of the scheduling cycle (nothing reads them yet)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from emulator.app.commands.explain import ExplainError
from tests.api.test_workload_kinds import MANIFESTS
from tests.cli.test_explain_cli import NODES, explain, pod_yaml, write


def test_workload_objects_in_the_inputs_are_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workloads = "".join("---\n" + msgspec.json.encode(doc).decode() + "\n" for doc in MANIFESTS.values())
    f = write(tmp_path, "c.yaml", NODES, workloads, pod_yaml("web", cpu="3"))
    assert explain(f, "--output", "json") == 0
    assert json.loads(capsys.readouterr().out)["pod"] == "default/web"


def test_an_invalid_workload_in_the_inputs_is_refused_with_its_path(tmp_path: Path) -> None:
    bad = {**MANIFESTS["Deployment"], "spec": {**MANIFESTS["Deployment"]["spec"], "replicas": -1}}
    f = write(tmp_path, "c.yaml", NODES, "---\n" + msgspec.json.encode(bad).decode() + "\n", pod_yaml("web"))
    with pytest.raises(ExplainError) as err:
        explain(f)
    assert (err.value.path, err.value.detail) == (
        "documents[3].spec.replicas",
        "Invalid value: -1: must be greater than or equal to 0",
    )
