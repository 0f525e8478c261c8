"""The ``autoscaling.karpenter`` section (issue 28, "Bad input"): a NodePool the CRD refuses
(kubernetes-sigs/karpenter v1.9.1 pkg/apis/crds/karpenter.sh_nodepools.yaml), an instance types
file that is not the kwok provider's format (kwok/cloudprovider/helpers.go ``InstanceTypeOptions``):
one ``error:`` line naming the file and the path, exit 2, nothing run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from emulator.app.scenario.loader import load_scenario_text
from tests.autoscaler.cli_verdict import assert_verdict

ROOT = Path(__file__).resolve().parents[2]
TYPES = ROOT / "scenarios" / "karpenter" / "instance_types.json"
GOOD = """name: karp
autoscaling:
  karpenter:
    instanceTypes: {file: types.json}
    provisionDelay: {mean: 30s}
    nodePools:
      - apiVersion: karpenter.sh/v1
        kind: NodePool
        metadata: {name: default}
        spec:
          template:
            spec:
              nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
              requirements:
                - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
"""
P = "autoscaling.karpenter"
SPEC = "spec:\n          template:"
DISRUPTION = "spec:\n          disruption: {consolidateAfter: 0s, budgets: [BUDGET]}\n          template:"
BUDGET = (
    DISRUPTION.replace("{", "{{").replace("}", "}}").replace("BUDGET", "{{nodes: '0', schedule: '{}', duration: {}}}")
)
CASES = [
    pytest.param(
        ("operator: In", "operator: Within"),
        f'{P}.nodePools[0].spec.template.spec.requirements[0].operator: Unsupported value: "Within"',
        id="bad-operator",
    ),
    pytest.param(
        ("karpenter.sh/capacity-type", "karpenter.sh/custom"),
        f'{P}.nodePools[0].spec.template.spec.requirements[0].key: Invalid value: "string": label domain '
        '"karpenter.sh" is restricted',
        id="restricted-domain",
    ),
    pytest.param(("kind: NodePool", "kind: NodeClaim"), f"{P}.nodePools[0].spec", id="not-a-nodepool"),
    pytest.param(("types.json", "missing.json"), f"{P}.instanceTypes.file: cannot read file", id="missing-file"),
    pytest.param(("types.json", "bad.json"), "bad.json: [0]: not the kwok instance type format", id="bad-format"),
    pytest.param(("types.json", "notjson.json"), "notjson.json: expected the kwok instance_types.json", id="not-json"),
    pytest.param(("30s", "-1s"), f"{P}.provisionDelay.mean", id="negative-delay"),
    pytest.param(
        ("provisionDelay: {mean: 30s}", "provisionDelay: {mean: 30s}\n    featureGates: {SpotToSpot: true}"),
        f"{P}.featureGates",
        id="unknown-feature-gate",
    ),
    pytest.param(
        (
            "provisionDelay: {mean: 30s}",
            "provisionDelay: {mean: 30s}\n    featureGates: {SpotToSpotConsolidation: yes please}",
        ),
        f"{P}.featureGates.SpotToSpotConsolidation",
        id="feature-gate-not-a-bool",
    ),
    pytest.param(("30s", "30s"), "", id="good"),
    # pkg/apis/v1/nodepool.go Budget: the CRD's pattern and CEL rule; robfig/cron ParseStandard
    pytest.param(
        (SPEC, BUDGET.format("0 0 * * tue-mon", "1h")),
        f"{P}.nodePools[0].spec.disruption.budgets[0].schedule: expected a cron schedule (robfig/cron's standard "
        "parser, UTC): beginning of range (2) beyond end of range (1): tue-mon",
        id="budget-cron-unparseable",
    ),
    pytest.param(
        (SPEC, BUDGET.format("@wrongly", "1h")),
        f'{P}.nodePools[0].spec.disruption.budgets[0].schedule: Invalid value: "@wrongly": spec.disruption.budgets'
        "[0].schedule in body should match",
        id="budget-schedule-pattern",
    ),
    pytest.param(
        (SPEC, DISRUPTION.replace("BUDGET", "{nodes: '1', duration: 1h}")),
        f"{P}.nodePools[0].spec.disruption.budgets: Invalid value: \"array\": 'schedule' must be set with 'duration'",
        id="budget-duration-without-schedule",
    ),
    pytest.param(
        (SPEC, BUDGET.format("0 9 * * mon-fri", "90s")),
        f'{P}.nodePools[0].spec.disruption.budgets[0].duration: Invalid value: "90s"',
        id="budget-duration-in-seconds",
    ),
    pytest.param((SPEC, BUDGET.format("0 9 * * mon-fri", "8h")), "", id="good-budget"),
]


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize(("change", "expected"), CASES)
def test_bad_karpenter_is_refused(
    command: str, change: tuple[str, str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(TYPES, tmp_path / "types.json")
    (tmp_path / "bad.json").write_text(json.dumps([{"name": "x", "offerings": [{"Price": "cheap"}]}]))
    (tmp_path / "notjson.json").write_text("name: x\n")
    path = tmp_path / "scenario.yaml"
    path.write_text(GOOD.replace(*change))
    assert_verdict(command, path, expected, "error: ", capsys)


def test_instance_types_are_read_with_the_kwok_overhead(tmp_path: Path) -> None:
    """kwok/cloudprovider/helpers.go: labels from setDefaultOptions, KubeReserved 100m / 10Mi."""
    from emulator.app.scenario.instancetypes import allocatable

    shutil.copy(TYPES, tmp_path / "types.json")
    s = load_scenario_text(GOOD, source="s.yaml", base_dir=tmp_path)
    config = s.autoscaling.karpenter
    assert config is not None
    c4 = next(it for it in config.instance_types.items if it.name == "c-4x-amd64-linux")
    assert c4.labels()["karpenter.kwok.sh/instance-family"] == "c"
    assert c4.labels()["karpenter.kwok.sh/instance-cpu"] == "4"
    alloc = allocatable(c4)
    assert alloc["cpu"].milli == 3900
    assert alloc["memory"].milli // 1000 == c4.capacity()["memory"].milli // 1000 - 10 * 1024 * 1024
    assert len(c4.offerings) == 8
