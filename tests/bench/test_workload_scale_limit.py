"""``--scale`` cannot blow a workload up past ``MAX_SCALED_PARAM``: ``bench --scale 1e9`` made
counts of 10^12 and never finished (found by the hostile corpus)."""

from __future__ import annotations

import pytest

from emulator.app.bench.spec import MAX_SCALED_PARAM, WorkloadError
from emulator.app.bench.workload_file import load_workloads_text

WORKLOADS = """
templates:
  node: {apiVersion: v1, kind: Node, metadata: {generateName: n-}, status: {capacity: {cpu: "4"}}}
  pod: {apiVersion: v1, kind: Pod, metadata: {generateName: p-}, spec: {containers: [{name: c, image: x}]}}
testCases:
  - name: T
    workloadTemplate:
      - {opcode: createNodes, countParam: $nodes, nodeTemplate: node}
      - {opcode: createPods, countParam: $pods, podTemplate: pod, collectMetrics: true}
    workloads: [{name: One, params: {nodes: 500, pods: 0}}]
"""


@pytest.mark.parametrize(
    ("scale", "refused"),
    [
        pytest.param(1.0, False, id="one"),
        pytest.param(MAX_SCALED_PARAM / 500, False, id="at-the-limit"),
        pytest.param(MAX_SCALED_PARAM / 500 + 0.01, True, id="just-past"),
        pytest.param(1e9, True, id="1e9"),
    ],
)
def test_scaled_parameters_are_bounded(scale: float, refused: bool) -> None:
    if not refused:
        (wl,) = load_workloads_text(WORKLOADS, source="w.yaml", scale=scale)
        assert wl.name == "T/One"
        return
    with pytest.raises(WorkloadError) as err:
        load_workloads_text(WORKLOADS, source="w.yaml", scale=scale)
    assert err.value.path == "testCases[0].workloads[0].params.nodes"
    assert err.value.detail.endswith(f"at most {MAX_SCALED_PARAM} are allowed")
    assert err.value.detail.startswith(f"500 at scale {scale:g} is ")
