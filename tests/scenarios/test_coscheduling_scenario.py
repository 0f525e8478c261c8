"""scenarios/coscheduling.yaml: the gang is bound all together, and only once it fits."""

from __future__ import annotations

from pathlib import Path

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.base.apiserver.server import WriteRecord

ROOT = Path(__file__).resolve().parents[2]


def test_gang_binds_all_members_at_once_after_the_fourth_node_joins() -> None:
    binds: list[tuple[float, str]] = []

    def on_write(rec: WriteRecord) -> None:
        if rec.verb == "bind":
            binds.append((rec.time, rec.obj.metadata.name))

    result = run_scenario(load_scenario(ROOT / "scenarios" / "coscheduling.yaml"), RunOptions(on_write=on_write))
    assert result.passed
    assert sorted(name for _, name in binds) == ["worker-0", "worker-1", "worker-2", "worker-3"]
    times = {t for t, _ in binds}
    assert len(times) == 1, f"members bound at different times: {binds}"
    assert times.pop() >= 120.0, "no member may be bound before the fourth node exists"
