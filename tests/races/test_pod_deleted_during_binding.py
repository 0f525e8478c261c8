"""Race 3, a pod deleted during its binding cycle (``scenarios/races/pod-deleted-during-binding.yaml``, seed 3).

`doomed-0` is assumed on `node-0` and its bind is slowed by 2 s; the runner deletes it at
t=2s. Its bind then fails with NotFound, so it never reaches the server; the scheduler
forgets the assumed pod, which requeues `next-0` (parked at t=2.5s because `doomed-0` held
the node's 2 CPUs) and `next-0` runs on `node-0`. Nothing leaks: no pod stays assumed and
the cache's totals are exact (cacheMatchesApiServer). No switch turns this off.
"""

from __future__ import annotations

import pytest

from tests.races.racekit import assert_passes, load, play

pytestmark = pytest.mark.slow

NAME = "pod-deleted-during-binding"
SEED = 3


def test_bind_gets_not_found_and_the_room_is_given_back() -> None:
    run = play(load(NAME), SEED)
    deleted = run.first(lambda w: w.kind == "Pod" and w.verb == "delete")
    assert (deleted.obj.metadata.name, deleted.obj.spec.node_name) == ("doomed-0", "")
    # The deleted pod's bind never reached the server; only next-0 was bound.
    assert [(pod, node) for _, pod, node in run.binds()] == [("next-0", "node-0")]
    failure = run.first(lambda w: w.kind == "Event" and w.obj.involved_object.name == "doomed-0")
    assert (failure.obj.reason, failure.obj.message) == (
        "FailedScheduling",
        'running Bind plugin "DefaultBinder": pods "doomed-0" not found',
    )
    # next-0 was rejected while doomed-0 was still assumed on the node...
    parked = run.pod_writes("next-0", "updateStatus")[0]
    cond = next(c for c in parked.new.status.conditions if c.type == "PodScheduled")
    assert cond.reason == "Unschedulable"
    assert cond.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    # ...and requeued by the forget: bound once the failed bind (2 s on the wire) returned.
    bound_at = run.binds()[0][0]
    assert deleted.time < parked.time < failure.time < bound_at
    scheduling = run.report("scheduling")
    assert (scheduling["errors"], scheduling["unschedulable"], scheduling["bound"]) == (1, 1, 1)
    assert_passes(run)


@pytest.mark.parametrize("seed", range(6), ids=lambda s: f"seed{s}")
def test_nothing_leaks_for_any_seed(seed: int) -> None:
    run = play(load(NAME), seed)
    assert [(pod, node) for _, pod, node in run.binds()] == [("next-0", "node-0")]
    assert_passes(run)
