"""The scenario's ``storage.drivers`` section: the issue's example loads as written; each bad
input is one error with its path (the CLI prints it as one ``error:`` line, exit 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from emulator.app.scenario.loader import ScenarioError, load_scenario_text
from emulator.app.scenario.schema import Delay, DriverCapacity, Scenario, StorageDriver

EXAMPLE = """\
name: x
storage:
  drivers:
    - name: ebs.csi.aws.com
      topologyKeys: [topology.kubernetes.io/zone]
      attachLimit: 25
      provisionDelay: {mean: 2s, jitter: 500ms}
      attachDelay: {mean: 1s}
      capacity: {perTopology: 10Ti}
"""


def load(text: str) -> Scenario:
    return load_scenario_text(text, source="scenario.yaml", base_dir=Path("."))


def test_the_issues_example() -> None:
    assert load(EXAMPLE).storage.drivers == [
        StorageDriver(
            name="ebs.csi.aws.com",
            topology_keys=["topology.kubernetes.io/zone"],
            attach_limit=25,
            provision_delay=Delay(mean=2.0, jitter=0.5),
            attach_delay=Delay(mean=1.0),
            capacity=DriverCapacity(per_topology=10 * 2**40),
        )
    ]


def test_defaults() -> None:
    (d,) = load("name: x\nstorage: {drivers: [{name: d.example.com}]}\n").storage.drivers
    assert (d.topology_keys, d.attach_limit, d.provision_delay, d.attach_delay, d.capacity) == (
        [],
        None,
        Delay(),
        Delay(),
        None,
    )
    assert load("name: x\n").storage.drivers == []


def _driver(field: str) -> str:
    return f"name: x\nstorage:\n  drivers:\n    - name: d.example.com\n      {field}\n"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param(
            _driver("attachLimit: -1"),
            "storage.drivers[0].attachLimit: expected an integer >= 0, got -1",
            id="attachLimit",
        ),
        pytest.param(
            _driver("provisionDelay: {mean: soon}"),
            'storage.drivers[0].provisionDelay.mean: expected a duration like 5ms, 1.5s, 2m or 1h30m, got "soon"',
            id="duration",
        ),
        pytest.param(
            _driver("attachDelay: {mean: 1s, jitter: -2s}"),
            "storage.drivers[0].attachDelay.jitter:",
            id="negative-jitter",
        ),
        pytest.param(
            _driver("capacity: {perTopology: lots}"),
            'storage.drivers[0].capacity.perTopology: expected a quantity like 100Mi, 1Gi or 500M, got "lots"',
            id="quantity",
        ),
        pytest.param(_driver("capacity: {perTopology: 1e400}"), "storage.drivers[0].capacity.perTopology:", id="huge"),
        pytest.param(
            _driver("capacity: {}"), "storage.drivers[0].capacity.perTopology: required field missing", id="missing"
        ),
        pytest.param(_driver("attachLimits: 3"), "storage.drivers[0].attachLimits: unknown field", id="unknown-field"),
        pytest.param(
            _driver("topologyKeys: [a, a]"),
            'storage.drivers[0].topologyKeys[1]: topology key "a" is listed twice',
            id="key-twice",
        ),
        pytest.param(
            _driver("topologyKeys: ['bad key']"),
            "storage.drivers[0].topologyKeys[0]: expected a label key",
            id="bad-key",
        ),
        pytest.param(
            "name: x\nstorage: {drivers: [{name: Bad_Name}]}\n",
            "storage.drivers[0].name: expected a CSI driver name",
            id="bad-name",
        ),
        pytest.param(
            "name: x\nstorage:\n  drivers:\n"
            "    - name: d.example.com\n    - name: e.example.com\n    - name: d.example.com\n",
            'storage.drivers[2].name: driver "d.example.com" is named twice (first at storage.drivers[0])',
            id="named-twice",
        ),
    ],
)
def test_bad_input(text: str, want: str) -> None:
    with pytest.raises(ScenarioError) as err:
        load(text)
    assert want in str(err.value), str(err.value)


def test_the_cli_says_one_error_line_and_exits_2(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(_driver("attachLimit: -1"))
    out = subprocess.run([sys.executable, "-m", "emulator", "validate", str(f)], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        f"error: {f}:5:7: storage.drivers[0].attachLimit: expected an integer >= 0, got -1"
    ]
