"""Race 4, a node deleted during the binding cycle (``scenarios/races/node-deleted-during-binding.yaml``, seed 4).

`ghost-0` is assumed on `node-0`, its bind slowed by 2 s; the runner deletes `node-0` at
t=2s. The binding is accepted (the API server does not check the node), so the pod is bound
to a ghost node -- but it never runs: no kubelet admits it (no ``startTime``, never phase
Running). Pod GC finds it orphaned, and after the missing node's 40 s quarantine marks it
Failed (DisruptionTarget / DeletionByPodGC) and force-deletes it. The scheduler's cache ends
without the node and the pod. No switch turns this off.
"""

from __future__ import annotations

import pytest

from tests.races.racekit import Run, assert_passes, load, play

pytestmark = pytest.mark.slow

NAME = "node-deleted-during-binding"
SEED = 4
QUARANTINE = 40.0


def _never_ran(run: Run) -> None:
    writes = run.pod_writes("ghost-0")
    assert writes, "the pod was never created"
    for w in writes:
        pod = w.new
        if pod is not None:
            assert pod.status.phase != "Running", f"ghost-0 running at t={w.time:g}s"
            assert not pod.status.start_time, f"ghost-0 admitted at t={w.time:g}s"


def test_bound_to_a_ghost_node_never_runs_and_pod_gc_deletes_it() -> None:
    run = play(load(NAME), SEED)
    node_gone = run.first(lambda w: w.kind == "Node" and w.verb == "delete")
    assert node_gone.obj.metadata.name == "node-0"
    [(bound_at, pod, node)] = run.binds()
    assert (pod, node) == ("ghost-0", "node-0")
    assert bound_at > node_gone.time  # the bind landed after the node was gone
    _never_ran(run)
    failed = run.first(lambda w: w.kind == "Pod" and w.new is not None and w.new.status.phase == "Failed")
    cond = next(c for c in failed.new.status.conditions if c.type == "DisruptionTarget")
    assert (cond.status, cond.reason) == ("True", "DeletionByPodGC")
    assert failed.time - node_gone.time >= QUARANTINE
    deleted = run.pod_writes("ghost-0", "delete")
    assert [w.time >= failed.time for w in deleted] == [True]
    assert run.result.pods["total"] == 0
    assert run.report("controllers")["podgc"]["orphaned"] == 1
    assert_passes(run)


@pytest.mark.parametrize("seed", range(4), ids=lambda s: f"seed{s}")
def test_never_running_on_a_ghost_node_for_any_seed(seed: int) -> None:
    run = play(load(NAME), seed)
    _never_ran(run)
    assert run.result.pods["total"] == 0
    assert_passes(run)
