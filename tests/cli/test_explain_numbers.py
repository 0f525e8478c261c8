"""``explain`` refuses quantities past an int64 milli-value like ``validate`` and ``run`` do
(regression: a 310-digit cpu reached the scheduler's int64 columns)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from emulator.cli import main

NODE = """apiVersion: v1
kind: Node
metadata: {{name: n}}
status:
  capacity: {{cpu: "{cpu}", memory: {memory}, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers: [{{name: c, image: i, resources: {{requests: {{cpu: "{request}"}}}}}}]
"""


@pytest.mark.parametrize(
    ("cpu", "memory", "wants", "path"),
    [
        pytest.param("1" * 310, "1Gi", "1", "documents[0].status.capacity.cpu", id="node-cpu-310-digits"),
        pytest.param("1e16", "1Gi", "1", "documents[0].status.capacity.cpu", id="node-cpu-1e16"),
        pytest.param("4", "8Ei", "1", "documents[0].status.capacity.memory", id="node-memory-8Ei"),
        pytest.param(
            "4", "1Gi", "1" * 310, "documents[1].spec.containers[0].resources.requests.cpu", id="pod-cpu-310-digits"
        ),
    ],
)
def test_explain_refuses_quantities_past_int64(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cpu: str, memory: str, wants: str, path: str
) -> None:
    f = tmp_path / "m.yaml"
    f.write_text(NODE.format(cpu=cpu, memory=memory, request=wants))
    assert main(["explain", str(f)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert re.match(rf"error: {re.escape(str(f))}(:\d+:\d+)?: {re.escape(path)}: Invalid value: ", lines[0])
    assert "must be no more than 9223372036854775" in lines[0]


def test_explain_accepts_the_largest_quantities(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "m.yaml"
    f.write_text(NODE.format(cpu="9223372036854775", memory="8Pi", request="9223372036854775"))
    assert main(["explain", str(f)]) == 0, capsys.readouterr().err
    assert "selected: n" in capsys.readouterr().out
