"""Write listeners take a batch of writes (``Store._commit_batch``: the Lease renewals of an
instant) through ``write_many`` exactly as they take its writes one ``WriteRecord`` at a time:
the trace recorder's lines (random kinds, instants and agents against the reference
``trace_line``), and a whole run's report with and without every listener's ``write_many``
(the five listeners called one by one, ``plain_listeners``: ``RunBook``'s batches are
``tests/scenario/test_bookkeeping.py``'s)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.app.scenario import cost, event_trace, invariants, monitor, observe
from emulator.app.scenario.event_trace import TraceRecorder
from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.scheduling import Lease, LeaseSpec
from emulator.base.apiserver.server import WriteRecord
from tests import builders
from tests.references import trace_line

_TIMES = [0.0, 1e-7, 6e-7, 1 / 3, 2.5]


def _object(kind: str, i: int) -> Any:
    if kind == "Pod":
        return builders.pod(f"p{i}", namespace="ns", image="", node="n", phase="Running", reason="")
    if kind == "Node":
        return builders.node(f"n{i}")
    meta = ObjectMeta(name=f"n{i}", namespace="kube-node-lease")
    return Lease(metadata=meta, spec=LeaseSpec(holder_identity=f"n{i}"))


@settings(max_examples=150, deadline=None)
@given(
    batches=st.lists(
        st.tuples(
            st.sampled_from(["Lease", "Node", "Pod"]),
            st.sampled_from(_TIMES),
            st.sampled_from(["", "kubectl"]),
            st.integers(1, 4),
            st.booleans(),
        ),
        max_size=8,
    )
)
def test_trace_write_many_matches_the_reference(batches: list[tuple[str, float, str, int, bool]]) -> None:
    recorder, rev, lines = TraceRecorder(), 0, []
    for kind, t, agent, n, delete in batches:
        writes = []
        for i in range(n):
            rev += 1
            obj = _object(kind, i)
            writes.append((obj, None, rev) if delete else (obj, obj, rev))
        verb = "delete" if delete else "update"
        recorder.write_many(verb, kind, t, agent, writes)
        lines += [trace_line(WriteRecord(r, t, verb, kind, old, new, agent)) for old, new, r in writes]
    expected = hashlib.sha256(b"".join(event_trace._encoder.encode(line) + b"\n" for line in lines))
    assert recorder.hexdigest == expected.hexdigest()
    assert recorder.lines == len(lines)


SCENARIO = """
name: write-many
seed: 3
clock: virtual
until: 3m
settle: 3m
kubelet: {heartbeatInterval: 10s, nodeStatusReportFrequency: 1m}
nodes:
  - count: 20
    namePrefix: node
    template: {status: {capacity: {cpu: "4", memory: 8Gi, pods: "20"}}}
objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 30
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: pause, resources: {requests: {cpu: 100m}}}]}
steps:
  - {at: 1m, scale: {kind: Deployment, name: web, replicas: 50}}
"""


def _report(monkeypatch: pytest.MonkeyPatch, *, many: bool) -> dict[str, Any]:
    with monkeypatch.context() as m:
        if not many:
            for cls in (
                event_trace.TraceRecorder,
                observe.Observer,
                invariants.InvariantChecker,
                monitor.PodActivity,
                cost.CostMeter,
            ):
                m.delattr(cls, "write_many")
        scenario = load_scenario_text(SCENARIO, source="<test>", base_dir=Path.cwd())
        result = run_scenario(scenario, RunOptions(plain_listeners=True))
    return {"trace": result.trace_hash, "events": result.events, "pods": result.pods, "extra": _simulated(result.extra)}


def _simulated(value: Any) -> Any:
    """``value`` without what the wall clock measures (keys naming it)."""
    if isinstance(value, dict):
        return {k: _simulated(v) for k, v in value.items() if "wall" not in str(k).lower()}
    if isinstance(value, (list, tuple)):
        return [_simulated(v) for v in value]
    return repr(value) if not isinstance(value, (int, float, str, bool, type(None))) else value


def test_a_run_reports_the_same_with_and_without_write_many(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _report(monkeypatch, many=True) == _report(monkeypatch, many=False)
