"""Bench workload files and ``--scale``: NaN and infinities are refused with a path (they
passed: a ``threshold: .nan`` loaded, ``--scale inf`` crashed with OverflowError)."""

from __future__ import annotations

import math

import pytest

from emulator.app.bench.spec import WorkloadError
from emulator.app.bench.workload_file import load_workloads_text
from emulator.cli import main

WORKLOADS = """
templates:
  node: {{apiVersion: v1, kind: Node, metadata: {{generateName: n-}}, status: {{capacity: {{cpu: "4"}}}}}}
  pod: {{apiVersion: v1, kind: Pod, metadata: {{generateName: p-}}, spec: {{containers: [{{name: c, image: x}}]}}}}
testCases:
  - name: T
    workloadTemplate:
      - {{opcode: createNodes, count: 1, nodeTemplate: node}}
      - {{opcode: createPods, count: 1, podTemplate: pod, collectMetrics: true}}
    workloads: [{{name: One{extra}}}]
"""


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param(", threshold: .nan", "threshold must be a finite number, got nan", id="threshold-nan"),
        pytest.param(", threshold: .inf", "threshold must be a finite number, got inf", id="threshold-inf"),
        pytest.param(", threshold: true", "Expected `float | null`, got `bool`", id="threshold-bool"),
    ],
)
def test_non_finite_floats_are_refused_with_the_path(extra: str, message: str) -> None:
    with pytest.raises(WorkloadError) as err:
        load_workloads_text(WORKLOADS.format(extra=extra), source="w.yaml")
    assert err.value.path.startswith("testCases[0].workloads[0]")
    assert err.value.detail == message


def test_finite_threshold_loads() -> None:
    (wl,) = load_workloads_text(WORKLOADS.format(extra=", threshold: 270.5"), source="w.yaml")
    assert wl.threshold == 270.5


@pytest.mark.parametrize("scale", [math.nan, math.inf, 0.0, -1.0])
def test_scale_must_be_finite_and_positive(scale: float) -> None:
    with pytest.raises(WorkloadError, match="scale must be finite and > 0"):
        load_workloads_text(WORKLOADS.format(extra=""), source="w.yaml", scale=scale)


@pytest.mark.parametrize("scale", ["inf", "nan", "-inf", "1e400", "0"])
def test_scale_option_refuses_non_finite(scale: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", f"--scale={scale}"])
    assert exit_info.value.code == 2
    assert f"argument --scale: expected a finite number > 0, got '{scale}'" in capsys.readouterr().err
