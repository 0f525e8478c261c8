"""The scenario → scheduler seam: typed settings, and one place that starts schedulers.

Regression: instances added by a ``scheduler`` fault were built by the runner itself, without
the explain hook, so ``run --explain`` missed their attempts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents.scheduler.setup import SchedulerSettings
from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.app.scenario.schedulers import scheduler_settings

ROOT = Path(__file__).resolve().parents[2]

SCENARIO = """
name: seam
seed: 1
kubelet: {heartbeatInterval: 0}
nodes:
  - {count: 2, namePrefix: node, template: {status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}}}
faults:
  - scheduler:
      instances: 1
      at: 1s
      config:
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
          - schedulerName: other-scheduler
steps:
  - createPods:
      count: 3
      namePrefix: p
      template:
        spec:
          schedulerName: other-scheduler
          containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]
  - waitFor: {condition: podsRunning, timeout: 1m}
expect:
  - podsRunning: {count: 3}
"""


def test_explain_hears_the_instances_a_scheduler_fault_adds() -> None:
    """Only the added instance serves ``other-scheduler``: its attempts must reach explain."""
    tried: list[tuple[str, str | None]] = []

    def explain(_attempt: int, _start: float, pod: Any, exp: Any) -> None:
        tried.append((pod.metadata.name, exp.selected))

    scenario = load_scenario_text(SCENARIO, source="s.yaml", base_dir=ROOT)
    result = run_scenario(scenario, RunOptions(explain=explain))
    assert result.passed
    assert sorted(name for name, _ in tried) == ["p-0", "p-1", "p-2"]
    assert all(node is not None for _, node in tried)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "name: s\n",
            SchedulerSettings(source="f.yaml"),
            id="defaults",
        ),
        pytest.param(
            "name: s\nschedulerOptions: {instances: 2, assumeCache: false, cycleCost: {fixed: 1ms, perNode: 2us}}\n",
            SchedulerSettings(
                source="f.yaml", instances=2, assume_cache=False, cycle_cost_fixed=0.001, cycle_cost_per_node=2e-06
            ),
            id="options",
        ),
        pytest.param(
            "name: s\nscheduler: {apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration}\n",
            SchedulerSettings(
                source="f.yaml",
                config={"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                config_file="s.yaml",
                config_path="scheduler",
            ),
            id="inline-configuration",
        ),
    ],
)
def test_scheduler_settings_from_a_scenario(text: str, expected: SchedulerSettings) -> None:
    scenario = load_scenario_text(text, source="s.yaml", base_dir=ROOT)
    assert scheduler_settings(scenario, source="f.yaml") == expected
