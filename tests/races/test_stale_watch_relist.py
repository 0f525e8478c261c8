"""Race 8, a stale watch and a relist (``scenarios/races/stale-watch-relist.yaml``, seed 8).

At t=5s the scheduler's watches are cut with a relist, and its lists fail until t=8s: its
informers back off and list again only at t≈10.6s. Meanwhile two running pods are deleted
and six new pods created -- events the scheduler never sees as watch events. The relist's
diff deletes the two pods from its cache and adds the six; they are bound in one burst into
exactly the room there is. Nothing is double-booked (noDoubleBinding, noOvercommit, no pod
rejected by a kubelet) and the cache converges (cacheMatchesApiServer).

The protection against double booking during such a burst is the assume cache: with
``assumeCache: false`` the burst is scheduled on a cache that learns of each binding only
from the watch, and with seed 8 two pods are double-booked and rejected (``OutOfcpu``; the
``podsFailed`` expectation catches it).
"""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from emulator.app.scenario.schema import WatchCut
from tests.races.racekit import Run, assert_invariants_hold, assert_passes, load, play, with_options

pytestmark = pytest.mark.slow

NAME = "stale-watch-relist"
SEED = 8
CUT_AT, LISTS_FAIL_UNTIL = 5.0, 8.0


def _burst(run: Run) -> list[tuple[float, str, str]]:
    return [b for b in run.binds() if b[1].startswith("second-")]


def test_missed_events_are_recovered_by_the_relist() -> None:
    run = play(load(NAME), SEED)
    assert run.injected() == [3, 9]  # three watches cut (Pod, Node, Namespace), nine lists failed
    missed = [w.time for w in run.writes if w.kind == "Pod" and CUT_AT < w.time < LISTS_FAIL_UNTIL]
    assert len(missed) == 2 * 3 + 6  # two graceful deletes (mark, terminal status, remove), six creates
    burst = _burst(run)
    assert len(burst) == 6
    # Nothing was scheduled before the relist (after the lists' 0.8 + 1.6 + 3.2 s backoff).
    assert min(t for t, _, _ in burst) > CUT_AT + 0.8 + 1.6 + 3.2
    # Exactly the room there was: 4 CPUs per node, two `first` pods left.
    survivors = [
        w.obj.spec.node_name for w in run.writes if w.verb == "bind" and w.obj.metadata.name in ("first-2", "first-3")
    ]
    per_node = {n: survivors.count(n) for n in ("node-0", "node-1")}
    assert {n: per_node[n] + [b[2] for b in burst].count(n) for n in per_node} == {"node-0": 4, "node-1": 4}
    assert_passes(run)


def test_without_the_assume_cache_the_burst_double_books() -> None:
    run = play(with_options(load(NAME), assume_cache=False), SEED)
    assert len(_burst(run)) == 6
    rejected = [w for w in run.writes if w.kind == "Pod" and w.new is not None and w.new.status.phase == "Failed"]
    assert [w.new.status.reason for w in rejected] == ["OutOfcpu", "OutOfcpu"]
    assert "podsFailed: 0" in run.failed_expectations()
    assert_invariants_hold(run)  # the kubelets refused the overcommit


@pytest.mark.parametrize("relist", [pytest.param(True, id="relist"), pytest.param(False, id="resume")])
@pytest.mark.parametrize("seed", range(4), ids=lambda s: f"seed{s}")
def test_the_cache_converges_for_any_seed(seed: int, relist: bool) -> None:
    scenario = load(NAME)
    faults = [replace(f, relist=relist) if isinstance(f, WatchCut) else f for f in scenario.faults]
    run = play(replace(scenario, faults=faults), seed)
    assert len(_burst(run)) == 6
    assert_passes(run)
