"""Race 7, preemption against a lower-priority newcomer (``scenarios/races/preemption-vs-newcomer.yaml``, seed 7).

`preemptor-0` (priority 1000, 4 CPUs) evicts both low-priority victims from `node-0` and is
nominated to it; the victims take 3-7 s to terminate. `newcomer-0` (priority 100, 2 CPUs)
arrives at t=6s. Between the first victim's end and the second's, 2 CPUs are free -- room for
the newcomer -- and the newcomer is attempted then (the victim's delete requeues it), but the
scheduler counts the nominated preemptor on the node and rejects it. The newcomer is never
bound while the preemptor waits; the preemptor runs on `node-0` once both victims are gone.
There is no switch for the nominator: the bad outcome (the newcomer bound into the nominated
room) is what the trace assertions below would catch.
"""

from __future__ import annotations

import pytest

from tests.races.racekit import Run, assert_passes, load, play

pytestmark = pytest.mark.slow

NAME = "preemption-vs-newcomer"
SEED = 7


def _check(run: Run) -> None:
    victims_gone = [
        w.time
        for w in run.writes
        if w.kind == "Pod" and w.verb == "delete" and w.new is None and w.old.metadata.name.startswith("victim-")
    ]
    assert len(victims_gone) == 2
    first_gone, last_gone = sorted(victims_gone)
    # The preemptor was nominated to node-0 (in the API) before any room was free.
    nominated = run.first(
        lambda w: w.kind == "Pod" and w.new is not None and w.new.status.nominated_node_name == "node-0"
    )
    assert nominated.obj.metadata.name == "preemptor-0"
    assert nominated.time < first_gone
    # Victims terminate gracefully: marked for deletion first, gone only later.
    marked = [
        w.time
        for w in run.writes
        if w.kind == "Pod" and w.verb == "delete" and w.new is not None and w.new.metadata.deletion_timestamp
    ]
    assert len(marked) == 2
    assert max(marked) < first_gone
    # After the victims, only the preemptor is bound: once both are gone, to the nominated node.
    later = [(t, pod, node) for t, pod, node in run.binds() if not pod.startswith("victim-")]
    assert [(pod, node) for _, pod, node in later] == [("preemptor-0", "node-0")]
    assert later[0][0] > last_gone
    # The newcomer was tried while the room was free, and rejected every time.
    window = [(t, sel) for t, pod, sel in run.attempts if pod == "default/newcomer-0" and first_gone < t < last_gone]
    assert window, "the newcomer was never attempted while 2 CPUs were free"
    assert all(sel is None for _, sel in window)
    assert_passes(run)


def test_the_newcomer_never_takes_the_nominated_room() -> None:
    _check(play(load(NAME), SEED, attempts=True))


@pytest.mark.parametrize("seed", range(6), ids=lambda s: f"seed{s}")
def test_for_any_termination_order(seed: int) -> None:
    _check(play(load(NAME), seed, attempts=True))
