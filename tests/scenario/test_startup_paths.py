"""A refused write of the autoscalers' start-up (before the first step) names the scenario path it
came from: Karpenter's NodePools ``autoscaling.karpenter.nodePools[i]``, a node group's
``minSize`` nodes ``autoscaling.clusterAutoscaler.nodeGroups[i]`` (it once said
``autoscaling.clusterAutoscaler`` for both). The refusal is a fault injected into the runner's
creates, so the shipped scenarios serve as they are."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from emulator.app.scenario.loader import load_scenario_patched, load_scenario_text
from emulator.app.scenario.runner import RunOptions, StepError, run_scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("scenario", "patch", "message"),
    [
        pytest.param(
            "karpenter-burst.yaml",
            "faults: [{apiError: {verb: create, agent: runner, kind: NodePool}}]\n",
            "autoscaling.karpenter.nodePools[0]: InternalError: Internal error occurred: injected by faults[0]",
            id="karpenter-nodepool",
        ),
        pytest.param(
            "cluster-autoscaler-burst.yaml",
            "faults: [{apiError: {verb: create, agent: runner, kind: Node, error: NotFound}}]\n",
            "autoscaling.clusterAutoscaler.nodeGroups[0]: NotFound: nodes not found: injected by faults[0]",
            id="cluster-autoscaler-min-size-node",
        ),
    ],
)
def test_a_refused_startup_write_names_its_path(tmp_path: Path, scenario: str, patch: str, message: str) -> None:
    path = str(ROOT / "scenarios" / scenario)
    patch_file = tmp_path / "patch.yaml"
    patch_file.write_text(patch)
    with pytest.raises(StepError) as info:
        run_scenario(load_scenario_patched(path, str(patch_file)), RunOptions(source=path))
    assert str(info.value) == f"{path}: {message}"


def test_the_second_nodepool_is_named_by_its_index() -> None:
    """``objects`` already made a NodePool ``on-demand``: creating ``nodePools[1]`` is refused."""
    path = ROOT / "scenarios" / "karpenter-burst.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["objects"].append(doc["autoscaling"]["karpenter"]["nodePools"][1])
    scenario = load_scenario_text(yaml.safe_dump(doc), str(path), path.parent)
    with pytest.raises(StepError) as info:
        run_scenario(scenario, RunOptions(source=str(path)))
    assert str(info.value) == (
        f'{path}: autoscaling.karpenter.nodePools[1]: AlreadyExists: nodepools.karpenter.sh "on-demand" already exists'
    )
