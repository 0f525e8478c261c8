"""Every scenario in scenarios/ runs to completion with its expectations met. That runs are
deterministic (same seed, same trace hash, in any process) is ``tests/test_determinism.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import run_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(p for p in (ROOT / "scenarios").rglob("*.yaml") if "races" not in p.parts)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario_meets_its_expectations(path: Path) -> None:
    result = run_scenario(load_scenario(path))
    failed = [f"{e.name}: {e.detail}" for e in result.expectations if not e.passed]
    assert not failed, failed
    assert not result.waits_timed_out
    assert result.passed
    assert result.expectations, "a scenario without expectations proves nothing"
