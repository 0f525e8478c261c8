"""The ``autoscaling.clusterAutoscaler`` section (issue 28, "Bad input"): ``validate`` and ``run``
refuse a bad one with one ``error:`` line naming the file and the path, exit 2, nothing run; a
good one loads with upstream's defaults (``cluster-autoscaler/config/autoscaling_options.go``,
the flags of ``main.go``, 1.34)."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.app.scenario.loader import load_scenario_text
from tests.autoscaler.cli_verdict import assert_verdict

GOOD = """name: ca
autoscaling:
  clusterAutoscaler:
    expander: least-waste
    priorities: {10: [small], 20: ["big-.*"]}
    nodeGroups:
      - name: small
        minSize: 0
        maxSize: 5
        pricePerHour: 0.096
        provisionDelay: {mean: 45s, jitter: 15s}
        template: {status: {capacity: {cpu: "2", memory: 8Gi, pods: "110"}}}
"""
P = "autoscaling.clusterAutoscaler"
CASES = [
    pytest.param(
        ("minSize: 0", "minSize: 9"),
        f"{P}.nodeGroups[0].minSize: minSize (9) must not be greater than maxSize (5)",
        id="min-above-max",
    ),
    pytest.param(
        ("0.096", "-1"), f"{P}.nodeGroups[0].pricePerHour: expected a number >= 0, got -1", id="negative-price"
    ),
    pytest.param(
        ("0.096", ".nan"), f"{P}.nodeGroups[0].pricePerHour: expected a finite number, got NaN", id="nan-price"
    ),
    pytest.param(
        ("least-waste", "cheapest"),
        f"{P}.expander: unknown expander 'cheapest'; expected one of: random, most-pods, least-waste, price, priority",
        id="unknown-expander",
    ),
    pytest.param(("least-waste", "priority,nope"), f"{P}.expander: unknown expander 'nope'", id="unknown-in-chain"),
    pytest.param(("[small]", "['(']"), f"{P}.priorities.10[0]: expected a regular expression", id="bad-regex"),
    pytest.param(
        ("{10: [small]", "{high: [small]"), f"{P}.priorities.high: expected an integer priority", id="priority-not-int"
    ),
    pytest.param(
        ("name: small", "name: Small_1"), f"{P}.nodeGroups[0].name: expected a DNS-1123 label", id="group-name"
    ),
    pytest.param(
        ("maxSize: 5", "maxSize: 100001"),
        f"{P}.nodeGroups[0].maxSize: expected an integer >= 0 and <= 100000",
        id="max-too-big",
    ),
    pytest.param(
        (
            "autoscaling:",
            'nodes: [{count: 2, namePrefix: small-, template: {status: {capacity: {cpu: "1"}}}}]\nautoscaling:',
        ),
        f'{P}.nodeGroups[0].name: the group\'s node names small-<i> would clash with node "small-0" of nodes[0]',
        id="node-name-clash",
    ),
    pytest.param(
        ("expander: least-waste", "expander: least-waste\n    balancingLabels: [a, 'b c']"),
        f"{P}.balancingLabels[1]: expected a label key",
        id="bad-balancing-label",
    ),
    pytest.param(
        ("expander: least-waste", "expander: least-waste\n    balancingLabels: [tier]\n    balancingIgnoreLabels: [x]"),
        f"{P}.balancingLabels: balancingLabels cannot be combined with balancingIgnoreLabels",
        id="balancing-label-and-ignore-label",
    ),
    pytest.param(
        ("expander: least-waste", "expander: least-waste\n    maxFreeDifferenceRatio: -0.1"),
        f"{P}.maxFreeDifferenceRatio",
        id="negative-ratio",
    ),
    pytest.param(
        ("expander: least-waste", "expander: least-waste\n    balanceSimilarNodeGroups: yes-please"),
        f"{P}.balanceSimilarNodeGroups",
        id="balance-not-bool",
    ),
    pytest.param(
        ("least-waste", "least-waste\n    balanceSimilarNodeGroups: true\n    balancingLabels: [x]"),
        "",
        id="good-balancing",
    ),
    pytest.param(
        ("least-waste", "least-waste\n    removalSimulation: 1.34.3"),
        f'{P}.removalSimulation: expected "taintedGhostNode", "removeNode" or "keepNode", got "1.34.3"',
        id="unknown-removal-simulation",
    ),
    pytest.param(("scan", "scan"), "", id="good"),
]


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize(("change", "expected"), CASES)
def test_bad_cluster_autoscaler_is_refused(
    command: str, change: tuple[str, str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "scenario.yaml"
    text = GOOD.replace(*change)
    path.write_text(text)
    assert_verdict(command, path, expected, f"error: {path}:", capsys)


def test_defaults_are_upstreams() -> None:
    s = load_scenario_text(GOOD, source="s.yaml", base_dir=Path("."))
    ca = s.autoscaling.cluster_autoscaler
    assert ca is not None
    assert (ca.scan_interval, ca.scale_down_utilization_threshold) == (10.0, 0.5)
    assert (ca.scale_down_unneeded_time, ca.scale_down_delay_after_add, ca.max_node_provision_time) == (600, 600, 900)
    assert (ca.scale_down_delay_after_delete, ca.scale_down_delay_after_failure) == (0.0, 180.0)
    assert (ca.max_graceful_termination_sec, ca.skip_nodes_with_system_pods, ca.skip_nodes_with_local_storage) == (
        600,
        True,
        True,
    )
    assert ca.priorities == {"10": ["small"], "20": ["big-.*"]}
    # processors/nodegroupset: off by default, config.NewDefaultNodeGroupDifferenceRatios
    assert (ca.balance_similar_node_groups, ca.balancing_ignore_labels, ca.balancing_labels) == (False, [], [])
    assert (ca.memory_difference_ratio, ca.max_allocatable_difference_ratio, ca.max_free_difference_ratio) == (
        0.015,
        0.05,
        0.05,
    )
    g = ca.node_groups[0]
    assert (g.name, g.min_size, g.max_size, g.price_per_hour) == ("small", 0, 5, 0.096)
    assert (g.provision_delay.mean, g.provision_delay.jitter) == (45.0, 15.0)
