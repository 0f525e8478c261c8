"""The whole pod template, modelled or not, is the template: an ``update`` that changes only a
container's ``env`` bumps the Deployment's generation and rolls out a new ReplicaSet (upstream's
``controller.ComputeHash`` in pkg/controller/controller_utils.go hashes the whole template and
``EqualIgnoreHash`` in pkg/controller/deployment/util compares it whole), and every pod keeps
the env of the template it was made from (its own copy, never its owner's current one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.api.codec import to_builtins
from emulator.base.api.unmodelled import lift
from emulator.base.apiserver.records import WriteRecord

SCENARIO = Path(__file__).parents[2] / "scenarios" / "workloads" / "rollout-env-change.yaml"


def _env(obj: Any, *path: str) -> str:
    spec = lift(to_builtins(obj))
    for step in path:
        spec = spec[step]
    (container,) = spec["containers"]
    return str(container["env"][0]["value"])


@pytest.mark.slow
def test_an_env_only_update_rolls_out_and_pods_keep_their_own_env() -> None:
    writes: list[WriteRecord] = []
    result = run_scenario(load_scenario(SCENARIO), RunOptions(seed=5, on_write=writes.append))
    assert result.passed
    sets = [w.new for w in writes if w.kind == "ReplicaSet" and w.verb == "create"]
    assert [_env(rs, "spec", "template", "spec") for rs in sets] == ["info", "debug"]
    hashes = {rs.metadata.labels["pod-template-hash"]: _env(rs, "spec", "template", "spec") for rs in sets}
    assert len(hashes) == 2
    deployment = next(w.new for w in reversed(writes) if w.kind == "Deployment" and w.new is not None)
    assert deployment.metadata.generation == 2
    pods = [w.new for w in writes if w.kind == "Pod" and w.verb == "create"]
    assert len(pods) == 6
    for pod in pods:  # each pod carries its own ReplicaSet's env, as its template had it
        assert _env(pod, "spec") == hashes[pod.metadata.labels["pod-template-hash"]]
    final = {w.new.metadata.name: w.new for w in writes if w.kind == "Pod" and w.new is not None}
    assert (
        sorted(_env(p, "spec") for p in final.values() if p.metadata.deletion_timestamp is None)[-3:] == ["debug"] * 3
    )
