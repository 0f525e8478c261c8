"""``RunBook`` (the run's five write listeners fed as one) against the five called one by one:
the same state in every object after the same writes, hence the same documents.

Two levels: whole runs of scenarios (preemption, faults, DRA claims, the Cluster Autoscaler's
cost, workloads with waits) with ``RunOptions(plain_listeners=True)`` and without, compared as
the whole JSON report (wall-clock fields aside) and the trace file byte for byte; and random
write sequences fed to both by hand (binds, double binds, moves, admission, resizes with
status resources, terminal phases, evictions, preemptions, unschedulable messages, deletes,
node allocatable changes and deletes, HTTP agents), compared object by object (the checker's
per-pod bind and admission, which ``RunBook`` keeps in the observer's per-pod record, against
the checker's own dicts)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from emulator.app.scenario import bookkeeping, observe
from emulator.app.scenario.bookkeeping import RunBook
from emulator.app.scenario.cost import CostMeter
from emulator.app.scenario.event_trace import TraceRecorder
from emulator.app.scenario.invariants import InvariantChecker
from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.monitor import PodActivity
from emulator.app.scenario.observe import Observer
from emulator.app.scenario.observe_series import series
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.app.scenario.summary import to_json
from emulator.base.api.core import ContainerStatus, PodCondition, ResourceRequirements
from emulator.base.api.quantity import parse_quantity
from emulator.base.apiserver.server import WriteRecord
from tests import builders

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = [
    ("scenarios/preemption.yaml", None),
    ("scenarios/faults-demo.yaml", None),
    ("scenarios/gpu-claims.yaml", None),
    ("scenarios/cluster-autoscaler-burst.yaml", 600.0),
    ("scenarios/zone-loss-database.yaml", None),
    ("bench/scenarios/churn-1000nodes-1h.yaml", 30.0),
]


def _without_wall(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _without_wall(v) for k, v in doc.items() if "wall" not in k.lower() and "cpuSeconds" not in k}
    if isinstance(doc, list):
        return [_without_wall(v) for v in doc]
    return doc


@pytest.mark.parametrize(("path", "until"), SCENARIOS, ids=[p for p, _ in SCENARIOS])
def test_a_run_reports_the_same_through_one_listener(path: str, until: float | None) -> None:
    scenario = load_scenario(ROOT / path)
    docs, traces = [], []
    for plain in (True, False):
        out = io.BytesIO()
        result = run_scenario(scenario, RunOptions(until=until, trace=out, plain_listeners=plain))
        docs.append(_without_wall(to_json(result)))
        traces.append(out.getvalue())
    assert traces[0] == traces[1]
    assert docs[0] == docs[1]


@pytest.mark.parametrize("cap", [5, 15])
def test_pieces_added_in_small_batches_report_the_same(monkeypatch: pytest.MonkeyPatch, cap: int) -> None:
    """The cluster's logged pieces added at every ``cap`` numbers (one or three pieces, mid-run,
    by ``RunBook._assign`` and by ``Observer._changed``), through either listener, report what
    the default batches report."""
    scenario = load_scenario(ROOT / "scenarios/cluster-autoscaler-burst.yaml")
    want = _without_wall(to_json(run_scenario(scenario, RunOptions(until=600.0))))
    monkeypatch.setattr(bookkeeping, "MAX_PIECES", cap)
    monkeypatch.setattr(observe, "MAX_PIECES", cap)
    for plain in (True, False):
        got = _without_wall(to_json(run_scenario(scenario, RunOptions(until=600.0, plain_listeners=plain))))
        assert got == want


# --- random writes, by hand ------------------------------------------------------------------


def _five() -> tuple[InvariantChecker, TraceRecorder, PodActivity, Observer, CostMeter]:
    observer, cost = Observer(), CostMeter({"g": 0.5})
    observer.samplers.append(cost)
    return InvariantChecker(), TraceRecorder(io.BytesIO()), PodActivity(), observer, cost


def _state(five: tuple[InvariantChecker, TraceRecorder, PodActivity, Observer, CostMeter], end: float) -> Any:
    checker, tracer, activity, observer, cost = five
    assert isinstance(tracer._out, io.BytesIO)
    observer.sample_until(end, inclusive=True)
    return {
        "trace": tracer._out.getvalue(),
        "lines": tracer.lines,
        "checker": (
            [t.result(n) for n, t in checker._tallies.items()],
            checker._alloc,
            checker._used,
            checker._ports,
            checker._admitted or {u: p.admitted for u, p in observer.pods.items() if p.admitted is not None},
            checker._bound or {u: p.bound_to for u, p in observer.pods.items() if p.bound_to is not None},
            checker._created,
            checker.overcommits,
            checker.last_revision,
            checker.bind_writes,
        ),
        "activity": activity.last_write,
        "metrics": observer.metrics(end),
        "summaries": [(s.total, s.integral, s.peak, list(s.spent.items())) for s in observer.summaries],
        "series": series(observer, end),
        "slots": [
            (n.name, n.since, n.alive.tobytes(), [v.tobytes() for v in n.sums], n.pods_at_end.tobytes())
            for n in observer.nodes.values()
        ],
        "pods": {
            uid: (p.key, p.created, p.phase, p.bound_at, p.node, p.requests, p.finished, p.message, p.disrupted)
            for uid, p in observer.pods.items()
        },
        "observer": (observer.phases, observer.slowest, list(observer.timeline or ()), observer.unfinished),
        "cost": (cost.document(end), cost.series_document(end)),
    }


def _cond(kind: str, status: str, reason: str = "", message: str = "") -> PodCondition:
    return PodCondition(type=kind, status=status, reason=reason, message=message)


_CONDITIONS = [
    _cond("PodScheduled", "False", "Unschedulable", "0/2 nodes are available"),
    _cond("PodScheduled", "False", "Unschedulable", "another message"),
    _cond("PodScheduled", "True"),
    _cond("PodScheduled", "Unknown", "Odd", "unknown"),
    _cond("DisruptionTarget", "True", "PreemptionByScheduler", "preempted"),
    _cond("DisruptionTarget", "True", "EvictionByEvictionAPI"),
    _cond("DisruptionTarget", "True", "DeletionByPodGC"),
    _cond("DisruptionTarget", "False", "PreemptionByScheduler"),
    _cond("Ready", "True"),
]

_OP = st.tuples(
    st.sampled_from(["create", "bind", "status", "phase", "conditions", "move", "resize", "delete", "node"]),
    st.integers(0, 3),  # pod (or node) index
    st.integers(0, 2),  # a choice within the op
    st.sampled_from([0.0, 0.0, 0.5, 1.0, 7.0, 130.0]),  # time step
    st.sampled_from(["", "", "kubectl"]),
)


@settings(max_examples=300, deadline=None)
@given(ops=st.lists(_OP, min_size=5, max_size=60))
def test_random_writes_leave_the_same_state(ops: list[tuple[str, int, int, float, str]]) -> None:
    plain, fused = _five(), _five()
    book = RunBook(*fused)
    rev, t = 0, 0.0
    pods: dict[int, Any] = {}
    nodes: dict[int, Any] = {}
    node_names = ["n0", "n1", "n2"]
    containers = [builders.pod("x", cpu="1", memory="1Gi").spec.containers, None]

    def write(verb: str, kind: str, old: Any, new: Any, agent: str) -> None:
        nonlocal rev
        rev += 1
        rec = WriteRecord(rev, t, verb, kind, old, new, agent)  # type: ignore[arg-type]
        for listener in plain:
            listener(rec)
        book.record(rec)

    for i, name in enumerate(node_names[:2]):
        nodes[i] = builders.node(name, cpu="2", memory="4Gi", ready="True", labels={"kwok-nodegroup": "g"})
        write("create", "Node", None, nodes[i], "")
    for op, i, choice, step, agent in ops:
        t += step
        pod = pods.get(i)
        if pod is None and op != "node":
            op = "create"
        if op == "create" and pod is None:
            shared = containers[0] if choice == 0 else None
            new = builders.pod(
                f"p{i}-{rev}", uid=f"u{i}-{rev}", cpu="1500m" if choice == 2 else "1", memory="1Gi", phase="Pending"
            )
            if shared is not None:
                new = replace(new, spec=replace(new.spec, containers=shared))
            if choice == 1:
                new = replace(new, spec=replace(new.spec, node_name=node_names[i % 3]))
            pods[i] = new
            write("create", "Pod", None, new, agent)
        elif op == "node":
            j = i % 3
            old = nodes.get(j)
            if choice == 0 and old is not None:
                write("delete", "Node", old, None, agent)
                del nodes[j]
                continue
            new = builders.node(
                node_names[j], cpu="4" if choice == 1 else "2", memory="4Gi", ready="True" if choice else "False"
            )
            if old is not None and choice == 2:  # conditions only: the allocatable objects kept
                new = replace(old, status=replace(old.status, conditions=new.status.conditions))
            nodes[j] = new
            write("create" if old is None else "updateStatus", "Node", old, new, agent)
        elif pod is None:
            continue
        elif op == "bind" or op == "move":
            node = node_names[(i + choice) % 3] if op == "bind" or choice else ""
            conds = [*pod.status.conditions, _cond("PodScheduled", "True")]
            new = replace(pod, spec=replace(pod.spec, node_name=node), status=replace(pod.status, conditions=conds))
            pods[i] = new
            write("bind" if op == "bind" else "update", "Pod", pod, new, agent)
        elif op == "status":
            new = replace(
                pod, status=replace(pod.status, start_time="2026-01-01T00:00:00Z", reason=["", "R"][choice % 2])
            )
            pods[i] = new
            write("updateStatus", "Pod", pod, new, agent)
        elif op == "phase":
            phase = ["Running", "Succeeded", "Failed"][choice]
            reason = "Evicted" if phase == "Failed" and i % 2 else ""
            new = replace(pod, status=replace(pod.status, phase=phase, reason=reason, message=f"m{choice}"))
            pods[i] = new
            write("updateStatus", "Pod", pod, new, agent)
        elif op == "conditions":
            conds = [*pod.status.conditions, _CONDITIONS[(i * 3 + choice) % len(_CONDITIONS)]]
            if choice == 2:
                conds.append(_CONDITIONS[(i + choice) % len(_CONDITIONS)])
            new = replace(pod, status=replace(pod.status, conditions=conds))
            pods[i] = new
            write("updateStatus", "Pod", pod, new, agent)
        elif op == "resize":  # a status whose container resources change the requests
            c = pod.spec.containers[0]
            got = ResourceRequirements(requests={"cpu": parse_quantity(["2", "250m", "1"][choice])})
            cs = ContainerStatus(name=c.name, image=c.image, resources=got)
            new = replace(pod, status=replace(pod.status, container_statuses=[cs], phase="Running"))
            pods[i] = new
            write("updateStatus", "Pod", pod, new, agent)
        elif op == "delete":
            write("delete", "Pod", pod, None, agent)
            del pods[i]
    end = t + 1.0
    assert _state(plain, end) == _state(fused, end)


def test_a_batch_of_leases_is_the_trace_recorders_batch() -> None:
    """A batch of a kind nobody but the trace reads goes to the recorder's ``write_many``."""
    plain, fused = _five(), _five()
    book = RunBook(*fused)
    node = builders.node("n0")
    writes = [(node, node, 1), (node, node, 2)]
    for listener in plain:
        many = getattr(listener, "write_many", None)
        assert many is not None
        many("update", "Lease", 3.0, "", writes)
    book.write_many("update", "Lease", 3.0, "", writes)
    book.write_many("update", "Node", 4.0, "", [(node, node, 3)])
    for listener in plain:
        listener.write_many("update", "Node", 4.0, "", [(node, node, 3)])  # type: ignore[attr-defined]
    assert _state(plain, 5.0) == _state(fused, 5.0)
