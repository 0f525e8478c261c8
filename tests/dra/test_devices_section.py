"""A node group's ``devices`` section: the issue's example loads as written (one mapping, or a
list of drivers); each bad input is one error with its path and what was expected (the CLI
prints it as one ``error:`` line, exit 2, nothing run); the ``objectCount`` expectation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from emulator.app.scenario.drivers import device_groups, dra_settings
from emulator.app.scenario.loader import ScenarioError, load_scenario_text
from emulator.app.scenario.schema import (
    AttributeValue,
    CapacityValue,
    Delay,
    GroupDevices,
    NodeGroup,
    ObjectCount,
    Scenario,
)
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.resource import DeviceAttribute, DeviceCapacity
from emulator.base.client.client import Latency

GROUP = """\
name: x
nodes:
  - count: 4
    namePrefix: gpu-
    template: {{status: {{capacity: {{cpu: "8", pods: "110"}}}}}}
    devices:
{devices}
"""
EXAMPLE = """\
      driver: gpu.example.com
      count: 8
      attributes: {model: {string: A100}, memoryGiB: {int: 80}}
      capacity: {memory: {value: 80Gi}}
      prepareDelay: {mean: 1s}
"""


def load(text: str) -> Scenario:
    return load_scenario_text(text, source="scenario.yaml", base_dir=Path("."))


def group(devices: str) -> str:
    return GROUP.format(devices=devices)


def test_the_issues_example() -> None:
    (g,) = load(group(EXAMPLE)).nodes
    assert isinstance(g, NodeGroup)
    assert g.devices == [
        GroupDevices(
            driver="gpu.example.com",
            count=8,
            attributes={"model": AttributeValue(string="A100"), "memoryGiB": AttributeValue(int_value=80)},
            capacity={"memory": CapacityValue(value="80Gi")},
            prepare_delay=Delay(mean=1.0),
        )
    ]


def test_a_list_of_drivers_and_the_steps_groups() -> None:
    text = group("      - {driver: gpu.example.com, count: 2}\n      - {driver: nic.example.com, count: 1}\n")
    text += "steps:\n  - createNodes:\n      count: 1\n      namePrefix: late-\n      template: {}\n"
    text += "      devices: {driver: gpu.example.com, count: 0}\n"
    s = load(text)
    assert [[d.driver for d in g.devices] for g in device_groups(s)] == [
        ["gpu.example.com", "nic.example.com"],
        ["gpu.example.com"],
    ]
    assert load("name: x\n").nodes == []
    gpu, nic = dra_settings(s)
    assert (gpu.name, sorted(gpu.nodes), nic.name, sorted(nic.nodes)) == (
        "gpu.example.com",
        ["gpu-0", "gpu-1", "gpu-2", "gpu-3", "late-0"],
        "nic.example.com",
        ["gpu-0", "gpu-1", "gpu-2", "gpu-3"],
    )
    assert (gpu.nodes["gpu-0"].names(), gpu.nodes["late-0"].count) == (["gpu-0", "gpu-1"], 0)


def test_the_agents_settings_carry_the_api_shapes() -> None:
    (d,) = dra_settings(load(group(EXAMPLE)))
    devices = d.nodes["gpu-3"]
    assert devices.attributes["model"] == DeviceAttribute(string_value="A100")
    assert devices.attributes["memoryGiB"] == DeviceAttribute(int_value=80)
    assert devices.capacity["memory"] == DeviceCapacity(value=parse_quantity("80Gi"))
    assert devices.prepare_delay == Latency(1.0, 0.0)


def _one(field: str) -> str:
    return group(f"      driver: gpu.example.com\n      count: 2\n      {field}\n")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param(
            group("      driver: gpu.example.com\n      count: -1\n"),
            "nodes[0].devices.count: expected an integer >= 0 and <= 128, got -1",
            id="count-negative",
        ),
        pytest.param(
            group("      driver: gpu.example.com\n      count: 129\n"),
            "nodes[0].devices.count: expected an integer >= 0 and <= 128, got 129",
            id="count-over-one-slice",
        ),
        pytest.param(group("      count: 1\n"), "nodes[0].devices.driver: required field missing", id="driver-missing"),
        pytest.param(
            group("      driver: Bad_Driver\n      count: 1\n"),
            "nodes[0].devices.driver: expected a DRA driver name (a DNS-1123 subdomain)",
            id="driver-name",
        ),
        pytest.param(
            _one("attributes: {model: {float: 1.5}}"),
            "nodes[0].devices.attributes.model.float: unknown field; expected one of: int, bool, string, version",
            id="attribute-unknown-shape",
        ),
        pytest.param(
            _one("attributes: {model: {int: 1, string: a}}"),
            "nodes[0].devices.attributes.model: expected exactly one of int, bool, string, version "
            "(a v1 DeviceAttribute), got int, string",
            id="attribute-two-values",
        ),
        pytest.param(
            _one("attributes: {model: A100}"),
            "nodes[0].devices.attributes.model: expected",
            id="attribute-bare-value",
        ),
        pytest.param(
            _one("attributes: {v: {version: 1.x}}"),
            "nodes[0].devices.attributes.v: expected a semantic version like 1.2.3, got '1.x'",
            id="attribute-version",
        ),
        pytest.param(
            _one("attributes: {bad-name: {int: 1}}"),
            "nodes[0].devices.attributes.bad-name: expected an attribute name",
            id="attribute-name",
        ),
        pytest.param(
            _one("capacity: {memory: {value: lots}}"),
            "nodes[0].devices.capacity.memory.value: expected a quantity like 80Gi, got 'lots'",
            id="capacity-quantity",
        ),
        pytest.param(
            _one("namePrefix: GPU_"),
            "nodes[0].devices.namePrefix: device names like GPU_1 are invalid",
            id="device-names",
        ),
        pytest.param(
            group("      - {driver: gpu.example.com, count: 1}\n      - {driver: gpu.example.com, count: 2}\n"),
            'nodes[0].devices[1].driver: driver "gpu.example.com" is named twice in this group '
            "(first at nodes[0].devices[0])",
            id="driver-named-twice",
        ),
        pytest.param(group("      7\n"), "nodes[0].devices: expected a mapping", id="not-a-mapping"),
    ],
)
def test_bad_input(text: str, want: str) -> None:
    with pytest.raises(ScenarioError) as err:
        load(text)
    assert want in str(err.value), str(err.value)


def test_the_cli_says_one_error_line_and_exits_2(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(group("      driver: gpu.example.com\n      count: -1\n"))
    out = subprocess.run([sys.executable, "-m", "emulator", "run", str(f)], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.splitlines() == [
        f"error: {f}:8:7: nodes[0].devices.count: expected an integer >= 0 and <= 128, got -1"
    ]


def test_object_count() -> None:
    s = load("name: x\nexpect:\n  - objectCount: {kind: ConfigMap, count: 3, namespace: ml}\n")
    assert s.expect == [ObjectCount(kind="ConfigMap", count=3, namespace="ml")]
    with pytest.raises(ScenarioError, match=r"expect\[0\]\.objectCount\.kind: unsupported kind \"Gadget\""):
        load("name: x\nexpect:\n  - objectCount: {kind: Gadget, count: 1}\n")
    with pytest.raises(ScenarioError, match=r"objectCount\.namespace: Node is cluster-scoped"):
        load("name: x\nexpect:\n  - objectCount: {kind: Node, count: 1, namespace: ml}\n")
