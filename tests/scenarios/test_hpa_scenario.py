"""``scenarios/hpa-load-step.yaml`` end to end: the load model's step up makes the HPA
(upstream ``horizontal.go``: no ``behavior``, so at most max(2 x current, 4) per sync) scale
the Deployment up, and the step down brings it back only once the 5-min downscale
stabilization window (``--horizontal-pod-autoscaler-downscale-stabilization``) has passed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.runtime.clock import parse_timestamp

ROOT = Path(__file__).resolve().parents[2]


def test_hpa_follows_the_load_step_and_stabilizes_the_scale_down() -> None:
    rescales: list[tuple[float, str]] = []
    statuses: list[Any] = []

    def on_write(rec: Any) -> None:
        if rec.kind == "Event" and rec.new is not None and rec.new.reason == "SuccessfulRescale":
            rescales.append((parse_timestamp(rec.new.metadata.creation_timestamp), rec.new.message))
        if rec.kind == "HorizontalPodAutoscaler" and rec.new is not None:
            statuses.append(rec.new.status)

    result = run_scenario(load_scenario(ROOT / "scenarios" / "hpa-load-step.yaml"), RunOptions(on_write=on_write))
    assert result.passed
    up = "reason: cpu resource utilization (percentage of request) above target"
    assert rescales[0] == (120.0, f"New size: 4; {up}")  # the first sync after the step (every 15 s)
    assert rescales[1] == (135.0, f"New size: 8; {up}")  # 2 x 4: the scale-up limit without behavior
    assert rescales[-1] == (780.0, "New size: 3; reason: All metrics below target")  # 8m + 300 s
    assert all(t <= 150 for t, _ in rescales[:-1])  # up within 30 s of the step
    final = statuses[-1]
    assert (final.current_replicas, final.desired_replicas) == (3, 3)
    conditions = {c.type: (c.status, c.reason) for c in final.conditions}
    assert conditions["AbleToScale"][0] == "True"
    assert conditions["ScalingActive"] == ("True", "ValidMetricFound")
    assert final.current_metrics[0].resource.name == "cpu"
    # between the step down and the rescale, the controller said why it waited
    assert any(c.type == "AbleToScale" and c.reason == "ScaleDownStabilized" for s in statuses for c in s.conditions)
