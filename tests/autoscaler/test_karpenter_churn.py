"""The consolidation churn of aws/karpenter-provider-aws#7146 ("Karpenter 'Underutilised' disruption
causing excessive node churn", https://github.com/aws/karpenter-provider-aws/issues/7146, open),
reproduced by ``scenarios/karpenter-consolidation-churn.yaml`` under the emulated
kubernetes-sigs/karpenter v1.9.1 (``pkg/controllers/disruption``: multi- and single-node
consolidation, ``consolidateAfter`` from ``nodeclaim/disruption/consolidation.go``), which has
no fix for it. What the thread reports, asserted: replacement NodeClaims are themselves
disrupted as Underutilized, some within 5-10 minutes of their creation, over 2-3 generations,
and pods are disrupted more often than there are pods left running."""

from __future__ import annotations

from pathlib import Path

from emulator.base.runtime.clock import parse_timestamp
from tests.autoscaler.karpenter_disruption_helpers import run

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "karpenter-consolidation-churn.yaml"


def test_replacements_are_replaced_again() -> None:
    r = run(SCENARIO)
    assert r.result.passed
    claims = r.kind("NodeClaim")
    launched = {e.involved_object.name for _, e in r.events if e.reason == "DisruptionLaunching"}
    terminated = {
        e.involved_object.name: t
        for t, e in r.events
        if e.reason == "DisruptionTerminating" and e.involved_object.kind == "NodeClaim"
    }
    # replacements of replacements: each generation's replacement disrupted in turn
    again = sorted(n for n in launched if n in terminated)
    assert len(again) >= 2
    lifetimes = sorted(terminated[n] - parse_timestamp(claims[n].metadata.creation_timestamp) for n in again)
    assert lifetimes[0] <= 10 * 60  # "the newly-created nodes run for about 5-10 minutes"
    assert all(5 * 60 <= t <= 12 * 60 for t in lifetimes)  # consolidateAfter (5m) + validation at the least

    def generation(name: str) -> int:
        """How many consolidations led to this NodeClaim (0: launched for pending pods)."""
        created = parse_timestamp(claims[name].metadata.creation_timestamp)
        if name not in launched:
            return 0
        feeders = [n for n, t in terminated.items() if n in claims and created <= t <= created + 120]
        return 1 + max((generation(n) for n in feeders if n != name), default=0)

    assert max(generation(n) for n in launched) >= 3  # "2-3 generations of replacement nodes"
    auto = r.autoscaler
    assert auto["nodesDisrupted"] == {"underutilized": 9}
    assert auto["podsDisrupted"] > 21  # more disruptions than the 21 pods left running
    reasons = r.reasons()
    assert reasons["ConsolidationCandidate"] > reasons["DisruptionLaunching"]
