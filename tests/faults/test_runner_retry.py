"""The runner's own retries under ``apiError`` faults: ``RUNNER_RETRY`` (ten tries, waits
0.5 s doubling to 10 s) and ``CORDON_RETRY`` (ten read-modify-writes while the update
conflicts; a Conflict on the read is an error at once). Same outcomes and times as the
hand-written loops these replaced."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.runner import RunOptions, RunResult, StepError, run_scenario
from emulator.base.apiserver.server import WriteRecord

ROOT = Path(__file__).resolve().parents[2]
BASE = """
name: t
seed: 3
latency: {api: {mean: 2ms, jitter: 1ms}, watch: {mean: 5ms, jitter: 2ms}}
kubelet: {heartbeatInterval: 0}
nodes:
  - {count: 2, namePrefix: node, template: {status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}}}
steps:
"""
CREATE = "  - create: [{apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [{name: c, image: i}]}}]\n"
CORDON = "  - cordon: {node: node-0}\n"


def fault(verb: str, kind: str, count: int, error: str = "InternalError") -> str:
    return f"  - fault: {{apiError: {{agent: runner, verb: {verb}, kind: {kind}, count: {count}, error: {error}}}}}\n"


def run(steps: str) -> tuple[RunResult, list[WriteRecord]]:
    writes: list[WriteRecord] = []
    scenario = load_scenario_text(BASE + steps, source="s.yaml", base_dir=ROOT)
    return run_scenario(scenario, RunOptions(on_write=writes.append)), writes


def test_create_succeeds_on_the_tenth_try_after_the_capped_waits() -> None:
    _, writes = run(fault("create", "Pod", 9) + CREATE)
    [created] = [w.time for w in writes if w.kind == "Pod" and w.verb == "create"]
    # 0.5 + 1 + 2 + 4 + 8 + 4 * 10 s of waits, plus the client's latency
    assert 55.5 <= created < 55.6


def test_create_fails_after_ten_tries() -> None:
    with pytest.raises(StepError, match=r"steps\[1\]\.create: InternalError: .*injected by steps\[0\]\.fault"):
        run(fault("create", "Pod", 10) + CREATE)


def test_cordon_rereads_after_conflicting_updates() -> None:
    _, writes = run(fault("update", "Node", 9, "Conflict") + CORDON)
    [update] = [w for w in writes if w.kind == "Node" and w.verb == "update"]
    assert update.new.spec.unschedulable
    assert update.time < 0.1  # conflicts are retried back to back


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param(fault("update", "Node", 10, "Conflict") + CORDON, id="ten-conflicting-updates"),
        pytest.param(fault("get", "Node", 1, "Conflict") + CORDON, id="conflict-on-the-read"),
    ],
)
def test_cordon_gives_up(steps: str) -> None:
    with pytest.raises(StepError, match=r"steps\[1\]\.cordon: Conflict: .*injected by steps\[0\]\.fault"):
        run(steps)
