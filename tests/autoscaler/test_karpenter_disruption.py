"""Karpenter's disruption controller end to end (kubernetes-sigs/karpenter v1.9.1
``pkg/controllers/disruption``): single-node replace (``consolidation_test.go`` "can replace
node", on-demand and spot entries), spot-to-spot off by default (``consolidation.go``
``computeSpotToSpotConsolidation``), delete consolidation, ``karpenter.sh/do-not-disrupt`` and
PDBs blocking (``consolidation_test.go`` "considers karpenter.sh/do-not-disrupt on pods",
"considers PDB"), drift (``drift_test.go``, ``nodeclaim/disruption/drift.go``,
``nodepool/hash``), the orchestration queue's order (``queue.go``: replacement initialized
before the candidate is deleted) and the Events of ``disruption/events/events.go``."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.autoscaler.karpenter.consolidation import MIN_SPOT_TO_SPOT_TYPES
from agents.autoscaler.karpenter.nodepoolhash import NODEPOOL_HASH, NODEPOOL_HASH_VERSION_KEY
from emulator.base.runtime.clock import parse_timestamp
from tests.autoscaler.karpenter_disruption_helpers import run, scenario

INSTANCE = "node.kubernetes.io/instance-type"
PDB = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "web"}}},
}


@pytest.mark.parametrize("capacity", ["on-demand", "spot"])
def test_can_replace_node(tmp_path: Path, capacity: str) -> None:
    """consolidation_test.go "can replace node": a large node left with one pod is replaced by the
    cheapest small type (spot with SpotToSpotConsolidation on: 20 cheaper types, 15 kept)."""
    r = run(scenario(tmp_path, capacity=capacity, spot_to_spot=capacity == "spot"))
    assert r.result.passed
    claims = r.kind("NodeClaim")
    old = next(c for c in claims.values() if c.metadata.labels[INSTANCE] == "large")
    new = next(c for c in claims.values() if c.metadata.labels[INSTANCE] != "large")
    assert new.metadata.labels[INSTANCE] == "small-01"
    assert new.metadata.labels["karpenter.sh/capacity-type"] == capacity
    types = next(q.values for q in new.spec.requirements if q.key == INSTANCE)
    assert len(types) == (MIN_SPOT_TO_SPOT_TYPES if capacity == "spot" else 20)
    assert old.metadata.deletion_timestamp is not None
    reason = next(k for k in old.status.conditions if k.type == "DisruptionReason")
    assert (reason.status, reason.reason) == ("True", "Underutilized")
    assert r.autoscaler["nodesDisrupted"] == {"underutilized": 1}
    assert r.autoscaler["podsDisrupted"] == 1
    # queue.go: the replacement is launched, waited for, and only then the candidate deleted
    when = {e.reason: t for t, e in r.events if e.involved_object.name in (old.metadata.name, new.metadata.name)}
    assert when["ConsolidationCandidate"] + 15 <= when["DisruptionLaunching"]  # consolidationTTL
    assert when["DisruptionLaunching"] <= when["DisruptionWaitingReadiness"] < when["DisruptionTerminating"]
    initialized = next(k for k in new.status.conditions if k.type == "Initialized")
    assert parse_timestamp(initialized.last_transition_time) <= when["DisruptionTerminating"]
    assert r.messages("ConsolidationCandidate")[0] == (
        f"Consolidation candidate: replace: [{old.metadata.name}] -> [1 replacement] (savings: $"
        f"{0.2 * (0.7 if capacity == 'spot' else 1) - 0.021 * (0.7 if capacity == 'spot' else 1):.2f})"
    )
    assert "Disrupting NodeClaim: Underutilized" in r.messages("DisruptionTerminating")


def test_spot_to_spot_is_off_by_default(tmp_path: Path) -> None:
    """consolidation.go: all-spot candidates with a spot replacement need the feature gate."""
    r = run(scenario(tmp_path, capacity="spot"))
    assert r.autoscaler["nodesDisrupted"] == {}
    assert "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node" in r.messages(
        "Unconsolidatable"
    )


def test_delete_when_pods_fit_elsewhere(tmp_path: Path) -> None:
    """Three large nodes; back at 3 replicas the empty one goes (emptiness) and a one-pod node is
    deleted, its pod fitting on the other (a delete decision: no replacement)."""
    r = run(scenario(tmp_path, replicas=12, down_to=3))
    assert r.result.passed
    assert r.autoscaler["nodesDisrupted"] == {"empty": 1, "underutilized": 1}
    assert r.autoscaler["scaleUps"] == 3  # no replacement launched
    agent = next(a for a in r.result.extra["agents"] if a.get("agent") == "controller:karpenter")
    assert agent["decisions"] == {"delete/empty": 1, "delete/underutilized": 1}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param(
            {"pod_annotations": {"karpenter.sh/do-not-disrupt": "true"}},
            'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/web-',
            id="do-not-disrupt-pod",
        ),
        pytest.param(
            {"objects": [PDB]},
            "Pdb prevents pod evictions (PodDisruptionBudget=[default/web])",
            id="pdb",
        ),
    ],
)
def test_blocked(tmp_path: Path, extra: dict[str, object], message: str) -> None:
    """statenode.go ValidatePodsDisruptable: the node is no candidate; DisruptionBlocked says why."""
    r = run(scenario(tmp_path, **extra))  # type: ignore[arg-type]
    assert r.autoscaler["nodesDisrupted"] == {}
    assert any(m.startswith(message) for m in r.messages("DisruptionBlocked"))


def test_drift_replaces_the_nodeclaim(tmp_path: Path) -> None:
    """nodepool/hash: the template's hash on the NodePool and its NodeClaims; changing the template
    drifts them (Drifted=True, NodePoolDrifted) and drift.go replaces them within the budget."""
    patch = {"spec": {"template": {"metadata": {"labels": {"team": "a"}}}}}
    steps = [{"sleep": "2m"}, {"update": {"kind": "NodePool", "name": "default", "patch": patch}}, {"sleep": "3m"}]
    r = run(scenario(tmp_path, replicas=2, disruption={"consolidateAfter": "Never"}, steps=steps))
    assert r.result.passed
    pool = r.kind("NodePool")["default"]
    claims = sorted(r.kind("NodeClaim").values(), key=lambda c: r.first[("NodeClaim", c.metadata.name)])
    old, new = claims
    drifted = next(k for k in old.status.conditions if k.type == "Drifted")
    assert (drifted.status, drifted.reason) == ("True", "NodePoolDrifted")
    assert old.metadata.annotations[NODEPOOL_HASH] != pool.metadata.annotations[NODEPOOL_HASH]
    assert new.metadata.annotations[NODEPOOL_HASH] == pool.metadata.annotations[NODEPOOL_HASH]
    assert new.metadata.annotations[NODEPOOL_HASH_VERSION_KEY] == "v3"
    assert new.metadata.labels["team"] == "a"
    assert old.metadata.deletion_timestamp is not None
    assert r.autoscaler["nodesDisrupted"] == {"drifted": 1}
    assert "Launching NodeClaim: Drifted" in r.messages("DisruptionLaunching")
    # consolidateAfter: Never: consolidation says so once per node (15 minute dedupe)
    assert r.messages("Unconsolidatable").count('NodePool "default" has consolidation disabled') == 4


SCALE_DOWN = {"scale": {"kind": "Deployment", "name": "web", "namespace": "default", "replicas": 1}}


@pytest.mark.parametrize(
    ("during", "reason"),
    [
        pytest.param(
            {"scale": {"kind": "Deployment", "name": "web", "namespace": "default", "replicas": 2}},
            "churn",
            id="pod-churn",
        ),
        pytest.param(
            {
                "update": {
                    "kind": "NodePool",
                    "name": "default",
                    "patch": {"spec": {"disruption": {"budgets": [{"nodes": "0"}]}}},
                }
            },
            "budget",
            id="blocking-budget",
        ),
    ],
)
def test_validation_rejects(tmp_path: Path, during: dict[str, object], reason: str) -> None:
    """consolidation_test.go "should correctly report invalidated commands for single node
    disruption": a pod landing on the candidate, or a budget going to 0, during the 15s wait
    (the candidate is chosen at 160s) rejects the command; nothing is disrupted."""
    steps = [{"sleep": "2m"}, SCALE_DOWN, {"at": "165s", **during}, {"sleep": "2m"}]
    r = run(scenario(tmp_path, steps=steps))
    rejected = r.messages("ConsolidationRejected")
    assert rejected
    assert all(m.endswith(f"reason: {reason} (savings: $0.18)") for m in rejected)
    assert next(t for t, e in r.events if e.reason == "ConsolidationRejected") == 175.0
    assert r.autoscaler["nodesDisrupted"] == {}
    if reason == "budget":
        assert "No allowed disruptions for disruption reason Underutilized due to blocking budget" in r.messages(
            "DisruptionBlocked"
        )


def test_on_demand_to_spot_replacement_is_held_to_spot(tmp_path: Path) -> None:
    """consolidation.go computeConsolidation: an on-demand candidate whose replacement could be
    on-demand or spot gets ``karpenter.sh/capacity-type In [spot]`` (priced as spot), so a short
    spot supply cannot end in a dearer on-demand node (consolidation_test.go "can replace node"
    with a NodePool allowing both)."""
    both = {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand", "spot"]}
    patch = {"spec": {"template": {"spec": {"requirements": [both]}}}}
    steps = [{"sleep": "2m"}, {"update": {"kind": "NodePool", "name": "default", "patch": patch}}, SCALE_DOWN]
    r = run(scenario(tmp_path, steps=[*steps, {"sleep": "4m"}]))
    claims = r.kind("NodeClaim")
    new = next(c for c in claims.values() if c.metadata.labels[INSTANCE] != "large")
    assert new.metadata.labels["karpenter.sh/capacity-type"] == "spot"
    assert [q.values for q in new.spec.requirements if q.key == "karpenter.sh/capacity-type"] == [["spot"]]
    assert r.autoscaler["nodesDisrupted"] == {"underutilized": 1}
    assert all(
        not any(k.type == "Drifted" for k in c.status.conditions) for c in claims.values()
    )  # requirements expanded
