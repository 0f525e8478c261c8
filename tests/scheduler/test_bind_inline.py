"""The binding cycle run inline by the scheduling loop (``Scheduler.bind_next``) writes
exactly what a task per binding cycle wrote, in the same order: scenarios with many bindings in
one instant next to other ready work (kubelets starting, pods created together) and with
Permit waits (coscheduling: the rest of the cycle runs in a task), each run both ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.scheduler.schedule_one import SchedulingCycle
from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import run_scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["quickstart.yaml", "coscheduling.yaml", "preemption.yaml", "kubelet-basics.yaml"])
def test_inline_binding_writes_what_a_binding_task_wrote(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = ROOT / "scenarios" / name
    inline = run_scenario(load_scenario(scenario)).trace_hash
    monkeypatch.setattr(SchedulingCycle, "inline_binding", False)
    assert run_scenario(load_scenario(scenario)).trace_hash == inline
