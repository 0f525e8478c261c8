"""Bad HPA objects and ``load`` sections in a scenario: ``validate`` and ``run`` refuse them with
one ``error:`` line naming the file, the path and what was expected, exit 2, nothing run
(issue 28, "Bad input": an HPA targeting a missing kind); the 422 through ``serve`` is in
``tests/http/test_kubectl_hpa.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.cli import main

HPA = """objects:
  - apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    metadata: {name: web}
    spec:
      scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
      minReplicas: 1
      maxReplicas: 5
"""
LOAD = """load:
  - selector: app=web
    requestsPerSecond: 10
    perRequest: {cpu: 5m}
"""

CASES = [
    pytest.param(
        HPA.replace("kind: Deployment", "kind: Rollout"),
        'objects[0].spec.scaleTargetRef.kind: Unsupported value: "Rollout": supported values: "Deployment", '
        '"ReplicaSet", "StatefulSet"',
        id="hpa-missing-kind",
    ),
    pytest.param(
        HPA.replace("maxReplicas: 5", "maxReplicas: 0"),
        "objects[0].spec.maxReplicas: Invalid value: 0: must be greater than 0",
        id="hpa-max-zero",
    ),
    pytest.param(
        HPA + LOAD.replace("    requestsPerSecond: 10\n", ""),
        "load[0]: expected exactly one of requestsPerSecond, steps or daily, got none",
        id="load-no-curve",
    ),
    pytest.param(
        HPA + LOAD.replace("perRequest: {cpu: 5m}", "perRequest: {cpu: lots}"),
        "load[0].perRequest.cpu: expected a quantity like 100Mi, 1Gi or 500M",
        id="load-bad-quantity",
    ),
    pytest.param(
        HPA + LOAD.replace("requestsPerSecond: 10", "requestsPerSecond: -1"),
        "load[0].requestsPerSecond: expected",
        id="load-negative-rate",
    ),
    pytest.param(
        HPA
        + LOAD.replace(
            "    requestsPerSecond: 10\n",
            "    steps: [{at: 2m, requestsPerSecond: 1}, {at: 1m, requestsPerSecond: 2}]\n",
        ),
        "load[0].steps[1].at: expected steps in time order",
        id="load-steps-out-of-order",
    ),
    pytest.param(
        HPA.replace("metadata: {name: web}", "metadata: {name: web, annotations: {emulator.k8s.io/usage: 'cpu'}}"),
        "",
        id="usage-annotation-is-checked-on-pods-only",
    ),
]


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize(("body", "expected"), CASES)
def test_bad_hpa_input_is_refused(
    command: str, body: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(f"name: hpa\n{body}")
    if not expected:
        assert main(["validate", str(path)]) == 0, capsys.readouterr().err
        return
    assert main([command, str(path)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {path}:")
    assert expected in lines[0]


def test_bad_usage_annotation_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(
        "name: hpa\nobjects:\n  - apiVersion: v1\n    kind: Pod\n"
        '    metadata: {name: p, annotations: {emulator.k8s.io/usage: \'{"cpu": "fast"}\'}}\n'
        "    spec: {containers: [{name: c, image: i}]}\n"
    )
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}:")
    assert "objects[0].metadata.annotations[emulator.k8s.io/usage]: Invalid value:" in err
    assert "cpu: quantities must match" in err
