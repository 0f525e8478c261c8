"""The workload scenarios in ``scenarios/workloads/`` tell the story their header promises.

``test_scenarios.py`` checks their ``expect:`` entries and ``test_trace_hashes.py`` pins them;
these tests read the run's writes (``RunOptions.on_write``) for what an end state cannot show:
the budget held at every instant of a drain, the Job's recreation delays, which node a
preemptor chose and why (the same cluster without its budget chooses the other node), and
how much the system-default spreading changes against a run without it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from emulator.app.scenario.loader import load_scenario, load_scenario_text
from emulator.app.scenario.runner import RunOptions, RunResult, run_scenario
from emulator.app.scenario.schema import Scenario
from emulator.base.api.core import Pod
from emulator.base.apiserver.server import WriteRecord

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS = ROOT / "scenarios" / "workloads"


def _run(scenario: Scenario) -> tuple[RunResult, list[WriteRecord]]:
    writes: list[WriteRecord] = []
    result = run_scenario(scenario, RunOptions(on_write=writes.append))
    return result, writes


def _variant(name: str, edit: Any) -> Scenario:
    """The scenario ``name`` with ``edit`` applied to its parsed YAML."""
    doc = yaml.safe_load((WORKLOADS / name).read_text())
    edit(doc)
    return load_scenario_text(yaml.safe_dump(doc), source=f"{name} (variant)", base_dir=WORKLOADS)


def _ready(pod: Pod | None) -> bool:
    if pod is None or pod.metadata.deletion_timestamp:
        return False
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)


def _pods_of(writes: list[WriteRecord], name_prefix: str) -> list[WriteRecord]:
    return [w for w in writes if w.kind == "Pod" and w.obj.metadata.name.startswith(name_prefix)]


def _labels(rec: WriteRecord) -> dict[str, str]:
    return dict(rec.obj.metadata.labels)


# --- rollout-drain-pdb ---------------------------------------------------------------------


def test_rollout_under_drain_never_evicts_below_the_budget() -> None:
    result, writes = _run(load_scenario(WORKLOADS / "rollout-drain-pdb.yaml"))
    assert result.passed, [e.detail for e in result.expectations if not e.passed]

    ready: dict[str, bool] = {}
    lowest_after_ready = None
    evictions: list[tuple[float, str, int]] = []
    for w in writes:
        if w.kind != "Pod" or _labels(w).get("app") != "checkout":
            continue
        ready[w.obj.metadata.name] = _ready(w.new)
        count = sum(ready.values())
        if w.verb == "evict":
            evictions.append((w.time, w.obj.metadata.name, count))
        if lowest_after_ready is not None or count == 6:
            lowest_after_ready = count if lowest_after_ready is None else min(lowest_after_ready, count)
    # node-a-0 held two replicas: one evicted at once, the other refused (429) until the new
    # pods were Ready, then evicted at a later 5 s retry.
    assert [name.rsplit("-", 2)[0] for _, name, _ in evictions] == ["checkout", "checkout"], evictions
    assert evictions[1][0] - evictions[0][0] >= 5.0, evictions
    # After every admitted eviction the budget's minAvailable (5) pods are still ready ...
    assert all(after >= 5 for _, _, after in evictions), evictions
    # ... and neither the rollout (maxUnavailable 1) nor the drain took the service lower.
    assert lowest_after_ready == 5

    on_drained = {
        w.obj.metadata.name: w.new for w in writes if w.kind == "Pod" and (w.new or w.old).spec.node_name == "node-a-0"
    }
    left = sorted(name for name, pod in on_drained.items() if pod is not None)
    assert [n.rsplit("-", 1)[0] for n in left] == ["log-agent"], left

    deploy = [w.new for w in writes if w.kind == "Deployment" and w.new is not None][-1]
    assert deploy.metadata.generation == 2
    assert deploy.status.updated_replicas == deploy.status.ready_replicas == 6


# --- job-backoff ---------------------------------------------------------------------------


def test_failing_job_backs_off_10_20_40_then_fails_and_indexed_job_completes() -> None:
    result, writes = _run(load_scenario(WORKLOADS / "job-backoff.yaml"))
    assert result.passed, [e.detail for e in result.expectations if not e.passed]

    creates = [w.time for w in _pods_of(writes, "db-migrate-") if w.verb == "create"]
    failures: list[float] = []
    for w in _pods_of(writes, "db-migrate-"):
        if w.new is not None and w.new.status.phase == "Failed" and (w.old is None or w.old.status.phase != "Failed"):
            failures.append(w.time)
    assert len(creates) == 4
    assert len(failures) == 4
    delays = [nxt - failed for failed, nxt in zip(failures, creates[1:], strict=False)]
    assert delays == pytest.approx([10.0, 20.0, 40.0], abs=1.0), delays

    jobs = {w.obj.metadata.name: w.new for w in writes if w.kind == "Job" and w.new is not None}
    failed = {c.type: c for c in jobs["db-migrate"].status.conditions}
    assert failed["Failed"].status == "True"
    assert failed["Failed"].reason == "BackoffLimitExceeded"
    assert jobs["db-migrate"].status.failed == 4

    thumbs = jobs["thumbnails"]
    assert {c.type for c in thumbs.status.conditions if c.status == "True"} >= {"Complete"}
    assert thumbs.status.succeeded == 6
    indexes = sorted(
        w.obj.metadata.labels["batch.kubernetes.io/job-completion-index"]
        for w in _pods_of(writes, "thumbnails-")
        if w.verb == "create"
    )
    assert indexes == ["0", "1", "2", "3", "4", "5"]
    running_at_once = _max_concurrent(_pods_of(writes, "thumbnails-"))
    assert running_at_once == 2


def _max_concurrent(writes: list[WriteRecord]) -> int:
    active: dict[str, bool] = {}
    most = 0
    for w in writes:
        pod = w.new
        active[w.obj.metadata.name] = pod is not None and pod.status.phase in ("Pending", "Running")
        most = max(most, sum(active.values()))
    return most


# --- daemonset-late-nodes ------------------------------------------------------------------


def test_daemonset_covers_each_eligible_node_once_through_the_scheduler() -> None:
    result, writes = _run(load_scenario(WORKLOADS / "daemonset-late-nodes.yaml"))
    assert result.passed, [e.detail for e in result.expectations if not e.passed]

    binds = [w for w in _pods_of(writes, "node-exporter-") if w.verb == "bind"]
    nodes = Counter(w.obj.spec.node_name for w in binds)
    assert sorted(nodes) == ["late-0", "late-1", "node-0", "node-1", "node-2"]
    assert set(nodes.values()) == {1}
    late = sorted(w.time for w in binds if w.obj.spec.node_name.startswith("late-"))
    assert late
    assert min(late) >= 60.0
    created = [w.new for w in _pods_of(writes, "node-exporter-") if w.verb == "create"]
    for pod in created:
        assert not pod.spec.node_name, "the controller must leave binding to the scheduler"
        terms = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms
        assert [f.key for t in terms for f in t.match_fields] == ["metadata.name"]
        # late-1 was cordoned before its pod was created: upstream's toleration lets it land.
        assert any(t.key == "node.kubernetes.io/unschedulable" for t in pod.spec.tolerations)
    cordoned = next(w.time for w in writes if w.kind == "Node" and w.new is not None and w.new.spec.unschedulable)
    assert cordoned <= next(w.time for w in binds if w.obj.spec.node_name == "late-1")
    ds = [w.new for w in writes if w.kind == "DaemonSet" and w.new is not None][-1]
    assert ds.status.desired_number_scheduled == 5
    assert ds.status.number_ready == 5


# --- daemonset-update-never-ready ----------------------------------------------------------


def test_daemonset_updates_that_never_become_ready_hold_one_node_down() -> None:
    """Upstream ``pkg/controller/daemon/update.go`` ``rollingUpdate`` since
    kubernetes/kubernetes#123233 (v1.31): a replaced unavailable old pod counts against
    maxUnavailable. Before, each of the three updates took one more node down (1 of 4 left)."""
    result, writes = _run(load_scenario(WORKLOADS / "daemonset-update-never-ready.yaml"))
    assert result.passed, [e.detail for e in result.expectations if not e.passed]

    ready: dict[str, bool] = {}
    most_down = 0
    for w in _pods_of(writes, "log-agent-"):
        ready[w.obj.metadata.name] = _ready(w.new)
        if w.time > 0 and len(ready) >= 4:
            most_down = max(most_down, 4 - sum(ready.values()))
    assert most_down == 1
    deletes = [w for w in _pods_of(writes, "log-agent-") if w.verb == "delete"]
    assert len({w.obj.spec.node_name for w in deletes}) == 1, "every update replaced the same node's pod"
    ds = [w.new for w in writes if w.kind == "DaemonSet" and w.new is not None][-1]
    assert (ds.status.number_available, ds.status.number_unavailable) == (3, 1)


# --- preemption-pdb ------------------------------------------------------------------------


def _preemption(scenario: Scenario) -> tuple[str, list[str]]:
    result, writes = _run(scenario)
    assert not result.waits_timed_out
    node = next(w.obj.spec.node_name for w in writes if w.verb == "bind" and w.obj.metadata.name == "payments-api")
    preempted = sorted(
        w.obj.metadata.name
        for w in writes
        if w.kind == "Pod"
        and w.verb == "updateStatus"
        and any(c.type == "DisruptionTarget" and c.reason == "PreemptionByScheduler" for c in w.new.status.conditions)
        and not any(c.type == "DisruptionTarget" for c in w.old.status.conditions)
    )
    return node, [n.rsplit("-", 2)[0] for n in preempted]


def test_preemptor_spares_the_pdb_protected_node() -> None:
    node, preempted = _preemption(load_scenario(WORKLOADS / "preemption-pdb.yaml"))
    assert (node, preempted) == ("node-1", ["reports"])


def test_without_the_budget_the_same_cluster_preempts_ledger() -> None:
    """The scenario is built so that the PDB decides: drop it and criterion 5 (latest start
    time of the victims) picks node-0, whose ledger pod started 10 s after reports."""

    def drop_pdb(doc: dict[str, Any]) -> None:
        doc["objects"] = [o for o in doc["objects"] if o["kind"] != "PodDisruptionBudget"]

    node, preempted = _preemption(_variant("preemption-pdb.yaml", drop_pdb))
    assert (node, preempted) == ("node-0", ["ledger"])


# --- default-spreading ---------------------------------------------------------------------

_NO_DEFAULTS = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": []}}
            ],
        }
    ],
}


def _zones(scenario: Scenario) -> dict[str, int]:
    result, writes = _run(scenario)
    assert not result.waits_timed_out
    nodes = {
        w.obj.metadata.name: w.obj.metadata.labels["topology.kubernetes.io/zone"] for w in writes if w.kind == "Node"
    }
    binds = [w.obj.spec.node_name for w in writes if w.verb == "bind"]
    assert len(binds) == 12
    return dict(sorted(Counter(nodes[n] for n in binds).items()))


def test_system_default_spreading_evens_out_unequal_zones() -> None:
    with_defaults = _zones(load_scenario(WORKLOADS / "default-spreading.yaml"))
    without = _zones(_variant("default-spreading.yaml", lambda doc: doc.__setitem__("scheduler", _NO_DEFAULTS)))
    assert with_defaults == {"zone-a": 6, "zone-b": 3, "zone-c": 3}
    # Without them, node spreading (LeastAllocated, equal nodes) follows the node count: about
    # two thirds in zone-a, which has two thirds of the nodes (ties among nodes drawn by seed).
    assert without["zone-a"] >= 8, without
    assert max(without.values()) - min(without.values()) > max(with_defaults.values()) - min(with_defaults.values())
