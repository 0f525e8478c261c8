"""Standing Lease renewals change nothing but the renewals: every shipped scenario run with
the kubelets' renewals held by the API server (the default where nothing can tell:
``Cluster.standing_renewals_apply``) and with every renewal written (``RunOptions(
standing_renewals=False)``, the reference) makes the same writes other than the Lease
renewals, in the same order, at the same times, once the revisions are renumbered."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenarios").rglob("*.yaml"))


def _writes(path: Path, *, standing: bool) -> tuple[list[dict[str, Any]], int]:
    """The run's trace lines but the Lease updates, revisions dropped; and how many Lease
    updates there were."""
    out = io.BytesIO()
    run_scenario(load_scenario(path), RunOptions(trace=out, standing_renewals=standing))
    kept: list[dict[str, Any]] = []
    renewals = 0
    for line in out.getvalue().splitlines():
        rec = json.loads(line)
        if rec["kind"] == "Lease" and rec["verb"] == "update":
            renewals += 1
            continue
        rec.pop("rv")
        kept.append(rec)
    return kept, renewals


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.relative_to(ROOT).as_posix() for p in SCENARIOS])
def test_the_same_writes_but_the_renewals(path: Path) -> None:
    reference, written = _writes(path, standing=False)
    standing, held = _writes(path, standing=True)
    assert standing == reference
    assert held <= written
