"""The run's cyclic-garbage policy (``runner.GC_YOUNG_THRESHOLD``): a run that makes cycles
still has them collected while it runs, so the garbage it holds stays bounded by the young
threshold however long it runs; the collector's thresholds are the caller's again after it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from emulator.app.scenario import runner
from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.apiserver.server import WriteRecord

SCENARIO = """
name: cycles
seed: 1
clock: virtual
nodes: [{count: 3, namePrefix: n, template: {status: {capacity: {cpu: '4', memory: 8Gi, pods: '110'}}}}]
steps:
  - createPods:
      count: 600
      namePrefix: p
      ratePerSecond: 50
      runDuration: 5s
      template:
        spec:
          containers: [{name: c, image: busybox, resources: {requests: {cpu: 1m}}}]
"""

CYCLES_PER_WRITE = 40


class _Cycle:
    """Half of a two-object cycle; counts its own deallocation."""

    freed = 0

    def __init__(self) -> None:
        self.other: _Cycle | None = None

    def __del__(self) -> None:
        _Cycle.freed += 1


def _run_making_cycles(threshold: int) -> tuple[int, int, int]:
    """(cycle objects made, the most alive at any write, collections during the run)."""
    made = peak = 0
    collections = 0

    def count(phase: str, _info: dict[str, int]) -> None:
        nonlocal collections
        if phase == "stop" and gc.get_threshold()[0] == threshold:  # the run's own policy's
            collections += 1

    def on_write(_record: WriteRecord) -> None:
        nonlocal made, peak
        for _ in range(CYCLES_PER_WRITE):
            a, b = _Cycle(), _Cycle()
            a.other, b.other = b, a  # garbage as soon as this turn ends: only the collector frees it
        made += 2 * CYCLES_PER_WRITE
        peak = max(peak, made - _Cycle.freed)

    _Cycle.freed = 0
    scenario = load_scenario_text(SCENARIO, source="s.yaml", base_dir=Path("."))
    old = runner.GC_YOUNG_THRESHOLD
    runner.GC_YOUNG_THRESHOLD = threshold
    gc.collect()
    gc.callbacks.append(count)
    try:
        run_scenario(scenario, RunOptions(source="s.yaml", on_write=on_write))
    finally:
        gc.callbacks.remove(count)
        runner.GC_YOUNG_THRESHOLD = old
        gc.collect()
    return made, peak, collections


@pytest.mark.parametrize("threshold", [5_000, 10_000])
def test_a_run_that_makes_cycles_keeps_them_bounded_by_the_young_threshold(threshold: int) -> None:
    before = gc.get_threshold()
    made, peak, collections = _run_making_cycles(threshold)
    assert gc.get_threshold() == before  # the caller's thresholds again
    assert made > 20 * threshold  # far more garbage than one young generation holds
    assert collections > 0
    # a young collection is due when allocations less deallocations pass the threshold (the
    # run's own objects count too, and their frees count against it): the cycles alive at any
    # write stay within a small multiple of one generation's worth, not of what the run made
    assert peak <= 2 * threshold


def test_without_automatic_collection_the_same_run_holds_all_its_cycles() -> None:
    """The control: the bound above is the collector's doing."""
    made, peak, _ = _run_making_cycles(0)  # a young threshold of 0 turns automatic collection off
    assert peak == made
