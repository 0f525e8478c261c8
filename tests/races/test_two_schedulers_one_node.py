"""Race 5, two schedulers and one node (``scenarios/races/two-schedulers-one-node.yaml``, seed 0).

Two instances of ``default-scheduler`` (``schedulerOptions.instances: 2``, no leader
election) and room for one 2-CPU pod. With seed 0 each instance first sees a different pod
and binds it into the same free room: both binds succeed, the kubelet admits one pod and
rejects the other (``OutOfcpu``, phase Failed), and the report shows it (``pods.failed``, the
failed ``podsFailed`` expectation). Seed 2: both see the same pod first; the API server
refuses the second bind (already assigned) and nothing fails. The "protection" is a single
active instance (what leader election guarantees): with ``instances: 1`` no seed fails.
"""

from __future__ import annotations

import pytest

from emulator.base.api.core import Event
from tests.races.racekit import Run, assert_invariants_hold, assert_passes, load, play, with_options

pytestmark = pytest.mark.slow

NAME = "two-schedulers-one-node"
BOTH_BIND_SEED = 0
SAME_POD_SEED = 2
FAILING = [0, 1, 6, 7]
"""Seeds of 0..7 where the two instances bind different pods into the room."""


def _scheduled_by(run: Run) -> dict[str, str]:
    """Pod name -> the instance that recorded its ``Scheduled`` Event."""
    events = [w.new for w in run.writes if w.kind == "Event" and isinstance(w.new, Event)]
    return {e.involved_object.name: e.reporting_component for e in events if e.reason == "Scheduled"}


def test_both_instances_bind_and_the_kubelet_rejects_the_loser() -> None:
    run = play(load(NAME), BOTH_BIND_SEED)
    assert sorted((pod, node) for _, pod, node in run.binds()) == [("web-0", "node-0"), ("web-1", "node-0")]
    by = _scheduled_by(run)
    assert sorted(by) == ["web-0", "web-1"]
    assert by["web-0"] != by["web-1"], by  # one pod per instance
    loser = run.first(lambda w: w.kind == "Pod" and w.new is not None and w.new.status.phase == "Failed")
    assert loser.new.status.reason == "OutOfcpu"
    assert loser.obj.metadata.name == max(run.binds())[1]  # the later bind loses
    # The report shows it.
    assert run.result.pods == {"total": 2, "pending": 0, "running": 1, "succeeded": 0, "failed": 1}
    assert run.report("scheduling")["instances"] == 2
    assert run.report("scheduling")["bound"] == 2
    assert run.failed_expectations() == ["podsFailed: 0", "podsPending: 1 matching 'app=web'"]
    # Admission kept the node within its allocatable: the invariants hold.
    assert_invariants_hold(run)


def test_same_pod_first_the_api_server_settles_it() -> None:
    run = play(load(NAME), SAME_POD_SEED)
    assert [pod for _, pod, _ in run.binds()] == ["web-0"]
    refused = run.first(lambda w: w.kind == "Event" and "already assigned" in w.obj.message)
    assert refused.obj.involved_object.name == "web-0"
    assert refused.obj.message == (
        'running Bind plugin "DefaultBinder": Operation cannot be fulfilled on pods/binding "web-0": '
        'pod web-0 is already assigned to node "node-0"'
    )
    assert refused.obj.reporting_component != _scheduled_by(run)["web-0"]
    assert_passes(run)


def test_the_race_depends_on_the_seed() -> None:
    failing = [s for s in range(8) if play(load(NAME), s).result.pods["failed"]]
    assert failing == FAILING


@pytest.mark.parametrize("seed", range(8), ids=lambda s: f"seed{s}")
def test_one_instance_never_double_books(seed: int) -> None:
    run = play(with_options(load(NAME), instances=1), seed)
    assert [pod for _, pod, _ in run.binds()] == ["web-0"]
    assert run.result.pods["pending"] == 1
    assert_passes(run)
