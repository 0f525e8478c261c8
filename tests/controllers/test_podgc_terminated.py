"""PodGC's ``gcTerminated``: past ``terminatedPodGCThreshold`` terminated pods (Succeeded or
Failed), the excess is deleted at each 20 s pass — evicted pods first, then the oldest by
creation timestamp (upstream ``byEvictionAndCreationTimestamp``); 0 turns it off."""

from __future__ import annotations

from pathlib import Path

import pytest
from msgspec.structs import replace

from agents.controllers import PodGCController, PodGCSettings
from agents.controllers.podgc import DEFAULT_TERMINATED_POD_GC_THRESHOLD
from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.readers import ScenarioError
from tests.builders import node, pod
from tests.cluster import Cluster, open_cluster

# (name, phase, reason), created one second apart in this order.
PODS = [
    ("c", "Succeeded", ""),
    ("a", "Failed", ""),
    ("b", "Succeeded", ""),
    ("e", "Failed", "Evicted"),
    ("d", "Running", ""),
    ("f", "Succeeded", ""),
]


def _gone(c: Cluster) -> dict[str, float]:
    return {w.obj.metadata.name: round(w.time, 3) for w in c.of("Pod", verb="delete") if w.new is None}


@pytest.mark.parametrize(
    ("threshold", "first_pass", "after_d_finishes"),
    [
        pytest.param(3, ["c", "e"], ["a"], id="evicted-first-then-oldest"),
        pytest.param(5, [], ["e"], id="at-threshold-nothing-until-one-more"),
        pytest.param(0, [], [], id="off"),
    ],
)
@pytest.mark.asyncio
async def test_terminated_pods_past_the_threshold_are_deleted(
    threshold: int, first_pass: list[str], after_d_finishes: list[str]
) -> None:
    async with open_cluster(namespaces=("default",)) as c:
        c.server.create(node("n1"))
        for name, phase, reason in PODS:
            c.server.create(pod(name, node="n1", phase=phase, reason=reason), restore=True)
            await c.clock.sleep(1)
        start = c.clock.now()
        settings = PodGCSettings(terminated_pod_gc_threshold=threshold)
        controller = PodGCController(c.client("controller:podgc"), c.clock, settings)
        await c.start(controller, "controller:podgc")
        await c.clock.sleep(1)
        assert sorted(_gone(c)) == sorted(first_pass)
        d = c.server.get("Pod", "d", "default")
        c.server.update_status(replace(d, status=replace(d.status, phase="Succeeded")))
        await c.clock.sleep(20)
        assert sorted(_gone(c)) == sorted(first_pass + after_d_finishes)
        assert all(t in (start, start + 20) for t in _gone(c).values())
        assert controller.statistics()["terminated"] == len(first_pass) + len(after_d_finishes)


SCENARIO = """
name: podgc
{field}
nodes:
  - count: 1
    namePrefix: node
    template:
      status: {{capacity: {{cpu: "1", memory: 1Gi, pods: "10"}}}}
"""


@pytest.mark.parametrize(
    ("field", "want"),
    [
        pytest.param("", DEFAULT_TERMINATED_POD_GC_THRESHOLD, id="default"),
        pytest.param("controllers: {podGC: {terminatedPodGCThreshold: 100}}", 100, id="given"),
        pytest.param("controllers: {podGC: {terminatedPodGCThreshold: 0}}", 0, id="off"),
    ],
)
def test_scenario_field(field: str, want: int) -> None:
    scenario = load_scenario_text(SCENARIO.format(field=field), source="s.yaml", base_dir=Path.cwd())
    assert scenario.controllers.pod_gc.terminated_pod_gc_threshold == want


def test_scenario_field_negative() -> None:
    with pytest.raises(ScenarioError, match=r"controllers\.podGC\.terminatedPodGCThreshold"):
        load_scenario_text(
            SCENARIO.format(field="controllers: {podGC: {terminatedPodGCThreshold: -1}}"),
            source="s.yaml",
            base_dir=Path.cwd(),
        )
