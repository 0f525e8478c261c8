"""``validate`` and ``run`` warn about fields upstream's schema does not have (one line per
field, naming the file and the path; the exit status unchanged), as upstream's API server warns
under kubectl's ``fieldValidation=Warn`` (``addStrictDecodingWarnings``,
staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go). Bounded: 10,000 unknown fields are
``MAX_UNKNOWN`` lines and one ``and N more``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from emulator.base.api.unknownfields import MAX_UNKNOWN

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = """\
name: unknown-fields
objects:
  - apiVersion: v1
    kind: Pod
    metadata: {{name: p}}
    spec:
      x: 1{extra}
      containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: 100m}}}}, envv: []}}]
nodes:
  - count: 1
    namePrefix: n
    template:
      status: {{capacity: {{cpu: "4", memory: 16Gi, pods: "110"}}}}
"""


def _emulator(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "emulator", *args], capture_output=True, text=True, cwd=ROOT, check=False, timeout=120
    )


@pytest.mark.parametrize("command", [("validate",), ("run", "--until", "5s")])
def test_each_unknown_field_is_one_warning_line(tmp_path: Path, command: tuple[str, ...]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(extra=""))
    out = _emulator(command[0], str(path), *command[1:])
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [
        f'warning: {path}: objects[0].spec.x: unknown field "spec.x"',
        f'warning: {path}: objects[0].spec.containers[0].envv: unknown field "spec.containers[0].envv"',
    ]


def test_ten_thousand_unknown_fields_are_bounded(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(extra="".join(f"\n      f{i}: {i}" for i in range(10_000))))
    out = _emulator("validate", str(path))
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == MAX_UNKNOWN + 1
    assert lines[-1] == f"warning: {path}: objects[0]: and {10_002 - MAX_UNKNOWN} more unknown fields"


def test_the_json_report_lists_the_warnings(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(extra=""))
    out = _emulator("run", str(path), "--until", "5s", "--output", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["warnings"] == [
        f'{path}: objects[0].spec.x: unknown field "spec.x"',
        f'{path}: objects[0].spec.containers[0].envv: unknown field "spec.containers[0].envv"',
    ]
