"""Standing Lease renewals change nothing but the renewals: every shipped scenario run with
the kubelets' renewals held by the API server (the default where nothing can tell:
``Cluster.standing_renewals_apply``) and with every renewal written (``RunOptions(
standing_renewals=False)``, the reference) makes the same writes other than the Lease
renewals, in the same order, at the same times, once the revisions are renumbered.

One known difference, not upstream's concern (independent kubelets race at an instant): kubelets
that beat at the very same instant (nodes created together) may post their status in another
order once one of them has been looked at apart (its node changed): with every renewal written
each keeps its place in the ticker's bucket, held renewals push its beat when it is needed. The
writes of each instant are the same (``test_nodes_created_together``)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from emulator.app.scenario.loader import load_scenario, load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenarios").rglob("*.yaml"))


def _writes(path: Path | str, *, standing: bool) -> tuple[list[dict[str, Any]], int]:
    """The run's trace lines but the Lease updates, revisions dropped; and how many Lease
    updates there were. ``path``: a scenario file, or a scenario's text."""
    out = io.BytesIO()
    scenario = load_scenario(path) if isinstance(path, Path) else load_scenario_text(path, "s.yaml", Path("."))
    run_scenario(scenario, RunOptions(trace=out, standing_renewals=standing))
    kept: list[dict[str, Any]] = []
    renewals = 0
    for line in out.getvalue().splitlines():
        rec = json.loads(line)
        if rec["kind"] == "Lease" and rec["verb"] == "update":
            renewals += 1
            continue
        rec.pop("rv")
        kept.append(rec)
    return kept, renewals


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.relative_to(ROOT).as_posix() for p in SCENARIOS])
def test_the_same_writes_but_the_renewals(path: Path) -> None:
    reference, written = _writes(path, standing=False)
    standing, held = _writes(path, standing=True)
    assert standing == reference
    assert held <= written


# Three nodes created together (one ticker bucket), a report a minute, one cordoned at 75 s;
# then a Lease read and a kubelet stopping under a node kept by a finalizer (the lifecycle
# controller must mark it Unknown at the same pass).
_TOGETHER = """
name: together
seed: 1
settle: 0s
kubelet: {heartbeatInterval: 10s, nodeStatusReportFrequency: 1m}
nodes:
  - count: 3
    namePrefix: n
    template:
      metadata: {finalizers: [example.com/keep]}
      status: {capacity: {cpu: "2", memory: 8Gi, pods: "110"}}
steps:
  - sleep: 43s
  - update: {kind: Lease, name: n-1, namespace: kube-node-lease, patch: {metadata: {annotations: {a: b}}}}
  - sleep: 32s
  - cordon: {node: n-0}
  - delete: {kind: Node, name: n-1}
  - sleep: 5m
"""


def _by_instant(writes: list[dict[str, Any]]) -> list[tuple[float, list[str]]]:
    instants: dict[float, list[str]] = {}
    for w in writes:
        instants.setdefault(w["t"], []).append(json.dumps(w, sort_keys=True))
    return [(t, sorted(lines)) for t, lines in instants.items()]


def test_nodes_created_together() -> None:
    reference, written = _writes(_TOGETHER, standing=False)
    standing, held = _writes(_TOGETHER, standing=True)
    assert _by_instant(standing) == _by_instant(reference)
    # n-1's kubelet stopped at its delete (75 s): Unknown, the Event and the taint at 130 s, both ways
    assert [(w["t"], w["verb"]) for w in standing if w["name"].startswith("n-1") and w["t"] > 75.0][:3] == [
        (130.0, "updateStatus"),
        (130.0, "create"),
        (130.0, "update"),
    ]
    assert held < written / 5


# A kubelet stopping under a node kept by a finalizer while its renewals are still held (no
# Lease read first): its last renewal (70 s) comes at a monitor pass's own instant; held, the
# next pass marks it; written, the Lease informer must see it no sooner (it is woken, not
# handed it in place before the pass when the ticker's timer comes first).
_STOPPED_HELD = """
name: stopped-held
seed: 1
settle: 0s
kubelet: {heartbeatInterval: 10s, nodeStatusReportFrequency: 1m}
nodes:
  - count: 3
    namePrefix: n
    template:
      metadata: {finalizers: [example.com/keep]}
      status: {capacity: {cpu: "2", memory: 8Gi, pods: "110"}}
steps:
  - sleep: 75s
  - delete: {kind: Node, name: n-1}
  - sleep: 3m
"""


def test_a_kubelet_stopping_while_its_renewals_are_held() -> None:
    reference, written = _writes(_STOPPED_HELD, standing=False)
    standing, held = _writes(_STOPPED_HELD, standing=True)
    assert standing == reference
    assert [(w["t"], w["verb"]) for w in standing if w["name"].startswith("n-1") and w["t"] > 75.0][:3] == [
        (130.0, "updateStatus"),
        (130.0, "create"),
        (130.0, "update"),
    ]
    assert held < written / 5
