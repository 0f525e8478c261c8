"""Shared tools of the race tests: load a race scenario, switch a protection off, run it
with a recorded trace, and read the outcome (expectations, invariants, trace, reports).

Each race test runs ``scenarios/races/<name>.yaml`` through ``run_scenario`` exactly as
``python -m emulator run`` does; ``play`` records every API write (the ``WriteRecord`` and
its trace line, through ``RunOptions.on_write``) so a test can assert on what happened and
when, not only on the final state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from emulator.app.scenario.invariants import INVARIANTS, InvariantResult
from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, RunResult, run_scenario
from emulator.app.scenario.schema import Scenario
from emulator.base.apiserver.server import WriteRecord
from tests.references import trace_line

ROOT = Path(__file__).resolve().parents[2]
RACES = ROOT / "scenarios" / "races"


def path(name: str) -> Path:
    return RACES / f"{name}.yaml"


def load(name: str) -> Scenario:
    return load_scenario(path(name))


def with_options(scenario: Scenario, **options: Any) -> Scenario:
    """``scenario`` with ``schedulerOptions`` fields replaced (``assume_cache=False``...)."""
    return replace(scenario, scheduler_options=replace(scenario.scheduler_options, **options))


@dataclass(slots=True)
class Run:
    result: RunResult
    writes: list[WriteRecord] = field(default_factory=list)
    attempts: list[tuple[float, str, str | None]] = field(default_factory=list)
    """(start, namespace/name, selected node or None) of every scheduling attempt."""

    # --- outcome ------------------------------------------------------------------------

    @property
    def invariants(self) -> dict[str, InvariantResult]:
        return {r.name: r for r in self.result.extra["invariants"]}

    def violated(self) -> list[str]:
        return [r.name for r in self.result.extra["invariants"] if r.violations]

    def failed_expectations(self) -> list[str]:
        return [e.name for e in self.result.expectations if not e.passed]

    def report(self, key: str) -> Any:
        """The ``key`` object of the JSON report's agent sections (``scheduling``, ``faults``...)."""
        for doc in self.result.extra["agents"]:
            if key in doc:
                return doc[key]
        raise KeyError(key)

    def injected(self) -> list[int]:
        return [f["injected"] for f in self.report("faults")]

    # --- the trace ----------------------------------------------------------------------

    def trace(self) -> list[dict[str, Any]]:
        return [trace_line(w) for w in self.writes]

    def pod_writes(self, name: str, verb: str | None = None) -> list[WriteRecord]:
        return [
            w
            for w in self.writes
            if w.kind == "Pod" and w.obj.metadata.name == name and (verb is None or w.verb == verb)
        ]

    def binds(self) -> list[tuple[float, str, str]]:
        """(time, pod name, node) of every bind that reached the API server."""
        return [(w.time, w.new.metadata.name, w.new.spec.node_name) for w in self.writes if w.verb == "bind"]

    def first(self, match: Callable[[WriteRecord], bool]) -> WriteRecord:
        return next(w for w in self.writes if match(w))


def play(scenario: Scenario, seed: int | None = None, *, attempts: bool = False) -> Run:
    """Run ``scenario`` (with ``seed``, default the scenario's) recording every write, and
    every scheduling attempt if ``attempts``."""
    writes: list[WriteRecord] = []
    tried: list[tuple[float, str, str | None]] = []

    def explain(_attempt: int, start: float, pod: Any, exp: Any) -> None:
        tried.append((start, f"{pod.metadata.namespace}/{pod.metadata.name}", exp.selected))

    options = RunOptions(seed=seed, on_write=writes.append, explain=explain if attempts else None)
    return Run(run_scenario(scenario, options), writes, tried)


def assert_invariants_hold(run: Run) -> None:
    """Every invariant was checked (none skipped) and none was violated."""
    results = run.invariants
    assert list(results) == list(INVARIANTS)
    broken = {n: (r.violations, r.first_detail) for n, r in results.items() if r.violations}
    assert not broken, broken
    skipped = {n: r.skipped for n, r in results.items() if r.skipped}
    assert not skipped, skipped


def assert_passes(run: Run) -> None:
    """Expectations met, no waitFor timed out, invariants hold: the protected outcome."""
    assert not run.failed_expectations(), [(e.name, e.detail) for e in run.result.expectations if not e.passed]
    assert not run.result.waits_timed_out, run.result.waits_timed_out
    assert_invariants_hold(run)
    assert run.result.passed
