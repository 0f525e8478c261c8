"""The reported Cluster Autoscaler behaviours shipped as regression scenarios
(``scenarios/regressions/ca-*.yaml``), each run on the release the thread reports and on the
one that fixed it: the removal simulation of ``simulator/cluster.go``
``RemovalSimulator.findPlaceFor`` as it was in 1.32.2 (``keepNode``), 1.32.3 to 1.34.3
(``removeNode``, kubernetes/autoscaler#8164) and 1.34.4 on (``taintedGhostNode``, #9288 /
#9559), against this project's scheduler (PodTopologySpread's ``nodeTaintsPolicy``)."""

from __future__ import annotations

from pathlib import Path

from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.apiserver.server import WriteRecord

ROOT = Path(__file__).resolve().parents[2]
OSCILLATION = ROOT / "scenarios" / "regressions" / "ca-topology-spread-oscillation.yaml"
NO_SCALE_DOWN = ROOT / "scenarios" / "regressions" / "ca-topology-spread-no-scale-down.yaml"
Event = tuple[float, str, str, str]


def _run(path: Path, *changes: tuple[str, str]) -> tuple[bool, dict[str, int], list[Event]]:
    text = path.read_text()
    for old, new in changes:
        assert old in text
        indent = " " * (len(text[: text.index(old)].rsplit("\n", 1)[1]))
        text = text.replace(old, new.format(indent=indent))
    events: list[Event] = []

    def on_write(rec: WriteRecord) -> None:
        if rec.kind == "Event" and rec.verb == "create":
            e = rec.new
            events.append((rec.time, e.reason, e.involved_object.name, e.message))

    result = run_scenario(
        load_scenario_text(text, source=str(path), base_dir=path.parent), RunOptions(on_write=on_write)
    )
    return result.passed, result.extra["metrics"]["autoscaler"], events


def _drains(events: list[Event]) -> list[float]:
    return [t for t, reason, _, m in events if reason == "ScaleDown" and m.startswith("Scale-down: removing node")]


def _scale_ups(events: list[Event]) -> list[float]:
    return sorted({t for t, reason, _, _ in events if reason == "TriggeredScaleUp"})


GHOST = ("removalSimulation: removeNode", "removalSimulation: taintedGhostNode")
HONOR = ("whenUnsatisfiable: DoNotSchedule\n", "whenUnsatisfiable: DoNotSchedule\n{indent}nodeTaintsPolicy: Honor\n")


def test_9287_scale_down_scale_up_oscillation_on_1_34_3() -> None:
    """kubernetes/autoscaler#9287: each scale-down's evicted pod is Unschedulable (the drained
    node, tainted, still counts as an empty domain) and the next loop scales up for it; again
    and again, with the Deployment ready in between."""
    passed, counters, events = _run(OSCILLATION)
    assert passed
    drains, ups = _drains(events), _scale_ups(events)
    assert len(drains) >= 3
    first_up = ups[0]  # the filler's
    for t in drains:
        refused = [
            e for e in events if e[1] == "FailedScheduling" and t <= e[0] <= t + 10 and e[2].startswith("spread-")
        ]
        assert refused, t
        assert (
            "1 node(s) had untolerated taint(s), 2 node(s) didn't match pod topology spread constraints"
            in refused[0][3]
        )
        assert any(t < u <= t + 20 for u in ups), t  # the next loop (scanInterval 10s) scales up
        # the replacement runs on the new node, the drained one goes: three nodes, one pod each
        placed = [e[3] for e in events if e[1] == "Scheduled" and e[2].startswith("spread-") and t < e[0] <= t + 40]
        assert len(placed) == 1
        assert int(placed[0].rsplit("-", 1)[1]) >= 3, placed  # workers-3 on: made after the filler's
    assert len([u for u in ups if u > first_up]) == len(drains)
    assert counters["scaleDowns"] == len(drains)
    assert counters["scaleUps"] == len(drains) + 1


def test_9287_fixed_from_1_34_4() -> None:
    """#9288 (1.34.4): the tainted ghost node keeps its domain in the simulation, as the drain
    keeps it for the scheduler. With nodeTaintsPolicy Ignore nothing is scaled down (nor up);
    with Honor the tainted node is no domain for either, and the cluster is consolidated for
    good (to one node: the group's minSize)."""
    passed, counters, events = _run(OSCILLATION, GHOST)
    assert passed
    assert _drains(events) == []
    assert counters == {"scaleUps": 1, "scaleDowns": 0, "nodesCreated": 3, "nodesRemoved": 0, "podsDisrupted": 0}
    passed, counters, events = _run(OSCILLATION, GHOST, HONOR)
    assert passed
    assert len(_drains(events)) == 2
    assert not [e for e in events if e[1] == "FailedScheduling" and e[2].startswith("spread-")]
    assert counters == {"scaleUps": 1, "scaleDowns": 2, "nodesCreated": 3, "nodesRemoved": 2, "podsDisrupted": 2}


def test_8162_no_scale_down_while_the_scheduler_would_place_the_pods() -> None:
    """kubernetes/autoscaler#8162 on 1.32.2: three nodes at 5% CPU are never scaled down (the
    simulation keeps the candidate as an empty domain), while the pod of a node deleted by hand
    is rescheduled next to another one by the scheduler."""
    passed, counters, events = _run(NO_SCALE_DOWN)
    assert passed
    assert _drains(events) == []
    assert (counters["scaleUps"], counters["scaleDowns"]) == (1, 0)
    rescheduled = [
        e
        for e in events
        if e[1] == "Scheduled"
        and e[0] > 600
        and e[2].startswith("spread-")
        and e[3].endswith(("workers-0", "workers-1"))
    ]
    assert len(rescheduled) == 1


def test_8162_fixed_in_1_34_3() -> None:
    """#8164 (1.32.3 to 1.34.3): the same cluster is scaled down (where #9287 begins)."""
    _, counters, events = _run(NO_SCALE_DOWN, ("removalSimulation: keepNode", "removalSimulation: removeNode"))
    drains = _drains(events)
    assert drains
    assert min(drains) < 600  # before the node deleted by hand
    assert counters["scaleDowns"] >= 1
