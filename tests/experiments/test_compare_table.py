"""``compare``'s text table: a column per variant, ``mean ± sd`` cells, the best of a row marked,
ties unmarked, GPU rows left out without GPUs, failed runs listed, and the exit status."""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console

from emulator.app.commands.compare import _fmt, exit_status, print_table
from emulator.app.experiments.compare import Variant


def entry(seed: int, passed: bool = True, **extra: Any) -> dict[str, Any]:
    return {"seed": seed, "metrics": {}, "traceHash": "h", "passed": passed, **extra}


def variant(config: str, nodes: float, sd: float, scheduled: float, per_seed: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "config": config,
        "runs": len(per_seed),
        "metrics": {"nodesUsed": {"mean": nodes, "max": 3}, "podsScheduled": scheduled, "gpuAllocation": None},
        "spread": {"nodesUsed": {"mean": sd, "max": 0}, "podsScheduled": 0.0, "gpuAllocation": None},
        "perSeed": per_seed,
    }


def render(doc: dict[str, Any]) -> list[str]:
    console = Console(record=True, width=160, color_system=None)
    variants = [Variant(v["config"], v["config"].split("/")[-1].split(".")[0]) for v in doc["variants"]]
    print_table(doc, variants, console)
    return [line.rstrip() for line in console.export_text().splitlines()]


DOC: dict[str, Any] = {
    "scenario": "packing",
    "seeds": [0, 1],
    "variants": [
        variant("c/most.yml", 2.08, 0.08, 106.0, [entry(0), entry(1)]),
        variant("c/least.yml", 4.5, 0.13, 106.0, [entry(0), entry(1, passed=False)]),
    ],
}


def test_table() -> None:
    lines = render(DOC)
    assert lines[0] == "packing: 2 configurations × 2 runs (seeds 0..1)"
    assert lines[1].split() == ["metric", "(mean", "±", "sd)", "↑/↓", "better", "most", "least"]
    rows = {line.split()[0]: line for line in lines[2:]}
    assert rows["nodesUsed.mean"].split()[-7:] == ["2.08", "±", "0.08", "*", "4.50", "±", "0.13"]
    assert "*" not in rows["podsScheduled"]  # a tie
    assert "*" not in rows["nodesUsed.max"]
    assert not any(line.startswith("gpuAllocation") for line in lines)
    assert rows["expectations"].split()[-2:] == ["2/2", "1/2"]


def test_failed_runs_are_listed() -> None:
    doc = {**DOC, "variants": [DOC["variants"][0], variant("c/least.yml", 4.5, 0.0, 106.0, [entry(0, error="X: y")])]}
    assert render(doc)[-1] == "c/least.yml seed 0: X: y"


@pytest.mark.parametrize(
    ("entries", "want"),
    [
        pytest.param([entry(0), entry(1)], 0, id="all-passed"),
        pytest.param([entry(0), entry(1, passed=False)], 1, id="expectation-failed"),
        pytest.param([entry(0, passed=False), entry(1, passed=False, error="boom")], 3, id="a-run-raised"),
    ],
)
def test_exit_status(entries: list[dict[str, Any]], want: int) -> None:
    assert exit_status({"variants": [{"perSeed": entries}]}) == want


@pytest.mark.parametrize(
    ("mean", "sd", "percent", "text"),
    [
        pytest.param(106.0, 0.0, False, "106 ± 0", id="count"),
        pytest.param(3.0, 1.0, False, "3 ± 1", id="whole-mean-whole-sd"),
        pytest.param(3.0, 0.5, False, "3.00 ± 0.50", id="whole-mean-fractional-sd"),
        pytest.param(2.08, 0.0782, False, "2.08 ± 0.08", id="sd-with-the-means-decimals"),
        pytest.param(0.00708, 0.000102, False, "0.00708 ± 0.00010", id="milliseconds-three-digits"),
        pytest.param(529.73, 0.00254, False, "529.7 ± 0.0", id="hundreds-one-decimal"),
        pytest.param(1234.5, 0.0, False, "1,234.5 ± 0.0", id="thousands-separated"),
        pytest.param(0.045, 0.0001, True, "4.5 ± 0.0", id="percent"),
        pytest.param(None, None, False, "-", id="null"),
    ],
)
def test_cell_format(mean: float | None, sd: float | None, percent: bool, text: str) -> None:
    assert _fmt(mean, sd, percent) == text
