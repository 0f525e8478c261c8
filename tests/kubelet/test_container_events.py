"""The kubelet's container Events as upstream writes them (``pkg/kubelet/events/event.go``
reasons; ``pkg/kubelet/images/image_manager.go`` and ``kuberuntime_container.go`` messages,
v1.34), from component ``kubelet`` about ``spec.containers{name}``, on virtual time."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.kubelet import KubeletSettings
from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.api.core import Event
from emulator.base.apiserver.server import WriteRecord
from emulator.base.client.client import Latency
from tests.kubelet.test_kubelet import NGINX, World, make_pod, world

Mi = 2**20
PULLING = KubeletSettings(
    image_pull_bandwidth=10 * Mi, image_sizes={NGINX: 50 * Mi}, container_start=Latency(1.0), heartbeat_interval=0
)


def events(w: World, name: str) -> list[tuple[float, str, str, str, str]]:
    out = []
    for r in w.of("Event"):
        e = r.new
        assert isinstance(e, Event)
        if e.involved_object.name == name:
            out.append((r.time, e.type, e.reason, e.message, e.involved_object.field_path))
    return out


@pytest.mark.asyncio
async def test_pull_create_start_then_already_present() -> None:
    async with world(PULLING) as w:
        w.server.create(make_pod("first"))
        await w.at(10)
        w.server.create(make_pod("second"))
        await w.at(20)
        app = "spec.containers{app}"
        assert events(w, "first") == [
            (0, "Normal", "Pulling", f'Pulling image "{NGINX}"', app),
            (
                5,
                "Normal",
                "Pulled",
                f'Successfully pulled image "{NGINX}" in 5s (5s including waiting). Image size: 52428800 bytes.',
                app,
            ),
            (6, "Normal", "Created", "Created container: app", app),
            (6, "Normal", "Started", "Started container app", app),
        ]
        assert [e[2:4] for e in events(w, "second")] == [
            ("Pulled", f'Container image "{NGINX}" already present on machine'),
            ("Created", "Created container: app"),
            ("Started", "Started container app"),
        ]
        assert {e.source.component for e in (r.new for r in w.of("Event"))} == {"kubelet"}


@pytest.mark.asyncio
async def test_graceful_deletion_writes_killing() -> None:
    async with world(KubeletSettings(termination=Latency(5.0), heartbeat_interval=0)) as w:
        w.server.create(make_pod("web"))
        await w.at(10)
        w.server.delete("Pod", "web", "default")
        await w.at(20)
        [killing] = [e for e in events(w, "web") if e[2] == "Killing"]
        assert killing == (10, "Normal", "Killing", "Stopping container app", "spec.containers{app}")


@pytest.mark.asyncio
async def test_the_switch_turns_them_off() -> None:
    settings = KubeletSettings(container_events=False, termination=Latency(5.0), heartbeat_interval=0)
    async with world(settings) as w:
        w.server.create(make_pod("web"))
        await w.at(10)
        w.server.delete("Pod", "web", "default")
        await w.at(20)
        assert events(w, "web") == []


SCENARIO = """
name: events-switch
kubelet: {{containerEvents: {on}}}
nodes:
  - count: 1
    namePrefix: node
    template:
      status: {{capacity: {{cpu: "4", memory: 8Gi, pods: "110"}}}}
steps:
  - createPods: {{count: 2, namePrefix: web, template: {{spec: {{containers: [{{name: app, image: nginx:1.27}}]}}}}}}
  - sleep: 10s
"""


@pytest.mark.parametrize(("on", "expected"), [("true", {"Pulling", "Pulled", "Created", "Started"}), ("false", set())])
def test_the_scenario_switch(on: str, expected: set[str]) -> None:
    """``kubelet.containerEvents`` (default true, upstream's behaviour)."""
    writes: list[WriteRecord] = []
    scenario = load_scenario_text(SCENARIO.format(on=on), source="s.yaml", base_dir=Path("."))
    run_scenario(scenario, RunOptions(on_write=writes.append))
    reasons = {w.new.reason for w in writes if w.kind == "Event" and w.new is not None}
    assert reasons - {"Scheduled"} == expected
