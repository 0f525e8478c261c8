"""``CreatePods.pods()`` (the driver's per-run maker: the shared metadata made once) gives
every pod ``CreatePods.pod`` gives, field for field, in every scenario with a createPods step."""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec.structs import replace

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.schema.steps import CreatePods

ROOT = Path(__file__).resolve().parents[2]
_FILES = sorted(
    str(p.relative_to(ROOT))
    for p in [*ROOT.glob("scenarios/*.yaml"), *ROOT.glob("bench/scenarios/*.yaml")]
    if "createPods" in p.read_text()
)


def _steps(path: str) -> list[CreatePods]:
    return [s for s in load_scenario(ROOT / path).steps if isinstance(s, CreatePods)]


@pytest.mark.parametrize("path", _FILES)
def test_pods_maker_is_pod(path: str) -> None:
    steps = _steps(path)
    if not steps:
        pytest.skip("createPods only named in a comment")
    for step in steps:
        make = step.pods()
        for i in sorted({0, 1, 2, 9, 10, step.count - 1}):
            assert make(i) == step.pod(i)


def test_pods_maker_with_and_without_run_duration() -> None:
    step = _steps("bench/scenarios/churn-1000nodes-1h.yaml")[0]
    assert step.run_duration is not None
    for variant in (step, replace(step, run_duration=None), replace(step, name_prefix="p-")):
        make = variant.pods()
        for i in (0, 7, 123):
            assert make(i) == variant.pod(i)
    assert step.pods()(3).metadata.annotations is not step.template.metadata.annotations
