"""``apiServer: {eventTTL}`` in a run: the scheduler's FailedScheduling Events expire after the
TTL (deletes in the trace, like any write), and its 30-minute series refresh writes a series
back once the TTL removed it."""

from __future__ import annotations

from pathlib import Path

from emulator.app.scenario.loader import load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.apiserver.server import WriteRecord

SCENARIO = """
name: event-ttl
apiServer: {eventTTL: 10m}
nodes:
  - count: 1
    namePrefix: node
    template:
      status: {capacity: {cpu: "1", memory: 16Gi, pods: "110"}}
steps:
  - createPods:
      count: 1
      namePrefix: big
      template:
        spec:
          containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]
  - sleep: 40m
"""


def test_events_expire_and_series_are_written_back() -> None:
    writes: list[tuple[float, str, str]] = []

    def on_write(rec: WriteRecord) -> None:
        if rec.kind == "Event":
            writes.append((rec.time, rec.verb, rec.obj.metadata.name))

    scenario = load_scenario_text(SCENARIO, source="<test>", base_dir=Path.cwd())
    result = run_scenario(scenario, RunOptions(on_write=on_write))
    assert result.passed
    first, second = writes[0][2], writes[1][2]
    assert [(t, verb) for t, verb, _ in writes] == [
        (0.0, "create"),  # attempt 1
        (330.0, "create"),  # attempt 2 (5-minute flush): the pod's resourceVersion changed
        (600.0, "delete"),  # the first Event's TTL
        (660.0, "update"),  # attempt 3: series count 2
        (1260.0, "delete"),  # 10 minutes after its last write
        (1800.0, "create"),  # the 30-minute refresh finds it gone: created again, series included
        (2400.0, "delete"),
    ]
    assert [n for _, _, n in writes] == [first, second, first, second, second, second, second]
