"""A pod held back only by a preemptor's nomination runs as soon as the preemptor is deleted.

The preemptor (at 5 s) evicts ``victim`` (30 s to terminate) and is nominated to the only node;
``blocked`` (at 10 s) does not fit beside the victim plus the nominated preemptor. Deleting the
preemptor at 20 s frees its reservation: upstream's NodeResourcesFit hint queues ``blocked``
then, so it is bound at 20 s, not when the victim is finally gone at 35 s.
"""

from __future__ import annotations

from pathlib import Path

from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.apiserver.server import WriteRecord

SCENARIO = """
name: nominated-preemptor-deleted
seed: 1
kubelet:
  termination: {mean: 30s}
objects:
  - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: low}, value: 100}
  - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1000}
nodes:
  - count: 1
    namePrefix: node
    template:
      status: {capacity: {cpu: "4", memory: 16Gi, pods: "110"}}
steps:
  - create:
      - apiVersion: v1
        kind: Pod
        metadata: {name: victim}
        spec:
          priorityClassName: low
          containers: [{name: c, image: busybox, resources: {requests: {cpu: "3"}}}]
  - waitFor: {condition: podsRunning, timeout: 1m}
  - at: 5s
    create:
      - apiVersion: v1
        kind: Pod
        metadata: {name: preemptor}
        spec:
          priorityClassName: high
          containers: [{name: c, image: busybox, resources: {requests: {cpu: "3"}}}]
  - at: 10s
    create:
      - apiVersion: v1
        kind: Pod
        metadata: {name: blocked}
        spec:
          preemptionPolicy: Never
          containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
  - at: 20s
    delete: {kind: Pod, name: preemptor}
"""


def test_blocked_pod_binds_when_the_nominated_preemptor_is_deleted() -> None:
    writes: list[tuple[float, str, str]] = []

    def on_write(rec: WriteRecord) -> None:
        if rec.obj.kind == "Pod" and rec.verb in ("bind", "delete"):
            writes.append((rec.time, rec.verb, rec.obj.metadata.name))

    scenario = load_scenario_text(SCENARIO, source="<test>", base_dir=Path.cwd())
    assert run_scenario(scenario, RunOptions(on_write=on_write)).passed
    bound = [t for t, verb, name in writes if verb == "bind" and name == "blocked"]
    victim_gone = max(t for t, verb, name in writes if verb == "delete" and name == "victim")
    assert bound == [20.0], writes
    assert victim_gone == 35.0, "the victim must still be terminating when blocked is bound"
