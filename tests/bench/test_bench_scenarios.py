"""The scenarios under bench/scenarios/ stay valid as the schema moves (they are too long to
run in the test suite: bench/README.md has their figures)."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.app.scenario.loader import load_scenario

ROOT = Path(__file__).resolve().parents[2]
BENCH = sorted((ROOT / "bench" / "scenarios").glob("*.yaml"))


def test_there_are_bench_scenarios() -> None:
    assert {p.stem for p in BENCH} >= {
        "churn-1000nodes-1h",
        "churn-bounded-1000nodes-1h",
        "churn-job-1000nodes-1h",
        "deployment-10k-1000nodes",
        "diurnal-1000nodes-24h",
        "serve-10k-pods",
    }


@pytest.mark.parametrize("path", BENCH, ids=[p.stem for p in BENCH])
def test_bench_scenario_loads(path: Path) -> None:
    scenario = load_scenario(path)
    assert scenario.expect, "a bench scenario checks its own outcome"
