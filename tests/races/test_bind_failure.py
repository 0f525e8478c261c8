"""Race 2, a bind failure (``scenarios/races/bind-failure.yaml``, seed 14).

The scheduler's binds fail with an injected Conflict (probability 0.5, at most 3). With
seed 14 all three hit `web-0`: each failure runs Unreserve and forgets the assumed pod,
the pod backs off (1 s, 2 s, 4 s: consecutive errors) and a later attempt binds it. The
other three pods are bound meanwhile, into room the forgotten pod no longer holds; at the
end every pod runs and the cache's totals match the API server exactly. There is no switch
to turn the protection (forget on failure) off: the bad outcome would be a room still held
by a forgotten pod, which the cacheMatchesApiServer invariant and the full cluster catch.
"""

from __future__ import annotations

import pytest

from emulator.base.api.core import Event
from tests.races.racekit import assert_passes, load, play

pytestmark = pytest.mark.slow

NAME = "bind-failure"
SEED = 14
INJECTED = "Operation cannot be fulfilled on pods/binding: injected by faults[0]"


def test_three_bind_conflicts_on_one_pod_then_success() -> None:
    run = play(load(NAME), SEED)
    assert run.injected() == [3]
    scheduling = run.report("scheduling")
    assert (scheduling["errors"], scheduling["bound"], scheduling["attempts"]) == (3, 4, 7)
    # The failure is reported on the pod (SchedulerError) and as Events.
    failed = run.pod_writes("web-0", "updateStatus")[0]
    cond = next(c for c in failed.new.status.conditions if c.type == "PodScheduled")
    assert (cond.status, cond.reason) == ("False", "SchedulerError")
    assert cond.message == f'running Bind plugin "DefaultBinder": {INJECTED}'
    events = [w.new for w in run.writes if w.kind == "Event" and w.new is not None]
    warnings = [e for e in events if isinstance(e, Event) and e.reason == "FailedScheduling"]
    assert {e.involved_object.name for e in warnings} == {"web-0"}
    # events/v1: the first failure's status update changed the pod's resourceVersion (part of
    # the series key), so failure 2 is a new Event and failure 3 its series (count 2).
    assert max(e.series.count if e.series else 1 for e in warnings) == 2
    # Backoff: 1 s + 2 s + 4 s at least between the first failure and the bind.
    (bound_at, _, _), *_ = [b for b in run.binds() if b[1] == "web-0"]
    assert bound_at - failed.time >= 1 + 2 + 4
    # The other pods were bound meanwhile, first come first served: no room was held.
    others = [t for t, pod, _ in run.binds() if pod != "web-0"]
    assert len(others) == 3
    assert max(others) < 1.0
    assert_passes(run)


@pytest.mark.parametrize("seed", range(8), ids=lambda s: f"seed{s}")
def test_every_seed_recovers_with_an_exact_cache(seed: int) -> None:
    run = play(load(NAME), seed)
    # Every injected Conflict was an error of the binding cycle, and was recovered from.
    assert run.report("scheduling")["errors"] == run.injected()[0]
    assert len({pod for _, pod, _ in run.binds()}) == 4
    assert_passes(run)
