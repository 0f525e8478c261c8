"""``scenarios/gpu-claims.yaml``: what the resourceclaim controller and the simulated DRA driver
write, whatever the scheduler does with the claims: one claim per pod made from the template
(named ``<pod>-gpu-<5>``, annotated, owned by its pod, recorded in its status), one
ResourceSlice per GPU node (upstream's naming, the node's pool, four A100s), none on the CPU
nodes; the same seed, the same objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from emulator.app.scenario.loader import load_scenario, load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.api.resource import POD_CLAIM_NAME_ANNOTATION
from emulator.base.apiserver.server import WriteRecord

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "gpu-claims.yaml"


def _run() -> tuple[dict[tuple[str, str], Any], str]:
    """The last version of every Pod, ResourceClaim and ResourceSlice written, and the hash."""
    last: dict[tuple[str, str], Any] = {}

    def keep(w: WriteRecord) -> None:
        if w.kind in ("Pod", "ResourceClaim", "ResourceSlice"):
            obj = w.new if w.new is not None else w.obj
            key = (w.kind, obj.metadata.name)
            if w.verb == "delete" and w.new is None:
                last.pop(key, None)
            else:
                last[key] = obj

    result = run_scenario(load_scenario(SCENARIO), RunOptions(on_write=keep))
    assert result.passed, [e for e in result.expectations if not e.passed]
    return last, result.trace_hash


def test_one_claim_per_pod_and_one_slice_per_gpu_node() -> None:
    objects, _ = _run()
    pods = {name: o for (kind, name), o in objects.items() if kind == "Pod"}
    claims = {name: o for (kind, name), o in objects.items() if kind == "ResourceClaim"}
    slices = [o for (kind, _), o in objects.items() if kind == "ResourceSlice"]
    assert len(pods) == len(claims) == 12
    for name, claim in claims.items():
        (owner,) = claim.metadata.owner_references
        assert (owner.kind, owner.controller, owner.block_owner_deletion) == ("Pod", True, True)
        assert name.startswith(f"{owner.name}-gpu-")
        assert claim.metadata.annotations[POD_CLAIM_NAME_ANNOTATION] == "gpu"
        (status,) = pods[owner.name].status.resource_claim_statuses
        assert (status.name, status.resource_claim_name) == ("gpu", name)
    assert sorted(s.spec.node_name for s in slices) == ["gpu-node-0", "gpu-node-1"]
    for s in slices:
        assert s.metadata.name.startswith(f"{s.spec.node_name}-gpu.example.com-")
        assert (s.spec.pool.name, s.spec.pool.generation, s.spec.pool.resource_slice_count) == (s.spec.node_name, 1, 1)
        assert [d.name for d in s.spec.devices] == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]
        assert s.spec.devices[0].attributes["model"].string_value == "A100"


def test_the_same_seed_makes_the_same_claims_and_slices() -> None:
    first, first_hash = _run()
    again, again_hash = _run()
    assert sorted(first) == sorted(again)
    assert first_hash == again_hash


def test_resource_slices_given_as_manifests_need_no_driver(tmp_path: Path) -> None:
    text = """\
name: slices
nodes:
  - count: 1
    namePrefix: n-
    template: {status: {capacity: {cpu: "4", pods: "110"}}}
objects:
  - apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: n-0-gpu}
    spec:
      driver: gpu.example.com
      nodeName: n-0
      pool: {name: n-0, generation: 1, resourceSliceCount: 1}
      devices: [{name: gpu-0}]
expect:
  - objectCount: {kind: ResourceSlice, count: 1}
"""
    result = run_scenario(load_scenario_text(text, source="s.yaml", base_dir=tmp_path))
    assert result.passed, result.expectations
    assert not any("draDrivers" in a for a in result.extra["agents"])
