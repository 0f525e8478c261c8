"""Every scenario's traceHash, pinned: a change of behaviour shows up here first.

``tests/scenarios/trace_hashes.json`` holds the traceHash of every file in ``scenarios/`` under
its own seed. A commit that changes what a run writes on purpose regenerates the file
(``UPDATE_TRACE_HASHES=1 python -m pytest tests/scenarios/test_trace_hashes.py``) and says in
its message which scenarios changed and why; one that did not mean to has found a bug.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import run_scenario

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("trace_hashes.json")
SCENARIOS = sorted((ROOT / "scenarios").rglob("*.yaml"))


def _key(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_every_scenario_is_pinned() -> None:
    pinned = json.loads(GOLDEN.read_text())
    assert sorted(pinned) == sorted(_key(p) for p in SCENARIOS)


@pytest.mark.parametrize("path", SCENARIOS, ids=[_key(p) for p in SCENARIOS])
def test_trace_hash_is_pinned(path: Path) -> None:
    got = run_scenario(load_scenario(path)).trace_hash
    pinned = json.loads(GOLDEN.read_text())
    if os.environ.get("UPDATE_TRACE_HASHES") == "1":
        pinned[_key(path)] = got
        GOLDEN.write_text(json.dumps(pinned, indent=2, sort_keys=True) + "\n")
        return
    assert got == pinned.get(_key(path)), f"{_key(path)}: traceHash changed (see this module's docstring)"
