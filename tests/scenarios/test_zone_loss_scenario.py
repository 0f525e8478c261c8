"""scenarios/zone-loss-database.yaml: a StatefulSet on zonal disks loses zone A; its zone-A
replica comes back with the same claim, still Bound to a zone-A volume, and stays Pending with
upstream's volume node affinity conflict instead of moving."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.apiserver.server import WriteRecord

ROOT = Path(__file__).resolve().parents[2]
CONFLICT = (
    "0/4 nodes are available: 4 node(s) had volume node affinity conflict. no new claims to deallocate, "
    "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
)


def test_the_lost_zones_replica_keeps_its_disk_and_stays_pending_with_the_conflict() -> None:
    last: dict[tuple[str, str], Any] = {}
    binds: list[tuple[str, str]] = []

    def on_write(rec: WriteRecord) -> None:
        if rec.obj is not None:
            last[(rec.obj.kind, rec.obj.metadata.name)] = rec.obj
        if rec.verb == "bind":
            binds.append((rec.obj.metadata.name, rec.obj.spec.node_name))

    result = run_scenario(load_scenario(ROOT / "scenarios" / "zone-loss-database.yaml"), RunOptions(on_write=on_write))
    assert result.passed
    # one replica per zone at first, each disk provisioned in its pod's zone
    assert sorted(node[0] for _, node in binds[:3]) == ["a", "b", "c"]
    claim = last[("PersistentVolumeClaim", "data-db-0")]
    volume = last[("PersistentVolume", claim.spec.volume_name)]
    assert claim.status.phase == "Bound"
    [term] = volume.spec.node_affinity.required.node_selector_terms
    assert [(r.key, r.values) for r in term.match_expressions] == [("topology.kubernetes.io/zone", ["zone-a"])]
    # db-0 made again after zone A's nodes went: same claim, no node, upstream's reason
    pod = last[("Pod", "db-0")]
    assert pod.spec.node_name == ""
    [scheduled] = [c for c in pod.status.conditions if c.type == "PodScheduled"]
    assert (scheduled.status, scheduled.reason, scheduled.message) == ("False", "Unschedulable", CONFLICT)
    assert [v.persistent_volume_claim.claim_name for v in pod.spec.volumes if v.persistent_volume_claim] == [
        "data-db-0"
    ]
